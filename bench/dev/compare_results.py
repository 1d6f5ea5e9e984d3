#!/usr/bin/env python3
"""Cell-by-cell comparison of gpukern-bench runs: BEFORE AFTER [AFTER_AGAIN].
Prints each (op, dtype, shape, rung) with the after/before time ratio, and, given a
repeat of the after build, that repeat's ratio too (the run-to-run noise of the call)."""
import json
import statistics
import sys


def cells(path):
    with open(path) as f:
        run = json.load(f)
    out = {}
    for r in run["results"]:
        shape = f'{r["m"]}x{r["n"]}x{r["k"]}' if r["op"] == "gemm" else f'{r["rows"]}x{r["cols"]}'
        out[(r["op"], r["dtype"], shape, r["variant"])] = r["ms"]
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    before, after = cells(argv[1]), cells(argv[2])
    again = cells(argv[3]) if len(argv) > 3 else {}
    ratios, noise = [], []
    print(f'{"op":8} {"dtype":5} {"shape":16} {"rung":15} {"before ms":>10} {"after ms":>10} {"after/before":>12} {"repeat/after":>12}')
    for key in sorted(before):
        if key not in after:
            print(" ".join(key), "missing after")
            continue
        ratio = after[key] / before[key]
        ratios.append(ratio)
        rep = ""
        if key in again:
            noise.append(again[key] / after[key])
            rep = f"{noise[-1]:12.3f}"
        print(f"{key[0]:8} {key[1]:5} {key[2]:16} {key[3]:15} {before[key]:10.4g} {after[key]:10.4g} {ratio:12.3f} {rep}")
    def summary(name, xs):
        if xs:
            print(f"{name}: {len(xs)} cells, median {statistics.median(xs):.3f}, "
                  f"min {min(xs):.3f}, max {max(xs):.3f}")
    summary("after/before", ratios)
    summary("repeat/after (noise)", noise)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
