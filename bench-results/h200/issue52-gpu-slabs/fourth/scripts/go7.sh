# Call 7 (2026-12-04): ccl.dask with one graph layer and a chunk's pairs in one native call
# ("gpu"), the same with host arrays mapped ahead ("mapped"), 277fe75's ("before") and the one
# layer alone ("layer"), in one run; the GPU tests of dask and slabs first.
set -x
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"; for v in before layer mapped; do cp .gpu/dask_$v.py "$SITE/dask_$v.py"; done
export CCL_REQUIRE_BACKENDS=cuda
( cd python/tests && timeout 200 python3 -m pytest -q -p no:cacheprovider test_dask.py test_gpu_arrays.py test_large.py -rs 2>&1 | tail -6 ) | tee $OUT/tests.log
export PYTHONPATH=$PWD/.gpu/stubs
timeout 360 python3 python/bench/large_bench.py dask $OUT/dask1024.json --side 1024 --chunk 256 --runs 7 --variants gpu:16,mapped:16,before:16,layer:16 2>&1 | grep -v -E "Warning|heartbeat|Traceback|^  |^Traceback|tornado|distributed.comm|^$" | tee $OUT/dask1024.log
