#!/usr/bin/python3
"""Training throughput: positionlab-cli train against the same architecture in PyTorch, same threads.

Both train the byte-level pre-LayerNorm transformer (tied head, GELU-tanh MLP, AdamW, clipping, warm-up + cosine)
on the same corpus with random windows for a fixed number of steps; tokens/s excludes the first steps (warm-up of
allocators and thread pools). PyTorch runs float32 eager mode with a materialised causal bias and softmax, the
usual way such a model is written for torch 1.13 (no fused attention on CPU there).

usage: /usr/bin/python3 benchmarks/train_vs_torch.py [--cli build/bin/positionlab-cli] [--preset quick|large]
       [--scheme alibi|rope|none|sinusoidal|learned] [--steps N] [--threads T] [--repeat R] [--corpus FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time


def _threads_from_argv():
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return str(os.cpu_count())


# OpenBLAS (Debian's torch links it) and OpenMP read their thread counts at load time: set them before importing.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads_from_argv()

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from alibi import alibi_slopes  # the script's own folder is on sys.path

PRESETS = {
    "quick": dict(layers=2, d_model=128, heads=8, d_ff=512, context=64, batch=16, lr=2e-3),
    "large": dict(layers=4, d_model=512, heads=8, d_ff=2048, context=256, batch=8, lr=6e-4),
}


class Block(nn.Module):
    def __init__(self, c, h, ff):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.out = nn.Linear(c, c)
        self.ln2 = nn.LayerNorm(c)
        self.fc = nn.Linear(c, ff)
        self.proj = nn.Linear(ff, c)

    def forward(self, x, bias, rot):
        b, t, c = x.shape
        d = c // self.h
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d).permute(2, 0, 3, 1, 4)
        if rot is not None:
            cos, sin = rot
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(d)) + bias
        y = torch.softmax(scores, dim=-1) @ v
        x = x + self.out(y.transpose(1, 2).reshape(b, t, c))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def rotate(x, cos, sin):
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class Model(nn.Module):
    def __init__(self, cfg, scheme):
        super().__init__()
        c, h = cfg["d_model"], cfg["heads"]
        self.scheme, self.h = scheme, h
        self.wte = nn.Embedding(256, c)
        self.wpe = nn.Embedding(cfg["context"], c) if scheme == "learned" else None
        self.blocks = nn.ModuleList(Block(c, h, cfg["d_ff"]) for _ in range(cfg["layers"]))
        self.lnf = nn.LayerNorm(c)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets):
        b, t = idx.shape
        c = self.wte.weight.shape[1]
        x = self.wte(idx)
        pos = torch.arange(t)
        if self.wpe is not None:
            x = x + self.wpe(pos)
        if self.scheme == "sinusoidal":
            x = x * math.sqrt(c)
            w = 10000.0 ** (-torch.arange(0, c, 2).float() / c)
            ang = pos.float()[:, None] * w[None, :]
            x = x + torch.stack((ang.sin(), ang.cos()), dim=-1).flatten(-2)
        causal = torch.full((t, t), float("-inf")).triu(1)
        bias = causal.expand(self.h, t, t)
        if self.scheme == "alibi":
            rel = (pos[:, None] - pos[None, :]).float()
            bias = causal - torch.tensor(alibi_slopes(self.h))[:, None, None] * rel
        rot = None
        if self.scheme == "rope":
            d = c // self.h
            theta = 10000.0 ** (-torch.arange(0, d, 2).float() / d)
            ang = pos.float()[:, None] * theta[None, :]
            rot = (ang.cos(), ang.sin())
        for blk in self.blocks:
            x = blk(x, bias, rot)
        logits = self.lnf(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, 256), targets.reshape(-1))


def torch_tokens_per_second(cfg, scheme, steps, warm, data, seed):
    torch.manual_seed(seed)
    model = Model(cfg, scheme)
    decay = [p for p in model.parameters() if p.dim() == 2]
    other = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(0.9, 0.95), eps=1e-8)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (s - warmup) / max(1, steps - warmup)))))
    rng = np.random.default_rng(seed)
    b, t = cfg["batch"], cfg["context"]
    start = cpu = None
    loss = None
    for s in range(steps):
        if s == warm:
            start, cpu = time.perf_counter(), time.process_time()
        offs = rng.integers(0, len(data) - t - 1, size=b)
        chunk = np.stack([data[o:o + t + 1] for o in offs]).astype(np.int64)
        x, y = torch.from_numpy(chunk[:, :-1]), torch.from_numpy(chunk[:, 1:])
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    tokens = (steps - warm) * b * t
    return tokens / elapsed, tokens / cpu, loss.item()


def project_tokens_per_second(cli, preset, scheme, steps, threads, corpus):
    out = "/tmp/positionlab_bench_%d.safetensors" % os.getpid()
    cmd = [cli, "train", "--scheme", scheme, "--preset", preset, "--steps", str(steps), "--threads", str(threads),
           "--json", "--eval-bytes", "0", "--log-every", "1", "-o", out]
    if corpus:
        cmd += ["--corpus", corpus]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    step_events = [e for e in events if e.get("event") == "step"]
    os.remove(out)
    # Same accounting as for PyTorch: tokens after the warm-up steps over their wall time.
    warm = max(1, steps // 10)
    first = next(e for e in step_events if e["step"] == warm)
    last = step_events[-1]
    tokens = (last["step"] - first["step"]) * PRESETS[preset]["batch"] * PRESETS[preset]["context"]
    return tokens / (last["elapsed_s"] - first["elapsed_s"]), tokens / (last["cpu_s"] - first["cpu_s"]), last["loss"]


def flops_per_token(cfg):
    c, ff, L, t = cfg["d_model"], cfg["d_ff"], cfg["layers"], cfg["context"]
    linear = L * (4 * c * c + 2 * c * ff) + 256 * c  # multiply-adds per token in the linear maps and the head
    attention = L * 2 * c * (t + 1) / 2  # q.k and p.v over the causal half
    return 6 * (linear + attention)  # forward 2 + backward 4 flops per multiply-add


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(here, "..", "build", "bin", "positionlab-cli"))
    ap.add_argument("--preset", default="quick", choices=sorted(PRESETS))
    ap.add_argument("--scheme", default="alibi", choices=["alibi", "rope", "none", "sinusoidal", "learned"])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--skip-torch", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = PRESETS[args.preset]
    if args.corpus:
        data = np.frombuffer(open(args.corpus, "rb").read(), dtype=np.uint8)
    else:
        d = "/usr/share/games/fortunes"
        text = b""
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.islink(p) or not os.path.isfile(p) or name.endswith((".dat", ".u8")):
                continue
            text += b"".join(l for l in open(p, "rb").read().splitlines(True) if l.rstrip(b"\n") != b"%")
        data = np.frombuffer(text, dtype=np.uint8)
        data = data[: len(data) - len(data) // 10]
    warm = max(1, args.steps // 10)
    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
    print(f"preset {args.preset}, scheme {args.scheme}, {args.steps} steps of {cfg['batch']}x{cfg['context']} tokens, "
          f"{args.threads} threads, load {os.getloadavg()[0]:.2f}", flush=True)
    for r in range(args.repeat):  # alternate the peers so both see the same machine state
        tps, tpc, loss = project_tokens_per_second(args.cli, args.preset, args.scheme, args.steps, args.threads, args.corpus)
        ours.append(tps)
        ours_cpu.append(tpc)
        print(f"  run {r + 1}: positionlab {tps:10.0f} tokens/s {tpc:10.0f} tokens/CPU-s (loss {loss:.3f}, "
              f"load {os.getloadavg()[0]:.2f})", flush=True)
        if not args.skip_torch:
            tps, tpc, loss = torch_tokens_per_second(cfg, args.scheme, args.steps, warm, data, 1 + r)
            theirs.append(tps)
            theirs_cpu.append(tpc)
            print(f"  run {r + 1}: pytorch     {tps:10.0f} tokens/s {tpc:10.0f} tokens/CPU-s (loss {loss:.3f}, "
                  f"load {os.getloadavg()[0]:.2f})", flush=True)
    fpt = flops_per_token(cfg)
    m = statistics.median(ours)
    print(f"positionlab median {m:.0f} tokens/s = {m * fpt / 1e9:.1f} GFLOP/s (model FLOPs, {fpt / 1e6:.2f} MFLOP/token)")
    print(f"positionlab median {statistics.median(ours_cpu):.0f} tokens per CPU-second")
    if theirs:
        t = statistics.median(theirs)
        print(f"pytorch     median {t:.0f} tokens/s = {t * fpt / 1e9:.1f} GFLOP/s")
        print(f"pytorch     median {statistics.median(theirs_cpu):.0f} tokens per CPU-second")
        print(f"ratio positionlab / pytorch = {m / t:.2f}x (wall), "
              f"{statistics.median(ours_cpu) / statistics.median(theirs_cpu):.2f}x (per CPU-second)")


if __name__ == "__main__":
    sys.exit(main())
