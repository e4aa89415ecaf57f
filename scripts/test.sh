#!/usr/bin/env bash
# The test suite, after `bash scripts/setup.sh`. Ends with one summary line; the exit status is 0
# only when every part ran and passed (a part that could not run is named there and fails).
#
#   bash scripts/test.sh          quick mode: every algorithm x connectivity x backend cell on
#                                 small images, every kernel on Oclgrind's tight device, the
#                                 command line, errors and I/O, Python on one device, the
#                                 binarization peers on one page (about 10 minutes on 2 cores)
#   bash scripts/test.sh --full   also the long suites (`#[ignore = "full mode ..."]`): large
#                                 images, every window and method, statistics at scale, Oclgrind's
#                                 roomy device, every atomics model, Python on every device (CI)
#   bash scripts/test.sh [--full] --test conformance [-- FILTER]   any `cargo test` arguments
#
# CCL_REQUIRE_BACKENDS=cpu,opencl-cpu,opencl-gpu,cuda,nvrtc,ptxas,oclgrind (any subset) turns an
# absent backend into a failure instead of a note.
set -uo pipefail
# The peers are installed by setup.sh: missing ones fail (CCL_REQUIRE_PEERS=0 makes them notes).
export CCL_REQUIRE_PEERS=${CCL_REQUIRE_PEERS:-1}
cd "$(dirname "$0")/.."
root=$PWD

full=""
cargo_args=()
for arg in "$@"; do
  if [ "$arg" = --full ]; then full=1; else cargo_args+=("$arg"); fi
done
# Full mode: the tests marked `#[ignore = "full mode ..."]` run too (CCL_TEST_FULL for the rest).
if [ -n "$full" ]; then
  export CCL_TEST_FULL=1
  case " ${cargo_args[*]-} " in
    *" -- "*) cargo_args+=(--include-ignored) ;;
    *) cargo_args+=(-- --include-ignored) ;;
  esac
else
  unset CCL_TEST_FULL
fi

nvrtc_lib=$root/.cache/nvrtc/nvidia/cu13/lib
[ -d "$nvrtc_lib" ] && export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The ptxas setup.sh fetched, unless CCL_PTXAS names another (or is off).
[ -x .cache/ptxas/ptxas ] && export CCL_PTXAS="${CCL_PTXAS:-$root/.cache/ptxas/ptxas}"
# The project's Python (setup.sh makes .venv), else the one on PATH.
python=python3
[ -x .venv/bin/python ] && python=$root/.venv/bin/python

failed_parts=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# 1. Rust: the workspace's tests (profile checked: optimised, with overflow checks).
cargo test --profile checked --workspace "${cargo_args[@]}" 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed_parts+=("cargo test")

# 2. Binarization against OpenCV ximgproc and doxapy, pixel for pixel, with the binary the tests
# above built. Missing libraries fail (setup.sh installs them).
if [ -x target/checked/ccl ]; then
  "$python" scripts/check_binarize_peers.py target/checked/ccl ${full:+--full} 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed_parts+=("binarization peers")
else
  echo "binarization peers: not run (target/checked/ccl was not built)" | tee -a "$log"
  failed_parts+=("binarization peers (not run)")
fi

# 3. The Python package's tests against SciPy and OpenCV, from outside the source folder so that
# the installed package is the one imported.
if "$python" -c "import ccl._ccl, pytest" 2>/dev/null; then
  (cd /tmp && "$python" -m pytest -q -p no:cacheprovider "$root/python/tests") 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed_parts+=("python tests")
else
  echo "python: not run: $python cannot import ccl and pytest (bash scripts/setup.sh installs them in .venv)" | tee -a "$log"
  failed_parts+=("python tests (not run)")
fi

# One summary line: cargo's "test result:" lines and pytest's ("3 failed, 43 passed, 2 skipped
# in 0.6s"), then what did not pass.
summary=$(awk '/^test result:/ { p += $4; f += $6; i += $8; next }
  /^[0-9]+ (passed|failed|skipped)/ && / in [0-9.]+s/ { n = split($0, parts, ", ");
    for (k = 1; k <= n; k++) { split(parts[k], w, " ");
      if (w[2] == "passed") p += w[1]; if (w[2] == "failed") f += w[1]; if (w[2] == "skipped") s += w[1] } }
  END { printf "%d passed, %d failed, %d ignored, %d skipped", p, f, i, s }' "$log")
mode=quick; [ -n "$full" ] && mode=full
if [ ${#failed_parts[@]} -eq 0 ]; then
  echo "tests ($mode): $summary: ok"
  exit 0
fi
failed_list=$(printf '%s, ' "${failed_parts[@]}")
echo "tests ($mode): $summary: FAILED: ${failed_list%, }"
exit 1
