#!/usr/bin/python3
"""Writes tests/data/model_reference.safetensors: a tiny PositionLab transformer in PyTorch (float64, autograd).

The same parameters and tokens are run through the model once per positional scheme; the file keeps the
parameters, the tokens, and per case the per-token losses and the gradient of the mean loss with respect to every
parameter. The C++ forward and backward (tests/core/tst_model.cpp) must reproduce them. A weighted case (as the task
runs' answer masks weigh the loss) takes the weighted mean sum(w l) / sum(w) with per-token weights w of 0, 1 and
others, kept as NAME/weights.

The model is written from the design notes' formulas, independently of the C++ code: byte embedding (+ sinusoidal or
learned absolute positions; with sinusoids the token embedding is scaled by sqrt(d_model)), pre-LayerNorm blocks (causal multi-head attention with the scheme's bias, mask, rotary
and logn modifier; GELU-tanh MLP), final LayerNorm, tied output head, mean cross-entropy.
Run: /usr/bin/python3 tests/reference/make_model_reference.py
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

LAYERS, C, H, FF, V = 2, 8, 2, 16, 256
D = C // H
B, T = 2, 12
CONTEXT = 16

CASES = [
    # name, scheme, settings, context, logn
    ("none", "none", {}, CONTEXT, False),
    ("sinusoidal", "sinusoidal", {"dim": C}, CONTEXT, False),
    ("learned", "learned", {}, CONTEXT, False),
    ("rope", "rope", {"dim": D}, CONTEXT, False),
    ("xpos", "xpos", {"dim": D, "gamma": 0.4, "scale-base": 8}, CONTEXT, False),
    ("t5", "t5", {"num-buckets": 8, "max-distance": 16}, CONTEXT, False),
    ("alibi", "alibi", {}, CONTEXT, False),
    ("kerple-power", "kerple-power", {}, CONTEXT, False),
    ("kerple-log", "kerple-log", {}, CONTEXT, False),
    ("sandwich", "sandwich", {"dim": 16}, CONTEXT, False),
    ("local", "local", {"window": 5}, CONTEXT, False),
    ("bca", "bca", {"window": 6}, CONTEXT, False),
    ("alibi-logn", "alibi", {}, 8, True),
    ("rope-weighted", "rope", {"dim": D}, CONTEXT, False),
]


def loss_weights(name):
    """Per-token weights (B, T) of a weighted case, None for the plain mean: zeros (a question's tokens), ones (an
    answer's), a half and a two (weights other than 0 and 1)."""
    if name != "rope-weighted":
        return None
    w = np.zeros((B, T))
    w[0, 5:] = 1.0
    w[0, 7] = 0.5
    w[1, 8:] = 1.0
    w[1, 10] = 2.0
    return w


def get_slopes(n):  # official ALiBi code
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    p = 2 ** math.floor(math.log2(n))
    return power_of_2(p) + get_slopes(2 * p)[0::2][: n - p]


def t5_bucket(relative_position, num_buckets, max_distance):  # HF T5Attention._relative_position_bucket, causal
    relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.double() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return torch.where(is_small, relative_position, large)


def scheme_bias(case, params, n):
    """(H, n, n) additive bias and (n, n) visibility mask of a case."""
    name, scheme, s, context, logn = case
    m = torch.arange(n).view(-1, 1)
    k = torch.arange(n).view(1, -1)
    r = (m - k).double()
    visible = k <= m
    bias = torch.zeros(H, n, n)
    if scheme == "alibi":
        slopes = torch.tensor(get_slopes(H)).view(H, 1, 1)
        bias = -slopes * r
    elif scheme == "t5":
        buckets = t5_bucket(k - m, s["num-buckets"], s["max-distance"])
        bias = params["scheme.t5_bias"][buckets].permute(2, 0, 1)  # (nb, H) -> (n, n, H) -> (H, n, n)
    elif scheme in ("kerple-power", "kerple-log"):
        r1 = params["scheme.kerple_r1"].view(H, 1, 1)
        r2 = params["scheme.kerple_r2"].view(H, 1, 1)
        dist = r.abs()
        if scheme == "kerple-power":
            safe = torch.where(dist > 0, dist, torch.ones_like(dist))
            powered = torch.where(dist > 0, safe ** r2, torch.zeros_like(safe ** r2))
            bias = -r1 * powered
        else:
            bias = -r1 * torch.log1p(r2 * dist)
    elif scheme == "sandwich":
        d = s["dim"]
        w = torch.tensor([10000.0 ** (-2 * i / d) for i in range(d // 2)])
        dots = torch.cos(r.unsqueeze(-1) * w).sum(-1) - d / 2
        bias = torch.stack([dots * H / (8 * (h + 1)) for h in range(H)])
    if scheme == "local":
        visible = visible & (m - k < s["window"])
    if scheme == "bca":
        block = s["window"] // 2
        visible = visible & (k // block >= m // block - 1)
    return bias, visible


def rotate(x, case, is_key):
    """x (B, H, n, D): rope / xpos on interleaved pairs."""
    name, scheme, s, context, logn = case
    if scheme not in ("rope", "xpos"):
        return x
    n = x.shape[2]
    pos = torch.arange(n).double().view(-1, 1)
    i = torch.arange(D // 2).double().view(1, -1)
    theta = 10000.0 ** (-2 * i / D)
    c, sn = torch.cos(pos * theta), torch.sin(pos * theta)
    if scheme == "xpos":
        zeta = (2 * i + s["gamma"] * D) / ((1 + s["gamma"]) * D)
        scale = zeta ** ((-pos if is_key else pos) / s["scale-base"])
        c, sn = c * scale, sn * scale
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * sn
    out[..., 1::2] = x0 * sn + x1 * c
    return out


def forward(params, inputs, targets, case):
    name, scheme, s, context, logn = case
    n = inputs.shape[1]
    x = params["wte.weight"][inputs]
    if scheme == "sinusoidal":
        x = x * math.sqrt(C)  # token embeddings scaled by sqrt(d_model) with sinusoids, as in Vaswani et al.
        pos = torch.arange(n).double().view(-1, 1)
        i = torch.arange(C // 2).double().view(1, -1)
        w = 10000.0 ** (-2 * i / C)
        p = torch.zeros(n, C)
        p[:, 0::2] = torch.sin(pos * w)
        p[:, 1::2] = torch.cos(pos * w)
        x = x + p
    if scheme == "learned":
        x = x + params["wpe.weight"][:n]
    bias, visible = scheme_bias(case, params, n)
    row_scale = torch.ones(n, 1)
    if logn:
        m = torch.arange(n).double()
        row_scale = torch.where(m + 1 > context, torch.log(m + 1) / math.log(context), torch.ones_like(m)).view(-1, 1)
    for l in range(LAYERS):
        p = lambda t: params[f"layers.{l}.{t}"]
        h = F.layer_norm(x, (C,), p("ln1.weight"), p("ln1.bias"), eps=1e-5)
        qkv = h @ p("attn.qkv.weight").T + p("attn.qkv.bias")
        q, k, v = [qkv[..., j * C:(j + 1) * C].view(B, n, H, D).transpose(1, 2) for j in range(3)]
        q, k = rotate(q, case, False), rotate(k, case, True)
        scores = (q @ k.transpose(-1, -2) / math.sqrt(D) + bias) * row_scale
        scores = scores.masked_fill(~visible, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, n, C)
        x = x + y @ p("attn.out.weight").T + p("attn.out.bias")
        h = F.layer_norm(x, (C,), p("ln2.weight"), p("ln2.bias"), eps=1e-5)
        h = F.gelu(h @ p("mlp.fc.weight").T + p("mlp.fc.bias"), approximate="tanh")
        x = x + h @ p("mlp.proj.weight").T + p("mlp.proj.bias")
    x = F.layer_norm(x, (C,), params["ln_f.weight"], params["ln_f.bias"], eps=1e-5)
    logits = x @ params["wte.weight"].T
    losses = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none").view(B, n)
    return losses


def case_params(params, case):
    name, scheme, s, context, logn = case
    names = ["wte.weight"]
    if scheme == "learned":
        names.append("wpe.weight")
    for l in range(LAYERS):
        for t in ["ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.out.weight", "attn.out.bias",
                  "ln2.weight", "ln2.bias", "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias"]:
            names.append(f"layers.{l}.{t}")
    names += ["ln_f.weight", "ln_f.bias"]
    if scheme == "t5":
        names.append("scheme.t5_bias")
    if scheme.startswith("kerple"):
        names += ["scheme.kerple_r1", "scheme.kerple_r2"]
    return names


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, array in tensors:
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def main():
    rng = np.random.default_rng(20240611)
    params = {}

    def normal(shape, std):
        return torch.tensor(rng.normal(0.0, std, size=shape))

    # Larger than training init so that every path carries a visible gradient.
    params["wte.weight"] = normal((V, C), 0.5)
    params["wpe.weight"] = normal((CONTEXT, C), 0.5)
    for l in range(LAYERS):
        pre = f"layers.{l}."
        params[pre + "ln1.weight"] = 1 + normal((C,), 0.2)
        params[pre + "ln1.bias"] = normal((C,), 0.2)
        params[pre + "attn.qkv.weight"] = normal((3 * C, C), 0.6)
        params[pre + "attn.qkv.bias"] = normal((3 * C,), 0.2)
        params[pre + "attn.out.weight"] = normal((C, C), 0.4)
        params[pre + "attn.out.bias"] = normal((C,), 0.2)
        params[pre + "ln2.weight"] = 1 + normal((C,), 0.2)
        params[pre + "ln2.bias"] = normal((C,), 0.2)
        params[pre + "mlp.fc.weight"] = normal((FF, C), 0.4)
        params[pre + "mlp.fc.bias"] = normal((FF,), 0.2)
        params[pre + "mlp.proj.weight"] = normal((C, FF), 0.3)
        params[pre + "mlp.proj.bias"] = normal((C,), 0.2)
    params["ln_f.weight"] = 1 + normal((C,), 0.2)
    params["ln_f.bias"] = normal((C,), 0.2)
    params["scheme.t5_bias"] = normal((8, H), 0.7)
    params["scheme.kerple_r1"] = torch.tensor([0.6, 1.3])
    params["scheme.kerple_r2"] = torch.tensor([0.7, 1.4])
    # Round every parameter to float32 first, so both sides start from identical values.
    params = {k: torch.tensor(v.numpy().astype(np.float32).astype(np.float64)) for k, v in params.items()}

    tokens = torch.tensor(rng.integers(0, V, size=(B, T + 1)))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    out = [(k, v.numpy()) for k, v in params.items()]
    out.append(("tokens", tokens.numpy().astype(np.float32)))
    cases_meta = []
    for case in CASES:
        name, scheme, s, context, logn = case
        names = case_params(params, case)
        leaves = {k: params[k].clone().requires_grad_(True) for k in names}
        losses = forward(leaves, inputs, targets, case)
        weights = loss_weights(name)
        if weights is None:
            loss = losses.mean()
        else:
            w = torch.tensor(weights)
            loss = (w * losses).sum() / w.sum()
        grads = torch.autograd.grad(loss, [leaves[k] for k in names])
        out.append((f"{name}/losses", losses.detach().numpy()))
        if weights is not None:
            out.append((f"{name}/weights", weights.astype(np.float32)))
        for k, g in zip(names, grads):
            out.append((f"{name}/grad/{k}", g.numpy()))
        cases_meta.append({"name": name, "scheme": scheme, "settings": [f"{a}={b}" for a, b in s.items()],
                           "context": context, "logn": logn, "loss": loss.item()})
        if weights is not None:
            cases_meta[-1]["weighted"] = True
        print(f"{name:14s} loss {loss.item():.6f}")
    meta = {"config": json.dumps({"layers": LAYERS, "d_model": C, "heads": H, "d_ff": FF, "batch": B, "length": T}),
            "cases": json.dumps(cases_meta),
            "generator": "tests/reference/make_model_reference.py (PyTorch %s, float64)" % torch.__version__}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "model_reference.safetensors")
    write_safetensors(os.path.normpath(path), out, meta)
    print("wrote", os.path.normpath(path), os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
