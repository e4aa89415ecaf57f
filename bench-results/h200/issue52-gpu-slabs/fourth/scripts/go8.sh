# Call 8 (2026-12-04): a second machine start, ccl.dask as committed (326ba42, "gpu") and 277fe75's ("before").
set -x
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"; cp .gpu/dask_before.py "$SITE/dask_before.py"
export PYTHONPATH=$PWD/.gpu/stubs
timeout 400 python3 python/bench/large_bench.py dask $OUT/dask1024.json --side 1024 --chunk 256 --runs 7 --variants gpu:16,before:16 2>&1 | grep -v -E "Warning|heartbeat|Traceback|^  |^Traceback|tornado|distributed.comm|^$" | tee $OUT/dask1024.log
