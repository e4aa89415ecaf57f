#!/usr/bin/env bash
# The folder path on the GPU machine: 200 random 2048^2 PNG pages (50 %) to .npy labels, wall
# time of ccl (several settings), of a 16-thread OpenCV loop, and of the codecs alone (decode +
# write the same-size uint32 .npy, 16 threads), 2 rounds each.
set -u
bash .gpu/prep.sh
A=$PWD/.gpu/bin/ccl; P=/tmp/pages; mkdir -p $P
seq 1 200 | xargs -P 16 -I{} $A generate -o $P/page{}.png --seed {} --density 50 >/dev/null
ls $P | wc -l
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
print(f"{mode}: {time.perf_counter() - start:.3f} s")
PY
}
run() { local name=$1; shift; rm -rf /dev/shm/out; local s=$EPOCHREALTIME; "$@" >/dev/null 2>/tmp/err || { echo "$name failed"; tail -3 /tmp/err; }; local e=$EPOCHREALTIME; awk -v a="$s" -v b="$e" -v n="$name" 'BEGIN { printf "%s: %.3f s\n", n, b - a }'; }
for round in 1 2; do
  echo "round $round"
  run "ccl cuda:0 jobs 16" $A label $P -o /dev/shm/out --format npy --device cuda:0 --jobs 16
  run "ccl opencl:1 jobs 16" $A label $P -o /dev/shm/out --format npy --device opencl:1 --jobs 16
  rm -rf /dev/shm/out; py opencv $P /dev/shm/out
  rm -rf /dev/shm/out; py codecs $P /dev/shm/out
done 2>&1 | tee "$OUT/folder-shm.txt"
