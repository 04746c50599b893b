#!/usr/bin/python3
"""Issue 19 §7: SmolLM2-135M- and Qwen2.5-0.5B-shaped Hugging Face folders with random BF16 weights, made locally, and
float32 prefills timed in PositionLab (`bench model`) and in PyTorch eager (Debian's python3-torch, float32, the same
threads), alternated in one run, with `bench peak` measured in the same run; then PositionLab's perplexity pass.

    /usr/bin/python3 benchmarks/hf_prefill.py --make-all /tmp/hf-shapes          # both folders (~0.27 + 0.99 GB)
    /usr/bin/python3 benchmarks/hf_prefill.py --run /tmp/hf-shapes/smollm2-135m /tmp/hf-shapes/qwen2.5-0.5b \
        --length 2048 --threads 2 --rounds 5 --perplexity 8192

BF16 products against float32 (README, "BF16 products"), PositionLab alone, rounds alternated, `bench peak` in each:

    /usr/bin/python3 benchmarks/hf_prefill.py --precisions f32,bf16 --run /tmp/hf-shapes/smollm2-135m \
        /tmp/hf-shapes/qwen2.5-0.5b --rounds 3 --perplexity 8192
    /usr/bin/python3 benchmarks/hf_prefill.py --tolerance /tmp/hf-shapes/smollm2-135m --length 512

Issue 29 s.5, a Gemma-3-270M-shaped folder (its real config: 5 sliding layers of window 512 to 1 full, two rope bases,
vocabulary 262144) against the same weights with every layer full (written beside it, DIR-all-full), in bf16:

    /usr/bin/python3 benchmarks/hf_prefill.py --make /tmp/hf-shapes/gemma-3-270m --shape gemma-3-270m
    /usr/bin/python3 benchmarks/hf_prefill.py --layer-types /tmp/hf-shapes/gemma-3-270m --length 4096 --rounds 3 \
        --precisions bf16 --perplexity 8192 --lengths 1024,2048,4096,8192

--tolerance DIR... measures bf16 against f32 logits on the same ids (DIR/ids.json when present, else `bench model`'s
ids): max |bf16 - f32| / max |f32|, and the perplexity of the ids' next tokens under both.

Each round runs, for each folder in turn: PositionLab, PyTorch, `bench peak`. The summary gives the median and the
highest round (p90 once there are 10 rounds) of every figure, with the load average seen at each round.
`--make DIR --shape S` writes one folder. PyTorch's BLAS is reported (OpenBLAS's core name); when OpenBLAS picked its
SSE3 "Prescott" kernels on an AVX-512 CPU, OPENBLAS_CORETYPE=SkylakeX is set for PyTorch (never over a value already
set), as shared/notes/openblas-virtual-cpus.md explains.

PyTorch's side is a plain eager Llama/Qwen2 forward (nn.functional.linear, softmax attention with a causal mask: Debian
12's torch 1.13 has no scaled_dot_product_attention; rotate_half rotary), what a new user writes; it needs no
transformers package.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time


def blas_core():
    """OpenBLAS's core name as libblas.so.3 (what NumPy and PyTorch load) picks it in a fresh process, or None."""
    probe = ("import ctypes\ntry:\n l = ctypes.CDLL('libblas.so.3'); f = l.openblas_get_corename\n"
             " f.restype = ctypes.c_char_p; print(f().decode())\nexcept Exception: print('')")
    name = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
    return name or None


BLAS_CORE = blas_core()
if BLAS_CORE == "Prescott" and "avx512f" in open("/proc/cpuinfo").read() and "OPENBLAS_CORETYPE" not in os.environ:
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"  # before NumPy or PyTorch loads OpenBLAS

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import make_hf_tiny as tiny  # noqa: E402  (the same safetensors writer and layouts as the test checkpoints)

SHAPES = {
    "smollm2-135m": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                         num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0,
                         tie_word_embeddings=True, model_type="llama"),
    "qwen2.5-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768,
                         rope_theta=1000000.0, tie_word_embeddings=True, model_type="qwen2"),
    # google/gemma-3-270m's config.json (issue 29 s.5): 18 layers, 5 sliding (window 512, theta 1e4) to 1 full
    # (theta 1e6), head_dim 256, one key/value head, vocabulary 262144
    "gemma-3-270m": dict(hidden_size=640, intermediate_size=2048, num_hidden_layers=18, num_attention_heads=4,
                         num_key_value_heads=1, head_dim=256, vocab_size=262144, max_position_embeddings=32768,
                         rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=512,
                         layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 3, query_pre_attn_scalar=256,
                         hidden_activation="gelu_pytorch_tanh", rms_norm_eps=1e-6, attn_logit_softcapping=None,
                         final_logit_softcapping=None, rope_scaling=None, tie_word_embeddings=True,
                         model_type="gemma3_text"),
}
CLI = os.environ.get("POSITIONLAB_CLI") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                       "bin", "positionlab-cli")


class Discard(dict):
    def __setitem__(self, key, value):
        pass


def make(folder, shape):
    s = dict(SHAPES[shape])
    cfg = tiny.llama_cfg(s.pop("model_type"), **s)
    cfg["rope_scaling"] = None
    tiny.VOCAB = cfg["vocab_size"]
    cfg["torch_dtype"] = "bfloat16"
    w = tiny.Weights(7, "BF16")
    w.values = Discard()  # the reference forward is not run at this size: keep only the file's bytes
    C, F, H, K = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg.get("head_dim") or C // H
    gemma = cfg["model_type"] == "gemma3_text"
    w.add("model.embed_tokens.weight", (tiny.VOCAB, C), 0.02)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        if gemma:  # pre- and post-norms around both branches, per-head q/k norms (weights w of (1 + w))
            for n in ("pre_feedforward_layernorm", "post_feedforward_layernorm"):
                w.add(p + n + ".weight", (C,), 0.1)
            w.add(p + "self_attn.q_norm.weight", (D,), 0.1)
            w.add(p + "self_attn.k_norm.weight", (D,), 0.1)
        w.add(p + "input_layernorm.weight", (C,), 0.1, 0.0 if gemma else 1.0)
        w.add(p + "self_attn.q_proj.weight", (H * D, C))
        w.add(p + "self_attn.k_proj.weight", (K * D, C))
        w.add(p + "self_attn.v_proj.weight", (K * D, C))
        if cfg["model_type"] == "qwen2":
            for n, rows in (("q", H * D), ("k", K * D), ("v", K * D)):
                w.add(p + "self_attn.%s_proj.bias" % n, (rows,), 0.02)
        w.add(p + "self_attn.o_proj.weight", (C, H * D))
        w.add(p + "post_attention_layernorm.weight", (C,), 0.1, 0.0 if gemma else 1.0)
        w.add(p + "mlp.gate_proj.weight", (F, C))
        w.add(p + "mlp.up_proj.weight", (F, C))
        w.add(p + "mlp.down_proj.weight", (C, F))
    w.add("model.norm.weight", (C,), 0.1, 0.0 if gemma else 1.0)
    tiny.save(folder, cfg, w)
    if "layer_types" in cfg:  # the same weights with every layer full_attention: what the windows save
        twin = folder.rstrip("/") + "-all-full"
        os.makedirs(twin, exist_ok=True)
        full = dict(cfg, layer_types=["full_attention"] * cfg["num_hidden_layers"])
        with open(os.path.join(twin, "config.json"), "w") as f:
            json.dump(full, f, indent=2)
        target = os.path.join(twin, "model.safetensors")
        if os.path.lexists(target):
            os.remove(target)
        os.symlink(os.path.abspath(os.path.join(folder, "model.safetensors")), target)


def layer_type_rounds(a):
    """Issue 29 s.5: a folder against its every-layer-full twin (made beside it by --make), prefill of --length tokens
    in --precisions' first precision, alternated round by round; then the folder's perplexity pass over --perplexity
    tokens at --lengths; peak RSS against the weights; load averages and the CPU named."""
    p = (a.precisions or "bf16").split(",")[0]
    print("CPU: %s; %d threads; T = %d; precision %s; load at start %.1f" % (
        cpu_name(), a.threads, a.length, p, os.getloadavg()[0]), flush=True)
    rows = {}
    for r in range(a.rounds):
        for folder in (a.layer_types, a.layer_types.rstrip("/") + "-all-full"):
            q = cli_json("bench", "model", folder, "--length", a.length, "--threads", a.threads, "--repeat", 1,
                         "--precision", p, "--json")
            row = dict(ms=q["ms"], cpu_ms=q["cpu_ms"], rss=q["peak_rss_bytes"] / 2 ** 20,
                       weights=q["weights_bytes"] / 2 ** 20, load=os.getloadavg()[0])
            rows.setdefault(folder, []).append(row)
            print("round %d %s: prefill %.0f ms (CPU %.0f ms), peak RSS %.0f MiB (weights %.0f MiB); load %.1f"
                  % (r, os.path.basename(folder.rstrip("/")), row["ms"], row["cpu_ms"], row["rss"], row["weights"],
                     row["load"]), flush=True)
    med = {f: {k: float(np.median([x[k] for x in rs])) for k in rs[0]} for f, rs in rows.items()}
    (mixed, m), (full, f) = list(med.items())
    print("summary over %d rounds (medians): %s %.0f ms (CPU %.0f ms), all-full twin %.0f ms (CPU %.0f ms): the "
          "windows take %.2fx the wall time, %.2fx the CPU time; peak RSS %.0f / %.0f MiB against %.0f MiB of weights; "
          "load %.1f" % (a.rounds, os.path.basename(mixed.rstrip("/")), m["ms"], m["cpu_ms"], f["ms"], f["cpu_ms"],
                         m["ms"] / f["ms"], m["cpu_ms"] / f["cpu_ms"], m["rss"], f["rss"], m["weights"], m["load"]),
          flush=True)
    if a.perplexity:
        q = cli_json("bench", "model", a.layer_types, "--perplexity", a.perplexity, "--lengths", a.lengths,
                     "--threads", a.threads, "--precision", p, "--json")
        print("perplexity %s over %d tokens at lengths %s (%s): %s s each, total %.1f s (CPU %.1f s), peak RSS %.0f MiB "
              "(weights %.0f MiB); load %.1f"
              % (os.path.basename(a.layer_types.rstrip("/")), a.perplexity, q["lengths"], p,
                 ", ".join("%.1f" % x for x in q["seconds"]), q["total_seconds"], q["cpu_seconds"],
                 q["peak_rss_bytes"] / 2 ** 20, m["weights"], os.getloadavg()[0]), flush=True)


def rms_norm(x, w, eps):
    """Llama's RMSNorm of the last dimension, as the PyTorch sides of the benchmarks write it."""
    import torch
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x, cos, sin):
    """Rotary embedding in transformers' rotate_half pairing (dims i and i + D/2) over the last dimension."""
    import torch
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def load_torch_weights(folder, dtype=None):
    """The BF16 tensors of FOLDER/model.safetensors as torch tensors (float32, or `dtype`), read without safetensors."""
    import torch
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    W = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = np.frombuffer(data[b:end], dtype=np.uint16).astype(np.uint32) << 16
        t = torch.from_numpy(raw.view(np.float32).reshape(e["shape"]).copy())
        W[name] = t if dtype is None else t.to(dtype)
    return W


def torch_prefill(folder, length, threads, rounds):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    W = load_torch_weights(folder)
    C, H, K = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D, eps, L = C // H, cfg["rms_norm_eps"], cfg["num_hidden_layers"]
    inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float32) / D)
    ids = torch.tensor([(1000003 * i + 7) % cfg["vocab_size"] for i in range(length)])

    def rms(x, w):
        return rms_norm(x, w, eps)

    rot = rotate_half

    @torch.inference_mode()
    def forward():
        x = W["model.embed_tokens.weight"][ids]
        t = torch.arange(length, dtype=torch.float32)
        emb = torch.cat([torch.outer(t, inv)] * 2, -1)
        cos, sin = emb.cos(), emb.sin()
        mask = torch.full((length, length), float("-inf")).triu(1)
        for i in range(L):
            p = "model.layers.%d." % i
            h = rms(x, W[p + "input_layernorm.weight"])
            q = F.linear(h, W[p + "self_attn.q_proj.weight"], W.get(p + "self_attn.q_proj.bias"))
            k = F.linear(h, W[p + "self_attn.k_proj.weight"], W.get(p + "self_attn.k_proj.bias"))
            v = F.linear(h, W[p + "self_attn.v_proj.weight"], W.get(p + "self_attn.v_proj.bias"))
            q = rot(q.view(length, H, D).transpose(0, 1), cos, sin)
            k = rot(k.view(length, K, D).transpose(0, 1), cos, sin).repeat_interleave(H // K, 0)
            v = v.view(length, K, D).transpose(0, 1).repeat_interleave(H // K, 0)
            s = q @ k.transpose(1, 2) / math.sqrt(D) + mask  # torch 1.13 (Debian 12) has no scaled_dot_product_attention
            a = torch.softmax(s, -1) @ v
            x = x + F.linear(a.transpose(0, 1).reshape(length, H * D), W[p + "self_attn.o_proj.weight"])
            h = rms(x, W[p + "post_attention_layernorm.weight"])
            g = F.silu(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
            x = x + F.linear(g, W[p + "mlp.down_proj.weight"])
        return rms(x, W["model.norm.weight"]) @ W["model.embed_tokens.weight"].T

    forward()
    times, cpu = [], []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        forward()
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return float(np.median(times)), float(np.median(cpu))


def quantile_high(values):
    """p90 with 10 or more values, else the highest: the tail the noise of a shared machine leaves."""
    v = sorted(values)
    return v[min(len(v) - 1, int(math.ceil(0.9 * len(v))) - 1)] if len(v) >= 10 else v[-1]


def cli_json(*args):
    return json.loads(subprocess.check_output([CLI] + [str(a) for a in args]))


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def bench_ids(folder, length):
    path = os.path.join(folder, "ids.json")
    if os.path.exists(path):
        return json.load(open(path))
    vocab = json.load(open(os.path.join(folder, "config.json")))["vocab_size"]
    return [(1000003 * i + 7) % vocab for i in range(length)]


def tolerance(folder, length, threads):
    """bf16 against f32 logits on one id sequence: the relative max error and both perplexities."""
    import tempfile
    ids = bench_ids(folder, length)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in ("f32", "bf16"):
            path = os.path.join(tmp, p + ".npy")
            subprocess.check_call([CLI, "logits", folder, "--ids", ",".join(map(str, ids)), "-o", path,
                                   "--precision", p, "--threads", str(threads)], stderr=subprocess.DEVNULL)
            out[p] = np.load(path).astype(np.float64)
    f, b = out["f32"], out["bf16"]
    rel = np.abs(b - f).max() / np.abs(f).max()

    def ppl(logits):
        z = logits[:-1]
        top = z.max(1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(z - top).sum(1))
        return float(np.exp(np.mean(lse - z[np.arange(len(ids) - 1), ids[1:]])))
    pf, pb = ppl(f), ppl(b)
    print("tolerance %s (T = %d, vocab %d): max |bf16 - f32| / max |f32| = %.4g (max |f32| %.3g); perplexity f32 "
          "%.6g, bf16 %.6g, relative difference %.3g" % (folder, len(ids), f.shape[1], rel, np.abs(f).max(), pf, pb,
                                                         (pb - pf) / pf), flush=True)


def precision_rounds(a):
    """PositionLab's prefill (and perplexity pass) in each precision, alternated round by round, `bench peak` in each
    round; medians of wall time and of CPU time, the load, peak RSS against the weights."""
    precisions = a.precisions.split(",")
    print("CPU: %s; %d threads; T = %d; precisions %s" % (cpu_name(), a.threads, a.length, precisions), flush=True)
    rows = {}
    for r in range(a.rounds):
        for folder in a.run:
            name = os.path.basename(folder.rstrip("/"))
            for p in precisions:
                ours = cli_json("bench", "model", folder, "--length", a.length, "--threads", a.threads, "--repeat", 1,
                                "--precision", p, "--json")
                peak = cli_json("bench", "peak", "--threads", a.threads, "--json")
                row = dict(ms=ours["ms"], cpu_ms=ours["cpu_ms"], gflops=ours["gflops"],
                           gflops_cpu=ours["flops"] / ours["cpu_ms"] * 1e-6, peak=peak["gflops"],
                           peak_cpu=peak["gflops_per_cpu_second"], rss=ours["peak_rss_bytes"] / 2 ** 20,
                           weights=ours["weights_bytes"] / 2 ** 20, load=os.getloadavg()[0])
                line = ("round %d %s %s: prefill %.0f ms (CPU %.0f ms, %.1f GFLOP/s, %.1f per CPU-second; peak %.1f, "
                        "%.1f per CPU-second); peak RSS %.0f MiB (weights %.0f MiB)"
                        % (r, name, p, row["ms"], row["cpu_ms"], row["gflops"], row["gflops_cpu"], row["peak"],
                           row["peak_cpu"], row["rss"], row["weights"]))
                if a.perplexity and (not a.perplexity_rounds or r < a.perplexity_rounds):
                    q = cli_json("bench", "model", folder, "--perplexity", a.perplexity, "--threads", a.threads,
                                 "--precision", p, "--json")
                    row.update(ppl_s=q["total_seconds"], ppl_cpu_s=q["cpu_seconds"],
                               ppl_rss=q["peak_rss_bytes"] / 2 ** 20, ppl_loss=q["mean_loss"])
                    line += "; perplexity over %d tokens %.1f s (CPU %.1f s; per length %s), peak RSS %.0f MiB" % (
                        a.perplexity, q["total_seconds"], q["cpu_seconds"],
                        ", ".join("%.1f" % x for x in q["seconds"]), row["ppl_rss"])
                row["load"] = max(row["load"], os.getloadavg()[0])
                rows.setdefault((name, p), []).append(row)
                print(line + "; load %.1f" % row["load"], flush=True)
    for (name, p), rs in rows.items():
        def med(key):
            return float(np.median([x[key] for x in rs]))
        text = ("summary %s %s over %d rounds (medians): prefill %.0f ms, CPU %.0f ms, %.1f GFLOP/s per CPU-second "
                "(%.0f%% of the FP32 peak per CPU-second %.1f); peak RSS %.0f MiB, weights %.0f MiB; load %.1f"
                % (name, p, len(rs), med("ms"), med("cpu_ms"), med("gflops_cpu"), 100 * med("gflops_cpu") /
                   med("peak_cpu"), med("peak_cpu"), med("rss"), med("weights"), med("load")))
        ppl = [x for x in rs if "ppl_s" in x]
        if ppl:
            def pmed(key):
                return float(np.median([x[key] for x in ppl]))
            text += "; perplexity over %d rounds %.1f s (CPU %.1f s), peak RSS %.0f MiB" % (
                len(ppl), pmed("ppl_s"), pmed("ppl_cpu_s"), pmed("ppl_rss"))
        print(text, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--make")
    ap.add_argument("--make-all", help="write every shape under this folder, one subfolder per shape")
    ap.add_argument("--shape", default="smollm2-135m", choices=sorted(SHAPES))
    ap.add_argument("--run", nargs="+", default=[])
    ap.add_argument("--length", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--perplexity", type=int, default=0,
                    help="after the rounds, time PositionLab's perplexity pass over N tokens at 512..4096")
    ap.add_argument("--precisions", help="e.g. f32,bf16: PositionLab in each precision per round, no PyTorch")
    ap.add_argument("--perplexity-rounds", type=int, default=0,
                    help="with --precisions: the perplexity pass in the first N rounds only (default every round)")
    ap.add_argument("--tolerance", nargs="+", default=[], help="bf16 against f32 logits of these folders")
    ap.add_argument("--layer-types", help="a folder with layer_types made by --make (gemma-3-270m): prefill against "
                    "its every-layer-full twin, then its perplexity pass (--perplexity N at --lengths)")
    ap.add_argument("--lengths", default="1024,2048,4096,8192", help="with --layer-types: perplexity window lengths")
    a = ap.parse_args()
    if a.layer_types:
        layer_type_rounds(a)
        return
    if a.tolerance:
        for folder in a.tolerance:
            tolerance(folder, a.length, a.threads)
        return
    if a.precisions and a.run:
        precision_rounds(a)
        return
    if a.make:
        make(a.make, a.shape)
    if a.make_all:
        for shape in sorted(SHAPES):
            make(os.path.join(a.make_all, shape), shape)
    if not a.run:
        return
    core = BLAS_CORE or "not OpenBLAS"
    if os.environ.get("OPENBLAS_CORETYPE"):
        core += " (OPENBLAS_CORETYPE=%s)" % os.environ["OPENBLAS_CORETYPE"]
    print("CPU: %s; %d threads; T = %d; PyTorch BLAS: %s; OMP_WAIT_POLICY=%s" % (
        cpu_name(), a.threads, a.length, core, os.environ.get("OMP_WAIT_POLICY", "(unset)")), flush=True)
    rows = {d: [] for d in a.run}
    for r in range(a.rounds):  # alternated: for each folder, PositionLab, PyTorch, peak, in each round
        for folder in a.run:
            ours = cli_json("bench", "model", folder, "--length", a.length, "--threads", a.threads, "--repeat", 1,
                            "--json")
            theirs, theirs_cpu = torch_prefill(folder, a.length, a.threads, 1)
            peak = cli_json("bench", "peak", "--threads", a.threads, "--json")
            flops = ours["flops"]
            row = dict(ours_ms=ours["ms"], ours_cpu_ms=ours["cpu_ms"], torch_ms=theirs, torch_cpu_ms=theirs_cpu,
                       ratio=theirs / ours["ms"], cpu_ratio=theirs_cpu / ours["cpu_ms"],
                       peak_share=ours["gflops"] / peak["gflops"],
                       cpu_peak_share=flops / ours["cpu_ms"] * 1e-6 / peak["gflops_per_cpu_second"],
                       load=os.getloadavg()[0], rss=ours["peak_rss_bytes"] / 2 ** 20,
                       weights=ours["weights_bytes"] / 2 ** 20)
            rows[folder].append(row)
            print("round %d %s: PositionLab %.0f ms (%.1f GFLOP/s, %.0f%% of peak %.0f), PyTorch %.0f ms "
                  "(%.1f GFLOP/s), ratio %.2fx; CPU time: PositionLab %.0f ms (%.0f%% of the peak per CPU-second "
                  "%.1f), PyTorch %.0f ms, ratio %.2fx; peak RSS %.0f MiB (float32 weights %.0f MiB); load %.1f"
                  % (r, os.path.basename(folder.rstrip("/")), ours["ms"], ours["gflops"], 100 * row["peak_share"],
                     peak["gflops"], theirs, flops / theirs * 1e-6, row["ratio"], ours["cpu_ms"],
                     100 * row["cpu_peak_share"], peak["gflops_per_cpu_second"], theirs_cpu, row["cpu_ratio"],
                     row["rss"], row["weights"], row["load"]), flush=True)
    for folder, rs in rows.items():
        def fig(key, scale=1.0):
            v = [x[key] * scale for x in rs]
            return "%.2f (median) / %.2f (%s)" % (float(np.median(v)), quantile_high(v),
                                                  "p90" if len(v) >= 10 else "max")
        print("summary %s over %d rounds: PositionLab ms %s; PyTorch ms %s; ratio (wall) %s; ratio (CPU) %s; "
              "%% of peak (wall) %s; %% of peak per CPU-second %s; load %s; peak RSS MiB %s against %.0f MiB "
              "of float32 weights"
              % (os.path.basename(folder.rstrip("/")), len(rs), fig("ours_ms"), fig("torch_ms"), fig("ratio"),
                 fig("cpu_ratio"), fig("peak_share", 100), fig("cpu_peak_share", 100), fig("load"), fig("rss"),
                 rs[0]["weights"]), flush=True)
    if a.perplexity:
        for folder in a.run:
            p = cli_json("bench", "model", folder, "--perplexity", a.perplexity, "--threads", a.threads, "--json")
            print("perplexity %s over %d tokens at lengths %s: %s s each, total %.1f s (CPU %.1f s, %.1f GFLOP/s), "
                  "peak RSS %.0f MiB; load %.1f"
                  % (os.path.basename(folder.rstrip("/")), a.perplexity, p["lengths"],
                     ", ".join("%.1f" % x for x in p["seconds"]), p["total_seconds"], p["cpu_seconds"], p["gflops"],
                     p["peak_rss_bytes"] / 2 ** 20, os.getloadavg()[0]), flush=True)


if __name__ == "__main__":
    main()
