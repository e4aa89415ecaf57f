import time, numpy as np, ccl
from ccl import _ccl
b = (np.random.default_rng(0).random((64, 2048, 2048)) < .5).view(np.uint8)
def t(name, f, n=4):
    f()
    xs = []
    for _ in range(n):
        s = time.perf_counter(); r = f(); xs.append((time.perf_counter() - s) * 1e3); del r
    print(f"{name}: {sorted(xs)[len(xs)//2]:.1f} ms  pool {[x >> 20 for x in _ccl._pool_usage()]}", flush=True)
t("label_batch 64", lambda: ccl.label_batch(b))
t("8 x label_batch of 8 slices", lambda: [ccl.label_batch(b[i:i+8]) for i in range(0, 64, 8)])
t("8 x np.stack of 8", lambda: [np.stack(list(b[i:i+8])) for i in range(0, 64, 8)])
t("8 x label_batch(np.stack 8)", lambda: [ccl.label_batch(np.stack(list(b[i:i+8]))) for i in range(0, 64, 8)])
for c in (4, 8, 16, 32):
    t(f"label_iter chunk {c}", lambda: list(ccl.label_iter(iter(b), chunk=c)))
t("label_iter chunk 8, results dropped", lambda: [None for _ in ccl.label_iter(iter(b), chunk=8)])
from concurrent.futures import ThreadPoolExecutor
def on_thread():
    with ThreadPoolExecutor(1) as w:
        return [w.submit(ccl.label_batch, b[i:i+8]).result() for i in range(0, 64, 8)]
t("8 x label_batch of 8 on a thread", on_thread)
