#!/usr/bin/env python3
"""ctest bench.smoke_cpu: gpukern-bench end to end on the CPU backend at tiny sizes,
and --suite llm at tiny (T, N, K) slices.

Checks the exit status, that the JSON follows schema 1 (docs/design.md "Benchmark
results format"), that the vendor rung is measured with pct_of_reference 100, that a
declined or capped rung is listed under "skipped" with a reason, the directory naming
<device>-<yyyy-mm-dd>.json, --list, and that gpukern-report accepts the run.
Benchmarks are not tests: no speed is checked, only the shape of what is written.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


GEMM_KEYS = {"op", "variant", "dtype", "m", "n", "k", "ms", "ms_min", "ms_max", "gflops", "reference",
             "pct_of_reference", "pct_of_peak", "rel_error", "backend", "device"}
SOFTMAX_KEYS = {"op", "variant", "dtype", "rows", "cols", "ms", "ms_min", "ms_max", "gbps", "reference",
                "pct_of_reference", "rel_error", "pct_of_copy", "backend", "device"}
DEVICE_KEYS = {"name", "backend", "arch", "compute_units", "clock_mhz", "driver_version", "runtime_version",
               "extra"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args()

    env = dict(os.environ, GPUKERN_BACKEND="cpu")
    with tempfile.TemporaryDirectory(prefix="gpukern-bench-test-") as tmp:
        results_dir = os.path.join(tmp, "results") + "/"
        cmd = [args.bench, "--backend", "cpu", "--op", "all", "--dtype", "f32,bf16",
               "--sizes", "32,40x24x56,33x65", "--naive-max-size", "32", "--warmup", "1", "--repeats", "3",
               "--max-time", "0.2", "--flush-mb", "4", "--json", results_dir, "--check"]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        check(r.returncode == 0, "gpukern-bench exited {}:\n{}\n{}".format(r.returncode, r.stdout, r.stderr))
        check("openblas*" in r.stdout or "openblas" in r.stdout, "table lacks the reference rung:\n" + r.stdout)

        files = glob.glob(os.path.join(results_dir, "*.json"))
        check(len(files) == 1, "expected one JSON file in {}, found {}".format(results_dir, files))
        if files:
            check(re.search(r"-\d{4}-\d{2}-\d{2}\.json$", files[0]) is not None,
                  "file name {} is not <device>-<yyyy-mm-dd>.json".format(files[0]))
            with open(files[0], encoding="utf-8") as f:
                run = json.load(f)
            check(run.get("schema") == 1, "schema is not 1")
            for key in ("date", "git_commit", "device", "results"):
                check(key in run, "top-level key {} missing".format(key))
            device = run.get("device", {})
            check(DEVICE_KEYS <= set(device), "device lacks {}".format(DEVICE_KEYS - set(device)))
            check(device.get("backend") == "cpu", "device backend is not cpu")
            results = run.get("results", [])
            gemm = [x for x in results if x["op"] == "gemm"]
            softmax = [x for x in results if x["op"] == "softmax"]
            check(gemm and softmax, "results lack gemm or softmax records")
            for x in gemm:
                check(GEMM_KEYS <= set(x), "gemm record lacks {}".format(GEMM_KEYS - set(x)))
            for x in softmax:
                check(SOFTMAX_KEYS <= set(x), "softmax record lacks {}".format(SOFTMAX_KEYS - set(x)))
                check(x.get("pct_of_copy") is not None and x["pct_of_copy"] > 0, "softmax without pct_of_copy")
            shapes = {(x["m"], x["n"], x["k"]) for x in gemm}
            check(shapes == {(32, 32, 32), (40, 24, 56)}, "gemm shapes {}".format(shapes))
            check({(x["rows"], x["cols"]) for x in softmax} == {(32, 32), (33, 65)}, "softmax shapes")
            check({x["dtype"] for x in results} == {"f32", "bf16"}, "dtypes")
            refs = [x for x in gemm if x.get("is_reference")]
            check(refs and all(abs(x["pct_of_reference"] - 100) < 1e-9 for x in refs),
                  "the gemm reference rung is missing or not at 100%")
            for x in results:
                check(x["rel_error"] is not None and x["error_ok"], "error above bound: {}".format(x))
                check(x["ms_min"] <= x["ms"] <= x["ms_max"], "median outside min..max: {}".format(x))
            # naive capped at 32^3: 40x24x56 is above it and must be listed as skipped.
            skipped = run.get("skipped", [])
            capped = [x for x in skipped if x["variant"] == "naive" and x["op"] == "gemm"]
            check(capped and all("naive-max-size" in x["reason"] for x in capped),
                  "the capped naive gemm is not listed as skipped: {}".format(skipped))

            r = subprocess.run([args.report, files[0], "--out", os.path.join(tmp, "report")],
                               capture_output=True, text=True)
            if r.returncode != 0 and "matplotlib" in r.stderr:
                r = subprocess.run([args.report, files[0], "--out", os.path.join(tmp, "report"), "--no-plots"],
                                   capture_output=True, text=True)
            check(r.returncode == 0, "gpukern-report on the run failed: {}".format(r.stderr))
            check(os.path.exists(os.path.join(tmp, "report", "report.md")), "no report.md")

        # --json FILE, --list, and an unknown rung.
        path = os.path.join(tmp, "one.json")
        r = subprocess.run([args.bench, "--backend", "cpu", "--op", "softmax", "--sizes", "8x8", "--repeats", "1",
                            "--warmup", "0", "--flush-mb", "0", "--quiet", "--json", path],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0 and os.path.exists(path), "--json FILE failed: {}".format(r.stderr))
        check(r.stdout.strip() == "", "--quiet printed a table")
        r = subprocess.run([args.bench, "--list"], capture_output=True, text=True, env=env)
        check(r.returncode == 0 and "backend cpu" in r.stdout, "--list failed: {}".format(r.stdout + r.stderr))
        r = subprocess.run([args.bench, "--backend", "cpu", "--variants", "no_such_rung"],
                           capture_output=True, text=True, env=env)
        check(r.returncode != 0 and "no_such_rung" in r.stderr, "an unknown rung was not refused")

        check_suite(args, env, tmp)

    for message in FAILURES:
        print("FAIL: " + message)
    if not FAILURES:
        print("gpukern-bench smoke test: all checks passed")
    return 1 if FAILURES else 0


def check_suite(args, env, tmp):
    """--suite llm at small (T, N, K) slices: cells, layouts, bytes, bandwidth and the
    same-run copy and read streams; wrong suite options refused naming the option."""
    suite_dir = os.path.join(tmp, "suite") + "/"
    cmd = [args.bench, "--backend", "cpu", "--suite", "llm", "--suite-t", "1,3", "--suite-nk", "40x24,17x33",
           "--dtype", "f32,bf16", "--warmup", "1", "--repeats", "3", "--max-time", "0.2", "--flush-mb", "4",
           "--json", suite_dir, "--check"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    check(r.returncode == 0, "--suite llm exited {}:\n{}\n{}".format(r.returncode, r.stdout, r.stderr))
    files = glob.glob(os.path.join(suite_dir, "*.json"))
    check(len(files) == 1 and re.search(r"-\d{4}-\d{2}-\d{2}-llm\.json$", files[0]) is not None,
          "a suite run in {} is not <device>-<yyyy-mm-dd>-llm.json: {}".format(suite_dir, files))
    if len(files) != 1:
        return
    path = files[0]
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    results = run.get("results", [])
    check(all(x["op"] == "gemm" for x in results), "a suite run measured softmax without --op")
    cells = {(x["dtype"], x["layout"], x["m"], x["n"], x["k"]) for x in results}
    want = {(d, l, t, n, k) for d in ("f32", "bf16") for l in ("NN", "NT") for t in (1, 3)
            for n, k in ((40, 24), (17, 33))}
    check(cells == want, "suite cells {} (missing {}, extra {})".format(len(cells), want - cells, cells - want))
    check(run.get("settings", {}).get("suites") == ["llm"], "settings.suites is not ['llm']")
    for x in results:
        size = 4 if x["dtype"] == "f32" else 2
        nbytes = size * (x["m"] * x["k"] + x["k"] * x["n"] + x["m"] * x["n"])
        check(x.get("suite") == "llm", "record without suite llm: {}".format(x))
        check(x.get("trans_a") is False and x.get("trans_b") == (x["layout"] == "NT"), "trans_a/trans_b wrong")
        check(x.get("bytes") == nbytes, "bytes {} != {} for {}".format(x.get("bytes"), nbytes, x))
        check(abs(x["gbps"] - nbytes / (x["ms"] * 1e6)) <= 1e-9 * x["gbps"], "gbps is not bytes / ms")
        for stream in ("copy", "read"):
            ms, gbps, pct = x.get(stream + "_ms"), x.get(stream + "_gbps"), x.get("pct_of_" + stream)
            check(ms is not None and ms > 0 and gbps is not None and pct is not None,
                  "no {} stream on the CPU: {}".format(stream, x))
            if ms and pct:
                check(abs(pct - 100.0 * ms / x["ms"]) <= 1e-9 * pct, "pct_of_{} is not {}_ms / ms".format(
                    stream, stream))
    # One copy per distinct byte count: f32 NN and NT of a cell share it.
    copies = {}
    for x in results:
        copies.setdefault((x["dtype"], x["m"], x["n"], x["k"]), set()).add(x["copy_ms"])
    check(all(len(v) == 1 for v in copies.values()), "copy timed more than once per byte count")

    # --dry-run: the full suites' composition, nothing measured.
    r = subprocess.run([args.bench, "--backend", "cpu", "--suite", "llm,square", "--dtype", "f32,tf32,f16,bf16",
                        "--dry-run"], capture_output=True, text=True, env=env)
    lines = r.stdout.splitlines()
    llm = [x for x in lines if " llm:" in x]
    square = [x for x in lines if " square:" in x]
    # llm: 13 T x 6 (N, K) x NN, NT x f16, bf16 + 3 T x 6 x 2 x f32, tf32; square: 13 sizes x 4 dtypes.
    check(r.returncode == 0 and len(llm) == 13 * 6 * 2 * 2 + 3 * 6 * 2 * 2 and len(square) == 13 * 4
          and "436 cases" in r.stdout, "--dry-run of both suites: exit {}, {} llm and {} square cases".format(
              r.returncode, len(llm), len(square)))
    check(any(x.startswith("cpu gemm bf16 8192x128256x4096 NT llm:") for x in lines),
          "--dry-run lacks the llm suite's largest NT cell")
    check(any(x.startswith("cpu gemm tf32 3000x3000x3000 NN square:") for x in lines),
          "--dry-run lacks the square suite's 3000")

    # --variants auto: the library's choice (and the reference) only, naming the rung it ran.
    path = os.path.join(tmp, "auto.json")
    r = subprocess.run([args.bench, "--backend", "cpu", "--suite", "llm", "--suite-t", "2", "--suite-nk", "24x40",
                        "--layout", "NT", "--dtype", "f32", "--variants", "auto", "--repeats", "2", "--warmup", "0",
                        "--min-time", "0", "--flush-mb", "0", "--json", path, "--check"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, "--variants auto exited {}: {}".format(r.returncode, r.stderr))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            variants = {x["variant"]: x for x in json.load(f)["results"]}
        check(set(variants) == {"auto", "openblas"} or set(variants) == {"auto"},
              "--variants auto measured {}".format(sorted(variants)))
        check(variants.get("auto", {}).get("auto_choice") in ("skinny", "omp_simd", "naive"),
              "auto's record does not name the rung it ran: {}".format(variants.get("auto")))

    for bad, option in ((["--suite", "llm", "--suite-t", "0"], "--suite-t"),
                        (["--suite", "llm", "--suite-nk", "4096"], "--suite-nk"),
                        (["--suite-t", "1"], "--suite-t"),
                        (["--suite", "mlp"], "--suite"),
                        (["--suite", "llm", "--gemm-sizes", "32"], "--gemm-sizes"),
                        (["--suite", "square", "--op", "softmax"], "--suite")):
        r = subprocess.run([args.bench, "--backend", "cpu"] + bad, capture_output=True, text=True, env=env)
        check(r.returncode == 2 and option in r.stderr, "{}: exit {}, {!r}".format(bad, r.returncode, r.stderr))


if __name__ == "__main__":
    sys.exit(main())
