#!/usr/bin/env bash
# Issue 52's 50000^2 call with the labels written as they arrive from the device (streamed
# download), against its I/O bound measured in the same run: reading the input from the page
# cache plus writing 10^10 bytes with Python's 16 MiB writes (no sync; and once synced).
#   bash bench-results/h200/issue52-stream/run.sh CCL_BINARY [WORK_DIR] [ROUNDS]
set -euo pipefail
ccl=$(realpath "$1"); work=${2:-/tmp/issue52-stream}; rounds=${3:-3}
mkdir -p "$work"; cd "$work"; df -h . | tail -1
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
python3 - <<'PY'
import numpy as np, time
t = time.perf_counter()
rng = np.random.default_rng(52)
n = 50000
# Each byte's low bit: 50 % foreground, independent pixels (PCG64).
a = (np.frombuffer(rng.bytes(n * n), dtype=np.uint8) & 1).reshape(n, n)
np.save("in.npy", a)
print(f"input: in.npy 50000x50000 uint8 at {a.mean() * 100:.2f} % in {time.perf_counter() - t:.1f} s")
PY
cat > io.py <<'PY'
import os, sys, time
import numpy as np
piece = np.random.default_rng(1).integers(0, 2**32, size=4 << 20, dtype=np.uint32).tobytes()
def read():
    buf = bytearray(16 << 20); t = time.perf_counter()
    with open("in.npy", "rb", buffering=0) as f:
        while f.readinto(buf):
            pass
    return time.perf_counter() - t
def write(synced):
    t = time.perf_counter(); left = 50000 * 50000 * 4
    with open("bound.bin", "wb", buffering=0) as f:
        while left:
            left -= f.write(piece[: min(left, len(piece))])
        if synced:
            os.fsync(f.fileno())
    return time.perf_counter() - t
synced = sys.argv[1] == "synced"
r, w = read(), write(synced)
print(f"I/O bound ({sys.argv[1]}): read input {r:.3f} s + write 10 GB {w:.3f} s = {r + w:.3f} s")
os.remove("bound.bin")
PY
clean() { rm -f out.npy bound.bin; sync; }
label() {
  /usr/bin/time -f "WALL %e s, max RSS %M kB" "$ccl" "$@" label in.npy -o out.npy --device cuda:0 -v 2>&1 |
    grep -E "components|wall time|WALL"
}
clean
for r in $(seq "$rounds"); do
  echo "== round $r"
  python3 io.py nosync; clean
  label --no-sync; clean
done
echo "== synced"
python3 io.py synced; clean
label; clean
echo "== opencl:1, --no-sync"
/usr/bin/time -f "WALL %e s, max RSS %M kB" "$ccl" --no-sync label in.npy -o out.npy --device opencl:1 -v 2>&1 |
  grep -E "components|wall time|WALL"
clean
rm -f in.npy io.py
