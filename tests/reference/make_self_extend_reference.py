#!/usr/bin/python3
"""Writes tests/data/self_extend_reference.json: causal rope attention under Self-Extend, forward and gradients.

Independent of PositionLab's kernel: the score of query m and key n is written from the remapped position itself,
P(m, n) = m - n when m - n < w, else floor(m/G) - floor(n/G) + w - floor(w/G) (Jin et al., ICML 2024), as
q^T R(-P theta) k per rotated pair (c (q_a k_a + q_b k_b) + s (q_a k_b - q_b k_a)) plus the plain product of the dims
that do not turn, over sqrt(D); theta_i = base^(-2i/r) over the r rotated dims. The kernel instead rotates q and k at
grouped positions in a second pass. Pairs are (2i, 2i + 1) or, with "rotate_half", (i, i + r/2) as Hugging Face's.
Gradients of loss = sum(dOut * out) are central finite differences of this float64 forward (step 1e-6).
The shapes were not used to tune the kernel: odd lengths, a window not a multiple of G, G > w, partial rotary.
Run: /usr/bin/python3 tests/reference/make_self_extend_reference.py
"""
import json
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "self_extend_reference.json")


def position(m, n, group, window):
    if m - n < window:
        return m - n
    return m // group - n // group + window - window // group


def forward(q, k, v, case):
    """q, k, v: (H, N, D) float64; returns out (H, N, D) and the row log-sum-exp (H, N)."""
    H, N, D = q.shape
    r = case["rotary_dims"]
    pairs = r // 2
    theta = case["base"] ** (-2.0 * np.arange(pairs) / r)
    if case["pairing"] == "rotate_half":
        a, b = np.arange(pairs), np.arange(pairs) + pairs
    else:
        a, b = 2 * np.arange(pairs), 2 * np.arange(pairs) + 1
    rest = np.arange(r, D)
    out = np.zeros_like(q)
    lse = np.zeros((H, N))
    for h in range(H):
        for m in range(N):
            P = np.array([position(m, n, case["group"], case["window"]) for n in range(m + 1)], dtype=np.float64)
            angle = P[:, None] * theta[None, :]  # (m + 1, pairs)
            qm, kn = q[h, m], k[h, : m + 1]
            s = np.sum(np.cos(angle) * (qm[a] * kn[:, a] + qm[b] * kn[:, b]) +
                       np.sin(angle) * (qm[a] * kn[:, b] - qm[b] * kn[:, a]), axis=1)
            s += kn[:, rest] @ qm[rest]
            scores = s / math.sqrt(D)
            top = scores.max()
            p = np.exp(scores - top)
            lse[h, m] = top + math.log(p.sum())
            p /= p.sum()
            out[h, m] = p @ v[h, : m + 1]
    return out, lse


def gradients(q, k, v, d_out, case, step=1e-6):
    grads = []
    for which in range(3):
        x = [q, k, v][which]
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            saved = x[i]
            x[i] = saved + step
            up = np.sum(d_out * forward(q, k, v, case)[0])
            x[i] = saved - step
            down = np.sum(d_out * forward(q, k, v, case)[0])
            x[i] = saved
            g[i] = (up - down) / (2 * step)
        grads.append(g)
    return grads


def main():
    cases = [
        # the lab's own layout: every dim turns in adjacent pairs
        {"name": "interleaved G=3 w=5", "heads": 2, "length": 21, "dim": 8, "rotary_dims": 8,
         "pairing": "interleaved", "base": 10000.0, "group": 3, "window": 5},
        # G larger than the window (floor(w/G) = 0), an odd pair count
        {"name": "interleaved G=6 w=4 D=6", "heads": 1, "length": 19, "dim": 6, "rotary_dims": 6,
         "pairing": "interleaved", "base": 500.0, "group": 6, "window": 4},
        # Hugging Face's layout: rotate_half, partial rotary (4 of 12 dims), as gpt_neox's rotary_pct
        {"name": "rotate_half partial r=4 G=4 w=7", "heads": 1, "length": 37, "dim": 12, "rotary_dims": 4,
         "pairing": "rotate_half", "base": 10000.0, "group": 4, "window": 7},
    ]
    rng = np.random.default_rng(2024)
    written = []
    for case in cases:
        shape = (case["heads"], case["length"], case["dim"])
        # float32-representable inputs, so the C++ side reads exactly these values
        q, k, v, d_out = (rng.standard_normal(shape).astype(np.float32).astype(np.float64) for _ in range(4))
        out, lse = forward(q, k, v, case)
        dq, dk, dv = gradients(q, k, v, d_out, case)
        entry = dict(case)
        for name, x in [("q", q), ("k", k), ("v", v), ("dOut", d_out)]:
            entry[name] = [float("%.9g" % t) for t in x.ravel()]
        for name, x in [("out", out), ("lse", lse), ("dq", dq), ("dk", dk), ("dv", dv)]:
            entry[name] = [float("%.10g" % t) for t in x.ravel()]
        written.append(entry)
    with open(OUT, "w") as f:
        json.dump({"generator": "tests/reference/make_self_extend_reference.py", "cases": written}, f)
        f.write("\n")
    print(OUT, [c["name"] for c in written])


if __name__ == "__main__":
    main()
