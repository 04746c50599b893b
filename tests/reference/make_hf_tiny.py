#!/usr/bin/python3
"""Writes tests/data/hf/: tiny random Hugging Face checkpoints of every family PositionLab opens, with reference logits.

Each folder holds config.json in the family's own spelling and model.safetensors (or shards with
model.safetensors.index.json) with the family's exact tensor names and layouts, plus reference logits ref_*.npy
(float32, (T, vocab)) for the fixed ids in ids.json. The references come from an independent float64 NumPy
implementation of the Hugging Face formulas, written from modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py,
modeling_smollm3.py, modeling_gpt2.py, modeling_gpt_neox.py, modeling_bloom.py and modeling_rope_utils.py (not from
PositionLab's C++): rotate_half rotary with cos/sin times the attention factor, GQA by repeat_kv, RMSNorm / LayerNorm,
SwiGLU / GELU, Conv1D [in, out] weights (gpt2), fused per-head QKV (gpt_neox, bloom), BLOOM's ALiBi added as
slope * key position. Weights stored as BF16 or F16 are rounded first and the reference reads the rounded values.

Besides the config's own scaling (ref_config.npy; llama_longrope also ref_config_short.npy of the first SHORT ids,
within its original context), rope models get references under pi (linear, factor 4) and yarn
(factor 4, original_max_position_embeddings = max_position_embeddings) applied zero-shot: ref_pi.npy, ref_yarn.npy.
qwen2 (rotate_half over every dim, GQA) and gpt_neox (partial rotary) also get ReRoPE (window 6) and Self-Extend
(window 5, group 3) zero-shot, ref_rerope.npy and ref_self_extend.npy: no Hugging Face code has these, so their scores
are written from the remapped position P(m, n) of each paper (remapped_attention).
ref_bf16.npy (every folder but qwen2_text) emulates PositionLab's BF16 products in NumPy, so that any CPU can check
them against their definition, not only against float32: the config's own positions with every matrix (embeddings,
projections, the head; gpt2's wpe excepted) rounded to BF16 and every product's input rounded to BF16 (nearest even),
the rest (norms, attention, softmax, residuals, biases) as above.
pythia_shipped is gpt_neox as the Hub ships Pythia: the same weights plus transformers' old buffers (a BOOL causal mask
attention.bias, attention.masked_bias, attention.rotary_emb.inv_freq per layer), which the forward never reads.
Run: /usr/bin/python3 tests/reference/make_hf_tiny.py
"""
import json
import math
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "hf")
VOCAB = 300
IDS = [int(x) for x in np.random.default_rng(19).integers(0, VOCAB, size=24)]
SHORT = 12  # longrope's second reference reads the first SHORT ids (ref_config_short.npy)


# ---------------------------------------------------------------- safetensors writing

def bf16_round(x):
    """float32 -> (bf16 bits as uint16, the rounded values as float64): round to nearest even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    back = (rounded.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return rounded, back


def stored(x, dtype):
    """(raw bytes, values the file really holds as float64) of x in dtype F32, F16 or BF16."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "F32":
        a = x.astype(np.float32)
        return a.tobytes(), a.astype(np.float64)
    if dtype == "F16":
        a = x.astype(np.float16)
        return a.tobytes(), a.astype(np.float64)
    bits, back = bf16_round(x.astype(np.float32))
    return bits.tobytes(), back


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, shape, dtype, bytes)."""
    header = {}
    offset = 0
    for name, shape, dtype, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, raw in tensors:
            f.write(raw)


class Weights:
    """Random weights, rounded to the storage dtype; values() gives what the reference reads."""

    def __init__(self, seed, dtype):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.items = []  # (name, shape, dtype, raw)
        self.values = {}

    def add(self, name, shape, scale=None, mean=0.0):
        if scale is None:
            scale = 1.0 / math.sqrt(shape[-1])
        x = mean + scale * self.rng.standard_normal(shape)
        raw, back = stored(x, self.dtype)
        self.items.append((name, tuple(shape), self.dtype, raw))
        self.values[name] = back
        return back

    def buffer(self, name, array):
        """A non-parameter buffer the checkpoint carries and the loader must ignore (gpt2's attn.bias)."""
        raw, _ = stored(array, "F32")
        self.items.append((name, tuple(array.shape), "F32", raw))


def save(folder, config, weights, shards=1):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), weights.items, {"format": "pt"})
        return
    per = math.ceil(len(weights.items) / shards)
    weight_map = {}
    total = 0
    for s in range(shards):
        part = weights.items[s * per:(s + 1) * per]
        name = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        write_safetensors(os.path.join(folder, name), part, {"format": "pt"})
        for t in part:
            weight_map[t[0]] = name
            total += len(t[3])
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


# ---------------------------------------------------------------- Hugging Face formulas (float64)

def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_tanh(x):  # gelu_new (gpt2), bloom_gelu
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):  # "gelu" (gpt_neox)
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def silu(x):
    return x / (1 + np.exp(-x))


def inv_freq_and_factor(rope, dim, max_pos, seq_len):
    """modeling_rope_utils.py: inverse frequencies of `dim` rotary dims and the attention factor for a rope dict
    {"rope_type", "rope_theta", ...} (standardised: original_max_position_embeddings defaults to max_pos)."""
    base = rope["rope_theta"]
    kind = rope.get("rope_type", "default")
    inv = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    if kind == "default":
        return inv, 1.0
    factor = rope.get("factor")
    if kind == "linear":
        return inv / factor, 1.0
    original = rope.get("original_max_position_embeddings", max_pos)
    if kind == "dynamic":
        seq = max(seq_len, original)
        b = base * ((factor * seq / original) - (factor - 1)) ** (dim / (dim - 2))
        return 1.0 / b ** (np.arange(0, dim, 2) / dim), 1.0
    if kind == "yarn":
        af = rope.get("attention_factor")
        if af is None:
            af = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
        beta_fast = rope.get("beta_fast") or 32
        beta_slow = rope.get("beta_slow") or 1

        def correction_dim(rot):
            return (dim * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))

        low = max(math.floor(correction_dim(beta_fast)), 0)
        high = min(math.ceil(correction_dim(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        return (inv / factor) * (1 - extrapolation) + inv * extrapolation, af
    if kind == "llama3":
        low_f, high_f = rope["low_freq_factor"], rope["high_freq_factor"]
        low_wl, high_wl = original / low_f, original / high_f
        wl = 2 * math.pi / inv
        out = np.where(wl > low_wl, inv / factor, inv)
        smooth = (original / wl - low_f) / (high_f - low_f)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wl < high_wl) & ~(wl > low_wl)
        return np.where(medium, smoothed, out), 1.0
    if kind == "longrope":
        # _compute_longrope_parameters with longrope_frequency_update: Phi-3's top-level
        # original_max_position_embeddings (merged into the dict by llama_forward) makes the factor
        # max_position_embeddings / original; the long factors apply once the sequence is longer than original.
        if rope.get("original_max_position_embeddings"):
            original = rope["original_max_position_embeddings"]
            factor = max_pos / original
        else:
            original = max_pos
        af = rope.get("attention_factor")
        if af is None:
            af = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
        ext = np.array(rope["long_factor"] if seq_len > original else rope["short_factor"], dtype=np.float64)
        return 1.0 / (ext * base ** (np.arange(0, dim, 2) / dim)), af
    raise ValueError(kind)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], -1)


def apply_rotary(x, inv, af, rot_dim):
    """x: (heads, T, D); the first rot_dim dims rotate (rotate_half pairing), the rest pass."""
    T = x.shape[1]
    freqs = np.outer(np.arange(T), inv)
    emb = np.concatenate([freqs, freqs], -1)
    cos, sin = np.cos(emb) * af, np.sin(emb) * af
    r, p = x[..., :rot_dim], x[..., rot_dim:]
    return np.concatenate([r * cos + rotate_half(r) * sin, p], -1)


def rerope_position(window):
    """ReRoPE (Su, 2023): P(m, n) = min(m - n, w)."""
    return lambda m, n: min(m - n, window)


def self_extend_position(group, window):
    """Self-Extend (Jin et al., ICML 2024): m - n inside the window, else floor(m/G) - floor(n/G) + w - floor(w/G)."""
    return lambda m, n: m - n if m - n < window else m // group - n // group + window - window // group


def remapped_attention(q, k, v, inv, af, rot_dim, position):
    """Causal attention whose rotary part reads a remapped relative position P(m, n) (no Hugging Face code has
    these; written from their papers): q^T R(-P theta) k per rotate_half pair (i, i + rot_dim/2), times af^2, plus
    the dims that do not turn; then as attention() (repeat_kv, 1/sqrt(D))."""
    H, T, D = q.shape
    rep = H // k.shape[0]
    k, v = np.repeat(k, rep, 0), np.repeat(v, rep, 0)
    half = rot_dim // 2
    a, b = np.arange(half), np.arange(half) + half
    s = np.full((H, T, T), -np.inf)
    for m in range(T):
        for n in range(m + 1):
            angle = position(m, n) * inv
            qm, kn = q[:, m, :], k[:, n, :]
            turned = (np.cos(angle) * (qm[:, a] * kn[:, a] + qm[:, b] * kn[:, b]) +
                      np.sin(angle) * (qm[:, a] * kn[:, b] - qm[:, b] * kn[:, a])).sum(-1)
            s[:, m, n] = (af * af * turned + (qm[:, rot_dim:] * kn[:, rot_dim:]).sum(-1)) / math.sqrt(D)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return p @ v


def attention(q, k, v, additive=None, probs=None):
    """q: (H, T, D), k, v: (Hkv, T, D), repeat_kv for GQA; causal; scaling 1/sqrt(D). `probs` (a list) collects the
    layer's probabilities (H, T, T)."""
    H, T, D = q.shape
    rep = H // k.shape[0]
    k, v = np.repeat(k, rep, 0), np.repeat(v, rep, 0)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(D)
    if additive is not None:
        s = s + additive
    s = s + np.triu(np.full((T, T), -np.inf), 1)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    if probs is not None:
        probs.append(p)
    return p @ v


def heads(x, n, d):  # (T, n*d) -> (n, T, d)
    return x.reshape(x.shape[0], n, d).transpose(1, 0, 2)


def merge(x):  # (n, T, d) -> (T, n*d)
    return x.transpose(1, 0, 2).reshape(x.shape[1], -1)


BF16_PRODUCTS = False  # bf16_reference sets it: products read their inputs rounded to BF16


def bf16_values(x):
    """x rounded to BF16 (through float32, as a float32 activation is), as float64, in x's shape."""
    x = np.asarray(x, dtype=np.float64)
    return bf16_round(x.astype(np.float32))[1].reshape(x.shape)


def product(x, w):
    """x @ w, under BF16_PRODUCTS of the BF16-rounded x and w."""
    if BF16_PRODUCTS:
        return bf16_values(x) @ bf16_values(w)
    return x @ w


def bf16_reference(forward, cfg, W, *args):
    """forward's logits with BF16 products: every matrix held in BF16 (gpt2's wpe, a float32 table, excepted)."""
    global BF16_PRODUCTS
    rounded = {k: bf16_values(v) if np.ndim(v) == 2 and not k.endswith("wpe.weight") else v for k, v in W.items()}
    BF16_PRODUCTS = True
    try:
        return forward(cfg, rounded, *args)
    finally:
        BF16_PRODUCTS = False


def linear(x, W, name, bias=True):
    y = product(x, W[name + ".weight"].T)
    if bias and name + ".bias" in W:
        y = y + W[name + ".bias"]
    return y


def rope_dict(cfg):
    """The standardised rope parameters of a llama-family config, either spelling."""
    if "rope_parameters" in cfg:
        return dict(cfg["rope_parameters"])
    rope = {"rope_type": "default", "rope_theta": cfg.get("rope_theta", 10000.0)}
    if cfg.get("rope_scaling"):
        s = dict(cfg["rope_scaling"])
        s["rope_type"] = s.pop("rope_type", None) or s.pop("type")
        rope.update(s)
    return rope


def llama_forward(cfg, W, ids, rope, position=None, probs=None):
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg.get("head_dim") or cfg["hidden_size"] // H
    eps = cfg["rms_norm_eps"]
    rot = int(D * cfg.get("partial_rotary_factor", 1.0))
    if rope.get("rope_type") == "longrope" and cfg.get("original_max_position_embeddings"):
        rope = dict(rope, original_max_position_embeddings=cfg["original_max_position_embeddings"])
    inv, af = inv_freq_and_factor(rope, rot, cfg["max_position_embeddings"], len(ids))
    x = W["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = heads(linear(h, W, p + "self_attn.q_proj"), H, D)
        k = heads(linear(h, W, p + "self_attn.k_proj"), Hkv, D)
        v = heads(linear(h, W, p + "self_attn.v_proj"), Hkv, D)
        if p + "self_attn.q_norm.weight" in W:  # qwen3: RMSNorm over head_dim before rotary
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        uses_rope = cfg.get("no_rope_layers", [1] * 99)[i]  # smollm3: 1 = this layer uses rope
        if uses_rope and position is not None:
            a = remapped_attention(q, k, v, inv, af, rot, position)
        else:
            if uses_rope:
                q, k = apply_rotary(q, inv, af, rot), apply_rotary(k, inv, af, rot)
            a = attention(q, k, v, probs=probs)
        x = x + linear(merge(a), W, p + "self_attn.o_proj")
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        g = silu(linear(h, W, p + "mlp.gate_proj")) * linear(h, W, p + "mlp.up_proj")
        x = x + linear(g, W, p + "mlp.down_proj")
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["lm_head.weight"] if "lm_head.weight" in W else W["model.embed_tokens.weight"]
    return product(x, head.T)


def gpt2_forward(cfg, W, ids):
    H, C, eps = cfg["n_head"], cfg["n_embd"], cfg["layer_norm_epsilon"]
    D = C // H
    x = W["wte.weight"][ids] + W["wpe.weight"][np.arange(len(ids))]
    for i in range(cfg["n_layer"]):
        p = "h.%d." % i
        h = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = product(h, W[p + "attn.c_attn.weight"]) + W[p + "attn.c_attn.bias"]  # Conv1D: weight [in, out]
        q, k, v = (heads(t, H, D) for t in np.split(qkv, 3, -1))
        a = merge(attention(q, k, v))
        x = x + product(a, W[p + "attn.c_proj.weight"]) + W[p + "attn.c_proj.bias"]
        h = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        h = gelu_tanh(product(h, W[p + "mlp.c_fc.weight"]) + W[p + "mlp.c_fc.bias"])
        x = x + product(h, W[p + "mlp.c_proj.weight"]) + W[p + "mlp.c_proj.bias"]
    x = layer_norm(x, W["ln_f.weight"], W["ln_f.bias"], eps)
    return product(x, W["wte.weight"].T)


def fused_qkv(h, W, name, H, D):
    """gpt_neox and bloom: one [3 C, C] projection whose output is (H, 3, D) per token."""
    t = linear(h, W, name).reshape(h.shape[0], H, 3, D)
    return (t[:, :, j, :].transpose(1, 0, 2) for j in range(3))


def neox_forward(cfg, W, ids, rope, position=None):
    H, C, eps = cfg["num_attention_heads"], cfg["hidden_size"], cfg["layer_norm_eps"]
    D = C // H
    rot = int(D * cfg["rotary_pct"])
    inv, af = inv_freq_and_factor(rope, rot, cfg["max_position_embeddings"], len(ids))
    x = W["gpt_neox.embed_in.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % i
        h = layer_norm(x, W[p + "input_layernorm.weight"], W[p + "input_layernorm.bias"], eps)
        q, k, v = fused_qkv(h, W, p + "attention.query_key_value", H, D)
        if position is not None:
            a = linear(merge(remapped_attention(q, k, v, inv, af, rot, position)), W, p + "attention.dense")
        else:
            q, k = apply_rotary(q, inv, af, rot), apply_rotary(k, inv, af, rot)
            a = linear(merge(attention(q, k, v)), W, p + "attention.dense")

        def mlp(y):
            y = layer_norm(y, W[p + "post_attention_layernorm.weight"], W[p + "post_attention_layernorm.bias"], eps)
            return linear(gelu_erf(linear(y, W, p + "mlp.dense_h_to_4h")), W, p + "mlp.dense_4h_to_h")

        if cfg["use_parallel_residual"]:
            x = x + a + mlp(x)
        else:
            x = x + a
            x = x + mlp(x)
    x = layer_norm(x, W["gpt_neox.final_layer_norm.weight"], W["gpt_neox.final_layer_norm.bias"], eps)
    return product(x, W["embed_out.weight"].T)


def bloom_slopes(n):
    """modeling_bloom.build_alibi_tensor's slopes (closest power of two, then the odd powers of the next one)."""
    closest = 2 ** math.floor(math.log2(n))
    base = 2 ** (-(2 ** -(math.log2(closest) - 3)))
    slopes = [base ** p for p in range(1, closest + 1)]
    if closest != n:
        extra = 2 ** (-(2 ** -(math.log2(2 * closest) - 3)))
        slopes += [extra ** p for p in range(1, 1 + 2 * (n - closest), 2)]
    return np.array(slopes)


def bloom_forward(cfg, W, ids, probs=None):
    H, C, eps = cfg["n_head"], cfg["hidden_size"], cfg["layer_norm_epsilon"]
    D = C // H
    T = len(ids)
    alibi = bloom_slopes(H)[:, None, None] * np.arange(T)[None, None, :]  # slope * key position
    t = "transformer."
    x = W[t + "word_embeddings.weight"][ids]
    x = layer_norm(x, W[t + "word_embeddings_layernorm.weight"], W[t + "word_embeddings_layernorm.bias"], eps)
    for i in range(cfg["n_layer"]):
        p = t + "h.%d." % i
        h = layer_norm(x, W[p + "input_layernorm.weight"], W[p + "input_layernorm.bias"], eps)
        q, k, v = fused_qkv(h, W, p + "self_attention.query_key_value", H, D)
        x = x + linear(merge(attention(q, k, v, alibi, probs)), W, p + "self_attention.dense")
        h = layer_norm(x, W[p + "post_attention_layernorm.weight"], W[p + "post_attention_layernorm.bias"], eps)
        x = x + linear(gelu_tanh(linear(h, W, p + "mlp.dense_h_to_4h")), W, p + "mlp.dense_4h_to_h")
    x = layer_norm(x, W[t + "ln_f.weight"], W[t + "ln_f.bias"], eps)
    return product(x, W[t + "word_embeddings.weight"].T)


# ---------------------------------------------------------------- the checkpoints

# The remapping methods applied zero-shot (tst_hf's settings): rerope window 6, self-extend window 5 and group 3.
REMAPS = {"rerope": rerope_position(6), "self_extend": self_extend_position(3, 5)}


def llama_like(name, cfg, dtype, seed, shards=1, remaps=False, attention=False, bf16=True):
    VOCAB = cfg["vocab_size"]
    H, Hkv, C = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"]
    D = cfg.get("head_dim") or C // H
    F = cfg["intermediate_size"]
    w = Weights(seed, dtype)
    w.add("model.embed_tokens.weight", (VOCAB, C), 1.0)
    qwen2 = cfg["model_type"] == "qwen2"
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        w.add(p + "input_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "self_attn.q_proj.weight", (H * D, C), 2.0 / math.sqrt(C))
        w.add(p + "self_attn.k_proj.weight", (Hkv * D, C), 2.0 / math.sqrt(C))
        w.add(p + "self_attn.v_proj.weight", (Hkv * D, C))
        if qwen2 or cfg.get("attention_bias"):
            w.add(p + "self_attn.q_proj.bias", (H * D,), 0.2)
            w.add(p + "self_attn.k_proj.bias", (Hkv * D,), 0.2)
            w.add(p + "self_attn.v_proj.bias", (Hkv * D,), 0.2)
        w.add(p + "self_attn.o_proj.weight", (C, H * D))
        if cfg["model_type"] == "qwen3":
            w.add(p + "self_attn.q_norm.weight", (D,), 0.1, 1.0)
            w.add(p + "self_attn.k_norm.weight", (D,), 0.1, 1.0)
        w.add(p + "post_attention_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "mlp.gate_proj.weight", (F, C))
        w.add(p + "mlp.up_proj.weight", (F, C))
        w.add(p + "mlp.down_proj.weight", (C, F))
    w.add("model.norm.weight", (C,), 0.1, 1.0)
    if not cfg["tie_word_embeddings"]:
        w.add("lm_head.weight", (VOCAB, C))
    folder = os.path.join(OUT, name)
    save(folder, cfg, w, shards)
    probs = [] if attention else None
    refs = {"config": llama_forward(cfg, w.values, IDS, rope_dict(cfg), probs=probs)}
    if attention:
        refs["attention"] = np.stack(probs)
    if bf16:
        refs["bf16"] = bf16_reference(llama_forward, cfg, w.values, IDS, rope_dict(cfg))
    theta = rope_dict(cfg)["rope_theta"]
    refs["pi"] = llama_forward(cfg, w.values, IDS, {"rope_type": "linear", "rope_theta": theta, "factor": 4.0})
    refs["yarn"] = llama_forward(cfg, w.values, IDS, {"rope_type": "yarn", "rope_theta": theta, "factor": 4.0})
    if remaps:
        for key, position in REMAPS.items():
            refs[key] = llama_forward(cfg, w.values, IDS, {"rope_type": "default", "rope_theta": theta}, position)
    if rope_dict(cfg)["rope_type"] == "longrope":
        # The first SHORT ids stay within original_max_position_embeddings: the short factors.
        refs["config_short"] = llama_forward(cfg, w.values, IDS[:SHORT], rope_dict(cfg))
    return folder, refs


def text_model():
    """qwen2_text: a qwen2 model whose vocabulary covers tests/data/tokenizers/qwen2's tokenizer.json (copied beside
    it), so that it opens on any text as a user's folder does (the GUI's tests and screenshots); with reference
    attention probabilities ref_attention.npy (layers, H, T, T) for ids.json under the config's rope."""
    with open(os.path.join(OUT, "..", "tokenizers", "qwen2", "tokenizer.json"), encoding="utf-8") as f:
        tokenizer = f.read()
    vocab = max([v for v in json.loads(tokenizer)["model"]["vocab"].values()] +
                [t["id"] for t in json.loads(tokenizer)["added_tokens"]]) + 1
    cfg = llama_cfg("qwen2", vocab_size=vocab, rope_theta=10000.0, tie_word_embeddings=True, rope_scaling=None,
                    max_position_embeddings=32)
    folder, refs = llama_like("qwen2_text", cfg, "BF16", 16, attention=True, bf16=False)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(tokenizer)
    return folder, refs


def llama_cfg(model_type, **extra):
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": model_type,
        "vocab_size": VOCAB,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 16,
        "rms_norm_eps": 1e-5,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    cfg.update(extra)
    return cfg


def gpt2():
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": VOCAB, "n_embd": 32,
           "n_head": 4, "n_layer": 2, "n_positions": 32, "n_ctx": 32, "n_inner": None,
           "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}
    C = 32
    w = Weights(2, "F32")
    w.add("wte.weight", (VOCAB, C), 1.0)
    w.add("wpe.weight", (32, C), 0.5)
    for i in range(2):  # names without "transformer." as in openai-community/gpt2's own file
        p = "h.%d." % i
        w.add(p + "ln_1.weight", (C,), 0.1, 1.0)
        w.add(p + "ln_1.bias", (C,), 0.1)
        w.buffer(p + "attn.bias", np.tril(np.ones((32, 32)))[None, None])
        w.add(p + "attn.c_attn.weight", (C, 3 * C), 2.0 / math.sqrt(C))
        w.add(p + "attn.c_attn.bias", (3 * C,), 0.1)
        w.add(p + "attn.c_proj.weight", (C, C), 1.0 / math.sqrt(C))
        w.add(p + "attn.c_proj.bias", (C,), 0.1)
        w.add(p + "ln_2.weight", (C,), 0.1, 1.0)
        w.add(p + "ln_2.bias", (C,), 0.1)
        w.add(p + "mlp.c_fc.weight", (C, 4 * C), 1.0 / math.sqrt(C))
        w.add(p + "mlp.c_fc.bias", (4 * C,), 0.1)
        w.add(p + "mlp.c_proj.weight", (4 * C, C), 1.0 / math.sqrt(4 * C))
        w.add(p + "mlp.c_proj.bias", (C,), 0.1)
    w.add("ln_f.weight", (C,), 0.1, 1.0)
    w.add("ln_f.bias", (C,), 0.1)
    folder = os.path.join(OUT, "gpt2")
    save(folder, cfg, w)
    return folder, {"config": gpt2_forward(cfg, w.values, IDS), "bf16": bf16_reference(gpt2_forward, cfg, w.values, IDS)}


def neox():
    C, H, F = 32, 4, 128
    cfg = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "vocab_size": VOCAB,
           "hidden_size": C, "num_attention_heads": H, "num_hidden_layers": 2, "intermediate_size": F,
           "rotary_pct": 0.5, "rotary_emb_base": 10000, "max_position_embeddings": 16, "layer_norm_eps": 1e-5,
           "use_parallel_residual": True, "hidden_act": "gelu", "tie_word_embeddings": False}
    w = Weights(3, "F16")
    w.add("gpt_neox.embed_in.weight", (VOCAB, C), 1.0)
    for i in range(2):
        p = "gpt_neox.layers.%d." % i
        w.add(p + "input_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "input_layernorm.bias", (C,), 0.1)
        w.add(p + "post_attention_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "post_attention_layernorm.bias", (C,), 0.1)
        w.add(p + "attention.query_key_value.weight", (3 * C, C), 2.0 / math.sqrt(C))
        w.add(p + "attention.query_key_value.bias", (3 * C,), 0.1)
        w.add(p + "attention.dense.weight", (C, C))
        w.add(p + "attention.dense.bias", (C,), 0.1)
        w.add(p + "mlp.dense_h_to_4h.weight", (F, C))
        w.add(p + "mlp.dense_h_to_4h.bias", (F,), 0.1)
        w.add(p + "mlp.dense_4h_to_h.weight", (C, F))
        w.add(p + "mlp.dense_4h_to_h.bias", (C,), 0.1)
    w.add("gpt_neox.final_layer_norm.weight", (C,), 0.1, 1.0)
    w.add("gpt_neox.final_layer_norm.bias", (C,), 0.1)
    w.add("embed_out.weight", (VOCAB, C))
    folder = os.path.join(OUT, "gpt_neox")
    save(folder, cfg, w)
    theta = 10000.0
    refs = {"config": neox_forward(cfg, w.values, IDS, {"rope_type": "default", "rope_theta": theta})}
    refs["bf16"] = bf16_reference(neox_forward, cfg, w.values, IDS, {"rope_type": "default", "rope_theta": theta})
    refs["pi"] = neox_forward(cfg, w.values, IDS, {"rope_type": "linear", "rope_theta": theta, "factor": 4.0})
    refs["yarn"] = neox_forward(cfg, w.values, IDS, {"rope_type": "yarn", "rope_theta": theta, "factor": 4.0})
    for key, position in REMAPS.items():
        refs[key] = neox_forward(cfg, w.values, IDS, {"rope_type": "default", "rope_theta": theta}, position)
    NEOX.update(cfg=cfg, weights=w, reference=refs["config"])
    return folder, refs


NEOX = {}  # neox()'s config, weights and reference, which pythia_shipped() reuses


def pythia_shipped():
    """The gpt_neox folder as the Hub ships Pythia: the same weights plus the buffers transformers once saved, which
    the forward never reads - per layer a BOOL causal mask attention.bias (1, 1, P, P), attention.masked_bias (an F32
    scalar -1e9) and attention.rotary_emb.inv_freq (F32, rotary dims / 2). Its reference is gpt_neox's own."""
    cfg, w = NEOX["cfg"], NEOX["weights"]
    P = cfg["max_position_embeddings"]
    rot = int(cfg["hidden_size"] // cfg["num_attention_heads"] * cfg["rotary_pct"])
    inv_freq = 1.0 / cfg["rotary_emb_base"] ** (np.arange(0, rot, 2) / rot)
    items = []
    for item in w.items:
        items.append(item)
        if item[0].endswith("attention.query_key_value.bias"):  # the buffers sit beside each layer's attention
            p = item[0][:-len("query_key_value.bias")]
            mask = np.tril(np.ones((P, P), dtype=np.bool_)).reshape(1, 1, P, P)
            items.append((p + "bias", mask.shape, "BOOL", mask.tobytes()))
            items.append((p + "masked_bias", (), "F32", np.array(-1e9, dtype=np.float32).tobytes()))
            items.append((p + "rotary_emb.inv_freq", inv_freq.shape, "F32", inv_freq.astype(np.float32).tobytes()))
    shipped = Weights(0, "F16")
    shipped.items = items
    folder = os.path.join(OUT, "pythia_shipped")
    save(folder, dict(cfg, architectures=["GPTNeoXForCausalLM"], _name_or_path="EleutherAI/pythia-tiny"), shipped)
    return folder, {"config": NEOX["reference"]}


def bloom():
    C, H = 48, 6
    cfg = {"architectures": ["BloomForCausalLM"], "model_type": "bloom", "vocab_size": VOCAB, "hidden_size": C,
           "n_head": H, "n_layer": 2, "layer_norm_epsilon": 1e-5, "apply_residual_connection_post_layernorm": False,
           "tie_word_embeddings": True}
    w = Weights(4, "F32")
    t = "transformer."
    w.add(t + "word_embeddings.weight", (VOCAB, C), 1.0)
    w.add(t + "word_embeddings_layernorm.weight", (C,), 0.1, 1.0)
    w.add(t + "word_embeddings_layernorm.bias", (C,), 0.1)
    for i in range(2):
        p = t + "h.%d." % i
        w.add(p + "input_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "input_layernorm.bias", (C,), 0.1)
        w.add(p + "self_attention.query_key_value.weight", (3 * C, C), 2.0 / math.sqrt(C))
        w.add(p + "self_attention.query_key_value.bias", (3 * C,), 0.1)
        w.add(p + "self_attention.dense.weight", (C, C))
        w.add(p + "self_attention.dense.bias", (C,), 0.1)
        w.add(p + "post_attention_layernorm.weight", (C,), 0.1, 1.0)
        w.add(p + "post_attention_layernorm.bias", (C,), 0.1)
        w.add(p + "mlp.dense_h_to_4h.weight", (4 * C, C))
        w.add(p + "mlp.dense_h_to_4h.bias", (4 * C,), 0.1)
        w.add(p + "mlp.dense_4h_to_h.weight", (C, 4 * C))
        w.add(p + "mlp.dense_4h_to_h.bias", (C,), 0.1)
    w.add(t + "ln_f.weight", (C,), 0.1, 1.0)
    w.add(t + "ln_f.bias", (C,), 0.1)
    folder = os.path.join(OUT, "bloom")
    save(folder, cfg, w)
    probs = []
    refs = {"config": bloom_forward(cfg, w.values, IDS, probs)}
    refs["attention"] = np.stack(probs)  # ALiBi: (layers, H, T, T)
    refs["bf16"] = bf16_reference(bloom_forward, cfg, w.values, IDS)
    return folder, refs


# ---------------------------------------------------------------- a tokenizer that fits the tiny vocabulary

TOKENIZER_FOLDERS = ["qwen2", "gpt2", "bloom", "llama_longrope"]


def tiny_tokenizer():
    """A byte-level BPE tokenizer.json of VOCAB - 4 ids: GPT-2's 256 byte symbols (ids 0..255), then the first merges of
    tests/data/tokenizers/gpt2 whose parts are already in the vocabulary, and <|endoftext|>. Lets `eval DIR` tokenize
    a text for the tiny checkpoints (all ids below VOCAB)."""
    source = os.path.join(os.path.dirname(OUT), "tokenizers", "gpt2", "tokenizer.json")
    with open(source) as f:
        gpt2_tok = json.load(f)
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    vocab = {symbols[b]: b for b in range(256)}
    merges = []
    for merge in gpt2_tok["model"]["merges"]:
        a, b = merge.split(" ") if isinstance(merge, str) else merge
        if a in vocab and b in vocab and a + b not in vocab and len(vocab) < VOCAB - 5:
            vocab[a + b] = len(vocab)
            merges.append(a + " " + b)
    eot = len(vocab)
    tok = dict(gpt2_tok)
    tok["added_tokens"] = [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                            "rstrip": False, "normalized": True, "special": True}]
    tok["model"] = dict(gpt2_tok["model"], vocab=vocab, merges=merges)
    return tok


def main():
    os.makedirs(OUT, exist_ok=True)
    made = [
        # GQA 4/2, explicit head_dim 12 (not 32/4), BF16, llama3 in the older spelling (rope_type + top-level
        # rope_theta), untied head
        llama_like("llama_llama3_bf16", llama_cfg(
            "llama", head_dim=12, rope_theta=10000.0, torch_dtype="bfloat16",
            rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 16}), "BF16", 10),
        # transformers v5 rope_parameters with yarn (attention_factor from the factor), tied head, F16, two shards
        llama_like("llama_yarn_v5_shards", llama_cfg(
            "llama", num_key_value_heads=4, tie_word_embeddings=True, torch_dtype="float16", max_position_embeddings=64,
            rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                             "original_max_position_embeddings": 16}), "F16", 11, shards=2),
        # the oldest spelling: rope_scaling {"type": "linear"} beside rope_theta
        llama_like("mistral_linear", llama_cfg(
            "mistral", rope_theta=10000.0, rope_scaling={"type": "linear", "factor": 2.0}, sliding_window=None),
            "F32", 12),
        # q/k/v biases, tied head, rope_theta 1e6, GQA
        llama_like("qwen2", llama_cfg("qwen2", rope_theta=1000000.0, tie_word_embeddings=True, rope_scaling=None),
                   "F32", 13, remaps=True),
        # q/k RMSNorm, explicit head_dim 16 with hidden 48, untied
        llama_like("qwen3", llama_cfg("qwen3", hidden_size=48, head_dim=16, rope_theta=1000000.0,
                                      rope_scaling=None, attention_bias=False), "F32", 14),
        # per-layer NoPE: layer 1 has no rotary
        llama_like("smollm3", llama_cfg("smollm3", rope_theta=10000.0, no_rope_layers=[1, 0],
                                        tie_word_embeddings=True), "BF16", 15),
        # longrope, Phi-3 style: per-pair short/long factors, top-level original_max_position_embeddings 16 below
        # max_position_embeddings 64 (s = 4, attention factor sqrt(1 + ln 4 / ln 16)); 24 ids > 16 read the long list
        llama_like("llama_longrope", llama_cfg(
            "llama", rope_theta=10000.0, max_position_embeddings=64, original_max_position_embeddings=16,
            rope_scaling={"type": "longrope", "short_factor": [1.0, 1.25, 1.5, 2.0],
                          "long_factor": [1.0, 2.5, 4.0, 8.0]}), "F32", 16),
        gpt2(),
        neox(),
        pythia_shipped(),
        bloom(),
        text_model(),
    ]
    for folder, refs in made:
        for key, logits in refs.items():
            np.save(os.path.join(folder, "ref_%s.npy" % key), logits.astype(np.float32))
        with open(os.path.join(folder, "ids.json"), "w") as f:
            json.dump(IDS, f)
            f.write("\n")
        if os.path.basename(folder) in TOKENIZER_FOLDERS:
            with open(os.path.join(folder, "tokenizer.json"), "w") as f:
                json.dump(tiny_tokenizer(), f, ensure_ascii=False)
                f.write("\n")
        print(os.path.basename(folder), {k: float(np.abs(v).max()) for k, v in refs.items()})


if __name__ == "__main__":
    main()
