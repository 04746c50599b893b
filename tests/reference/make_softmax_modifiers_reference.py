#!/usr/bin/python3
"""Writes tests/data/softmax_modifiers_reference.json: an independent NumPy reference for the softmax-side modifiers.

- SSMax (scalable softmax, Nakanishi 2025): the scores of query m, (q.k / sqrt(D) + bias), are multiplied by
  s_h * log(n), n the number of keys the query attends over (causal: m + 1), s_h learned per head.
- A sink logit (gpt-oss, Hugging Face's eager_attention_forward for GptOss): per head a logit z_h is concatenated to
  every row's scores as one more column, the softmax runs over the row and the sink, and the sink's column is dropped
  before the product with v (so a row's probabilities sum to less than 1).
Each case: scheme none or alibi (bias -slope_h (m - n), slopes 2^(-8(h+1)/H) for H a power of two), causal, random
q, k, v and per-head s, z; the output (H, N, D) and the row log-sum-exp (with the sink's column) of one forward.
Run: /usr/bin/python3 tests/reference/make_softmax_modifiers_reference.py
"""
import json
import os

import numpy as np


def g9(values):
    return [float("%.9g" % v) for v in values]


def case(rng, scheme, heads, N, D, ssmax, sink):
    q, k, v = (rng.standard_normal((heads, N, D)).astype(np.float32) for _ in range(3))
    s = rng.uniform(0.2, 0.9, heads) if ssmax else None
    z = rng.uniform(-1.5, 2.5, heads) if sink else None
    c = {"scheme": scheme, "heads": heads, "length": N, "dim": D}
    for name, x in (("q", q), ("k", k), ("v", v)):
        c[name] = g9(x.reshape(-1).tolist())
    q, k, v = (np.array(c[name], dtype=np.float64).reshape(heads, N, D) for name in ("q", "k", "v"))
    m = np.arange(N)[:, None]
    n = np.arange(N)[None, :]
    scores = q @ np.transpose(k, (0, 2, 1)) / np.sqrt(D)
    if scheme == "alibi":
        slopes = 2.0 ** (-8.0 * (np.arange(heads) + 1) / heads)
        scores = scores - slopes[:, None, None] * (m - n)[None]
    if ssmax:
        c["ssmax_scales"] = g9(s.tolist())
        s = np.array(c["ssmax_scales"])
        scores = scores * (s[:, None, None] * np.log(m + 1.0)[None])
    scores = np.where((n <= m)[None], scores, -np.inf)
    if sink:
        c["sink_logits"] = g9(z.tolist())
        z = np.array(c["sink_logits"])
        column = np.broadcast_to(z[:, None, None], (heads, N, 1))
        scores = np.concatenate([scores, column], axis=-1)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    p = (e / total)[..., :N]  # the sink's column dropped after the softmax
    c["out"] = g9((p @ v).reshape(-1).tolist())
    c["lse"] = g9((top + np.log(total)).reshape(-1).tolist())
    return c


def main():
    rng = np.random.default_rng(2025)
    cases = [
        case(rng, "none", 2, 23, 6, True, False),
        case(rng, "alibi", 4, 31, 4, True, False),
        case(rng, "none", 3, 19, 10, False, True),
        case(rng, "alibi", 2, 41, 8, False, True),
        case(rng, "alibi", 4, 27, 6, True, True),
    ]
    out = os.path.join(os.path.dirname(__file__), "..", "data", "softmax_modifiers_reference.json")
    with open(out, "w") as f:
        json.dump({"cases": cases}, f, separators=(",", ":"))
    print(out)


if __name__ == "__main__":
    main()
