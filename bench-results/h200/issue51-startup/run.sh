#!/usr/bin/env bash
# Issue 51: the folder command with its devices opened while the first images decode, against
# the command before (the release `ccl` of 1a86d8b, staged as .gpu/bin/ccl-before), a 16-thread
# OpenCV loop and the codecs alone in Python, interleaved round by round; then the folder path
# stage by stage (`ccl bench folder`). From the project root on the GPU machine, with the
# release binaries and the wheel staged in .gpu/.
set -u
bash .gpu/prep.sh >/dev/null 2>&1
A=$PWD/.gpu/bin/ccl; B=$PWD/.gpu/bin/ccl-before; P=/tmp/pages; N=/tmp/npys; mkdir -p $P $N
seq 1 200 | xargs -P 16 -I{} $A generate -o $P/page{}.png --seed {} --density 50 >/dev/null
python3 -c "
import numpy as np, cv2, os
for f in os.listdir('$P'):
    np.save('$N/'+f[:-4]+'.npy', (cv2.imread('$P/'+f, cv2.IMREAD_GRAYSCALE) > 127).astype(np.uint8))
"
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
# Wall time and peak resident memory of a command.
wall() { local name=$1; shift; rm -rf /tmp/out; python3 - "$name" "$@" <<'PY'
import resource, subprocess, sys, time
name, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
t = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
laps = [l for l in (r.stdout + r.stderr).splitlines() if "ms:" in l]
print(f"{name}: {t:.3f} s, peak RSS {rss:.0f} MiB" + ("" if r.returncode == 0 else f" FAILED {r.stderr[-300:]}") + "".join("\n  " + l for l in laps))
PY
}
# Warm the kernel caches of both binaries.
$A --no-sync label $P -o /tmp/out --device cuda:0 >/dev/null 2>&1; $B --no-sync label $P -o /tmp/out --device cuda:0 >/dev/null 2>&1
$A --no-sync label $P -o /tmp/out --device opencl:1 >/dev/null 2>&1; $B --no-sync label $P -o /tmp/out --device opencl:1 >/dev/null 2>&1
{
  echo "## 200 PNG pages 2048^2 at 50 % -> .npy uint32, outputs not synced, 5 rounds interleaved"
  for r in 1 2 3 4 5; do
    echo "# round $r"
    wall "before: ccl --no-sync label DIR --device cuda:0" $B --no-sync label $P -o /tmp/out --format npy --device cuda:0
    wall "after:  ccl --no-sync label DIR --device cuda:0" $A --no-sync label $P -o /tmp/out --format npy --device cuda:0
    wall "before: ccl --no-sync label DIR --device opencl:1" $B --no-sync label $P -o /tmp/out --format npy --device opencl:1
    wall "after:  ccl --no-sync label DIR --device opencl:1" $A --no-sync label $P -o /tmp/out --format npy --device opencl:1
    wall "after:  ccl --no-sync label NPYDIR --device cuda:0" $A --no-sync label $N -o /tmp/out --format npy --device cuda:0
    wall "after:  ccl label DIR --device cuda:0 (synced)" $A label $P -o /tmp/out --format npy --device cuda:0
    rm -rf /tmp/out; py opencv $P /tmp/out
    rm -rf /tmp/out; py codecs $P /tmp/out
  done
  echo "## laps (--verbose)"
  for r in 1 2 3; do
    wall "before --verbose" $B --no-sync label $P -o /tmp/out --format npy --device cuda:0 --verbose
    wall "after --verbose" $A --no-sync label $P -o /tmp/out --format npy --device cuda:0 --verbose
  done
} > $OUT/command.txt 2>&1
{
  echo "## ccl --no-sync bench folder, after (stage by stage, median of 5 rounds)"
  $A --no-sync bench folder $P --devices cuda:0 --jobs 16 --out /tmp/f1 --rounds 5 2>&1 | grep "^|"
  $A --no-sync bench folder $P --devices opencl:1 --jobs 16 --out /tmp/f2 --rounds 5 2>&1 | grep "^|"
  $A --no-sync bench folder $N --devices cuda:0 --jobs 16 --out /tmp/f3 --rounds 5 2>&1 | grep "^|"
  echo "## before"
  $B --no-sync bench folder $P --devices cuda:0 --jobs 16 --out /tmp/f4 --rounds 5 2>&1 | grep "^|"
} > $OUT/folder.txt 2>&1
nvidia-smi -L > $OUT/gpus.txt 2>&1
