# Call 6 (2026-12-04): ccl.dask with its graph as one layer and host arrays mapped ahead ("gpu"),
# against 277fe75's ccl.dask ("before") and the one layer alone ("layer"), in one run.
set -x
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"; cp .gpu/dask_before.py "$SITE/dask_before.py"; cp .gpu/dask_layer.py "$SITE/dask_layer.py"
export CCL_REQUIRE_BACKENDS=cuda
( cd python/tests && timeout 150 python3 -m pytest -q -p no:cacheprovider test_dask.py -rs 2>&1 | tail -6 ) | tee $OUT/tests.log
export PYTHONPATH=$PWD/.gpu/stubs
timeout 420 python3 python/bench/large_bench.py dask $OUT/dask1024.json --side 1024 --chunk 256 --runs 7 --variants gpu:16,before:16,layer:16,gpu:16:0.005 2>&1 | grep -v -E "Warning|heartbeat|Traceback|^  |^Traceback|tornado|distributed.comm|^$" | tee $OUT/dask1024.log
