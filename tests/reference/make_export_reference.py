#!/usr/bin/python3
"""Writes tests/data/export/: small lab checkpoints and the logits of their exported Hugging Face folders, computed by
an independent float64 NumPy forward of the exported folder written from transformers' modeling_gpt_neox.py (rotary
over the first int(head_dim * rotary_pct) dims with rotate_half, scores times head_size^-0.5, use_parallel_residual
false: x + attn(ln1 x), then + mlp(ln2 x); gelu_new; tied embed_out) and modeling_gpt2.py (Conv1D [in, out] weights,
wte + wpe). Not from PositionLab's C++: tst_export checks that the lab model's own forward on the checkpoint gives
these logits, so the export is checked against the Hugging Face formulas, not only against core/hf's loader.

Each row: NAME.safetensors (the lab checkpoint, trained a few steps by positionlab-cli so biases and norms move),
NAME_ref.npy (float32, (T, 256)) for the byte ids in ids.json.
passkey.safetensors: a rope model trained on the lab's passkey task (lengths up to 16; about 3 minutes on one core),
exact up to its training length and partly right past it, for tst_export's labPasskeyThroughFolder (no reference
file: the lab model itself is compared with its exported folder). Written only with --passkey.
Run from the repository root after building: /usr/bin/python3 tests/reference/make_export_reference.py [build/bin]
[--passkey]
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "export")
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
CLI = os.path.join(ARGS[0] if ARGS else os.path.join(ROOT, "build", "bin"), "positionlab-cli")
TEXT = "the passkey is 4817; remember it. " * 200
IDS = list(b"Keys: 9204, 31. The grass is green; the sky is blue. Again: 9204.")[:40]

# name, scheme, extra train options
ROWS = [
    ("rope_partial", "rope", ["--set", "rotary-fraction=0.5", "--set", "base=500"]),
    ("none", "none", []),
    ("learned", "learned", []),
]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32"
        a, b = entry["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").astype(np.float64).reshape(entry["shape"])
    return out


def drop_optimizer(path):
    """Rewrites a checkpoint without its AdamW moments (optimizer.*): a third of the size, the same model."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__")
    meta.pop("optimizer_updates", None)
    kept, chunks, offset = {}, [], 0
    for name, entry in sorted(header.items(), key=lambda item: item[1]["data_offsets"][0]):
        if name.startswith("optimizer."):
            continue
        a, b = entry["data_offsets"]
        kept[name] = dict(entry, data_offsets=[offset, offset + b - a])
        chunks.append(data[a:b])
        offset += b - a
    kept["__metadata__"] = meta
    text = json.dumps(kept, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def attention(q, k, v):
    """q, k, v: (H, T, D); causal softmax(q k^T / sqrt(D)) v -> (T, H D)."""
    H, T, D = q.shape
    s = q @ k.transpose(0, 2, 1) * D ** -0.5
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(1, 0, 2).reshape(T, H * D)


def neox_forward(cfg, w, ids):
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D, T, eps = C // H, len(ids), cfg["layer_norm_eps"]
    r = int(D * cfg["rotary_pct"])
    inv_freq = 1.0 / (cfg["rotary_emb_base"] ** (np.arange(0, r, 2) / r)) if r else np.zeros(0)
    freqs = np.outer(np.arange(T), inv_freq)
    emb = np.concatenate([freqs, freqs], -1)
    cos, sin = np.cos(emb), np.sin(emb)
    x = w["gpt_neox.embed_in.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % i
        h = layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = (h @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"])
        qkv = qkv.reshape(T, H, 3 * D).transpose(1, 0, 2)
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        q = np.concatenate([q[..., :r] * cos + rotate_half(q[..., :r]) * sin, q[..., r:]], -1)
        k = np.concatenate([k[..., :r] * cos + rotate_half(k[..., :r]) * sin, k[..., r:]], -1)
        a = attention(q, k, v) @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]
        x = x + a  # use_parallel_residual false
        h = layer_norm(x, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"], eps)
        m = gelu_new(h @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
        x = x + m @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]
    x = layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
    assert cfg["tie_word_embeddings"]
    return x @ w["gpt_neox.embed_in.weight"].T


def gpt2_forward(cfg, w, ids):
    C, H = cfg["n_embd"], cfg["n_head"]
    D, T, eps = C // H, len(ids), cfg["layer_norm_epsilon"]
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:T]
    for i in range(cfg["n_layer"]):
        p = "transformer.h.%d." % i
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(T, H, D).transpose(1, 0, 2) for j in range(3))
        x = x + attention(q, k, v) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        x = x + gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    return x @ w["transformer.wte.weight"].T


def train_passkey():
    ckpt = os.path.join(OUT, "passkey.safetensors")
    subprocess.run([CLI, "train", "rope", "--task", "passkey", "--task-length", "16", "--layers", "2", "--d-model",
                    "64", "--heads", "4", "--d-ff", "128", "--context", "48", "--steps", "3000", "--batch", "32",
                    "--lr", "3e-3", "--threads", "1", "--quiet", "-o", ckpt], check=True)
    drop_optimizer(ckpt)


def main():
    os.makedirs(OUT, exist_ok=True)
    if "--passkey" in sys.argv:
        train_passkey()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            f.write(TEXT)
        for name, scheme, extra in ROWS:
            ckpt = os.path.join(OUT, name + ".safetensors")
            subprocess.run([CLI, "train", scheme, "--corpus", corpus, "--layers", "2", "--d-model", "16",
                            "--heads", "2", "--d-ff", "32", "--context", "32", "--steps", "40", "--batch", "4",
                            "--lr", "1e-2", "--warmup", "5", "--threads", "1", "--quiet", "-o", ckpt] + extra,
                           check=True)
            drop_optimizer(ckpt)
            folder = os.path.join(tmp, name)
            subprocess.run([CLI, "export", ckpt, "-o", folder], check=True, capture_output=True)
            with open(os.path.join(folder, "config.json")) as f:
                cfg = json.load(f)
            w = read_safetensors(os.path.join(folder, "model.safetensors"))
            forward = neox_forward if cfg["model_type"] == "gpt_neox" else gpt2_forward
            logits = forward(cfg, w, np.array(IDS[:32] if scheme == "learned" else IDS))
            np.save(os.path.join(OUT, name + "_ref.npy"), logits.astype(np.float32))
            print(name, cfg["model_type"], logits.shape, "max |logit| %.3f" % np.abs(logits).max())
    with open(os.path.join(OUT, "ids.json"), "w") as f:
        json.dump({"ids": IDS, "learned_length": 32}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
