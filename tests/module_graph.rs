//! The modules of every crate of the workspace form a DAG, level by level: an edge between two
//! modules counts between the siblings that contain them under their closest common ancestor,
//! so the top-level modules form a DAG, and so do the files of each folder (a folder's `mod.rs`
//! and its files are one unit to each other), as in `scripts/check-modules.sh`. That script reads
//! cargo-modules' graph, which does not see the paths written inside function bodies, attributes
//! or macros; this test reads every path the sources name from `crate`, `super` or `self`:
//! `use` trees (parsed with syn) and the paths anywhere else (from the tokens), resolved to the
//! module that defines the item (through the crate root's re-exports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

/// A module path below the crate root (empty: the root).
type Module = Vec<String>;

#[derive(Default)]
struct Crate {
    /// Every module, with the files that define it.
    modules: BTreeSet<Module>,
    /// The paths each module names, from `crate`, `super` or `self` (as written, split).
    paths: Vec<(Module, Vec<String>)>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.meta.to_token_stream().to_string().replace(' ', "") == "cfg(test)")
}

/// Flattens a use tree into the paths it imports.
fn use_paths(prefix: &[String], tree: &syn::UseTree, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix.to_vec();
            next.push(p.ident.to_string());
            use_paths(&next, &p.tree, out);
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push(prefix.to_vec()),
        syn::UseTree::Name(n) => out.push([prefix, &[n.ident.to_string()]].concat()),
        syn::UseTree::Rename(r) => out.push([prefix, &[r.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.to_vec()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(prefix, t, out)),
    }
}

/// Every `crate::a::b`, `super::a`, `self::a` (and `$crate::a`) path in `tokens`.
fn token_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let ident = |i: usize| match tokens.get(i) {
        Some(TokenTree::Ident(id)) => Some(id.to_string()),
        _ => None,
    };
    let colons = |i: usize| {
        matches!((tokens.get(i), tokens.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':')
    };
    let mut i = 0;
    while i < tokens.len() {
        if let TokenTree::Group(g) = &tokens[i] {
            token_paths(g.stream(), out);
        }
        let starts = matches!(ident(i).as_deref(), Some("crate" | "super" | "self")) && colons(i + 1);
        let after_path = i >= 2 && colons(i - 2);
        if starts && !after_path {
            let mut path = vec![ident(i).unwrap()];
            let mut j = i + 1;
            while colons(j) {
                match (ident(j + 2), tokens.get(j + 2)) {
                    (Some(name), _) => path.push(name),
                    // A use tree's group (`use crate::{a, b::c};` in a function body).
                    (None, Some(TokenTree::Group(g))) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                        let tree: TokenStream = tokens[i..=j + 2].iter().cloned().collect();
                        if let Ok(tree) = syn::parse2::<syn::UseTree>(tree) {
                            use_paths(&[], &tree, out);
                        }
                        j += 3;
                        break;
                    }
                    _ => break,
                }
                j += 3;
            }
            out.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
}

fn read_items(krate: &mut Crate, module: &Module, dir: &Path, items: &[syn::Item]) {
    for item in items {
        match item {
            syn::Item::Mod(m) if is_cfg_test(&m.attrs) => {}
            syn::Item::Mod(m) => {
                let child = [module.as_slice(), &[m.ident.to_string()]].concat();
                let child_dir = dir.join(m.ident.to_string());
                match &m.content {
                    Some((_, inner)) => {
                        krate.modules.insert(child.clone());
                        read_items(krate, &child, &child_dir, inner);
                    }
                    None => {
                        let flat = dir.join(format!("{}.rs", m.ident));
                        let file = if flat.exists() { flat } else { child_dir.join("mod.rs") };
                        read_file(krate, child, &file, &child_dir);
                    }
                }
            }
            syn::Item::Use(u) => {
                let mut paths = Vec::new();
                use_paths(&[], &u.tree, &mut paths);
                krate.paths.extend(paths.into_iter().map(|p| (module.clone(), p)));
            }
            other => {
                let mut paths = Vec::new();
                token_paths(other.to_token_stream(), &mut paths);
                krate.paths.extend(paths.into_iter().map(|p| (module.clone(), p)));
            }
        }
    }
}

/// Reads `file`, the module `module`, whose child modules' files are in `dir`.
fn read_file(krate: &mut Crate, module: Module, file: &Path, dir: &Path) {
    let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    krate.modules.insert(module.clone());
    read_items(krate, &module, dir, &parsed.items);
}

/// The module a path names an item of (or is), if it starts from `crate`, `super` or `self`.
fn resolve(krate: &Crate, reexports: &BTreeMap<String, Module>, from: &Module, path: &[String]) -> Option<Module> {
    let (mut at, mut rest): (Module, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.clone(), &path[1..]),
        "super" => (from[..from.len().checked_sub(1)?].to_vec(), &path[1..]),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    for (i, segment) in rest.iter().enumerate() {
        let next = [at.as_slice(), std::slice::from_ref(segment)].concat();
        if krate.modules.contains(&next) {
            at = next;
        } else if at.is_empty() && i == 0 {
            return reexports.get(segment).cloned();
        } else {
            break;
        }
    }
    Some(at)
}

/// The cycles (strongly connected components of more than one module) of `edges`.
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, (usize, usize)>,
        stack: Vec<Module>,
        found: Vec<Vec<Module>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: &Module) {
            let n = self.index.len();
            self.index.insert(v.clone(), (n, n));
            self.stack.push(v.clone());
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self.stack.iter().rposition(|m| m == v).unwrap();
                let component = self.stack.split_off(at);
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan { edges, index: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in edges.keys() {
        if !tarjan.index.contains_key(v) {
            tarjan.visit(v);
        }
    }
    tarjan.found
}

/// The cycles between the modules of the crate whose root is `root`, each named.
fn crate_cycles(root: &Path) -> Vec<String> {
    let mut krate = Crate::default();
    read_file(&mut krate, Vec::new(), root, root.parent().unwrap());
    let mut reexports = BTreeMap::new();
    for (module, path) in &krate.paths {
        if module.is_empty() && path.len() >= 2 {
            // In the root, `use a::B` names the child module `a` as `crate::a::B` does.
            let path = if path[0] == "crate" { path.clone() } else { [&["crate".to_string()], &path[..]].concat() };
            if let Some(target) = resolve(&krate, &BTreeMap::new(), module, &path).filter(|t| !t.is_empty()) {
                reexports.insert(path.last().unwrap().clone(), target);
            }
        }
    }
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, path) in &krate.paths {
        let Some(to) = resolve(&krate, &reexports, from, path) else { continue };
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // a module and one inside it
        }
        edges.entry(from[..=common].to_vec()).or_default().insert(to[..=common].to_vec());
    }
    cycles(&edges)
        .into_iter()
        .map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(", "))
        .map(|c| format!("{}: {c}", root.display()))
        .collect()
}

#[test]
fn every_crate_s_modules_form_a_dag() {
    // CCL_MODULE_GRAPH_REPO: another checkout to check (e.g. an older commit's).
    let repo = std::env::var_os("CCL_MODULE_GRAPH_REPO")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let roots = [
        "src/lib.rs",
        "cli/src/lib.rs",
        "cli/src/main.rs",
        "backends/core/src/lib.rs",
        "backends/opencl/src/lib.rs",
        "backends/cuda/src/lib.rs",
    ];
    let found: Vec<String> = roots.iter().flat_map(|r| crate_cycles(&repo.join(r))).collect();
    assert!(found.is_empty(), "module cycles (siblings under their closest common ancestor):\n{}", found.join("\n"));
}

/// The check finds what it is for: a cycle through paths in function bodies, and none between a
/// module and the modules inside it.
#[test]
fn the_check_sees_body_paths_and_ignores_parents() {
    let dir = std::env::temp_dir().join(format!("ccl-module-graph-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\npub use b::Thing;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "pub fn f() -> u32 { crate::b::inner::g() }\n").unwrap();
    std::fs::write(dir.join("b/mod.rs"), "pub mod inner;\npub struct Thing;\n").unwrap();
    std::fs::write(dir.join("b/inner.rs"), "use super::Thing;\npub fn g() -> u32 { 1 }\n").unwrap();
    assert!(crate_cycles(&dir.join("lib.rs")).is_empty());
    std::fs::write(dir.join("b/inner.rs"), "pub fn g() -> u32 { let _f = super::super::a::f; 1 }\n").unwrap();
    let found = crate_cycles(&dir.join("lib.rs"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(found.len() == 1 && (found[0].ends_with("a, b") || found[0].ends_with("b, a")), "{found:?}");
}
