"""The devices the tests run on: every device ccl finds in full mode (``CCL_TEST_FULL=1``, as
``scripts/test.sh --full`` sets it), else only the first one (``ccl.devices()`` lists GPUs
first, then OpenCL CPUs, then the CPU reference)."""

import os

import ccl

ALL_DEVICES = [d[0] for d in ccl.devices()]
DEVICES = ALL_DEVICES if os.environ.get("CCL_TEST_FULL") == "1" else ALL_DEVICES[:1]
