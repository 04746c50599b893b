#!/usr/bin/python3
""""Train short, test long" for every scheme: train the quick preset, evaluate at L..16L, write a markdown table.

For each scheme: `positionlab-cli train --scheme S --preset quick ... -o DIR/S.safetensors` (time measured), then
`positionlab-cli eval DIR/S.safetensors --lengths 64,...,1024 --mode M -o DIR/S.M.csv`. The table holds perplexity
per length, the ratio 16L/1L and the training time; the exact commands are listed under it.

usage: /usr/bin/python3 benchmarks/extrapolation_table.py [--cli build/bin/positionlab-cli] [--out FILE.md]
       [--workdir DIR] [--schemes alibi,rope,...] [--modes nonoverlapping,sliding] [--threads T] [--preset P]
       [--lengths 64,...] [--max-bytes B] [train options...]
The demo preset as the Train tab runs it, one seed:
  benchmarks/extrapolation_table.py --preset demo --lengths 32,64,128,256,512 --max-bytes 16384 \
      --schemes sinusoidal,rope,alibi,local --threads 2 --workdir runs-seed2 --out seed2.md -- --seed 2
Extra arguments after `--` go to every `train` command (e.g. -- --steps 500). A scheme may carry parameters:
--schemes local:window=32 trains `--scheme local --set window=32` (row label local-window=32).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import shlex
import subprocess
import sys
import threading
import time

ALL = ["none", "sinusoidal", "learned", "rope", "xpos", "t5", "alibi", "kerple-power", "kerple-log", "sandwich",
       "local", "bca"]


def run(cmd, log):
    log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
    log.flush()
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(proc.stdout)
    log.flush()
    if proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-2000:]}")
    return time.time() - start, proc.stdout


def run_scheme(args, cli, entry, modes, lengths, extra, log):
    # An entry is a scheme name, optionally with scheme parameters: "local:window=32" (label "local-window=32").
    scheme, *settings = entry.split(":")
    label = "-".join([scheme] + settings)
    model = os.path.join(args.workdir, label + ".safetensors")
    train = [cli, "train", "--scheme", scheme, "--preset", args.preset, "--threads", str(args.threads), "--json",
             "-o", model] + [x for s in settings for x in ("--set", s)] + extra
    commands = [train]
    info = {"scheme": label}
    if args.retrain or not os.path.exists(model + ".train.json"):
        seconds, out = run(train, log)
        events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        done = next(e for e in events if e.get("event") == "done")
        info.update(train_seconds=seconds, train_loss=done["train_loss"], validation_loss=done["validation_loss"],
                    tokens_per_second=done["tokens_per_second"])
        json.dump(info, open(model + ".train.json", "w"))
    else:
        info.update(json.load(open(model + ".train.json")))
    for mode in modes:
        csv_path = os.path.join(args.workdir, f"{label}.{mode}.csv")
        ev = [cli, "eval", model, "--lengths", ",".join(map(str, lengths)), "--mode", mode, "--threads",
              str(args.threads), "--quiet", "-o", csv_path]
        if args.max_bytes:
            ev[-2:-2] = ["--max-bytes", str(args.max_bytes)]
        commands.append(ev)
        if args.retrain or not os.path.exists(csv_path):
            seconds, _ = run(ev, log)
            info[mode + "_seconds"] = seconds
        rows = list(csv.DictReader(open(csv_path)))
        info[mode] = {int(r["length"]): float(r["perplexity"]) for r in rows}
    return info, commands


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(here, "..", "build", "bin", "positionlab-cli"))
    ap.add_argument("--out", default="extrapolation_table.md")
    ap.add_argument("--workdir", default="extrapolation_runs")
    ap.add_argument("--schemes", default=",".join(ALL))
    ap.add_argument("--modes", default="nonoverlapping")
    ap.add_argument("--lengths", default="64,128,256,512,1024")
    ap.add_argument("--preset", default="quick")
    ap.add_argument("--max-bytes", type=int, default=0,
                    help="held-out bytes scored per length (0: all; the demo preset's Train tab scores 16384)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="OpenMP threads per run")
    ap.add_argument("--jobs", type=int, default=1, help="schemes run at the same time")
    ap.add_argument("--retrain", action="store_true", help="train and evaluate even when results exist")
    args, extra = ap.parse_known_args()
    if extra and extra[0] == "--":
        extra = extra[1:]
    cli = os.path.abspath(args.cli)
    os.makedirs(args.workdir, exist_ok=True)
    schemes = [s for s in args.schemes.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    lengths = [int(x) for x in args.lengths.split(",")]
    log = open(os.path.join(args.workdir, "log.txt"), "a")
    results, commands = {}, {}
    lock = threading.Lock()

    def work(scheme):
        info, cmds = run_scheme(args, cli, scheme, modes, lengths, extra, log)
        with lock:
            results[scheme], commands[scheme] = info, cmds
            print(json.dumps(info), flush=True)
            ordered = [s for s in schemes if s in results]
            write_table(args, {s: results[s] for s in ordered}, modes, lengths,
                        [c for s in ordered for c in commands[s]])

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for f in [pool.submit(work, s) for s in schemes]:
            f.result()


def fmt(x):
    return "unsupported" if x != x else f"{x:.3f}"


def write_table(args, results, modes, lengths, commands):
    out = []
    out.append(f"# Train short, test long: every scheme, preset `{args.preset}`\n")
    out.append(f"Machine: {os.cpu_count()} cores; {args.jobs} run(s) at a time, {args.threads} thread(s) each. Corpus: the Debian fortunes files "
               "(last 10% held out); byte-level perplexity on the held-out bytes. Training context "
               f"L = {lengths[0]}.\n")
    for mode in modes:
        out.append(f"\n## {mode} windows\n")
        head = "| scheme | " + " | ".join(f"ppl @ {n}" for n in lengths) + f" | {lengths[-1]}/{lengths[0]} | train time | train tok/s |"
        out.append(head)
        out.append("|" + "---|" * (len(lengths) + 4))
        for scheme, info in results.items():
            ppl = info.get(mode, {})
            first, last = ppl.get(lengths[0], float("nan")), ppl.get(lengths[-1], float("nan"))
            ratio = "—" if last != last else f"{last / first:.2f}x"
            out.append(f"| {scheme} | " + " | ".join(fmt(ppl.get(n, float('nan'))) for n in lengths) +
                       f" | {ratio} | {info.get('train_seconds', float('nan')):.0f} s | {info.get('tokens_per_second', 0):.0f} |")
    out.append("\n## Commands\n")
    out.append("```")
    for c in commands:
        out.append(" ".join(shlex.quote(x) for x in c))
    out.append("```")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main())
