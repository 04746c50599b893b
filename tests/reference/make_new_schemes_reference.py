#!/usr/bin/python3
"""Writes tests/data/new_schemes_reference.json: independent NumPy references for the schemes of issue 20.

Sections (each a list of cases on shapes the C++ code was not tuned on: odd pair counts, fractions whose f d is not
whole, keep values that round halves):
- "rope_shape": rope's `keep` (p-RoPE, Barbero et al. 2025) and `rotary-fraction` (GPT-NeoX's rotary_pct).
  r = int(d f) dims rotate (GPT-NeoX: rotary_ndims = int(head_dim * rotary_pct)), with Hugging Face's
  inv_freq = 1 / base^(arange(0, r, 2) / r); of those r/2 pairs the first floor(p r/2 + 0.5) keep their frequency and
  the rest get 0; pairs past r/2 get 0 (not rotated). Under yarn the method sees the rotated dims r as its d, as
  Hugging Face's _compute_yarn_parameters does with partial_rotary_factor. Each case holds theta, theta_scaled, the
  probe sum_i 2 cos(r theta'_i) and one causal attention forward (interleaved pairs (2i, 2i+1) rotated by m theta'_i,
  scores q.k / sqrt(D), softmax, times v) on random q, k, v.
- "nope_layers": which layers are NoPE under a schedule of interval K, as SmolLM3's and Llama 4's configs write it:
  no_rope_layers = [int((i + 1) % K != 0) for i in range(L)] (1: rope, 0: NoPE).
- "llama4_temperature": Hugging Face's Llama4TextAttention on a NoPE layer with attn_temperature_tuning:
  attn_scales = log1p(floor((position + 1) / floor_scale)) * attn_scale + 1, query_states * attn_scales, then causal
  attention without any positional encoding (and with logn's log(m+1)/log(L) past L when the case asks for it).
Run: /usr/bin/python3 tests/reference/make_new_schemes_reference.py
"""
import json
import math
import os

import numpy as np


def inv_freq(dim, base):
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def rope_shape_theta(dim, base, keep, fraction):
    r = int(dim * fraction)
    kept = int(math.floor(keep * (r // 2) + 0.5))
    theta = np.zeros(dim // 2)
    theta[:kept] = inv_freq(r, base)[:kept]
    return theta, r, kept


def yarn_scaled(theta, r, base, factor, context, beta_fast=32.0, beta_slow=1.0):
    """Hugging Face's _compute_yarn_parameters (truncate=True) over the r rotated dims; zero frequencies stay zero."""

    def correction_dim(rotations):
        return (r * math.log(context / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), r - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(len(theta), dtype=np.float64) - low) / (high - low), 0, 1)
    scaled = ramp * theta / factor + (1 - ramp) * theta
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return scaled, attention_factor


def rotate(x, theta, attention_factor):
    """x (N, D), interleaved pairs (2i, 2i+1) turned by m theta_i; cos and sin scaled by the attention factor."""
    n = x.shape[0]
    angles = np.arange(n, dtype=np.float64)[:, None] * theta[None, :]
    c, s = np.cos(angles) * attention_factor, np.sin(angles) * attention_factor
    out = x.copy()
    out[:, 0::2] = x[:, 0::2] * c - x[:, 1::2] * s
    out[:, 1::2] = x[:, 0::2] * s + x[:, 1::2] * c
    return out


def causal_attention(q, k, v):
    n, d = q.shape
    scores = q @ k.T / math.sqrt(d)
    scores[np.triu_indices(n, 1)] = -np.inf
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v


def rope_shape_cases(rng):
    cases = []
    # (dim, base, keep, rotary-fraction, method, factor, context, length, heads)
    shapes = [
        (12, 10000.0, 1.0, 1.0, "none", 1.0, 16, 9, 2),
        (12, 10000.0, 0.5, 1.0, "none", 1.0, 16, 9, 2),  # 3 of 6 pairs
        (10, 500.0, 0.5, 1.0, "none", 1.0, 16, 11, 1),  # 2.5 pairs: the half rounds up to 3
        (14, 10000.0, 0.3, 1.0, "none", 1.0, 16, 7, 3),  # 2.1 -> 2 of 7 pairs
        (16, 10000.0, 1.0, 0.25, "none", 1.0, 16, 10, 2),  # NeoX: 4 of 16 dims rotate
        (20, 1000.0, 1.0, 0.37, "none", 1.0, 16, 8, 2),  # int(7.4) = 7: refused (odd), so 0.42 below
        (20, 1000.0, 1.0, 0.42, "none", 1.0, 16, 8, 2),  # int(8.4) = 8 dims
        (18, 10000.0, 0.6, 0.5, "none", 1.0, 16, 9, 2),  # r = 9: refused; kept for the message test
        (24, 10000.0, 0.75, 0.5, "none", 1.0, 16, 13, 2),  # r = 12, 6 pairs, 4.5 -> 5 kept
        (32, 10000.0, 1.0, 0.5, "yarn", 4.0, 16, 24, 1),  # yarn over the 16 rotated dims
        (24, 5000.0, 0.5, 1.0, "pi", 3.0, 16, 12, 2),
    ]
    for dim, base, keep, fraction, method, factor, context, length, heads in shapes:
        theta, r, kept = rope_shape_theta(dim, base, keep, fraction)
        case = {"dim": dim, "base": base, "keep": keep, "rotary_fraction": fraction, "method": method,
                "factor": factor, "context": context, "length": length, "heads": heads, "rotated_dims": r,
                "kept_pairs": kept}
        if r < 2 or r % 2:
            case["refused"] = True
            cases.append(case)
            continue
        attention_factor = 1.0
        if method == "none":
            scaled = theta.copy()
        elif method == "pi":
            scaled = theta / factor
        else:
            scaled, attention_factor = yarn_scaled(theta, r, base, factor, context)
        distances = np.arange(length, dtype=np.float64)
        probe = attention_factor ** 2 * np.array([2 * np.cos(d * scaled).sum() for d in distances])
        # Four decimals: the C++ test reads them as float, within 3e-8 of the values used here.
        q, k, v = (np.round(rng.standard_normal((heads, length, dim)), 4) for _ in range(3))
        out = np.stack([causal_attention(rotate(q[h], scaled, attention_factor),
                                         rotate(k[h], scaled, attention_factor), v[h]) for h in range(heads)])
        case.update({"theta": theta.tolist(), "theta_scaled": scaled.tolist(), "attention_factor": attention_factor,
                     "probe": probe.tolist(), "q": q.ravel().tolist(), "k": k.ravel().tolist(),
                     "v": v.ravel().tolist(), "out": np.round(out.ravel(), 9).tolist()})
        cases.append(case)
    return cases


def nope_layer_cases():
    return [{"layers": layers, "interval": k, "no_rope_layers": [int((i + 1) % k != 0) for i in range(layers)]}
            for layers, k in [(4, 4), (8, 4), (7, 3), (5, 2), (36, 4)]]


def llama4_temperature_cases(rng):
    cases = []
    # (floor_scale, attn_scale, logn context or 0, length, heads, dim): small floor scales so that the floor steps
    # inside the sequence.
    for floor_scale, attn_scale, context, length, heads, dim in [(3.0, 0.7, 0, 11, 2, 6), (4.0, 0.1, 0, 13, 1, 8),
                                                                 (2.5, 1.3, 5, 9, 2, 4), (8192.0, 0.1, 0, 7, 1, 6)]:
        positions = np.arange(length, dtype=np.float64)
        scale = np.log1p(np.floor((positions + 1.0) / floor_scale)) * attn_scale + 1.0
        row = scale.copy()
        if context:
            row *= np.where(positions + 1 > context, np.log(positions + 1) / math.log(context), 1.0)
        q, k, v = (np.round(rng.standard_normal((heads, length, dim)), 4) for _ in range(3))
        out = np.stack([causal_attention(q[h] * row[:, None], k[h], v[h]) for h in range(heads)])
        cases.append({"floor_scale": floor_scale, "attn_scale": attn_scale, "context": context, "length": length,
                      "heads": heads, "dim": dim, "attn_scales": scale.tolist(), "row_scale": row.tolist(),
                      "q": q.ravel().tolist(), "k": k.ravel().tolist(), "v": v.ravel().tolist(),
                      "out": np.round(out.ravel(), 9).tolist()})
    return cases


def main():
    rng = np.random.default_rng(20)
    data = {"rope_shape": rope_shape_cases(rng), "nope_layers": nope_layer_cases(),
            "llama4_temperature": llama4_temperature_cases(rng)}
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "new_schemes_reference.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)
    print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
