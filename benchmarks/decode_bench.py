#!/usr/bin/python3
"""Issue 30 §5: decode speed with a key/value cache on the SmolLM2-135M-shaped folder (hf_prefill.py's folder maker),
PositionLab (`generate --json`, float32 and bf16 products) against PyTorch eager with its own KV cache (Debian's
python3-torch, the same threads), alternated round by round in one run, at contexts 512, 2048 and 8192.

    /usr/bin/python3 benchmarks/hf_prefill.py --make-all /tmp/hf-shapes
    /usr/bin/python3 benchmarks/decode_bench.py /tmp/hf-shapes/smollm2-135m --contexts 512,2048,8192 --new 32 \
        --threads 2 --rounds 3

Each round, for each context: PositionLab f32, PositionLab bf16, PyTorch f32 (and PyTorch bf16 with --torch-bf16).
PositionLab's figure is `generate`'s decode_tokens_per_s: the new tokens after the first (each one embedding, every
layer with one row of attention against the cache, the head and the argmax) per second of wall time, its prefill not
counted. PyTorch's is the same loop in eager mode (nn.functional.linear, a preallocated (kv_heads, T, D) cache written
in place, grouped-query attention by a view, the head and the argmax), its cache filled with random keys and values of
the context's length instead of a prefill: one step's work does not depend on the cached values, and an eager prefill
of 8192 tokens would materialise 9 x 8192 x 8192 scores per layer. The cache's memory is `generate`'s cache_bytes
against 2 x layers x kv_heads x head_dim x T x 4 bytes (2 under bf16, whose cache holds BF16 as transformers' bf16
models hold theirs, and as the PyTorch bf16 loop here does). OPENBLAS_CORETYPE is set for PyTorch as hf_prefill.py does.

On a shared machine run it under OMP_WAIT_POLICY=passive (both sides read it): a decode step is a few hundred short
parallel regions, and with other processes on the cores an actively spinning OpenMP team burns its time slices
waiting for a descheduled partner (measured here at load 18: 10x less decode per CPU-second with 2 spinning threads).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_prefill  # noqa: E402  (sets OPENBLAS_CORETYPE before NumPy or PyTorch loads OpenBLAS)
import numpy as np  # noqa: E402

CLI = hf_prefill.CLI


def ids_for(vocab, length):
    return [(1000003 * i + 7) % vocab for i in range(length)]


def ours(folder, context, new, threads, precision):
    vocab = json.load(open(os.path.join(folder, "config.json")))["vocab_size"]
    out = subprocess.check_output([CLI, "generate", folder, "--ids", ",".join(map(str, ids_for(vocab, context))),
                                   "--max-new", str(new), "--json", "--threads", str(threads), "--precision",
                                   precision])
    return json.loads(out)


def torch_decode(folder, W, context, new, threads, dtype):
    """Tokens per second of an eager decode loop at `context` cached tokens (random cache), `new` steps."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    C, H, K = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D, eps, L = C // H, cfg["rms_norm_eps"], cfg["num_hidden_layers"]
    inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float32) / D)
    T = context + new
    g = torch.Generator().manual_seed(1)
    keys = [torch.randn(K, T, D, generator=g).to(dtype) for _ in range(L)]
    values = [torch.randn(K, T, D, generator=g).to(dtype) for _ in range(L)]

    def rms(x, w):
        return hf_prefill.rms_norm(x, w, eps)

    rot = hf_prefill.rotate_half

    @torch.inference_mode()
    def step(token, pos):
        x = W["model.embed_tokens.weight"][token].view(1, C)
        emb = torch.cat([pos * inv] * 2).to(dtype)
        cos, sin = emb.cos(), emb.sin()
        n = pos + 1
        for i in range(L):
            p = "model.layers.%d." % i
            h = rms(x, W[p + "input_layernorm.weight"])
            q = rot(F.linear(h, W[p + "self_attn.q_proj.weight"]).view(H, D), cos, sin)
            k = rot(F.linear(h, W[p + "self_attn.k_proj.weight"]).view(K, D), cos, sin)
            v = F.linear(h, W[p + "self_attn.v_proj.weight"]).view(K, D)
            keys[i][:, pos] = k
            values[i][:, pos] = v
            qg = q.view(K, H // K, D)
            s = qg @ keys[i][:, :n].transpose(1, 2) / math.sqrt(D)  # (K, H/K, n)
            a = torch.softmax(s, -1) @ values[i][:, :n]  # (K, H/K, D)
            x = x + F.linear(a.reshape(1, H * D), W[p + "self_attn.o_proj.weight"])
            h = rms(x, W[p + "post_attention_layernorm.weight"])
            gate = F.silu(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
            x = x + F.linear(gate, W[p + "mlp.down_proj.weight"])
        logits = rms(x, W["model.norm.weight"]) @ W["model.embed_tokens.weight"].T
        return int(logits.argmax())

    token = step(7, context - 1)  # the step after the "prompt", untimed (as PositionLab's first token)
    t0, c0 = time.perf_counter(), time.process_time()
    for j in range(new - 1):
        token = step(token, context + j)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return (new - 1) / wall, (new - 1) / cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--contexts", default="512,2048,8192")
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rounds-8192", type=int, default=0,
                    help="rounds at contexts of 8192 and more (default --rounds): their prefill dominates the run")
    ap.add_argument("--torch-bf16", action="store_true", help="also PyTorch with bf16 weights and activations")
    a = ap.parse_args()
    import torch
    contexts = [int(x) for x in a.contexts.split(",")]
    cfg = json.load(open(os.path.join(a.folder, "config.json")))
    core = hf_prefill.BLAS_CORE or "not OpenBLAS"
    if os.environ.get("OPENBLAS_CORETYPE"):
        core += " (OPENBLAS_CORETYPE=%s)" % os.environ["OPENBLAS_CORETYPE"]
    print("CPU: %s; %d threads; %d new tokens; PyTorch %s, BLAS %s" % (hf_prefill.cpu_name(), a.threads, a.new,
                                                                      torch.__version__, core), flush=True)
    weights = {"f32": hf_prefill.load_torch_weights(a.folder, torch.float32)}
    if a.torch_bf16:
        weights["bf16"] = hf_prefill.load_torch_weights(a.folder, torch.bfloat16)
    rows = {}
    for r in range(a.rounds):
        for T in contexts:
            if T >= 8192 and a.rounds_8192 and r >= a.rounds_8192:
                continue
            for p in ("f32", "bf16"):
                o = ours(a.folder, T, a.new, a.threads, p)
                formula = 2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * (
                    cfg["hidden_size"] // cfg["num_attention_heads"]) * (T + a.new - 1) * (2 if p == "bf16" else 4)
                tps_cpu = (a.new - 1) / o["decode_cpu_seconds"]
                rows.setdefault((T, "PositionLab " + p), []).append(
                    dict(tps=o["decode_tokens_per_s"], tps_cpu=tps_cpu, prefill=o["prefill_ms"],
                         cache=o["cache_bytes"], formula=formula, load=os.getloadavg()[0]))
                print("round %d T=%d PositionLab %s: decode %.2f tokens/s (%.2f per CPU-second), prefill %.0f ms, "
                      "cache %.1f MiB (formula %.1f MiB); load %.1f"
                      % (r, T, p, o["decode_tokens_per_s"], tps_cpu, o["prefill_ms"], o["cache_bytes"] / 2 ** 20,
                         formula / 2 ** 20, os.getloadavg()[0]), flush=True)
            for p, W in weights.items():
                dtype = torch.float32 if p == "f32" else torch.bfloat16
                tps, tps_cpu = torch_decode(a.folder, W, T, a.new, a.threads, dtype)
                rows.setdefault((T, "PyTorch " + p), []).append(dict(tps=tps, tps_cpu=tps_cpu,
                                                                     load=os.getloadavg()[0]))
                print("round %d T=%d PyTorch %s: decode %.2f tokens/s (%.2f per CPU-second); load %.1f"
                      % (r, T, p, tps, tps_cpu, os.getloadavg()[0]), flush=True)
    print("| context | runner | decode tokens/s (median) | vs PyTorch f32 | per CPU-second | vs PyTorch f32 | "
          "prefill ms | cache MiB (formula) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for T in contexts:
        base = float(np.median([x["tps"] for x in rows[(T, "PyTorch f32")]]))
        base_cpu = float(np.median([x["tps_cpu"] for x in rows[(T, "PyTorch f32")]]))
        for (t, name), rs in rows.items():
            if t != T:
                continue
            med = lambda k: float(np.median([x[k] for x in rs]))  # noqa: E731
            prefill = "%.0f" % med("prefill") if "prefill" in rs[0] else "-"
            cache = "%.1f (%.1f)" % (med("cache") / 2 ** 20, med("formula") / 2 ** 20) if "cache" in rs[0] else "-"
            print("| %d | %s | %.2f | %.2fx | %.2f | %.2fx | %s | %s | %.1f |"
                  % (T, name, med("tps"), med("tps") / base, med("tps_cpu"), med("tps_cpu") / base_cpu, prefill,
                     cache, med("load")), flush=True)


if __name__ == "__main__":
    main()
