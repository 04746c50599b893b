#!/usr/bin/python3
"""Writes tests/data/fire_reference.json: an independent NumPy reference for FIRE (Li et al., ICLR 2024).

The bias follows the paper's reference code (the FIRE module of its appendix): positions m (query) and n (key),
  threshold = |L_multiplier * init_L|,  normaliser = log(|c * max(m, threshold)| + 1) + eps  (eps = 1e-6),
  x = log(|c * (m - n)| + 1) / normaliser,  bias_h = Linear(32 -> H)(ReLU(Linear(1 -> 32)(x))),
on the causal cells n <= m. Each case holds random MLP weights (not the lab's prior), c, init_L, L_multiplier, the
bias (H, N, N) of the causal cells (row m lists n = 0..m), and one causal attention forward (H, N, D): scores q.k / sqrt(D) + bias,
softmax over n <= m, times v, on random q, k, v. The shapes (head counts, lengths, head dims, thresholds below and
above the length) were not the ones the C++ code was written against.
Run: /usr/bin/python3 tests/reference/make_fire_reference.py
"""
import json
import os

import numpy as np

WIDTH = 32
EPS = 1e-6


def fire_bias(p, N):
    m = np.arange(N, dtype=np.float64)[:, None]
    n = np.arange(N, dtype=np.float64)[None, :]
    threshold = abs(p["l_multiplier"] * p["init_L"])
    normaliser = np.log(np.abs(p["c"] * np.maximum(m, threshold)) + 1) + EPS
    r = np.maximum(m - n, 0)
    x = np.log(np.abs(p["c"] * r) + 1) / normaliser  # (N, N)
    hidden = np.maximum(x[..., None] * np.array(p["w1"]) + np.array(p["b1"]), 0)  # (N, N, 32)
    w2 = np.array(p["w2"]).reshape(-1, WIDTH)  # (H, 32)
    bias = hidden @ w2.T + np.array(p["b2"])  # (N, N, H)
    return np.transpose(bias, (2, 0, 1))  # (H, N, N)


def attention(bias, q, k, v):
    H, N, D = q.shape
    scores = q @ np.transpose(k, (0, 2, 1)) / np.sqrt(D) + bias
    scores = np.where(np.tril(np.ones((N, N), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v


def g9(values):
    """9 significant digits: float32 inputs read back exactly, references far below the tests' tolerances."""
    return [None if v is None else float("%.9g" % v) for v in values]


def case(rng, heads, N, D, c, init_L, l_multiplier):
    p = {
        "heads": heads, "length": N, "dim": D, "c": c, "init_L": init_L, "l_multiplier": l_multiplier,
        "w1": rng.uniform(-1, 1, WIDTH).tolist(),
        "b1": rng.uniform(-1, 1, WIDTH).tolist(),
        "w2": rng.uniform(-0.5, 0.5, heads * WIDTH).tolist(),
        "b2": rng.uniform(-0.5, 0.5, heads).tolist(),
    }
    bias = fire_bias(p, N)
    q, k, v = (rng.standard_normal((heads, N, D)) for _ in range(3))
    p["bias"] = [[g9(bias[h, i, : i + 1].tolist()) for i in range(N)] for h in range(heads)]
    p["q"], p["k"], p["v"] = (g9(x.astype(np.float32).reshape(-1).tolist()) for x in (q, k, v))
    # The reference sees the float32 inputs the C++ code gets.
    q32, k32, v32 = (np.array(x, dtype=np.float32).astype(np.float64).reshape(heads, N, D)
                     for x in (p["q"], p["k"], p["v"]))
    p["out"] = g9(attention(bias, q32, k32, v32).reshape(-1).tolist())
    return p


def main():
    rng = np.random.default_rng(20240)
    cases = [
        case(rng, 3, 37, 6, 0.1, 512.0, 1.0),    # every row below the threshold: a function of m - n alone
        case(rng, 2, 45, 10, 0.37, 12.5, 1.0),   # rows past T = 12.5 normalised by their own position
        case(rng, 3, 29, 4, 2.3, 16.0, -0.55),   # a negative multiplier: T = |mu| init_L = 8.8
        case(rng, 1, 50, 8, 0.05, 3.0, 1.7),     # T = 5.1, most rows past it
    ]
    out = os.path.join(os.path.dirname(__file__), "..", "data", "fire_reference.json")
    with open(out, "w") as f:
        json.dump({"fire": cases}, f, separators=(",", ":"))
    print(out)


if __name__ == "__main__":
    main()
