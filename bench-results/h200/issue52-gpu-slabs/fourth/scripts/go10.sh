# Call 10 (2026-12-04): 1700^3 capped at 16 GiB against uncapped, the device opened first (warm).
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/ccl-*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"
timeout 540 python3 - <<'PY' 2>&1 | tee $OUT/volume1700-warm.log
import sys, types, numpy as np
sys.path.insert(0, "python/bench")
import ccl, large_bench
ccl.label(np.ones((64, 64, 64), bool), 26, device="cuda:0", dtype=np.uint64)
ccl.label(np.ones((64, 64, 64), bool), 26, device="cuda:0", dtype=np.uint64, max_device_bytes=1 << 20)
print("device opened by two small labelings first (uncapped and capped)", flush=True)
large_bench.volume(types.SimpleNamespace(side=1700, runs=1, cap_gib=16.0, device="cuda:0"))
PY
