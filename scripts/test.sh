#!/usr/bin/env bash
# Runs the whole test suite (conformance matrix on every backend present, CPU reference,
# kernel drift and compile checks, error paths, command line) and ends with one summary line.
# CCL_REQUIRE_BACKENDS=cpu,opencl-cpu,opencl-gpu,cuda,nvrtc,ptxas (any subset) turns an absent
# backend into a failure instead of a note.
set -uo pipefail
cd "$(dirname "$0")/.."
nvrtc_lib=$PWD/.cache/nvrtc/nvidia/cu13/lib
[ -d "$nvrtc_lib" ] && export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The ptxas setup.sh fetched, unless CCL_PTXAS names another (or is off).
[ -x .cache/ptxas/ptxas ] && export CCL_PTXAS="${CCL_PTXAS:-$PWD/.cache/ptxas/ptxas}"
log=$(mktemp)
cargo test --profile checked --workspace "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# Binarization against OpenCV ximgproc and doxapy, pixel for pixel (CCL_REQUIRE_PEERS=1 makes
# missing libraries a failure; .ci/run installs them).
# The binary is the one the tests above built (profile checked).
python3 scripts/check_binarize_peers.py target/checked/ccl 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
# The Python package's tests (pip install ./python first), against SciPy and OpenCV; from outside
# the source folder so that the installed package is the one imported.
root=$PWD
if python3 -c "import ccl._ccl" 2>/dev/null; then
  (cd /tmp && python3 -m pytest -q -p no:cacheprovider "$root/python/tests") 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
elif [ -n "${CCL_REQUIRE_PEERS:-}" ]; then
  echo "python: the ccl package is not installed (pip install ./python)" | tee -a "$log"; rc=1
fi
# Cargo's "test result:" lines and pytest's summary ("3 failed, 43 passed in 0.6s").
awk '/^test result:/ { p += $4; f += $6; next }
  /^[0-9]+ (passed|failed)/ && / in [0-9.]+s/ { n = split($0, parts, ", ");
    for (i = 1; i <= n; i++) { split(parts[i], w, " "); if (w[2] == "passed") p += w[1]; if (w[2] == "failed") f += w[1] } }
  END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
rm -f "$log"
exit "$rc"
