#!/usr/bin/env bash
# Runs the whole test suite (conformance matrix on every backend present, CPU reference,
# kernel drift and compile checks, error paths, command line).
# CCL_REQUIRE_BACKENDS=cpu,opencl-cpu,opencl-gpu,cuda,nvrtc (any subset) turns an absent
# backend into a failure instead of a note.
set -euo pipefail
cd "$(dirname "$0")/.."
nvrtc_lib=$PWD/.cache/nvrtc/nvidia/cu13/lib
[ -d "$nvrtc_lib" ] && export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cargo test --release --workspace "$@"
