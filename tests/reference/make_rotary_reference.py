#!/usr/bin/python3
"""Writes tests/data/rotary_reference.json: independent reference values for rotary length extension.

The frequency formulas follow Hugging Face transformers' modeling_rope_utils.py (_compute_linear_scaling_rope_parameters,
_compute_dynamic_ntk_parameters, _compute_yarn_parameters with truncate=True, _compute_llama3_parameters), written
again here in NumPy float64 in the same steps as there; ntk is the NTK-aware base change b * s^(d/(d-2)); rerope and
leaky rerope follow design.md's P(m, n). Probe scores are logit_scale * sum_i 2 cos(P(r) theta'_i).
The cases are shapes the C++ code was not tuned on: odd pair counts, non-integer factors, YaRN with lo = hi and with
beta-fast = beta-slow.
Run: /usr/bin/python3 tests/reference/make_rotary_reference.py
"""
import json
import math
import os

import numpy as np


def inv_freq(dim, base):
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def linear(dim, base, p, L, n):
    return inv_freq(dim, base) / p["factor"], 1.0


def ntk(dim, base, p, L, n):
    return inv_freq(dim, base * p["factor"] ** (dim / (dim - 2))), 1.0


def dynamic_ntk(dim, base, p, L, n):
    factor = p["factor"]
    seq_len = max(n, L)  # HF: only grows past the original context
    if seq_len > L:
        base = base * ((factor * seq_len / L) - (factor - 1)) ** (dim / (dim - 2))
    return inv_freq(dim, base), 1.0


def yarn(dim, base, p, L, n):
    factor = p["factor"]
    beta_fast, beta_slow = p["beta-fast"], p["beta-slow"]

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    attention_factor = p.get("attention-factor", 0) or get_mscale(factor)

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings):
        low = math.floor(find_correction_dim(low_rot, dim, base, max_position_embeddings))
        high = math.ceil(find_correction_dim(high_rot, dim, base, max_position_embeddings))
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min_, max_, dim):
        if min_ == max_:
            max_ += 0.001
        linear_func = (np.arange(dim, dtype=np.float64) - min_) / (max_ - min_)
        return np.clip(linear_func, 0, 1)

    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, L)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2)
    freqs = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
             + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return freqs, attention_factor


def llama3(dim, base, p, L, n):
    inv = inv_freq(dim, base)
    factor, low_freq_factor, high_freq_factor = p["factor"], p["low-freq-factor"], p["high-freq-factor"]
    old_context_len = L
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv / factor, inv)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return np.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama), 1.0


def plain(dim, base, p, L, n):
    return inv_freq(dim, base), 1.0


METHODS = {"none": plain, "pi": linear, "ntk": ntk, "dynamic-ntk": dynamic_ntk, "yarn": yarn, "llama3": llama3,
           "rerope": plain, "leaky-rerope": plain}


def position(method, p, L, r):
    if method not in ("rerope", "leaky-rerope"):
        return float(r)
    w = p.get("window", 0) or max(1, L // 2)
    if r < w:
        return float(r)
    return float(w) if method == "rerope" else w + (r - w) / p["leak"]


CASES = [
    # method, dim, base, context L, length n, parameters (all of the method's, as the C++ fills defaults)
    ("none", 22, 10000.0, 32, 32, {}),
    ("pi", 22, 10000.0, 32, 32, {"factor": 2.5}),
    ("pi", 30, 500.0, 16, 16, {"factor": 3.7}),
    ("ntk", 22, 10000.0, 32, 32, {"factor": 2.5}),
    ("ntk", 30, 777.0, 20, 20, {"factor": 6.3}),
    ("dynamic-ntk", 22, 10000.0, 32, 100, {"factor": 1.0}),
    ("dynamic-ntk", 30, 10000.0, 32, 77, {"factor": 2.5}),
    ("dynamic-ntk", 22, 10000.0, 32, 20, {"factor": 2.5}),  # n < L: plain
    ("yarn", 64, 10000.0, 64, 64, {"factor": 16.0, "beta-fast": 32.0, "beta-slow": 1.0, "attention-factor": 0.0}),
    ("yarn", 22, 10000.0, 1000, 1000, {"factor": 2.5, "beta-fast": 32.0, "beta-slow": 1.0, "attention-factor": 0.0}),
    ("yarn", 30, 500.0, 300, 300, {"factor": 3.7, "beta-fast": 8.0, "beta-slow": 0.5, "attention-factor": 0.0}),
    # lo = hi = 0: L <= 2 pi beta-slow, both corrections clamp to 0
    ("yarn", 22, 10000.0, 4, 4, {"factor": 2.5, "beta-fast": 32.0, "beta-slow": 1.0, "attention-factor": 0.0}),
    # lo = hi = d - 1: floor(c(beta-fast)) = 9 and c(beta-slow) clamps to d - 1 = 9
    ("yarn", 10, 10.0, 16000, 16000, {"factor": 3.0, "beta-fast": 32.0, "beta-slow": 1.0, "attention-factor": 0.0}),
    ("yarn", 22, 10000.0, 200, 200, {"factor": 4.5, "beta-fast": 16.0, "beta-slow": 2.0, "attention-factor": 1.3}),
    ("llama3", 64, 10000.0, 64, 64, {"factor": 8.0, "low-freq-factor": 1.0, "high-freq-factor": 4.0}),
    ("llama3", 30, 10000.0, 100, 100, {"factor": 2.5, "low-freq-factor": 0.5, "high-freq-factor": 3.5}),
    ("llama3", 22, 500.0, 48, 48, {"factor": 5.5, "low-freq-factor": 1.5, "high-freq-factor": 6.0}),
    ("rerope", 22, 10000.0, 32, 64, {"window": 7.0}),
    ("rerope", 30, 10000.0, 20, 64, {"window": 0.0}),  # default window L/2
    ("leaky-rerope", 22, 10000.0, 32, 64, {"window": 9.0, "leak": 2.5}),
    ("leaky-rerope", 30, 500.0, 24, 64, {"window": 5.0, "leak": 16.0}),
    # original-context: a model fine-tuned at context 256 (train --init) whose method keeps the L it was first
    # trained at; the formulas read that L, not the model's context
    ("yarn", 16, 10000.0, 256, 1024, {"factor": 16.0, "beta-fast": 32.0, "beta-slow": 1.0, "attention-factor": 0.0,
                                      "original-context": 64.0}),
    ("llama3", 30, 10000.0, 300, 300, {"factor": 2.5, "low-freq-factor": 1.0, "high-freq-factor": 4.0,
                                       "original-context": 75.0}),
    ("dynamic-ntk", 22, 10000.0, 128, 200, {"factor": 2.5, "original-context": 32.0}),
    ("rerope", 22, 10000.0, 256, 64, {"window": 0.0, "original-context": 20.0}),  # default window: original L/2
    # YaRN with beta-fast = beta-slow (allowed, as in HF): one correction dimension c for both ends of the ramp.
    # c = 2.48: lo = 2, hi = 3, a ramp one pair wide
    ("yarn", 22, 10000.0, 200, 200, {"factor": 2.5, "beta-fast": 4.0, "beta-slow": 4.0, "attention-factor": 0.0}),
    # c = -0.55: lo = hi = 0 (floor clamps to 0, ceil is 0), so hi += 0.001
    ("yarn", 30, 500.0, 10, 10, {"factor": 3.7, "beta-fast": 2.0, "beta-slow": 2.0, "attention-factor": 0.0}),
    # c = 17.03 past the last pair: lo = 17 > hi = d - 1 = 9, every pair interpolated
    ("yarn", 10, 10.0, 16000, 16000, {"factor": 3.0, "beta-fast": 1.0, "beta-slow": 1.0, "attention-factor": 0.0}),
]


def main():
    out = []
    for method, dim, base, context, n, p in CASES:
        L = int(p.get("original-context", 0)) or context
        theta = inv_freq(dim, base)
        scaled, attention_factor = METHODS[method](dim, base, p, L, n)
        logit_scale = attention_factor ** 2
        distances = list(range(0, min(n, 96)))
        probe = [logit_scale * float(np.sum(2 * np.cos(position(method, p, L, r) * scaled))) for r in distances]
        out.append({"method": method, "dim": dim, "base": base, "context": context, "length": n, "parameters": p,
                    "theta": theta.tolist(), "theta_scaled": [float(x) for x in scaled],
                    "attention_factor": float(attention_factor), "logit_scale": float(logit_scale), "probe": probe})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "rotary_reference.json")
    with open(path, "w") as f:
        json.dump({"cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
