# Speed of the positionlab module (a benchmark, not a test: no assertions): the call overhead of bias() at N = 16, and
# attention() at N = 4096 against `positionlab-cli bench attention` on the same shapes, alternated in one run.
# Usage: PYTHONPATH=build/python python3 python/tests/bench_python.py [path/to/positionlab-cli] [rounds]
import json
import os
import subprocess
import sys
import time
import timeit

import numpy as np

import positionlab as pl

cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "bin", "positionlab-cli")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
threads = int(os.environ.get("OMP_NUM_THREADS", "2"))
print("load average before:", os.getloadavg())

n = 20000
for heads, bias_threads in ((8, None), (1, None), (8, 1), (1, 1)):
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        pl.bias("alibi", 16, heads=heads, threads=bias_threads)
    print("bias('alibi', 16, heads=%d, threads=%s): %.1f us wall, %.1f us CPU a call (%d calls)" % (
        heads, bias_threads, (time.perf_counter() - t0) / n * 1e6, (time.process_time() - c0) / n * 1e6, n))

H, N, D = 8, 4096, 64
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((H, N, D), dtype=np.float32) for _ in range(3))
flops = None
py_ms, py_cpu, cli_ms, cli_cpu = [], [], [], []
for r in range(rounds):
    for scheme in ("alibi",):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(5):
            pl.attention(q, k, v, scheme, threads=threads)
        py_ms.append((time.perf_counter() - t0) / 5 * 1e3)
        py_cpu.append((time.process_time() - c0) / 5 * 1e3)
        out = subprocess.run([cli, "bench", "attention", scheme, "--length", str(N), "--heads", str(H), "--dim",
                              str(D), "--repeat", "5", "--threads", str(threads), "--json"],
                             capture_output=True, text=True, check=True).stdout
        j = json.loads(out)
        j = j[0] if isinstance(j, list) else j
        j = j.get("attention", j) if isinstance(j, dict) else j
        cli_ms.append(j["forward_ms"])
        cli_cpu.append(j["forward_cpu_ms"])
        flops = j["flops"]
print("attention alibi causal H=%d N=%d D=%d threads=%d, %d rounds alternated:" % (H, N, D, threads, rounds))
print("  python  wall ms per call (mean of 5) by round:", ["%.1f" % x for x in py_ms], " CPU ms:",
      ["%.1f" % x for x in py_cpu])
print("  cli     forward median ms by round:          ", ["%.1f" % x for x in cli_ms], " CPU ms:",
      ["%.1f" % x for x in cli_cpu])
print("  ratio python/cli wall (best round each): %.3f; CPU: %.3f" % (min(py_ms) / min(cli_ms),
                                                                    min(py_cpu) / min(cli_cpu)))
print("  GFLOP per CPU-second: python %.1f, cli %.1f" % (flops / min(py_cpu) * 1e-6, flops / min(cli_cpu) * 1e-6))
print("load average after:", os.getloadavg())
