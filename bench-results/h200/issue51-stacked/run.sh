set -u
bash .gpu/prep.sh
python3 -m pip install -q --no-deps --no-index --target /tmp/site .gpu/py/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
CCL_TEST_FULL=1 python3 -m pytest -q -x python/tests/test_gpu_arrays.py 2>&1 | tail -4
python3 python/bench/batch_bench.py $OUT/bb --device cuda:0 2>&1 | grep -v "^$"
export CCL_TEST_FULL=1
bash .gpu/run.sh tests 2>&1 | tail -40
