# Call 9 (2026-12-04): 1700^3 capped at 16 GiB against uncapped, with the code of 326ba42.
set -x
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/ccl-*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"
free -g | head -2
timeout 540 python3 python/bench/large_bench.py volume $OUT/volume1700.json --side 1700 --runs 1 --cap-gib 16 2>&1 | tee $OUT/volume1700.log
