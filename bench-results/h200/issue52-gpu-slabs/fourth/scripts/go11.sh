# Call 11 (2026-12-04): the GPU tests of dask, slabs and GPU arrays after the review's mend (d620b0f).
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/*.whl 2>&1 | tail -3
SITE=$(python3 -c "import ccl, os; print(os.path.dirname(ccl.__file__))")
cp python/ccl/*.py "$SITE/"
export CCL_REQUIRE_BACKENDS=cuda
( cd python/tests && timeout 200 python3 -m pytest -q -p no:cacheprovider test_dask.py test_gpu_arrays.py test_large.py -rs 2>&1 | tail -6 ) | tee $OUT/tests.log
