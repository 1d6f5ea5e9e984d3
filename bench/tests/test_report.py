#!/usr/bin/env python3
"""ctest bench.report: gpukern-report on two fixture runs (a CPU and a CUDA device,
made up but schema-valid) and a profile CSV; checks the tables it writes (rows,
numbers, speed-up and % columns), the cross-device table, the PNGs, that the output
is byte-for-byte deterministic, and that a bad input is refused. A third fixture
(suite-fixture.json) holds llm and square suite cells of the CUDA device: the suite
section's tables and plots.

Exit 77 (ctest SKIP_RETURN_CODE) when matplotlib is missing.
"""

import argparse
import contextlib
import copy
import filecmp
import glob
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


def check_png(out, name, text):
    """`name` in `out` is a PNG of some size, and the report text links it."""
    path = os.path.join(out, name)
    ok = os.path.exists(path) and os.path.getsize(path) > 1000
    if ok:
        with open(path, "rb") as f:
            ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
    check(ok, "missing or invalid PNG {}".format(name))
    check("]({})".format(name) in text, "report.md does not include {}".format(name))


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


def check_report(report, fixtures, tmp):
    """report.md and the PNGs from the fixture runs."""
    cpu = os.path.join(fixtures, "cpu-fixture.json")
    cuda = os.path.join(fixtures, "cuda-fixture.json")
    profile = os.path.join(fixtures, "profile-fixture.csv")
    out = os.path.join(tmp, "report")
    r = run_report(report, [cuda, cpu, "--out", out, "--profile", profile])
    check(r.returncode == 0, "gpukern-report failed ({}): {}".format(r.returncode, r.stderr))
    report_md = os.path.join(out, "report.md")
    if not os.path.exists(report_md):
        check(False, "no report.md: " + r.stderr)
        return
    with open(report_md, encoding="utf-8") as f:
        text = f.read()
    tables = parse_markdown(text)
    gpu, host = "Fixture GPU 80GB (cuda)", "Fixture CPU 2-core (cpu, 2 threads)"

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
        "fixture-cpu-2-core-cpu-2-threads-gemm-ladder.png", "fixture-cpu-2-core-cpu-2-threads-gemm-size.png",
        "fixture-cpu-2-core-cpu-2-threads-softmax-ladder.png",
        "fixture-cpu-2-core-cpu-2-threads-softmax-cols.png",
    ]
    for name in expected_pngs:
        check_png(out, name, text)

    # Deterministic: a second run (inputs in another order) gives identical files.
    out2 = os.path.join(tmp, "again")
    r = run_report(report, [cpu, cuda, "--out", out2, "--profile", profile])
    check(r.returncode == 0, "second run failed: {}".format(r.stderr))
    names = sorted(os.listdir(out))
    check(names == sorted(os.listdir(out2)), "second run wrote other files")
    match, mismatch, errors = filecmp.cmpfiles(out, out2, names, shallow=False)
    check(not mismatch and not errors, "output differs between runs: {}".format(mismatch + errors))

    # A file of another schema is refused with a message naming it.
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump({"schema": 2, "device": {}, "results": []}, f)
    r = run_report(report, [bad, "--out", os.path.join(tmp, "bad")])
    check(r.returncode == 2 and "bad.json" in r.stderr, "schema 2 input not refused: {} {}".format(
        r.returncode, r.stderr))


# ---------------------------------------------------------------- workload suites

def check_suite(report, fixtures, tmp):
    """The llm and square suites (suite-fixture.json, the same device as cuda-fixture.json):
    the suite section's tables and plots, and the llm cells kept out of the ladder tables."""
    cuda = os.path.join(fixtures, "cuda-fixture.json")
    suite = os.path.join(fixtures, "suite-fixture.json")
    out = os.path.join(tmp, "suite-report")
    r = run_report(report, [cuda, suite, "--out", out])
    check(r.returncode == 0, "gpukern-report on the suite fixture failed ({}): {}".format(r.returncode, r.stderr))
    report_md = os.path.join(out, "report.md")
    if not os.path.exists(report_md):
        check(False, "no report.md for the suite fixture: " + r.stderr)
        return
    with open(report_md, encoding="utf-8") as f:
        text = f.read()
    tables = parse_markdown(text)
    gpu = "Fixture GPU 80GB (cuda)"
    section = gpu + ": workload suites"
    check(("## " + section) in text, "no suite section for " + gpu)

    # Own best / cuBLAS per (T, N x K): the fastest own rung changes with T; NT differs from NN.
    nn = (section, "bf16 NN: fastest own rung, % of cuBLAS")
    expect_row(tables, nn, {"T": "1"}, {"N×K 4096x4096": "80% mma_multistage",
                                         "N×K 14336x4096": "80% mma_multistage"})
    expect_row(tables, nn, {"T": "512"}, {"N×K 4096x4096": "80% wgmma_tma", "N×K 14336x4096": "125% wgmma_tma"})
    expect_row(tables, (section, "bf16 NT: fastest own rung, % of cuBLAS"), {"T": "16"},
               {"N×K 4096x4096": "90% mma_multistage"})
    # % of the same-run copy: own best / cuBLAS (copy 2.5 TB/s, cuBLAS 55% of it at T <= 16).
    expect_row(tables, (section, "bf16 NN: % of the same-run copy, own best / cuBLAS"), {"T": "1"},
               {"N×K 4096x4096": "44% / 55%"})
    expect_row(tables, (section, "bf16 NN: % of the same-run copy, own best / cuBLAS"), {"T": "512"},
               {"N×K 14336x4096": "25% / 20%"})
    # square: one column per dtype and layout.
    expect_row(tables, (section, "square suite: fastest own rung, % of the vendor"), {"size": "1000³"},
               {"bf16 NN": "62% wgmma_tma"})

    # The llm cells stay out of the ladder tables; the square suite's sizes are in them.
    ladder = tables.get((gpu, "GEMM bf16"), [])
    check(not any(row.get("size", "").startswith(("1x", "16x", "512x")) for row in ladder),
          "llm suite cells in the ladder table: {}".format([row.get("size") for row in ladder]))
    check(find_row(ladder, rung="wgmma_tma", size="1000³") is not None, "square suite size 1000³ not in the ladder")

    for name in ("fixture-gpu-80gb-cuda-llm-vs-vendor.png", "fixture-gpu-80gb-cuda-llm-copy.png"):
        check_png(out, name, text)

    # README tables of kind llm: rows T, columns N x K, % of the vendor or % of copy.
    readme = os.path.join(tmp, "SUITE-README.md")
    with open(readme, "w", encoding="utf-8") as f:
        f.write("# Suite\n\n<!-- gpukern-report:begin llm device=fixture-gpu-80gb-cuda dtype=bf16 layout=NT -->\n"
                "<!-- gpukern-report:end -->\n\n<!-- gpukern-report:begin llm device=fixture-gpu-80gb-cuda "
                "dtype=bf16 metric=copy -->\n<!-- gpukern-report:end -->\n")
    r = run_report(report, [cuda, suite, "--readme", readme])
    check(r.returncode == 0, "--readme with llm tables failed: {}".format(r.stderr))
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    tables = generated_tables(text)
    check(len(tables) == 2 and find_row(tables[0], T="512", **{"N×K 4096x4096": "80% wgmma_tma",
                                                                 "N×K 14336x4096": "125% wgmma_tma"})
          and find_row(tables[0], T="1", **{"N×K 4096x4096": "90% mma_multistage"}),
          "llm README table (bf16 NT, % of cuBLAS) wrong: {}".format(tables[:1]))
    check(len(tables) == 2 and find_row(tables[1], T="1", **{"N×K 4096x4096": "44% / 55%"}),
          "llm README table (bf16 NN, % of copy) wrong: {}".format(tables[1:]))
    r = run_report(report, [cuda, suite, "--readme", readme, "--check"])
    check(r.returncode == 0, "--check after --readme (llm) reports a difference: {}".format(r.stderr))
    for marker, problem in (("metric=fast", "metric=fast"), ("dtype=f16", "no llm suite cell"),
                            ("layout=XY", "layout=XY")):
        with open(readme, "w", encoding="utf-8") as f:
            f.write("<!-- gpukern-report:begin llm device=fixture-gpu-80gb-cuda dtype=bf16 {} -->\n"
                    "<!-- gpukern-report:end -->\n".format(marker).replace("dtype=bf16 dtype=f16", "dtype=f16"))
        r = run_report(report, [cuda, suite, "--readme", readme])
        check(r.returncode == 2 and problem in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              "llm marker {} not refused naming {}: {} {!r}".format(marker, problem, r.returncode, r.stderr))

    # Tables only (no matplotlib needed) give the same tables.
    r = run_report(report, [cuda, suite, "--out", os.path.join(tmp, "suite-tables"), "--no-plots"])
    check(r.returncode == 0 and "125% wgmma_tma" in open(os.path.join(tmp, "suite-tables", "report.md"),
                                                           encoding="utf-8").read(),
          "--no-plots lost the suite tables: {}".format(r.stderr))


# ---------------------------------------------------------------- bad inputs (issue: tracebacks)

def load_report_module(report):
    """gpukern_report imported from the packed script (a zipapp is importable), to run its
    main() in-process: hundreds of malformed inputs in a few seconds."""
    sys.path.insert(0, report)
    import gpukern_report
    return gpukern_report


def run_main(module, argv):
    """(exit code, stderr) of module.main(argv); any exception is a failure of the check."""
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = module.main(argv)
    except SystemExit as e:
        code = e.code
    except Exception as e:  # noqa: BLE001 - a traceback is what the check is about
        return "exception", "{}: {}\n{}".format(type(e).__name__, e, traceback.format_exc())
    return code, err.getvalue()


def one_line_problem(code, stderr, path):
    """A refused input: exit 2 and one line "PATH: problem"."""
    lines = stderr.strip().splitlines()
    return code == 2 and len(lines) == 1 and lines[0].startswith(path + ": ") and "Traceback" not in stderr


MUTATIONS = ["fast", -1, 0, None, True, [], {}, float("inf"), 2 ** 70, ""]
REMOVED = object()


def mutants(run):
    """(label, run) with one field of the run removed or replaced by a wrong value: top-level,
    device, settings, the first gemm and softmax results and the first skipped record."""
    places = [("run", lambda r: r), ("device", lambda r: r["device"]), ("settings", lambda r: r["settings"])]
    for op in ("gemm", "softmax"):
        i = next(i for i, x in enumerate(run["results"]) if x["op"] == op)
        places.append(("results[{}]".format(i), lambda r, i=i: r["results"][i]))
    places.append(("skipped[0]", lambda r: r["skipped"][0]))
    for where, get in places:
        for key in sorted(get(run)):
            for value in [REMOVED] + MUTATIONS:
                mutant = copy.deepcopy(run)
                if value is REMOVED:
                    del get(mutant)[key]
                else:
                    get(mutant)[key] = value
                yield "{} {} {}".format(where, key, "removed" if value is REMOVED else repr(value)), mutant


def check_bad_inputs(report, fixtures, tmp):
    module = load_report_module(report)
    cuda = os.path.join(fixtures, "cuda-fixture.json")
    with open(cuda, encoding="utf-8") as f:
        run = json.load(f)
    bad = os.path.join(tmp, "bad.json")
    out = os.path.join(tmp, "bad-out")
    refused = 0
    for label, mutant in mutants(run):
        with open(bad, "w", encoding="utf-8") as f:
            json.dump(mutant, f)
        code, stderr = run_main(module, [bad, "--out", out, "--no-plots"])
        if code == 0:
            continue  # an optional field, or a value the report can show
        refused += 1
        check(one_line_problem(code, stderr, bad), "{}: exit {}, stderr {!r}".format(label, code, stderr[-600:]))
    check(refused > 100, "only {} malformed runs refused".format(refused))

    # The cases of the issue, each refused with one line naming the file and the field.
    def refuse(edit, field):
        mutant = copy.deepcopy(run)
        edit(mutant)
        with open(bad, "w", encoding="utf-8") as f:
            json.dump(mutant, f)
        code, stderr = run_main(module, [bad, "--out", out, "--no-plots"])
        check(one_line_problem(code, stderr, bad) and field in stderr,
              "not refused with '{}' named: exit {}, {!r}".format(field, code, stderr))
    refuse(lambda r: r["results"][0].pop("ms"), "'ms'")
    refuse(lambda r: r["results"][0].pop("variant"), "'variant'")
    refuse(lambda r: r["results"][-1].pop("cols"), "'cols'")
    refuse(lambda r: r.__setitem__("skipped", {"not": "a list"}), "'skipped'")
    refuse(lambda r: r["results"][0].__setitem__("gflops", "fast"), "'gflops'")
    refuse(lambda r: r["results"][0].__setitem__("pct_of_reference", "71%"), "'pct_of_reference'")
    refuse(lambda r: r["results"].__setitem__(0, "a string"), "results[0]")
    refuse(lambda r: r["results"][0].__setitem__("layout", "XY"), "'layout'")
    refuse(lambda r: r["results"][0].__setitem__("suite", 5), "'suite'")
    refuse(lambda r: r["results"][0].__setitem__("gbps", -1.0), "'gbps'")
    refuse(lambda r: r["results"][-1].__setitem__("pct_of_read", "fast"), "'pct_of_read'")

    # Not JSON at all, and a binary file.
    for name, data in (("truncated.json", b'{"schema": 1, "device": {'), ("binary.json", bytes(range(256)))):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        code, stderr = run_main(module, [path, "--out", out, "--no-plots"])
        check(one_line_problem(code, stderr, path), "{}: exit {}, {!r}".format(name, code, stderr))

    # --out: a file, under a file, in a place no one can create a directory.
    a_file = os.path.join(tmp, "a-file")
    with open(a_file, "w") as f:
        f.write("x")
    for target in (a_file, os.path.join(a_file, "sub"), "/proc/gpukern-report-test/out"):
        code, stderr = run_main(module, [cuda, "--out", target, "--no-plots"])
        check(one_line_problem(code, stderr, target), "--out {}: exit {}, {!r}".format(target, code, stderr))

    # --profile: binary, with NUL bytes, missing.
    for name, data in (("binary.csv", bytes(range(256)) * 4), ("nul.csv", b"rung,kernel\nwarp\0tile,k\n"),
                       ("missing.csv", None)):
        path = os.path.join(tmp, name)
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        code, stderr = run_main(module, [cuda, "--out", out, "--no-plots", "--profile", path])
        check(one_line_problem(code, stderr, path), "--profile {}: exit {}, {!r}".format(name, code, stderr))

    # The same through the packed script: no traceback, exit 2, one line.
    r = run_report(report, [bad, "--out", out, "--no-plots"])
    check(r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          "gpukern-report on a bad run: exit {}, {!r}".format(r.returncode, r.stderr))


# ---------------------------------------------------------------- README tables

README_TEMPLATE = """# A project

Text before, kept as it is.

<!-- gpukern-report:begin ladder device=fixture-gpu-80gb-cuda op=gemm dtype=f32 -->
stale text to be replaced
<!-- gpukern-report:end -->

Prose between tables, kept.

<!-- gpukern-report:begin ladder device=fixture-gpu-80gb-cuda op=gemm dtype=f32,f16 sizes=4096 rungs=naive,wmma,cublas unit=TFLOP/s -->
<!-- gpukern-report:end -->

<!-- gpukern-report:begin best device=fixture-gpu-80gb-cuda op=softmax sizes=1024x32768,4096 -->
<!-- gpukern-report:end -->

<!-- gpukern-report:begin ladder device=fixture-cpu-2-core-cpu-2-threads op=gemm dtype=f32 -->
<!-- gpukern-report:end -->

Text after.
"""


def generated_tables(text):
    """{n: parsed tables of the n-th generated section} (see parse_markdown)."""
    sections = re.findall(r"<!-- gpukern-report:begin [^\n]*-->\n(.*?)<!-- gpukern-report:end -->", text, re.S)
    return [(list(parse_markdown("## s\n" + body).values()) or [[]])[0] for body in sections]


def check_readme(report, fixtures, tmp):
    cpu = os.path.join(fixtures, "cpu-fixture.json")
    cuda = os.path.join(fixtures, "cuda-fixture.json")
    readme = os.path.join(tmp, "README.md")
    with open(readme, "w", encoding="utf-8") as f:
        f.write(README_TEMPLATE)
    r = run_report(report, [cuda, cpu, "--readme", readme])
    check(r.returncode == 0, "--readme failed ({}): {}".format(r.returncode, r.stderr))
    with open(readme, encoding="utf-8") as f:
        first = f.read()

    # Outside the markers nothing changes.
    outside = re.sub(r"(<!-- gpukern-report:begin [^\n]*-->\n).*?(<!-- gpukern-report:end -->)", r"\1\2",
                     first, flags=re.S)
    check(outside == README_TEMPLATE.replace("stale text to be replaced\n", ""),
          "text outside the markers changed:\n" + outside)
    check("stale text" not in first, "the old section content is still there")

    tables = generated_tables(first)
    check(len(tables) == 4, "{} generated tables, expected 4".format(len(tables)))
    if len(tables) == 4:
        gemm, tensor, softmax, host = tables
        check([row["rung"] for row in gemm] == ["naive", "smem_tiled", "warptile", "cublas"],
              "gemm rows {}".format(gemm))
        check(find_row(gemm, rung="warptile", **{"1024³": "**25,000 (74.4%)**", "4096³": "**36,400 (70.5%)**"}),
              "gemm warptile row {}".format(gemm))
        check(find_row(gemm, rung="cublas", **{"4096³": "51,600"}), "gemm reference row {}".format(gemm))
        check(find_row(gemm, rung="naive", **{"1024³": "450 (1.3%)"}), "gemm naive row {}".format(gemm))
        check(find_row(gemm, rung="smem_tiled", **{"1024³": "—", "4096³": "4,000 (7.8%)"}),
              "a cell not in the run is not '—': {}".format(gemm))
        # dtype x size columns, rows filtered by rungs=, unit TFLOP/s, a rung without f32 shown as "—".
        check(find_row(tensor, rung="wmma", **{"f32 4096³": "—", "f16 4096³": "**300 (43.6%)**"}),
              "tensor wmma row {}".format(tensor))
        check([row["rung"] for row in tensor] == ["naive", "wmma", "cublas"], "tensor rows {}".format(tensor))
        check("- f32: not measured (no f32 support (takes f16,bf16)): wmma at every size" in first,
              "the skipped wmma f32 cell is not explained")
        # best rung per shape (rows in sizes= order) with % of the device copy.
        check([row["shape"] for row in softmax] == ["1024x32768", "4096x4096"], "softmax rows {}".format(softmax))
        check(find_row(softmax, shape="4096x4096", f32="warp_row 2.50 (83.3%)"), "softmax row {}".format(softmax))
        check(find_row(host, rung="omp_simd", **{"1024³": "**150 (75.0%)**"}), "cpu row {}".format(host))
    link = os.path.relpath(cuda, tmp)
    check("[cuda-fixture.json]({})".format(link) in first, "the source run is not linked as {}".format(link))

    # Stable: regenerating (runs in another order) leaves the file byte for byte as it is,
    # and --check agrees; a hand edit inside a section is reported by --check and undone.
    r = run_report(report, [cpu, cuda, "--readme", readme])
    with open(readme, encoding="utf-8") as f:
        check(f.read() == first, "regenerating changed the README")
    r = run_report(report, [cuda, cpu, "--readme", readme, "--check"])
    check(r.returncode == 0, "--check on a fresh README: exit {} {}".format(r.returncode, r.stderr))
    with open(readme, "w", encoding="utf-8") as f:
        f.write(first.replace("36,400", "36,500"))
    r = run_report(report, [cuda, cpu, "--readme", readme, "--check"])
    check(r.returncode == 1, "--check missed an edited cell: exit {}".format(r.returncode))
    with open(readme, encoding="utf-8") as f:
        check("36,500" in f.read(), "--check wrote the README")

    # Bad markers: one line "README:LINE: problem", exit 2, the file untouched.
    bad_markers = [
        ("<!-- gpukern-report:begin chart device=x op=gemm -->\n<!-- gpukern-report:end -->\n", "unknown table kind"),
        ("<!-- gpukern-report:begin ladder device=fixture-gpu-80gb-cuda op=gemm color=red -->\n"
         "<!-- gpukern-report:end -->\n", "unknown key"),
        ("<!-- gpukern-report:begin ladder device=fixture-gpu-80gb-cuda op=gemm -->\n", "no <!-- gpukern-report:end"),
        ("<!-- gpukern-report:begin ladder device=no-such-device op=gemm -->\n<!-- gpukern-report:end -->\n",
         "no measurement"),
        ("<!-- gpukern-report:begin ladder device=fixture-gpu-80gb-cuda op=gemm sizes=12q -->\n"
         "<!-- gpukern-report:end -->\n", "sizes"),
        ("<!-- gpukern-report:begin ladder op=gemm -->\n<!-- gpukern-report:end -->\n", "device="),
        ("<!-- gpukern-report:end -->\n", "without a begin"),
        ("no markers at all\n", "no <!-- gpukern-report:begin"),
    ]
    for text, problem in bad_markers:
        with open(readme, "w", encoding="utf-8") as f:
            f.write("# t\n\n" + text)
        r = run_report(report, [cuda, "--readme", readme])
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith(readme + ":") and problem in r.stderr,
              "bad marker {!r}: exit {}, {!r}".format(text, r.returncode, r.stderr))
        with open(readme, encoding="utf-8") as f:
            check(f.read() == "# t\n\n" + text, "a refused README was modified")


# ---------------------------------------------------------------- attention, batched, epilogue

ATTENTION_README = """# Attention

<!-- gpukern-report:begin attention device=fixture-gpu-80gb-cuda dtype=bf16 -->
<!-- gpukern-report:end -->

<!-- gpukern-report:begin attention device=fixture-gpu-80gb-cuda dtype=bf16 causal=1 -->
<!-- gpukern-report:end -->

<!-- gpukern-report:begin batched device=fixture-gpu-80gb-cuda dtype=bf16 -->
<!-- gpukern-report:end -->

<!-- gpukern-report:begin epilogue device=fixture-gpu-80gb-cuda dtype=bf16 -->
<!-- gpukern-report:end -->
"""


def check_attention(report, fixtures, tmp):
    """attention-fixture.json (--op attention, --suite attention and epilogue cells of the CUDA
    device) and torch-fixture.json (torch_attention.py): the README kinds attention, batched and
    epilogue, the report.md section, and that none of these cells enters the ladder tables."""
    attention = os.path.join(fixtures, "attention-fixture.json")
    torch = os.path.join(fixtures, "torch-fixture.json")
    cuda = os.path.join(fixtures, "cuda-fixture.json")
    readme = os.path.join(tmp, "ATTENTION.md")
    with open(readme, "w", encoding="utf-8") as f:
        f.write(ATTENTION_README)
    r = run_report(report, [attention, torch, "--readme", readme])
    check(r.returncode == 0, "--readme with attention kinds failed ({}): {}".format(r.returncode, r.stderr))
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    tables = generated_tables(text)
    check(len(tables) == 4, "{} attention tables, expected 4".format(len(tables)))
    if len(tables) == 4:
        plain, causal, batched, epilogue = tables
        # 4 * 1024 * 512^2 * 64 flops: own 1.0 ms, vendor 1.25 ms, torch math 40 TFLOP/s, SDPA 200.
        check(find_row(plain, d="64", S="512", **{"own TFLOP/s": "68.7", "cuBLAS + cuDNN TFLOP/s": "55.0",
                                                   "own % of cuBLAS + cuDNN": "125%", "torch math TFLOP/s": "40.0",
                                                   "own % of torch math": "172%", "torch SDPA TFLOP/s": "200",
                                                   "own rungs": "wgmma_tma, warp_row, wgmma_tma"}),
              "attention row S 512: {}".format(plain))
        check(find_row(plain, S="1024", **{"torch math TFLOP/s": "—", "own % of cuBLAS + cuDNN": "110%"}),
              "attention row S 1024 (no torch cell): {}".format(plain))
        check(len(causal) == 1 and causal[0].get("own % of cuBLAS + cuDNN") == "156%"
              and "torch math TFLOP/s" not in causal[0], "causal attention table {}".format(causal))
        check("the vendor path is the softmax of the full rows" in text, "the causal vendor note is missing")
        check(find_row(batched, d="64", S="512", **{"Q·Kᵀ (NT) % of cuBLAS": "110% wgmma_tma",
                                                     "P·V (NN) % of cuBLAS": "90% wgmma_tma", "batch": "1024"}),
              "batched table {}".format(batched))
        check(find_row(epilogue, epilogue="none", **{"% of cuBLASLt": "102%", "% of its plain call": "—"}),
              "epilogue plain row {}".format(epilogue))
        check(find_row(epilogue, epilogue="bias bf16 + gelu_tanh",
                       **{"fastest own rung": "wgmma_tma", "% of its plain call": "99%", "% of cuBLASLt": "104%",
                          "% of cuBLAS (+ epilogue pass)": "124%"}),
              "epilogue gelu row {}".format(epilogue))
    # Asked for a kind the runs do not hold: one line naming the marker.
    r = run_report(report, [cuda, "--readme", readme, "--check"])
    check(r.returncode == 2 and "no attention cell" in r.stderr, "a missing attention run: {}".format(r.stderr))

    out = os.path.join(tmp, "attention-report")
    r = run_report(report, [attention, torch, cuda, "--out", out, "--no-plots"])
    check(r.returncode == 0, "report with attention runs failed: {}".format(r.stderr))
    if r.returncode == 0:
        with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
            report_md = f.read()
        md = parse_markdown(report_md)
        section = "Fixture GPU 80GB (cuda): attention, batched gemm, fused epilogue"
        for heading in ("attention bf16", "attention bf16, causal", "attention suite (batched gemms) bf16",
                        "fused epilogue bf16"):
            check((section, heading) in md, "report.md lacks {}".format(heading))
        ladder = md.get(("Fixture GPU 80GB (cuda)", "GEMM bf16"), [])
        check(not any("4096³" == row.get("size") for row in ladder), "epilogue suite cells in the ladder table")


def check_readme_current(report, results, readme):
    """The README's generated tables are those of the committed runs."""
    runs = sorted(glob.glob(os.path.join(results, "*.json")))
    r = run_report(report, runs + ["--readme", readme, "--check"])
    check(r.returncode == 0, "{} is not what bench/results gives (exit {}): {}; run "
          "gpukern-report bench/results/*.json --readme README.md".format(readme, r.returncode, r.stderr.strip()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True, help="the gpukern-report executable")
    parser.add_argument("--fixtures", help="bench/tests/fixtures")
    parser.add_argument("--readme-current", nargs=2, metavar=("RESULTS_DIR", "README"),
                        help="only check that README's generated tables match the runs in RESULTS_DIR")
    args = parser.parse_args()
    if args.readme_current:
        check_readme_current(args.report, *args.readme_current)
        return finish()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: matplotlib is not installed (Debian: python3-matplotlib)")
        return 77
    with tempfile.TemporaryDirectory(prefix="gpukern-report-test-") as tmp:
        check_report(args.report, args.fixtures, tmp)
        check_suite(args.report, args.fixtures, tmp)
        check_bad_inputs(args.report, args.fixtures, tmp)
        check_readme(args.report, args.fixtures, tmp)
        check_attention(args.report, args.fixtures, tmp)
    return finish()


def finish():
    for message in FAILURES:
        print("FAIL: " + message)
    if not FAILURES:
        print("gpukern-report: all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
