#!/usr/bin/env bash
# Sets up what a fresh machine lacks, then labels the built-in sample page.
#   - OpenCL: when no OpenCL platform is visible (no GPU driver), installs POCL (OpenCL on the
#     CPU) and the ICD loader from Debian's packages (needs root, as on CI machines).
#   - Oclgrind (Debian's package), an OpenCL simulator that checks every access, which the tests
#     run every kernel on (tests/oclgrind.rs); not registered as a platform, so `ccl devices`
#     does not list it.
#   - NVRTC 13.0 (pip wheel nvidia-cuda-nvrtc==13.0.88) in .cache/nvrtc, so the CUDA kernels can
#     be compiled (and checked) without a GPU; scripts/test.sh puts it on LD_LIBRARY_PATH.
#   - ptxas 13.0 (from the pip wheel nvidia-cuda-nvcc==13.0.88) in .cache/ptxas, so the tests can
#     check the assembly of NVIDIA OpenCL's PTX (backends/opencl/src/ptxas.rs) without a GPU;
#     scripts/test.sh points CCL_PTXAS at it.
#   - cargo-modules 0.27.0 (`cargo install --locked`), which scripts/check-modules.sh runs to
#     check that the module graph has no cycle.
#   - a Python virtual environment of the project's own, .venv, with what the tests compare
#     against (NumPy, SciPy, pytest, OpenCV with its contrib modules, doxapy, Dask with
#     dask.distributed, zarr, scikit-image, cc3d) and the ccl package
#     itself (pip install ./python: maturin builds it); scripts/test.sh uses it.
#   - builds ccl (release) and writes labels.png from the built-in sample, then builds the tests
#     (profile checked), so that scripts/test.sh only runs them.
# Usage: bash scripts/setup.sh [--deps-only]   (--deps-only: everything but the builds of ccl)
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

if [ ! -f /usr/lib/oclgrind/liboclgrind-rt-icd.so ] && command -v apt-get >/dev/null; then
  echo "setup: installing Oclgrind (the OpenCL simulator the tests check every kernel on)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends oclgrind >/dev/null
fi

nvrtc_dir=.cache/nvrtc
if [ ! -f "$nvrtc_dir/nvidia/cu13/lib/libnvrtc.so.13" ]; then
  echo "setup: fetching NVRTC 13.0 (compile-only CUDA compiler, no GPU needed)"
  mkdir -p "$nvrtc_dir"
  python3 -m pip download -q --no-deps --only-binary=:all: nvidia-cuda-nvrtc==13.0.88 -d "$nvrtc_dir"
  python3 -m zipfile -e "$nvrtc_dir"/nvidia_cuda_nvrtc-13.0.88-*.whl "$nvrtc_dir"
fi

ptxas=.cache/ptxas/ptxas
if [ ! -x "$ptxas" ]; then
  echo "setup: fetching ptxas 13.0 (the CUDA toolkit's PTX assembler, no GPU needed)"
  mkdir -p .cache/ptxas
  python3 -m pip download -q --no-deps --only-binary=:all: nvidia-cuda-nvcc==13.0.88 -d .cache/ptxas
  python3 - .cache/ptxas <<'PY'
import glob, os, sys, zipfile
folder = sys.argv[1]
wheel = glob.glob(os.path.join(folder, "nvidia_cuda_nvcc-13.0.88-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    with z.open("nvidia/cu13/bin/ptxas") as src, open(os.path.join(folder, "ptxas"), "wb") as dst:
        dst.write(src.read())
os.chmod(os.path.join(folder, "ptxas"), 0o755)
os.remove(wheel)
PY
fi

if ! command -v cargo-modules >/dev/null; then
  echo "setup: installing cargo-modules 0.27.0 (the module-graph check, scripts/check-modules.sh)"
  cargo install cargo-modules@0.27.0 --locked
fi

if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" 2>/dev/null; then
  echo "setup: installing python3-venv (Python's virtual environments)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
echo "setup: the Python test environment in .venv (NumPy, SciPy, pytest, OpenCV contrib, doxapy, Dask, ccl)"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q numpy scipy pytest opencv-contrib-python-headless doxapy "dask[array]" distributed zarr scikit-image connected-components-3d
.venv/bin/python -m pip install -q ./python

[ "${1:-}" = "--deps-only" ] && exit 0

cargo build --release
./target/release/ccl devices
./target/release/ccl label -o labels.png
cargo test --profile checked --workspace --no-run
