#!/usr/bin/env python3
"""ctest bench.smoke_cpu: gpukern-bench end to end on the CPU backend at tiny sizes,
--suite llm at tiny (T, N, K) slices, batched and fused-epilogue gemm cases, --op attention
at tiny shapes, and the attention and epilogue suites' composition (--dry-run).

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

        # --paired on at m = 1, where the CPU has two vendor rungs (OpenBLAS sgemm, then sgemv):
        # the rungs are timed with the first, so their records name it as their reference and
        # their ratios come from its median in their loops.
        path = os.path.join(tmp, "paired.json")
        r = subprocess.run([args.bench, "--backend", "cpu", "--op", "gemm", "--dtype", "f32", "--sizes", "1x64x48",
                            "--variants", "naive", "--paired", "on", "--warmup", "1", "--repeats", "3",
                            "--min-time", "0", "--flush-mb", "0", "--quiet", "--json", path],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0 and os.path.exists(path), "--paired on failed: {}".format(r.stderr))
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                measured = [x for x in json.load(f)["results"] if x.get("ms")]
            check({x["variant"] for x in measured} >= {"naive", "openblas", "openblas_gemv"},
                  "paired m = 1: expected naive and both vendor rungs measured: {}".format(
                      [x["variant"] for x in measured]))
            for x in measured:
                check(x.get("reference") == "openblas", "paired m = 1: {} names reference {}, not the one it was "
                      "timed with (openblas)".format(x["variant"], x.get("reference")))
                check(abs(x["pct_of_reference"] - 100.0 * x["reference_ms"] / x["ms"]) < 1e-6 * x["pct_of_reference"],
                      "paired m = 1: {} pct_of_reference is not reference_ms / ms".format(x["variant"]))

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
        check_batched(args, env, tmp)
        check_attention(args, env, tmp)

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


def load_one(directory, pattern):
    files = glob.glob(os.path.join(directory, "*.json"))
    check(len(files) == 1 and re.search(pattern, files[0]) is not None,
          "{}: expected one file matching {}: {}".format(directory, pattern, files))
    if len(files) != 1:
        return None
    with open(files[0], encoding="utf-8") as f:
        return json.load(f)


def check_batched(args, env, tmp):
    """--batch, --broadcast, --bias, --act: the records' batch, strides, epilogue, flops over
    the batch, pct_of_plain against the plain case of the same run, errors within bounds;
    the suites' composition; wrong options refused naming the option."""
    path = os.path.join(tmp, "batched.json")
    m, n, k, batch = 24, 20, 16, 3
    r = subprocess.run([args.bench, "--backend", "cpu", "--op", "gemm", "--sizes", "{}x{}x{}".format(m, n, k),
                        "--batch", str(batch), "--bias", "none,f32", "--act", "none,gelu_tanh", "--dtype", "f32",
                        "--layout", "NN,TT", "--warmup", "1", "--repeats", "3", "--max-time", "0.2",
                        "--flush-mb", "4", "--json", path, "--check"], capture_output=True, text=True, env=env)
    check(r.returncode == 0, "batched gemm exited {}:\n{}\n{}".format(r.returncode, r.stdout, r.stderr))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            results = json.load(f)["results"]
        cells = {(x["layout"], x["bias"], x["act"]) for x in results}
        check(cells == {(l, b, a) for l in ("NN", "TT") for b in ("none", "f32") for a in ("none", "gelu_tanh")},
              "batched cells {}".format(cells))
        for x in results:
            check(x["batch"] == batch and x["stride_a"] == m * k and x["stride_b"] == k * n
                  and x["stride_c"] == m * n, "batch strides: {}".format(x))
            check(abs(x["gflops"] * x["ms"] * 1e6 - 2.0 * m * n * k * batch) <= 1e-6 * x["gflops"] * x["ms"] * 1e6,
                  "flops do not count the batch: {}".format(x))
            check(x["rel_error"] is not None and x["error_ok"], "batched error above bound: {}".format(x))
            check(x["bias_dtype"] == ("f32" if x["bias"] == "f32" else None), "bias_dtype: {}".format(x))
            plain = x["bias"] == "none" and x["act"] == "none"
            check((x["pct_of_plain"] is None) == plain and (plain or x["plain_ms"] > 0),
                  "pct_of_plain: {}".format(x))
    # Broadcast B: stride 0, one item of B in the bytes.
    path = os.path.join(tmp, "broadcast.json")
    r = subprocess.run([args.bench, "--backend", "cpu", "--op", "gemm", "--sizes", "17x9x33", "--batch", "4",
                        "--broadcast", "b", "--act", "relu", "--dtype", "bf16", "--variants", "omp_simd,naive",
                        "--no-reference", "--warmup", "0", "--repeats", "2", "--min-time", "0", "--flush-mb", "0",
                        "--json", path, "--check"], capture_output=True, text=True, env=env)
    check(r.returncode == 0, "broadcast gemm exited {}: {}".format(r.returncode, r.stderr))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            results = json.load(f)["results"]
        check(len(results) == 2, "broadcast: {} records".format(len(results)))
        for x in results:
            check(x["stride_b"] == 0 and x["broadcast"] == "b" and x["stride_a"] == 17 * 33, "broadcast: {}".format(x))
            check(x["bytes"] == 2 * (4 * 17 * 33 + 33 * 9 + 4 * 17 * 9), "broadcast bytes: {}".format(x))

    # The suites' composition: attention 2 dtypes x 2 d x 4 S x (Q K^T, P V); epilogue 2 dtypes x
    # 2 sizes x (plain, bias + gelu_tanh, bias + relu).
    r = subprocess.run([args.bench, "--backend", "cpu", "--suite", "attention,epilogue", "--dry-run"],
                       capture_output=True, text=True, env=env)
    lines = r.stdout.splitlines()
    attention = [x for x in lines if x.startswith("cpu gemm ") and " attention:" in x]
    epilogue = [x for x in lines if " epilogue:" in x]
    check(r.returncode == 0 and len(attention) == 32 and len(epilogue) == 12,
          "--dry-run of attention,epilogue: exit {}, {} and {} cases:\n{}".format(
              r.returncode, len(attention), len(epilogue), r.stdout + r.stderr))
    check(any(x.startswith("cpu gemm bf16 512x512x64 batch 1024 NT attention:") for x in lines),
          "--dry-run lacks Q*K^T at S 512, d 64")
    check(any(x.startswith("cpu gemm f16 512x128x512 batch 1024 NN attention:") for x in lines),
          "--dry-run lacks P*V at S 512, d 128")
    check(any(x.startswith("cpu gemm bf16 8192x8192x8192 bias c gelu_tanh NN epilogue:") for x in lines),
          "--dry-run lacks 8192^3 bias + gelu_tanh")

    for bad, option in ((["--broadcast", "a"], "--broadcast"),
                        (["--batch", "0"], "--batch"),
                        (["--bias", "f64"], "--bias"),
                        (["--act", "tanh"], "--act"),
                        (["--causal"], "--causal"),
                        (["--op", "attention", "--suite", "llm"], "--suite"),
                        (["--op", "attention", "--act", "relu"], "--act"),
                        (["--op", "attention", "--seq", "0"], "--seq")):
        r = subprocess.run([args.bench, "--backend", "cpu"] + bad, capture_output=True, text=True, env=env)
        check(r.returncode == 2 and option in r.stderr, "{}: exit {}, {!r}".format(bad, r.returncode, r.stderr))


def check_attention(args, env, tmp):
    """--op attention at tiny shapes on the CPU: both paths per case, the library's within the
    error bound with its rungs named, % of the vendor path, the file name, gpukern-report on it."""
    out_dir = os.path.join(tmp, "attention") + "/"
    r = subprocess.run([args.bench, "--backend", "cpu", "--op", "attention", "--seq", "40,33", "--head-dim", "8",
                        "--batch", "2", "--heads", "3", "--dtype", "f32", "--causal", "--warmup", "1", "--repeats",
                        "3", "--max-time", "0.2", "--flush-mb", "4", "--json", out_dir, "--check"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, "--op attention exited {}:\n{}\n{}".format(r.returncode, r.stdout, r.stderr))
    run = load_one(out_dir, r"-\d{4}-\d{2}-\d{2}-attention-causal\.json$")
    if run is None:
        return
    results = run["results"]
    own = [x for x in results if x["variant"] == "auto"]
    check({(x["seq"], x["head_dim"], x["batch"], x["heads"], x["causal"]) for x in own} ==
          {(40, 8, 2, 3, True), (33, 8, 2, 3, True)}, "attention cases {}".format(own))
    for x in results:
        check(x["op"] == "attention" and x["error_ok"] and x["rel_error"] is not None, "attention record {}".format(x))
        check(abs(x["gflops"] * x["ms"] * 1e6 - 4.0 * 6 * x["seq"] ** 2 * 8) <= 1e-6 * x["flops"],
              "attention flops: {}".format(x))
        check(x["ms"] > 0 and x["scores_ms"] > 0 and x["softmax_ms"] > 0 and x["weighted_ms"] > 0,
              "attention step times: {}".format(x))
        check(set(x["rungs"]) == {"scores", "softmax", "weighted"} and all(x["rungs"].values()),
              "attention rungs: {}".format(x))
    vendor = [x for x in results if x["variant"] == "vendor"] + [x for x in run.get("skipped", [])
                                                                 if x["variant"] == "vendor"]
    check(len(vendor) == 2, "attention: the vendor path is neither measured nor skipped with a reason")
    for x in own:
        check(x["reference"] is None or x["pct_of_reference"] > 0, "attention pct_of_reference: {}".format(x))
    r = subprocess.run([args.report, glob.glob(os.path.join(out_dir, "*.json"))[0], "--out",
                        os.path.join(tmp, "attention-report"), "--no-plots"], capture_output=True, text=True)
    check(r.returncode == 0, "gpukern-report on the attention run failed: {}".format(r.stderr))


if __name__ == "__main__":
    sys.exit(main())
