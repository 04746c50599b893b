#!/usr/bin/python3
"""Writes tests/data/fox_reference.json: an independent NumPy reference for FoX (Lin et al., ICLR 2025).

Forgetting attention as the paper and its reference code (forgetting_transformer, ops/forgetting_attention.py and
the layer's fgate_proj) define it: per head a forget-gate logit z_t (the lab's w_h . x_t + b_h), log f_t =
logsigmoid(z_t), F = cumsum(log f) over t, and the causal scores q_m . k_n / sqrt(D) + F_m - F_n, softmax over n <= m,
times v. Everything in float64. Each case holds random gate logits z (H, N), q, k, v (H, N, D), the expected F (H, N)
and out (H, N, D), and the bias F_m - F_n of a few rows. The shapes (head counts, lengths past one 64-row block,
odd head dims) and the gate ranges (mild, strongly forgetting, nearly 1) were not the ones the C++ code was
written against. Each case also holds an upstream gradient dOut (H, N, D) and the gradients of loss = sum(dOut * out)
with respect to q, k, v and F: central finite differences of this float64 forward (step 1e-6), as
make_self_extend_reference.py does, so the C++ backward is checked against no formula of its own.
Run: /usr/bin/python3 tests/reference/make_fox_reference.py
"""
import json
import os

import numpy as np


def log_sigmoid(z):
    # the stable form: min(z, 0) - log1p(exp(-|z|))
    return np.minimum(z, 0) - np.log1p(np.exp(-np.abs(z)))


def forgetting_attention(z, q, k, v):
    F = np.cumsum(log_sigmoid(z), axis=-1)  # (H, N)
    return F, attention_given_F(F, q, k, v)


def attention_given_F(F, q, k, v):
    H, N, D = q.shape
    scores = q @ np.transpose(k, (0, 2, 1)) / np.sqrt(D) + F[:, :, None] - F[:, None, :]
    scores = np.where(np.tril(np.ones((N, N), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v


def finite_difference_gradients(F, q, k, v, d_out, step=1e-6):
    """d sum(d_out * out) / d x for x in q, k, v, F: central differences, one element at a time."""
    grads = []
    for x in (q, k, v, F):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            saved = x[i]
            x[i] = saved + step
            up = np.sum(d_out * attention_given_F(F, q, k, v))
            x[i] = saved - step
            down = np.sum(d_out * attention_given_F(F, q, k, v))
            x[i] = saved
            g[i] = (up - down) / (2 * step)
        grads.append(g)
    return grads


def make_case(rng, heads, length, dim, gate_mean, gate_spread, gradient_seed):
    z = rng.normal(gate_mean, gate_spread, size=(heads, length))
    q = rng.normal(size=(heads, length, dim))
    k = rng.normal(size=(heads, length, dim))
    v = rng.normal(size=(heads, length, dim))
    # float32 inputs, as the kernel reads them
    z, q, k, v = (x.astype(np.float32).astype(np.float64) for x in (z, q, k, v))
    F, out = forgetting_attention(z, q, k, v)
    rows = sorted({0, 1, length // 2, length - 1})
    bias_rows = [[[float(F[h, m] - F[h, n]) for n in range(m + 1)] for m in rows] for h in range(heads)]
    def inputs(x):  # float32 values: 9 significant digits give them back exactly
        return [float(f"{value:.9g}") for value in x.ravel()]

    def results(x):  # 12 digits, far below the tests' tolerances
        return [float(f"{value:.12g}") for value in np.ravel(x)]

    def gradients(x):  # differences good to about 1e-9: 10 digits
        return [float(f"{value:.10g}") for value in np.ravel(x)]

    # dOut from a generator of its own: the cases' other inputs stay the draws they were before gradients came.
    d_out = np.random.default_rng(gradient_seed).normal(size=(heads, length, dim)).astype(np.float32).astype(np.float64)
    # F as the kernel reads it (float64 from float32 logits), the values the differences are taken around
    dq, dk, dv, dF = finite_difference_gradients(F.copy(), q, k, v, d_out)
    return {
        "heads": heads, "length": length, "dim": dim, "gate_mean": gate_mean,
        "z": inputs(z), "q": inputs(q), "k": inputs(k), "v": inputs(v),
        "F": results(F), "out": results(out), "bias_rows": rows,
        "bias": [[results(row) for row in head] for head in bias_rows],
        "dOut": inputs(d_out), "dq": gradients(dq), "dk": gradients(dk), "dv": gradients(dv), "dF": gradients(dF),
    }


def main():
    rng = np.random.default_rng(20250302)
    cases = [
        make_case(rng, 3, 37, 5, 0.0, 1.0, 1),     # the reference code's start: f around 1/2
        make_case(rng, 2, 90, 6, -3.0, 2.0, 2),    # strongly forgetting: f around 0.05
        make_case(rng, 1, 70, 7, 4.0, 1.0, 3),     # nearly 1: little forgetting
        make_case(rng, 4, 19, 16, 1.0, 3.0, 4),    # wide spread of gates
    ]
    path = os.path.join(os.path.dirname(__file__), "..", "data", "fox_reference.json")
    with open(path, "w") as f:
        json.dump({"fox": cases}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
