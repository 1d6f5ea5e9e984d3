#!/usr/bin/env python3
"""ctest bench.report: gpukern-report on two fixture runs (a CPU and a CUDA device,
made up but schema-valid) and a profile CSV; checks the tables it writes (rows,
numbers, speed-up and % columns), the cross-device table, the PNGs, that the output
is byte-for-byte deterministic, and that a bad input is refused.

Exit 77 (ctest SKIP_RETURN_CODE) when matplotlib is missing.
"""

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


def run_report(report, args):
    return subprocess.run([report] + args, capture_output=True, text=True)


def parse_markdown(text):
    """{(section, heading): [row dicts]} for every table; section = the '## ' title,
    heading = the last '### '/'#### ' title above the table (or the section)."""
    tables, section, heading, header = {}, "", "", None
    for line in text.splitlines():
        if line.startswith("## "):
            section = heading = line[3:].strip()
            header = None
        elif line.startswith("#### ") or line.startswith("### "):
            heading = line.lstrip("#").strip()
            header = None
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                tables.setdefault((section, heading), [])
            elif all(set(c) <= {"-"} for c in cells):
                continue
            else:
                tables[(section, heading)].append(dict(zip(header, cells)))
        else:
            header = None
    return tables


def find_row(rows, **want):
    for row in rows:
        if all(row.get(k) == v for k, v in want.items()):
            return row
    return None


def expect_row(tables, key, want, expected):
    rows = tables.get(key)
    check(rows is not None, "no table {}".format(key))
    if rows is None:
        return
    row = find_row(rows, **want)
    check(row is not None, "{}: no row {}".format(key, want))
    if row is None:
        return
    for column, value in expected.items():
        check(row.get(column) == value,
              "{} {}: column '{}' is '{}', expected '{}'".format(key, want, column, row.get(column), value))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True, help="the gpukern-report executable")
    parser.add_argument("--fixtures", required=True, help="bench/tests/fixtures")
    args = parser.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: matplotlib is not installed (Debian: python3-matplotlib)")
        return 77

    cpu = os.path.join(args.fixtures, "cpu-fixture.json")
    cuda = os.path.join(args.fixtures, "cuda-fixture.json")
    profile = os.path.join(args.fixtures, "profile-fixture.csv")
    with tempfile.TemporaryDirectory(prefix="gpukern-report-test-") as tmp:
        out = os.path.join(tmp, "report")
        r = run_report(args.report, [cuda, cpu, "--out", out, "--profile", profile])
        check(r.returncode == 0, "gpukern-report failed ({}): {}".format(r.returncode, r.stderr))
        report_md = os.path.join(out, "report.md")
        if not os.path.exists(report_md):
            print("FAIL: no report.md\n" + r.stderr)
            return 1
        with open(report_md, encoding="utf-8") as f:
            text = f.read()
        tables = parse_markdown(text)
        gpu, host = "Fixture GPU 80GB (cuda)", "Fixture CPU 2-core (cpu)"

        # Both runs listed.
        runs = tables.get(("Runs", "Runs"), [])
        check(len(runs) == 2, "Runs table has {} rows, expected 2".format(len(runs)))
        check(find_row(runs, device=gpu, commit="def5678", file="cuda-fixture.json") is not None,
              "Runs table lacks the CUDA run")

        # GPU GEMM f32 ladder: rates, speed-up over naive, % of cuBLAS, % of peak, error.
        key = (gpu, "GEMM f32")
        check(len(tables.get(key, [])) == 7, "{}: {} rows, expected 7".format(key, len(tables.get(key, []))))
        expect_row(tables, key, {"rung": "warptile", "size": "4096³"},
                   {"GFLOP/s": "36,400", "speed-up over naive": "72.8×", "% of cuBLAS": "71%",
                    "% of peak": "54%", "rel. error": "1.0e-07", "dtype": "f32"})
        expect_row(tables, key, {"rung": "cublas (reference)", "size": "4096³"},
                   {"GFLOP/s": "51,600", "speed-up over naive": "103.2×", "% of cuBLAS": "100%"})
        expect_row(tables, key, {"rung": "naive", "size": "1024³"},
                   {"GFLOP/s": "450", "speed-up over naive": "1.0×", "% of cuBLAS": "1.3%"})
        # Rows in ladder order within a size, sizes ascending.
        order = [(row["size"], row["rung"]) for row in tables.get(key, [])]
        check(order[:3] == [("1024³", "naive"), ("1024³", "warptile"), ("1024³", "cublas (reference)")],
              "{}: unexpected row order {}".format(key, order))
        check("- not measured (no f32 support (takes f16,bf16)): wmma at 4096³" in text,
              "the skipped wmma f32 case is not reported")

        expect_row(tables, (gpu, "GEMM f16"), {"rung": "wmma"},
                   {"GFLOP/s": "300,000", "speed-up over naive": "500.0×", "% of cuBLAS": "44%"})

        # GPU softmax: TB/s, % of cuDNN and of the device copy; an error above its bound is flagged.
        key = (gpu, "softmax f32")
        expect_row(tables, key, {"rung": "warp_row", "size": "4096x4096"},
                   {"TB/s": "2.50", "speed-up over naive": "6.2×", "% of cuDNN": "118%",
                    "% of copy": "83%", "% of peak": "75%"})
        expect_row(tables, key, {"rung": "warp_row", "size": "1024x32768"},
                   {"rel. error": "3.0e-05 (above 1e-05)"})

        # CPU: GB/s for rates below half a TB/s; naive capped at 2048 is said so.
        expect_row(tables, (host, "GEMM f32"), {"rung": "omp_simd", "size": "1024³"},
                   {"GFLOP/s": "150", "speed-up over naive": "300.0×", "% of OpenBLAS": "75%", "% of peak": "50%"})
        expect_row(tables, (host, "GEMM f32"), {"rung": "omp_simd", "size": "2048³"},
                   {"speed-up over naive": "—", "% of OpenBLAS": "89%"})
        check("- not measured (naive runs only up to 1024^3 (--naive-max-size)): naive at 2048³" in text,
              "the naive cap is not reported")
        expect_row(tables, (host, "softmax f32"), {"rung": "omp_simd", "size": "4096x4096"},
                   {"GB/s": "12.5", "speed-up over naive": "6.2×", "% of vendor": "—", "% of copy": "125%"})

        # Cross-device table: best non-reference rung at each device's largest size.
        best = tables.get(("Best rung per operation and dtype", "Best rung per operation and dtype"), [])
        check(len(best) == 5, "best-rung table has {} rows, expected 5".format(len(best)))
        expect_row(tables, ("Best rung per operation and dtype", "Best rung per operation and dtype"),
                   {"op": "GEMM", "dtype": "f32", "device": gpu},
                   {"size": "4096³", "best rung": "warptile", "rate": "36,400 GFLOP/s",
                    "vendor": "cuBLAS 51,600", "% of vendor": "71%"})
        expect_row(tables, ("Best rung per operation and dtype", "Best rung per operation and dtype"),
                   {"op": "GEMM", "dtype": "f32", "device": host},
                   {"size": "2048³", "best rung": "omp_simd", "vendor": "OpenBLAS 190"})

        # Profile CSV included.
        prof = tables.get(("Nsight Compute profile", "Nsight Compute profile"), [])
        check(find_row(prof, rung="warptile", **{"regs/thread": "128"}) is not None,
              "profile table lacks the warptile row")

        # PNGs: the expected ones exist, are PNGs, and every referenced image exists.
        expected_pngs = [
            "fixture-gpu-80gb-cuda-gemm-ladder.png", "fixture-gpu-80gb-cuda-gemm-size.png",
            "fixture-gpu-80gb-cuda-softmax-ladder.png", "fixture-gpu-80gb-cuda-softmax-cols.png",
            "fixture-cpu-2-core-cpu-gemm-ladder.png", "fixture-cpu-2-core-cpu-gemm-size.png",
            "fixture-cpu-2-core-cpu-softmax-ladder.png", "fixture-cpu-2-core-cpu-softmax-cols.png",
        ]
        for name in expected_pngs:
            path = os.path.join(out, name)
            ok = os.path.exists(path) and os.path.getsize(path) > 1000
            if ok:
                with open(path, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
            check(ok, "missing or invalid PNG {}".format(name))
            check("]({})".format(name) in text, "report.md does not include {}".format(name))

        # Deterministic: a second run (inputs in another order) gives identical files.
        out2 = os.path.join(tmp, "again")
        r = run_report(args.report, [cpu, cuda, "--out", out2, "--profile", profile])
        check(r.returncode == 0, "second run failed: {}".format(r.stderr))
        names = sorted(os.listdir(out))
        check(names == sorted(os.listdir(out2)), "second run wrote other files")
        match, mismatch, errors = filecmp.cmpfiles(out, out2, names, shallow=False)
        check(not mismatch and not errors, "output differs between runs: {}".format(mismatch + errors))

        # A file of another schema is refused with a message naming it.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump({"schema": 2, "device": {}, "results": []}, f)
        r = run_report(args.report, [bad, "--out", os.path.join(tmp, "bad")])
        check(r.returncode == 2 and "bad.json" in r.stderr, "schema 2 input not refused: {} {}".format(
            r.returncode, r.stderr))

    for message in FAILURES:
        print("FAIL: " + message)
    if not FAILURES:
        print("gpukern-report: all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
