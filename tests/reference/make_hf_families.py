#!/usr/bin/python3
"""Writes tests/data/hf_families/: tiny random checkpoints of the families of issue 29, with reference logits.

Each folder holds config.json in the family's own spelling, model.safetensors with its exact tensor names and
layouts, ids.json (40 ids, so that a text crosses every window below) and reference logits ref_*.npy (float32,
(T, vocab)): ref_config.npy under the config's own rope, ref_yarn.npy under yarn (factor 4, original context = the
model's) applied zero-shot to the full layers' table (the sliding layers' own table, when the config gives one, keeps
its own rope; without one every rotary layer reads the full layers' table).

The references come from an independent float64 NumPy forward of each family written from transformers'
modeling_phi3.py, modeling_olmo2.py, modeling_granite.py, modeling_cohere.py, modeling_cohere2.py,
modeling_gemma2.py, modeling_gemma3.py, modeling_mistral.py / modeling_qwen2.py, masking_utils.py (a sliding layer's
query m sees keys n with m - W < n <= m) and modeling_rope_utils.py (make_hf_tiny.py's inv_freq_and_factor), not
from PositionLab's C++. Weights stored as BF16 are rounded first and the reference reads the rounded values.
Run: /usr/bin/python3 tests/reference/make_hf_families.py
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_hf_tiny import (VOCAB, Weights, apply_rotary, gelu_tanh, heads, inv_freq_and_factor,  # noqa: E402
                          merge, rms_norm, save, silu)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "hf_families")
IDS = [int(x) for x in np.random.default_rng(29).integers(0, VOCAB, size=40)]
YARN = {"rope_type": "yarn", "factor": 4.0}


# ---------------------------------------------------------------- pieces of the modeling files (float64)

def gemma_norm(x, w, eps):
    """Gemma{2,3}RMSNorm: x / sqrt(mean x^2 + eps) * (1 + w)."""
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * (1.0 + w)


def cohere_norm(x, w, eps):
    """CohereLayerNorm: mean-centred, no bias."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w


def rotate_interleaved(x, inv, af):
    """modeling_cohere.py: freqs repeat_interleave'd, rotate_half over pairs (2i, 2i + 1)."""
    T = x.shape[1]
    freqs = np.outer(np.arange(T), inv)
    emb = np.repeat(freqs, 2, -1)
    cos, sin = np.cos(emb) * af, np.sin(emb) * af
    x1, x2 = x[..., 0::2], x[..., 1::2]
    rot = np.stack([-x2, x1], -1).reshape(x.shape)
    return x * cos + rot * sin


def attend(q, k, v, scaling, window=None, softcap=None):
    """eager_attention_forward: repeat_kv, scores * scaling, the soft cap tanh(s / c) c (gemma2), the causal mask and,
    for a sliding layer, masking_utils' sliding_window_overlay (kv_idx > q_idx - window)."""
    H, T, D = q.shape
    rep = H // k.shape[0]
    k, v = np.repeat(k, rep, 0), np.repeat(v, rep, 0)
    s = q @ k.transpose(0, 2, 1) * scaling
    if softcap:
        s = np.tanh(s / softcap) * softcap
    m, n = np.arange(T)[:, None], np.arange(T)[None, :]
    visible = n <= m
    if window:
        visible &= n > m - window
    s = np.where(visible, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return p @ v


def lin(x, W, name):
    y = x @ W[name + ".weight"].T
    return y + W[name + ".bias"] if name + ".bias" in W else y


def yarn_inv(rope, dim, max_pos):
    """_compute_yarn_parameters, truncate included: the correction range floored and ceiled unless truncate is False,
    then clamped to [0, dim - 1]; mscale / mscale_all_dim as get_mscale gives them."""
    base, factor = rope["rope_theta"], rope["factor"]
    original = rope.get("original_max_position_embeddings") or max_pos

    def get_mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    af = rope.get("attention_factor")
    if af is None:
        if rope.get("mscale") and rope.get("mscale_all_dim"):
            af = get_mscale(factor, rope["mscale"]) / get_mscale(factor, rope["mscale_all_dim"])
        else:
            af = get_mscale(factor)
    beta_fast, beta_slow = rope.get("beta_fast") or 32, rope.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    extrapolation = 1 - np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    inv = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    return (inv / factor) * (1 - extrapolation) + inv * extrapolation, af


def rope_of(cfg, rope, T):
    """(inv_freq, attention factor, rotated dims) of one layer type's rope dict. proportional
    (_compute_proportional_rope_parameters): the whole head turns, theta^(-2i/head_dim) for the first
    rope_angles = int(partial_rotary_factor * head_dim // 2) pairs (Python's floor), 0 after, all / factor. A method
    applied zero-shot over a proportional table ("_angles") keeps its pairs past rope_angles at 0."""
    D = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    max_pos = cfg["max_position_embeddings"]
    if rope.get("rope_type") == "proportional":
        angles = int(rope.get("partial_rotary_factor", 1.0) * D // 2)
        inv = 1.0 / rope["rope_theta"] ** (np.arange(0, 2 * angles, 2) / D)
        inv = np.concatenate([inv, np.zeros(D // 2 - angles)]) / rope.get("factor", 1.0)
        return inv, 1.0, D
    rot = D if "_angles" in rope else int(D * rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0)))
    if rope.get("rope_type") == "yarn":
        inv, af = yarn_inv(rope, rot, max_pos)
    else:
        inv, af = inv_freq_and_factor(rope, rot, max_pos, T)
    if "_angles" in rope:
        inv = np.where(np.arange(rot // 2) < rope["_angles"], inv, 0.0)
    return inv, af, rot


def base_rope(cfg):
    """The full layers' rope dict, standardised (either spelling; Phi-3's top-level original context merged)."""
    if "rope_parameters" in cfg:
        r = dict(cfg["rope_parameters"].get("full_attention", cfg["rope_parameters"]))
    else:
        r = {"rope_type": "default", "rope_theta": cfg.get("rope_theta", 10000.0)}
        if cfg.get("rope_scaling"):
            s = dict(cfg["rope_scaling"])
            s["rope_type"] = s.pop("rope_type", None) or s.pop("type")
            r.update(s)
    if r.get("rope_type") == "longrope" and cfg.get("original_max_position_embeddings"):
        r["original_max_position_embeddings"] = cfg["original_max_position_embeddings"]
    return r


def layer_types(cfg):
    if "layer_types" in cfg:
        return cfg["layer_types"]
    n = cfg["num_hidden_layers"]
    mt = cfg["model_type"]
    if mt in ("gemma3_text", "cohere2"):
        pattern = cfg.get("sliding_window_pattern", 6 if mt == "gemma3_text" else 4)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if mt == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    if mt in ("qwen2", "qwen3"):
        sw = cfg.get("sliding_window") if cfg.get("use_sliding_window") else None
        return ["sliding_attention" if sw is not None and i >= cfg["max_window_layers"] else "full_attention"
                for i in range(n)]
    if mt in ("mistral", "phi3") and cfg.get("sliding_window") is not None:
        return ["sliding_attention"] * n
    return ["full_attention"] * n


# ---------------------------------------------------------------- one forward per family

def local_layer(cfg, kind):
    """--scaling-layers' rule: a sliding layer whose window is shorter than the model's context (a window that spans
    it hides nothing: such a layer counts as full)."""
    return kind == "sliding_attention" and cfg["sliding_window"] < cfg["max_position_embeddings"]


def decoder_forward(cfg, W, ids, rope, sliding_rope=None):
    """The decoder families, each step as its modeling_*.py writes it (branches named by model_type). `rope` turns the
    full layers (and sliding layers whose window spans the context), `sliding_rope` the other sliding layers (their
    own table, or `rope` when None)."""
    mt = cfg["model_type"]
    H, Hkv, C = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"]
    D = cfg.get("head_dim") or C // H
    T = len(ids)
    gemma = mt.startswith("gemma")
    cohere = mt.startswith("cohere")
    eps = cfg.get("layer_norm_eps", 1e-5) if cohere else cfg.get("rms_norm_eps", 1e-6)
    if gemma:
        norm = lambda x, n: gemma_norm(x, W[n + ".weight"], eps)  # noqa: E731
    elif cohere:
        norm = lambda x, n: cohere_norm(x, W[n + ".weight"], eps)  # noqa: E731
    else:
        norm = lambda x, n: rms_norm(x, W[n + ".weight"], eps)  # noqa: E731
    inv, af, rot = rope_of(cfg, rope, T)
    local = rope_of(cfg, sliding_rope, T) if sliding_rope else (inv, af, rot)
    types = layer_types(cfg)
    prefix = cfg.get("_prefix", "model.")
    x = W[prefix + "embed_tokens.weight"][ids]
    if gemma:
        x = x * float(np.float32(C ** 0.5))
    if mt == "granite":
        x = x * cfg["embedding_multiplier"]
    scaling = D ** -0.5
    if gemma:
        scaling = cfg["query_pre_attn_scalar"] ** -0.5
    if mt == "granite":
        scaling = cfg["attention_multiplier"]
    for i in range(cfg["num_hidden_layers"]):
        p = prefix + "layers.%d." % i
        sliding = types[i] == "sliding_attention"
        window = cfg["sliding_window"] if sliding else None
        h = x if mt == "olmo2" else norm(x, p + "input_layernorm")
        if mt == "phi3":
            qkv = lin(h, W, p + "self_attn.qkv_proj")
            q, k, v = qkv[:, :H * D], qkv[:, H * D:(H + Hkv) * D], qkv[:, (H + Hkv) * D:]
        else:
            q, k, v = (lin(h, W, p + "self_attn.%s_proj" % t) for t in "qkv")
        if mt == "olmo2":  # Olmo2RMSNorm over the whole projection, before the head split
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k, v = heads(q, H, D), heads(k, Hkv, D), heads(v, Hkv, D)
        if mt == "gemma3_text":
            q = gemma_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = gemma_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        li, la, lr = local if local_layer(cfg, types[i]) else (inv, af, rot)
        if cohere:
            if mt == "cohere" or sliding:  # cohere2: rotary on sliding layers only
                q, k = rotate_interleaved(q, li, la), rotate_interleaved(k, li, la)
        else:
            q, k = apply_rotary(q, li, la, lr), apply_rotary(k, li, la, lr)
        a = lin(merge(attend(q, k, v, scaling, window, cfg.get("attn_logit_softcapping"))), W, p + "self_attn.o_proj")
        if mt in ("gemma2", "gemma3_text", "olmo2"):
            a = norm(a, p + "post_attention_layernorm")
        if cohere:  # parallel block: the MLP reads the same normed input
            x = x + a + mlp(cfg, W, p, h)
            continue
        if mt == "granite":
            a = a * cfg["residual_multiplier"]
        x = x + a
        if gemma:
            h = norm(x, p + "pre_feedforward_layernorm")
        elif mt == "olmo2":
            h = x
        else:
            h = norm(x, p + "post_attention_layernorm")
        m = mlp(cfg, W, p, h)
        if gemma or mt == "olmo2":
            m = norm(m, p + "post_feedforward_layernorm")
        if mt == "granite":
            m = m * cfg["residual_multiplier"]
        x = x + m
    x = norm(x, prefix + "norm")
    head = W.get("lm_head.weight", W[prefix + "embed_tokens.weight"])
    logits = x @ head.T
    if cohere:
        logits = logits * cfg["logit_scale"]
    if mt == "granite":
        logits = logits / cfg["logits_scaling"]
    if cfg.get("final_logit_softcapping"):
        c = cfg["final_logit_softcapping"]
        logits = np.tanh(logits / c) * c
    return logits


def mlp(cfg, W, p, h):
    act = gelu_tanh if cfg["model_type"].startswith("gemma") else silu
    if cfg["model_type"] == "phi3":
        gate, up = np.split(lin(h, W, p + "mlp.gate_up_proj"), 2, -1)
    else:
        gate, up = lin(h, W, p + "mlp.gate_proj"), lin(h, W, p + "mlp.up_proj")
    return lin(up * act(gate), W, p + "mlp.down_proj")


# ---------------------------------------------------------------- the checkpoints

def decoder_weights(cfg, dtype, seed, prefix="model."):
    mt = cfg["model_type"]
    H, Hkv, C = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"]
    D = cfg.get("head_dim") or C // H
    F = cfg["intermediate_size"]
    gemma = mt.startswith("gemma")
    w = Weights(seed, dtype)
    w.add(prefix + "embed_tokens.weight", (VOCAB, C), 0.3 if gemma else 1.0)
    norm_mean = 0.0 if gemma else 1.0  # gemma stores w of (1 + w)
    for i in range(cfg["num_hidden_layers"]):
        p = prefix + "layers.%d." % i
        names = {"olmo2": ["post_attention_layernorm", "post_feedforward_layernorm"],
                 "cohere": ["input_layernorm"], "cohere2": ["input_layernorm"]}.get(mt)
        if gemma:
            names = ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm"]
        for n in names or ["input_layernorm", "post_attention_layernorm"]:
            w.add(p + n + ".weight", (C,), 0.1, norm_mean)
        if mt == "phi3":
            w.add(p + "self_attn.qkv_proj.weight", ((H + 2 * Hkv) * D, C), 2.0 / math.sqrt(C))
        else:
            w.add(p + "self_attn.q_proj.weight", (H * D, C), 2.0 / math.sqrt(C))
            w.add(p + "self_attn.k_proj.weight", (Hkv * D, C), 2.0 / math.sqrt(C))
            w.add(p + "self_attn.v_proj.weight", (Hkv * D, C))
            if mt == "qwen2":
                for t, n in (("q", H), ("k", Hkv), ("v", Hkv)):
                    w.add(p + "self_attn.%s_proj.bias" % t, (n * D,), 0.2)
        w.add(p + "self_attn.o_proj.weight", (C, H * D))
        if mt == "olmo2":
            w.add(p + "self_attn.q_norm.weight", (H * D,), 0.1, 1.0)
            w.add(p + "self_attn.k_norm.weight", (Hkv * D,), 0.1, 1.0)
        if mt == "gemma3_text":
            w.add(p + "self_attn.q_norm.weight", (D,), 0.1, 0.0)
            w.add(p + "self_attn.k_norm.weight", (D,), 0.1, 0.0)
        if mt == "phi3":
            w.add(p + "mlp.gate_up_proj.weight", (2 * F, C))
        else:
            w.add(p + "mlp.gate_proj.weight", (F, C))
            w.add(p + "mlp.up_proj.weight", (F, C))
        w.add(p + "mlp.down_proj.weight", (C, F))
    w.add(prefix + "norm.weight", (C,), 0.1, norm_mean)
    if not cfg.get("tie_word_embeddings", False):
        w.add("lm_head.weight", (VOCAB, C))
    return w


def base_cfg(model_type, **extra):
    cfg = {"architectures": ["ForCausalLM"], "model_type": model_type, "vocab_size": VOCAB, "hidden_size": 32,
           "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": False,
           "rope_theta": 10000.0, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2}
    cfg.update(extra)
    return cfg


def family(name, cfg, dtype, seed, sliding_rope=None, text_cfg=None, extra_tensors=(), prefix="model."):
    """Writes one folder; `text_cfg` (gemma3) is the config the forward reads when config.json nests it."""
    model_cfg = dict(text_cfg or cfg, _prefix=prefix)
    w = decoder_weights(model_cfg, dtype, seed, prefix)
    for tensor_name, shape in extra_tensors:  # a multimodal folder's vision tower: present, never read
        w.add(tensor_name, shape, 0.1)
    folder = os.path.join(OUT, name)
    save(folder, cfg, w)
    rope = base_rope(model_cfg)
    local = sliding_rope or rope  # the sliding layers' own rope: their own table, else the config's
    refs = {"config": decoder_forward(model_cfg, w.values, IDS, rope, local)}
    # yarn zero-shot: factor 4, L = the model's context; the config's own yarn keeps its other settings (truncate);
    # a proportional table keeps its pairs past rope_angles still. Default --scaling-layers full: the sliding layers
    # (window < context) keep their own rope; all: every rotary layer, a sliding table of its own with its own theta.
    refs["yarn"] = decoder_forward(model_cfg, w.values, IDS, zero_shot_yarn(model_cfg, rope), local)
    refs["yarn_all"] = decoder_forward(model_cfg, w.values, IDS, zero_shot_yarn(model_cfg, rope),
                                       zero_shot_yarn(model_cfg, local))
    return folder, refs


def zero_shot_yarn(cfg, rope):
    y = dict(rope) if rope.get("rope_type") == "yarn" else dict(YARN)
    y.update(rope_type="yarn", factor=4.0, rope_theta=rope["rope_theta"],
             original_max_position_embeddings=cfg["max_position_embeddings"])
    if rope.get("rope_type") == "proportional":
        D = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
        y["_angles"] = int(rope.get("partial_rotary_factor", 1.0) * D // 2)
        y.pop("partial_rotary_factor", None)
    return y


# configuration_gemma3.py's Gemma3TextConfig defaults, for a text_config that leaves fields out.
GEMMA3_TEXT_DEFAULTS = {"model_type": "gemma3_text", "vocab_size": 262208, "hidden_size": 2304,
                        "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
                        "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
                        "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
                        "rope_theta": 1000000.0, "attention_bias": False, "query_pre_attn_scalar": 256,
                        "sliding_window": 4096, "final_logit_softcapping": None, "attn_logit_softcapping": None,
                        "rope_scaling": None, "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6}


def gemma3_text_cfg(**extra):
    return base_cfg("gemma3_text", num_hidden_layers=6, head_dim=8, hidden_activation="gelu_pytorch_tanh",
                    query_pre_attn_scalar=16, sliding_window=8, rms_norm_eps=1e-6, tie_word_embeddings=True,
                    attn_logit_softcapping=None, final_logit_softcapping=None, **extra)


def main():
    os.makedirs(OUT, exist_ok=True)
    gemma3_v4 = gemma3_text_cfg(rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window_pattern=6,
                                rope_scaling={"rope_type": "linear", "factor": 8.0})
    gemma3_v5_text = gemma3_text_cfg(
        layer_types=["sliding_attention"] * 5 + ["full_attention"],
        rope_parameters={"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
    del gemma3_v5_text["rope_theta"]
    gemma3_folder = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                     "text_config": gemma3_v5_text, "vision_config": {"model_type": "siglip_vision_model"},
                     "tie_word_embeddings": True}
    local = {"rope_type": "default", "rope_theta": 10000.0}
    gemma3_proportional = gemma3_text_cfg(
        layer_types=["sliding_attention"] * 5 + ["full_attention"],
        rope_parameters={"full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.625,
                                            "factor": 2.0, "rope_theta": 1000000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
    del gemma3_proportional["rope_theta"]
    text_given = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 6, "head_dim": 8,
                  "vocab_size": VOCAB, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    gemma3_defaults = dict(GEMMA3_TEXT_DEFAULTS, **text_given)
    gemma3_defaults_folder = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                              "text_config": text_given, "vision_config": {"model_type": "siglip_vision_model"}}
    made = [
        # fused qkv_proj and gate_up_proj; partial rotary 0.75 of head dim 8 (3 pairs); longrope with Phi-3's
        # top-level original context 16 below 64: the 40 ids read the long factors; Phi-3.5's sliding_window
        family("phi3", base_cfg("phi3", partial_rotary_factor=0.75, original_max_position_embeddings=16,
                                sliding_window=262144,
                                rope_scaling={"type": "longrope", "short_factor": [1.0, 1.5, 2.0],
                                              "long_factor": [1.0, 3.0, 6.0]}), "BF16", 30),
        family("olmo2", base_cfg("olmo2", rms_norm_eps=1e-6, rope_theta=500000.0), "BF16", 31),
        family("granite", base_cfg("granite", embedding_multiplier=12.0, attention_multiplier=0.25,
                                   residual_multiplier=0.22, logits_scaling=8.0, tie_word_embeddings=True),
               "BF16", 32),
        family("cohere", base_cfg("cohere", layer_norm_eps=1e-5, logit_scale=0.25, use_qk_norm=False,
                                  tie_word_embeddings=True), "BF16", 33),
        # windowed families: 40 ids cross every window
        family("cohere2", base_cfg("cohere2", num_hidden_layers=4, layer_norm_eps=1e-5, logit_scale=0.25,
                                   sliding_window=8, sliding_window_pattern=4, tie_word_embeddings=True),
               "BF16", 34),
        family("gemma2", base_cfg("gemma2", num_hidden_layers=2, head_dim=8, hidden_activation="gelu_pytorch_tanh",
                                  query_pre_attn_scalar=16, sliding_window=8, rms_norm_eps=1e-6,
                                  attn_logit_softcapping=5.0, final_logit_softcapping=3.0,
                                  tie_word_embeddings=True), "BF16", 35),
        family("gemma3_text", gemma3_v4, "BF16", 36, sliding_rope=local),
        family("gemma3", gemma3_folder, "BF16", 36, sliding_rope=local, text_cfg=gemma3_v5_text,
               prefix="language_model.model.",
               extra_tensors=[("vision_tower.vision_model.embeddings.patch_embedding.weight", (8, 3, 2, 2)),
                              ("multi_modal_projector.mm_input_projection_weight", (8, 32))]),
        family("mistral_window", base_cfg("mistral", sliding_window=8), "BF16", 37),
        # yarn with truncate: false (gpt-oss's spelling): head_dim 16, theta 500 and L 2048 put the correction range
        # at (2.99, 7.45), so the exact ramp differs from the floored and ceiled one on pairs 2 to 7
        family("yarn_untruncated", base_cfg("llama", hidden_size=64, head_dim=16, max_position_embeddings=8192,
                                            rope_theta=500.0,
                                            rope_scaling={"rope_type": "yarn", "factor": 4.0, "truncate": False,
                                                          "original_max_position_embeddings": 2048}), "BF16", 39),
        # proportional (p-RoPE) on the full layers: partial_rotary_factor 0.625 of head_dim 8 is 2.5 pairs, which
        # transformers floors to 2 (the lab's keep would round 2.5 up to 3 pairs), and factor 2
        family("gemma3_proportional", gemma3_proportional, "BF16", 40, sliding_rope=local),
        # a gemma3 folder whose text_config names only what differs from Gemma3TextConfig's defaults, as
        # gemma-3-4b's does (heads 8, key/value heads 4, context 131072, theta 1e6, window 4096, pattern 6 ...)
        family("gemma3_defaults", gemma3_defaults_folder, "BF16", 41, sliding_rope=local, text_cfg=gemma3_defaults,
               prefix="language_model.model."),
        family("qwen2_window", base_cfg("qwen2", num_hidden_layers=3, use_sliding_window=True, sliding_window=8,
                                        max_window_layers=1, tie_word_embeddings=True), "BF16", 38),
    ]
    for folder, refs in made:
        for key, logits in refs.items():
            np.save(os.path.join(folder, "ref_%s.npy" % key), logits.astype(np.float32))
        with open(os.path.join(folder, "ids.json"), "w") as f:
            json.dump(IDS, f)
            f.write("\n")
        print(os.path.basename(folder), {k: float(np.abs(v).max()) for k, v in refs.items()})


if __name__ == "__main__":
    main()
