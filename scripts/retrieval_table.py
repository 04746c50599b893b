#!/usr/bin/env python3
"""Mean ± sample sd over seeds of retrieval runs (eval DIR --task/--examples-in -o run.json, one file per seed):
one Markdown row per method, one column per length (the depths pooled), and the per-depth table with --by-depth.

    scripts/retrieval_table.py pk-folder-1.json pk-folder-2.json pk-folder-3.json [--by-depth]
"""
import json
import statistics
import sys


def main(argv):
    by_depth = "--by-depth" in argv
    paths = [a for a in argv if not a.startswith("--")]
    if not paths:
        sys.exit("usage: retrieval_table.py RUN.json [RUN.json ...] [--by-depth]")
    # (label, length[, depth]) -> one accuracy per seed
    cells, labels, lengths, depths = {}, [], set(), set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
        for method in run["methods"]:
            label = method["label"].split(" (")[0]
            if label not in labels:
                labels.append(label)
            pooled = {}
            for c in method["cells"]:
                lengths.add(c["length"])
                depths.add(c["depth"])
                pooled.setdefault(c["length"], []).append(c["accuracy"])
                if by_depth:
                    cells.setdefault((label, c["length"], c["depth"]), []).append(c["accuracy"])
            if not by_depth:
                for length, values in pooled.items():
                    cells.setdefault((label, length), []).append(sum(values) / len(values))
    lengths = sorted(lengths)

    def cell(values):
        if len(values) < 2:
            return f"{values[0]:.2f}"
        return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"

    head = ["method"] + (["depth"] if by_depth else []) + [str(n) for n in lengths]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for label in labels:
        for depth in sorted(depths) if by_depth else [None]:
            values = [cells.get((label, n, depth) if by_depth else (label, n)) for n in lengths]
            out = [label] + ([f"{depth:g}"] if by_depth else []) + [cell(v) if v else "—" for v in values]
            print("| " + " | ".join(out) + " |")

if __name__ == "__main__":
    main(sys.argv[1:])
