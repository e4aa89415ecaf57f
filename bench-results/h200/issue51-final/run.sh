#!/usr/bin/env bash
# Issue 51's figures in one run on the GPU machine (from the project root, the release `ccl` and
# the Python wheel staged in .gpu/): the folder path stage by stage (`ccl bench folder`), the
# folder command's wall time against a 16-thread OpenCV loop and the codecs alone in Python, one
# NumPy image from Python against the Rust path, and batches (python/bench/batch_bench.py).
set -u
bash .gpu/prep.sh
A=$PWD/.gpu/bin/ccl; P=/tmp/pages; N=/tmp/npys; mkdir -p $P $N
seq 1 200 | xargs -P 16 -I{} $A generate -o $P/page{}.png --seed {} --density 50 >/dev/null
python3 -c "
import numpy as np, cv2, os
for f in os.listdir('$P'):
    np.save('$N/'+f[:-4]+'.npy', (cv2.imread('$P/'+f, cv2.IMREAD_GRAYSCALE) > 127).astype(np.uint8))
"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .gpu/py/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site
py() { python3 - "$@" <<'PY'
import sys, os, time, numpy as np, cv2
from concurrent.futures import ThreadPoolExecutor
mode, src, dst = sys.argv[1:4]
os.makedirs(dst, exist_ok=True)
names = sorted(os.listdir(src))
def one(name):
    img = cv2.imread(os.path.join(src, name), cv2.IMREAD_GRAYSCALE)
    if mode == "opencv":
        n, labels = cv2.connectedComponents((img > 127).view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
    else:
        labels = (img > 127).astype(np.uint32)
    np.save(os.path.join(dst, name[:-4] + ".npy"), labels)
start = time.perf_counter()
list(ThreadPoolExecutor(16).map(one, names))
print(f"python {mode}, 16 threads: {time.perf_counter() - start:.3f} s")
PY
}
wall() { local name=$1; shift; rm -rf /tmp/out; local s=$EPOCHREALTIME; "$@" >/dev/null 2>/tmp/err || { echo "$name failed"; tail -3 /tmp/err; }; local e=$EPOCHREALTIME; awk -v a="$s" -v b="$e" -v n="$name" 'BEGIN { printf "%s: %.3f s\n", n, b - a }'; }
b() { $A "$@" 2>&1 | grep -v '^round\|^wrote\|^device' ; }
{
  echo "## ccl bench folder (200 PNG pages 2048^2 at 50 %; 200 .npy uint8 of the same)"
  b bench folder $P --devices cuda:0 --jobs 16 --out /tmp/f1 --rounds 3
  for w in 4 6 8; do b --no-sync bench folder $P --devices cuda:0 --jobs 16 --workers $w --out /tmp/f$w --rounds 3; done
  b --no-sync bench folder $P --devices opencl:1 --jobs 16 --out /tmp/fo --rounds 3
  b bench folder $N --devices cuda:0 --jobs 16 --out /tmp/n1 --rounds 3
  b --no-sync bench folder $N --devices cuda:0 --jobs 16 --out /tmp/n2 --rounds 3
  echo "## wall time of the command and the Python loops, 3 rounds"
  for r in 1 2 3; do
    wall "ccl label DIR --format npy --device cuda:0" $A label $P -o /tmp/out --format npy --device cuda:0
    wall "ccl --no-sync label DIR --format npy --device cuda:0" $A --no-sync label $P -o /tmp/out --format npy --device cuda:0
    wall "ccl --no-sync label DIR --format npy --device opencl:1" $A --no-sync label $P -o /tmp/out --format npy --device opencl:1
    wall "ccl --no-sync label NPYDIR --format npy --device cuda:0" $A --no-sync label $N -o /tmp/out --format npy --device cuda:0
    rm -rf /tmp/out; py opencv $P /tmp/out
    rm -rf /tmp/out; py codecs $P /tmp/out
  done
} > $OUT/folder.txt 2>&1
{
  python3 bench-results/h200/issue51-final/single.py cuda:0
  python3 bench-results/h200/issue51-final/single.py opencl:1
  PYTHONPATH=/tmp/site:python/bench python3 python/bench/numpy_vs_rust.py /tmp/nvr --ccl $A --device cuda:0 --algorithm TUF --runs 20 > /dev/null 2>&1
  cat /tmp/nvr/summary.md
} > $OUT/single.txt 2>&1
python3 python/bench/batch_bench.py /tmp/bb --device cuda:0 > /dev/null 2>&1; cp /tmp/bb/batch.md /tmp/bb/batch.csv $OUT/
