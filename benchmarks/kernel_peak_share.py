#!/usr/bin/python3
"""The attention forward's share of the FP32 FMA peak, for one or two builds, measured alternately in one session.

Each round runs, for every binary given with --cli (e.g. main's build "before" and this branch's "after"):
    positionlab-cli bench attention --scheme S --length N --heads H --dim D --threads T --repeat R --json
and, right after it, the peak probe of the first binary that has one (`bench peak`, AVX-512 / AVX2 by CPU dispatch):
    positionlab-cli bench peak --threads T --repeat 3 --json
so each attention figure has a peak measured under the same load. The machine is shared and noisy: the script
reports medians over the rounds, per wall second and per CPU-second (flops over the CPU time all threads got, which
the neighbours disturb least), and the load average before and after.

usage: /usr/bin/python3 benchmarks/kernel_peak_share.py --cli NAME=PATH [--cli NAME=PATH ...] [--rounds 7]
       [--scheme alibi] [--length 4096] [--heads 8] [--dim 64] [--threads 2] [--repeat 5] [--json OUT.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_json(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", action="append", required=True, help="NAME=PATH of a positionlab-cli")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scheme", default="alibi")
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the raw rounds here")
    args = parser.parse_args()
    clis = [tuple(c.split("=", 1)) for c in args.cli]
    peak_cli = None
    for _, path in clis:
        if subprocess.run([path, "bench", "peak", "--repeat", "1", "--json"], capture_output=True).returncode == 0:
            peak_cli = path
            break
    if peak_cli is None:
        sys.exit("no --cli has `bench peak`")
    bench = ["bench", "attention", "--scheme", args.scheme, "--length", str(args.length), "--heads", str(args.heads),
             "--dim", str(args.dim), "--threads", str(args.threads), "--repeat", str(args.repeat), "--json"]
    peak = [peak_cli, "bench", "peak", "--threads", str(args.threads), "--repeat", "3", "--json"]
    load_before = os.getloadavg()
    rounds = {name: [] for name, _ in clis}
    for r in range(args.rounds):
        order = clis if r % 2 == 0 else list(reversed(clis))  # alternate who goes first
        for name, path in order:
            a = run_json([path] + bench)
            p = run_json(peak)
            rounds[name].append({
                "gflops": a["forward_gflops"], "gflops_cpu": a["forward_gflops_per_cpu_second"],
                "peak": p["gflops"], "peak_cpu": p["gflops_per_cpu_second"] * args.threads,
                "share": a["forward_gflops"] / p["gflops"],
                "share_cpu": a["forward_gflops_per_cpu_second"] / p["gflops_per_cpu_second"]})
            print(f"round {r + 1} {name}: {a['forward_gflops']:.1f} GFLOP/s ({100 * rounds[name][-1]['share']:.1f}% of "
                  f"{p['gflops']:.1f}), per CPU-second {a['forward_gflops_per_cpu_second']:.1f} "
                  f"({100 * rounds[name][-1]['share_cpu']:.1f}% of {p['gflops_per_cpu_second']:.1f})", flush=True)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f} / {load_before[1]:.2f}, after {load_after[0]:.2f} / "
          f"{load_after[1]:.2f} (1 / 5 min); {os.cpu_count()} processors")
    med = statistics.median
    for name, rs in rounds.items():
        print(f"{name}: median {med(r['gflops'] for r in rs):.1f} GFLOP/s = {100 * med(r['share'] for r in rs):.1f}% "
              f"of the peak (median {med(r['peak'] for r in rs):.1f}); per CPU-second "
              f"{med(r['gflops_cpu'] for r in rs):.1f} = {100 * med(r['share_cpu'] for r in rs):.1f}% of the peak")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "load_before": load_before, "load_after": load_after, "rounds": rounds}, f,
                      indent=1)


if __name__ == "__main__":
    main()
