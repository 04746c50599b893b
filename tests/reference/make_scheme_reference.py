#!/usr/bin/python3
"""Writes tests/data/scheme_reference.json: independent reference values for the scheme tests.

ALiBi slopes follow the official repository's get_slopes (ofirpress/attention_with_linear_biases);
T5 buckets follow Hugging Face's T5Attention._relative_position_bucket, run in PyTorch exactly as there;
dot products, probes and kernels are closed forms evaluated in float64 with NumPy.
Run: /usr/bin/python3 tests/reference/make_scheme_reference.py
"""
import json
import math
import os

import numpy as np
import torch


def get_slopes(n):  # verbatim logic of the official ALiBi code
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # Hugging Face transformers T5Attention._relative_position_bucket
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def main():
    out = {}
    out["alibi_slopes"] = {str(h): get_slopes(h) for h in (1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 64)}

    rel = torch.arange(-300, 301)
    t5 = []
    for bidir in (False, True):
        for nb, maxd in ((32, 128), (16, 64), (8, 20)):
            t5.append({"bidirectional": bidir, "num_buckets": nb, "max_distance": maxd, "rel_min": -300,
                       "buckets": relative_position_bucket(rel, bidir, nb, maxd).tolist()})
    out["t5"] = t5

    dist = [0, 1, 2, 5, 10, 50, 100, 1000, 4095]
    dots = []
    for d, base in ((128, 10000.0), (64, 10000.0), (16, 100.0)):
        i = np.arange(d // 2)
        w = base ** (-2.0 * i / d)
        dots.append({"dim": d, "base": base, "distance": dist,
                     "dot": [float(np.cos(r * w).sum()) for r in dist]})
    out["sinusoidal_dot"] = dots

    probes = []
    for d, base, gamma, sb in ((64, 10000.0, 0.4, 512.0), (32, 500.0, 0.8, 64.0)):
        i = np.arange(d // 2)
        th = base ** (-2.0 * i / d)
        zeta = (2 * i + gamma * d) / ((1 + gamma) * d)
        probes.append({"dim": d, "base": base, "gamma": gamma, "scale_base": sb, "distance": dist,
                       "rope": [float((2 * np.cos(r * th)).sum()) for r in dist],
                       "xpos": [float((2 * np.cos(r * th) * zeta ** (r / sb)).sum()) for r in dist]})
    out["rotary_probe"] = probes

    kern = []
    for r1, r2 in ((1.0, 1.0), (0.5, 1.5), (2.0, 0.25)):
        kern.append({"r1": r1, "r2": r2, "distance": dist,
                     "power": [float(-r1 * abs(r) ** r2) for r in dist],
                     "log": [float(-r1 * math.log1p(r2 * abs(r))) for r in dist]})
    out["kerple"] = kern

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "scheme_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
    print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
