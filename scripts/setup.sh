#!/usr/bin/env bash
# Sets up what a fresh machine lacks, then labels the built-in sample page.
#   - OpenCL: when no OpenCL platform is visible (no GPU driver), installs POCL (OpenCL on the
#     CPU) and the ICD loader from Debian's packages (needs root, as on CI machines).
#   - NVRTC 13.0 (pip wheel nvidia-cuda-nvrtc==13.0.88) in .cache/nvrtc, so the CUDA kernels can
#     be compiled (and checked) without a GPU; scripts/test.sh puts it on LD_LIBRARY_PATH.
#   - builds ccl (release) and writes labels.png from the built-in sample.
# Usage: bash scripts/setup.sh [--deps-only]
set -euo pipefail
cd "$(dirname "$0")/.."

have_opencl_platform() {
  command -v clinfo >/dev/null && [ "$(clinfo -l 2>/dev/null | grep -c Platform)" -gt 0 ]
}

if ! have_opencl_platform; then
  echo "setup: no OpenCL platform found; installing POCL and the OpenCL ICD loader"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends pocl-opencl-icd ocl-icd-libopencl1 clinfo >/dev/null
fi
clinfo -l || true

nvrtc_dir=.cache/nvrtc
if [ ! -f "$nvrtc_dir/nvidia/cu13/lib/libnvrtc.so.13" ]; then
  echo "setup: fetching NVRTC 13.0 (compile-only CUDA compiler, no GPU needed)"
  mkdir -p "$nvrtc_dir"
  python3 -m pip download -q --no-deps --only-binary=:all: nvidia-cuda-nvrtc==13.0.88 -d "$nvrtc_dir"
  python3 -m zipfile -e "$nvrtc_dir"/nvidia_cuda_nvrtc-13.0.88-*.whl "$nvrtc_dir"
fi

[ "${1:-}" = "--deps-only" ] && exit 0

cargo build --release
./target/release/ccl devices
./target/release/ccl label -o labels.png
