#!/usr/bin/python3
"""Writes tests/data/cope_reference.json: an independent NumPy reference for CoPE (Golovneva et al. 2024).

The forward follows the paper's reference code (its CoPE module and SelfAttn), on whole matrices per head:
  attn_logits = q k^T / sqrt(D) + log(causal mask)
  gates = sigmoid(attn_logits);  pos = gates.flip(-1).cumsum(-1).flip(-1).clamp(max=npos_max - 1)
  logits_int = q @ pos_emb  (pos_emb: (D, npos_max), shared by the heads)
  bias = logits_int[ceil(pos)] * w + logits_int[floor(pos)] * (1 - w),  w = pos - floor(pos)
  out = softmax(attn_logits + bias) @ v
The backward is the chain rule written out on the same matrices (autograd's conventions: the floor and ceil carry
no gradient, the clamp passes none past npos_max - 1), and the script checks it against central differences in
float64 before writing (only at perturbations that leave every floor and ceil where they were: the difference
quotient must not cross the kink at an integer position). Each case holds q, k, v, pos_emb, dOut (random), and out, lse, positions, bias (causal cells,
row-major (slices, N, N), 0 above the diagonal), dq, dk, dv, dpos_emb. The shapes were not the C++ code's.
Run: /usr/bin/python3 tests/reference/make_cope_reference.py
"""
import json
import os

import numpy as np


def forward(q, k, v, E):
    S, N, D = q.shape
    P = E.shape[1]
    mask = np.tril(np.ones((N, N), dtype=bool))
    a = np.einsum("snd,smd->snm", q, k) / np.sqrt(D)
    gates = np.where(mask, 1 / (1 + np.exp(-a)), 0.0)
    raw = np.flip(np.cumsum(np.flip(gates, -1), -1), -1)
    pos = np.minimum(raw, P - 1)
    z = q @ E  # (S, N, P)
    lo = np.floor(pos).astype(int)
    hi = np.ceil(pos).astype(int)
    w = pos - lo
    zlo = np.take_along_axis(z, lo, -1)
    zhi = np.take_along_axis(z, hi, -1)
    bias = np.where(mask, zhi * w + zlo * (1 - w), 0.0)
    scores = np.where(mask, a + bias, -np.inf)
    top = scores.max(-1, keepdims=True)
    e = np.exp(scores - top)
    lse = top[..., 0] + np.log(e.sum(-1))
    p = e / e.sum(-1, keepdims=True)
    out = p @ v
    return dict(a=a, gates=gates, raw=raw, pos=pos, z=z, lo=lo, hi=hi, w=w, zlo=zlo, zhi=zhi, bias=bias, p=p,
                out=out, lse=lse, mask=mask)


def backward(q, k, v, E, dout, f):
    S, N, D = q.shape
    P = E.shape[1]
    p, mask = f["p"], f["mask"]
    dv = np.einsum("snm,snd->smd", p, dout)
    dp = dout @ np.transpose(v, (0, 2, 1))
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))  # d loss / d scores
    # bias = zhi w + zlo (1 - w)
    dzhi = ds * f["w"]
    dzlo = ds * (1 - f["w"])
    dpos = ds * (f["zhi"] - f["zlo"]) * (f["raw"] <= P - 1)
    dz = np.zeros_like(f["z"])
    for s in range(S):
        for n in range(N):
            np.add.at(dz[s, n], f["hi"][s, n][mask[n]], dzhi[s, n][mask[n]])
            np.add.at(dz[s, n], f["lo"][s, n][mask[n]], dzlo[s, n][mask[n]])
    # raw[n, m] = sum_{t >= m} gates[n, t]  ->  dgates[n, t] = sum_{m <= t} dpos[n, m]
    dgates = np.cumsum(np.where(mask, dpos, 0.0), -1)
    da = np.where(mask, ds + dgates * f["gates"] * (1 - f["gates"]), 0.0) / np.sqrt(D)
    dq = da @ k + dz @ E.T
    dk = np.einsum("snm,snd->smd", da, q)
    dE = np.einsum("snd,snp->dp", q, dz)
    return dq, dk, dv, dE


def loss(q, k, v, E, dout):
    return float((forward(q, k, v, E)["out"] * dout).sum())


def check_gradients(q, k, v, E, dout, grads, rng):
    h = 1e-6
    base = forward(q, k, v, E)
    for name, x, g in zip("qkvE", (q, k, v, E), grads):
        checked = 0
        while checked < 12:
            idx = tuple(rng.integers(0, n) for n in x.shape)
            old = x[idx]
            x[idx] = old + h
            fu = forward(q, k, v, E)
            up = float((fu["out"] * dout).sum())
            x[idx] = old - h
            fd = forward(q, k, v, E)
            down = float((fd["out"] * dout).sum())
            x[idx] = old
            if any(np.any(f[key] != base[key]) for f in (fu, fd) for key in ("lo", "hi")):
                continue  # the step crossed an integer position
            checked += 1
            numeric = (up - down) / (2 * h)
            assert abs(numeric - g[idx]) <= 1e-6 + 1e-5 * abs(numeric), (name, idx, numeric, g[idx])


def make_case(rng, S, N, D, P, spread):
    q = rng.normal(0, spread, (S, N, D))
    k = rng.normal(0, spread, (S, N, D))
    v = rng.normal(0, 1, (S, N, D))
    E = rng.normal(0, 0.5, (D, P))
    dout = rng.normal(0, 1, (S, N, D))
    f = forward(q, k, v, E)
    grads = backward(q, k, v, E, dout, f)
    check_gradients(q, k, v, E, dout, grads, rng)
    flat = lambda x: [float(t) for t in np.asarray(x).ravel()]
    return {"slices": S, "length": N, "head_dim": D, "npos_max": P, "q": flat(q), "k": flat(k), "v": flat(v),
            "pos_emb": flat(E), "dout": flat(dout), "out": flat(f["out"]), "lse": flat(f["lse"]),
            "positions": flat(np.where(f["mask"], f["pos"], 0.0)), "bias": flat(f["bias"]),
            "dq": flat(grads[0]), "dk": flat(grads[1]), "dv": flat(grads[2]), "dpos_emb": flat(grads[3])}


def main():
    rng = np.random.default_rng(20240528)
    # (slices, N, D, npos_max, spread of q and k): npos_max below N clamps the far positions; above N it does not.
    shapes = [(2, 9, 4, 5, 1.2), (3, 14, 6, 32, 0.9), (1, 23, 10, 7, 1.5), (2, 6, 3, 6, 2.0)]
    cases = [make_case(rng, *shape) for shape in shapes]
    path = os.path.join(os.path.dirname(__file__), "..", "data", "cope_reference.json")
    with open(path + ".tmp", "w") as out:
        json.dump({"cases": cases}, out)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
