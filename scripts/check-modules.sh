#!/usr/bin/env bash
# Fails when the modules of a crate of the workspace form a cycle: the library `ccl`, the
# `ccl-cli` library and its `ccl` binary, and the backend crates. CI runs it after clippy.
#
# The module graph is cargo-modules' (0.27.0; `scripts/setup.sh` installs it): an edge A -> B
# where a `use` in A (or the signature of an item of A, or a field of one of its types) names an
# item defined in B, as rust-analyzer resolves it; the methods of a type count for the module
# that defines the type, wherever their `impl` block is. Paths written inside function bodies
# are not seen; tests/module_graph.rs checks those too, by the same rule.
#
# Modules are checked level by level: an edge between two modules is one between the two
# siblings that contain them under their closest common ancestor (`labeler::gpu -> schedule::stats`
# is `labeler -> schedule`), so the top-level modules must form a DAG, and so must the modules of
# each folder (`schedule::common` and `schedule::relabel` may not use each other). A folder's
# `mod.rs` and the files inside it are one unit to each other: a trait that `mod.rs` declares
# and its files implement is not a cycle. (`cargo modules dependencies --acyclic` checks the
# graph of every item instead, where a method that takes or returns its own type is a cycle, so
# it fails on any crate with such methods.)
#
# Usage: bash scripts/check-modules.sh        (exit status 1 on a cycle, naming its modules)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-modules >/dev/null; then
  echo "check-modules: cargo-modules is missing: cargo install cargo-modules@0.27.0 --locked" \
    "(bash scripts/setup.sh installs it)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# check WHAT ARGS...: the module graph of the target ARGS select (cargo-modules' -p, --lib,
# --bin) has no cycle.
check() {
  local what=$1
  shift
  if ! cargo modules dependencies "$@" --no-externs --no-sysroot --no-fns --no-types --no-traits \
    --no-owns --layout dot >"$tmp/graph.dot" 2>"$tmp/stderr"; then
    cat "$tmp/stderr" >&2
    echo "check-modules: cargo-modules could not analyse $what" >&2
    failed=1
    return
  fi
  # "a::b::c" -> "a::d" [...]; // "uses" edge   becomes   a::b a::d   (the siblings under a).
  sed -nE 's/^ *"([^"]+)" -> "([^"]+)" .*\/\/ "uses" edge$/\1 \2/p' "$tmp/graph.dot" |
    awk '{
      n = split($1, a, "::"); m = split($2, b, "::");
      k = 0; while (k < n && k < m && a[k + 1] == b[k + 1]) k++;
      if (k == n || k == m) next;  # a module and one inside it
      from = a[1]; to = b[1];
      for (i = 2; i <= k + 1; i++) { from = from "::" a[i]; to = to "::" b[i]; }
      print from, to;
    }' | sort -u >"$tmp/edges"
  local modules edges
  modules=$(grep -c '// "mod" node$' "$tmp/graph.dot" || true)
  edges=$(wc -l <"$tmp/edges")
  if tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
    echo "check-modules: $what: no cycle ($modules modules with dependencies, $edges edges between siblings)"
  else
    echo "check-modules: $what: the modules form a cycle; each loop below lists its modules" \
      "(siblings under their closest common ancestor), each using the next:" >&2
    sed -E '/input contains a loop:$/{s/.*/loop:/;b};s/^tsort: /  /' "$tmp/loops" >&2
    failed=1
  fi
}

check "ccl (library)" -p ccl --lib
check "ccl-cli (library)" -p ccl-cli --lib
check "ccl-cli (binary ccl)" -p ccl-cli --bin ccl
check "ccl-backend (library)" -p ccl-backend --lib
check "ccl-opencl (library)" -p ccl-opencl --lib
check "ccl-cuda (library)" -p ccl-cuda --lib

exit "$failed"
