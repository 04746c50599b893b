#!/usr/bin/python3
"""The attention kernel's share of the FP32 FMA peak, for one or more builds, measured alternately in one session.

Each round runs, for every binary given with --cli (e.g. a build "before" and this branch's "after"), in an order
that alternates between rounds:
    positionlab-cli bench attention --scheme S --length N --heads H --dim D --threads T --repeat R --json [--backward]
        [--scaling M] [--window W] [--set NAME=VALUE ...]
and, right after it, the peak probe of the first binary that has one (`bench peak`, AVX-512 / AVX2 by CPU dispatch):
    positionlab-cli bench peak --threads T --repeat 3 --json
so each attention figure has a peak measured under the same load. The machine may be shared and noisy: the script
reports the median and the 90th percentile over the rounds (the high quantile: what the kernel does when the
neighbours leave it alone), per wall second and per CPU-second (flops over the CPU time all threads got, which the
neighbours disturb least), each build's median ratio to the first build within the same round, and the load average.

usage: /usr/bin/python3 benchmarks/kernel_peak_share.py --cli NAME=PATH [--cli NAME=PATH ...] [--rounds 7]
       [--scheme alibi] [--length 4096] [--heads 8] [--dim 64] [--threads 2] [--repeat 5] [--backward]
       [--scaling M] [--window W] [--set NAME=VALUE ...] [--json OUT.json]
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


def quantile(values, q):
    """The q-quantile by linear interpolation between order statistics (q = 0.5: the median)."""
    v = sorted(values)
    at = q * (len(v) - 1)
    lo = int(at)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (at - lo)


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
    parser.add_argument("--backward", action="store_true", help="also time the backward")
    parser.add_argument("--scaling", help="rotary length extension method")
    parser.add_argument("--window", type=int, help="window of local/bca")
    parser.add_argument("--set", action="append", default=[], help="NAME=VALUE scheme parameter")
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
    if args.backward:
        bench.append("--backward")
    if args.scaling:
        bench += ["--scaling", args.scaling]
    if args.window:
        bench += ["--window", str(args.window)]
    for s in args.set:
        bench += ["--set", s]
    peak = [peak_cli, "bench", "peak", "--threads", str(args.threads), "--repeat", "3", "--json"]
    load_before = os.getloadavg()
    passes = ["forward"] + (["backward"] if args.backward else [])
    rounds = {name: [] for name, _ in clis}
    for r in range(args.rounds):
        order = clis if r % 2 == 0 else list(reversed(clis))  # alternate who goes first
        for name, path in order:
            a = run_json([path] + bench)
            p = run_json(peak)
            row = {"peak": p["gflops"], "peak_cpu": p["gflops_per_cpu_second"]}
            for pas in passes:
                gflops = a[f"{pas}_gflops"]
                # Backward CPU time: the JSON gives its ms; the same 2.5x flops convention as its GFLOP/s.
                cpu = (a["forward_gflops_per_cpu_second"] if pas == "forward" else
                       2.5 * a["flops"] / a["backward_cpu_ms"] * 1e-6)
                row[pas] = {"gflops": gflops, "gflops_cpu": cpu, "share": gflops / p["gflops"],
                            "share_cpu": cpu / p["gflops_per_cpu_second"]}
            rounds[name].append(row)
            print(f"round {r + 1} {name}: " + "; ".join(
                f"{pas} {row[pas]['gflops']:.1f} GFLOP/s ({100 * row[pas]['share']:.1f}% of {p['gflops']:.1f}), per "
                f"CPU-second {row[pas]['gflops_cpu']:.1f} ({100 * row[pas]['share_cpu']:.1f}%)" for pas in passes),
                flush=True)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f} / {load_before[1]:.2f}, after {load_after[0]:.2f} / "
          f"{load_after[1]:.2f} (1 / 5 min); {os.cpu_count()} processors")
    first = clis[0][0]
    for pas in passes:
        for name, rs in rounds.items():
            def q(key, quant):
                return quantile([x[pas][key] for x in rs], quant)
            line = (f"{pas} {name}: GFLOP/s median {q('gflops', .5):.1f} p90 {q('gflops', .9):.1f}, share of the "
                    f"peak median {100 * q('share', .5):.1f}% p90 {100 * q('share', .9):.1f}% (peak median "
                    f"{quantile([x['peak'] for x in rs], .5):.1f}); per CPU-second median {q('gflops_cpu', .5):.1f} "
                    f"p90 {q('gflops_cpu', .9):.1f} = {100 * q('share_cpu', .5):.1f}% / "
                    f"{100 * q('share_cpu', .9):.1f}% of the peak per CPU-second")
            if name != first:
                ratios = [x[pas]["gflops_cpu"] / y[pas]["gflops_cpu"] for x, y in zip(rs, rounds[first])]
                wall = [x[pas]["gflops"] / y[pas]["gflops"] for x, y in zip(rs, rounds[first])]
                line += (f"; / {first} in the same round: per CPU-second median {quantile(ratios, .5):.3f}x "
                         f"(p10 {quantile(ratios, .1):.3f}, p90 {quantile(ratios, .9):.3f}), wall median "
                         f"{quantile(wall, .5):.3f}x")
            print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "load_before": load_before, "load_after": load_after, "rounds": rounds}, f,
                      indent=1)


if __name__ == "__main__":
    main()
