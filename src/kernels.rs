//! Kernel sources, and nothing else: this module depends on no other part of the crate. Each
//! kernel is written once in `kernels/` in a portable vocabulary (`KERNEL`, `GLOBAL`,
//! `LOCAL_ARRAY`, `LOCAL_BARRIER()`, `ATOMIC_MIN`, `label_t`, ...). The exact file each backend
//! compiles is that source behind its dialect prelude, committed as `kernels-cl/NAME.cl` and
//! `kernels-cu/NAME.cu`; `tests/kernel_sources.rs` fails when those drift from [`generate`]
//! (`CCL_BLESS=1 cargo test --test kernel_sources` rewrites them). Specialisation is done with
//! compile-time defines (`-D CONNECTIVITY=8`), never by editing the text. Each schedule file
//! declares the kernel file it runs (with `kernel_file!`); the registry (`crate::registry`) lists
//! every algorithm's and stage's, with the defines each algorithm uses, and so the files to build
//! and check (`crate::registry::kernel_files`).

pub use ccl_backend::Dialect;

/// Folder of the generated files of `dialect`, relative to the repository root.
pub fn folder(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenCl => "kernels-cl",
        Dialect::Cuda => "kernels-cu",
    }
}

/// File extension of the generated files of `dialect`.
pub fn extension(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenCl => "cl",
        Dialect::Cuda => "cu",
    }
}

fn prelude(dialect: Dialect) -> (&'static str, &'static str) {
    match dialect {
        Dialect::OpenCl => ("kernels-cl/prelude.h", include_str!("../kernels-cl/prelude.h")),
        Dialect::Cuda => ("kernels-cu/prelude.cuh", include_str!("../kernels-cu/prelude.cuh")),
    }
}

/// One kernel file: shared parts concatenated in order.
#[derive(Clone, Copy, Debug)]
pub struct KernelFile {
    /// Base name of the generated files (`uf` gives `kernels-cl/uf.cl`, `kernels-cu/uf.cu`).
    pub name: &'static str,
    /// (path under `kernels/`, text) of each shared part.
    parts: &'static [Part],
    opencl: &'static str,
    cuda: &'static str,
}

/// One shared part of a kernel file: (path under `kernels/`, text).
pub(crate) type Part = (&'static str, &'static str);

/// The shared headers a kernel file may start with ([`kernel_file!`] names them).
pub(crate) const COMMON: Part = ("common.h", include_str!("../kernels/common.h"));
pub(crate) const UNION_FIND: Part = ("union_find.h", include_str!("../kernels/union_find.h"));
pub(crate) const COMPRESS: Part = ("compress.kernel", include_str!("../kernels/compress.kernel"));
pub(crate) const BLOCKS: Part = ("blocks.h", include_str!("../kernels/blocks.h"));
pub(crate) const NEIGHBOURS: Part = ("neighbours.h", include_str!("../kernels/neighbours.h"));
pub(crate) const RANKS: Part = ("ranks.h", include_str!("../kernels/ranks.h"));
pub(crate) const BITS: Part = ("bits.h", include_str!("../kernels/bits.h"));
pub(crate) const EQUIVALENCE: Part = ("equivalence.h", include_str!("../kernels/equivalence.h"));

/// The [`KernelFile`] `NAME`: the shared headers listed (constants of this module, in order),
/// then `kernels/NAME.kernel`, with the generated `kernels-cl/NAME.cl` and `kernels-cu/NAME.cu`
/// embedded. Each schedule file declares its own with it, e.g.
/// `pub(crate) const KERNEL: KernelFile = kernel_file!("uf": COMMON, UNION_FIND, COMPRESS, NEIGHBOURS);`,
/// and the registry (`crate::registry`) collects them.
macro_rules! kernel_file {
    ($name:literal: $($header:ident),* $(,)?) => {
        $crate::kernels::KernelFile::new(
            $name,
            &[
                $($crate::kernels::$header,)*
                (
                    concat!($name, ".kernel"),
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, ".kernel")),
                ),
            ],
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels-cl/", $name, ".cl")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels-cu/", $name, ".cu")),
        )
    };
}
pub(crate) use kernel_file;

/// Environment variable naming a folder whose `kernels-cl/` and `kernels-cu/` files replace the
/// committed sources at run time ([`KernelFile::load`]).
pub const KERNEL_DIR: &str = "CCL_KERNEL_DIR";

impl KernelFile {
    /// A kernel file of `parts`, committed as `opencl` and `cuda` ([`kernel_file!`] makes one).
    pub(crate) const fn new(
        name: &'static str,
        parts: &'static [Part],
        opencl: &'static str,
        cuda: &'static str,
    ) -> Self {
        KernelFile { name, parts, opencl, cuda }
    }

    /// The committed source this dialect's compiler builds.
    pub fn source(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::OpenCl => self.opencl,
            Dialect::Cuda => self.cuda,
        }
    }

    /// The source to build for `dialect`: the committed one, or, where the environment variable
    /// [`KERNEL_DIR`] names a folder, that folder's `kernels-cl/NAME.cl` or `kernels-cu/NAME.cu`
    /// (to try a kernel change without rebuilding the crate). Errs with the override's path when
    /// it cannot be read: an experiment never silently runs the committed kernel.
    pub fn load(&self, dialect: Dialect) -> Result<std::borrow::Cow<'static, str>, (String, std::io::Error)> {
        self.load_from(std::env::var_os(KERNEL_DIR).filter(|dir| !dir.is_empty()).as_deref(), dialect)
    }

    /// [`Self::load`] with the override folder given (`None`: the committed source).
    fn load_from(
        &self,
        dir: Option<&std::ffi::OsStr>,
        dialect: Dialect,
    ) -> Result<std::borrow::Cow<'static, str>, (String, std::io::Error)> {
        match dir {
            Some(dir) => {
                let path = std::path::Path::new(dir).join(self.path(dialect));
                std::fs::read_to_string(&path).map(std::borrow::Cow::Owned).map_err(|e| (path.display().to_string(), e))
            }
            None => Ok(std::borrow::Cow::Borrowed(self.source(dialect))),
        }
    }

    /// Path of the committed file for `dialect`, relative to the repository root.
    pub fn path(&self, dialect: Dialect) -> String {
        format!("{}/{}.{}", folder(dialect), self.name, extension(dialect))
    }

    /// The shared parts, as (path under `kernels/`, text), in order.
    pub fn parts(&self) -> &'static [(&'static str, &'static str)] {
        self.parts
    }
}

/// The source that `kernels-cl/` or `kernels-cu/` must hold for `file`: a header, the
/// dialect prelude, then the shared parts.
pub fn generate(file: &KernelFile, dialect: Dialect) -> String {
    let (prelude_path, prelude_text) = prelude(dialect);
    let mut out = format!(
        "// GENERATED from {prelude_path} and kernels/{{{}}}: edit those, then run\n\
         // `CCL_BLESS=1 cargo test --test kernel_sources`.\n\n",
        file.parts.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(", ")
    );
    for (path, text) in std::iter::once((prelude_path, prelude_text)).chain(file.parts.iter().copied()) {
        out.push_str(&format!("// ---- {path}\n"));
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TUF: KernelFile = kernel_file!("tuf": COMMON, BITS, UNION_FIND, RANKS);

    #[test]
    fn an_override_folder_replaces_the_committed_source_or_names_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("ccl-kernel-dir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("kernels-cu")).unwrap();
        std::fs::write(dir.join("kernels-cu/tuf.cu"), "// changed\n").unwrap();
        assert_eq!(TUF.load_from(None, Dialect::Cuda).unwrap(), TUF.source(Dialect::Cuda));
        assert_eq!(TUF.load_from(Some(dir.as_os_str()), Dialect::Cuda).unwrap(), "// changed\n");
        let (path, _) = TUF.load_from(Some(dir.as_os_str()), Dialect::OpenCl).unwrap_err();
        assert!(path.ends_with("kernels-cl/tuf.cl"), "{path}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
