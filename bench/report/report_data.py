"""Loading and checking gpukern-bench runs (JSON schema 1), merging them into entries,
and the number formats shared by gpukern-report's report.md and README tables.

Every problem with an input is a ReportError whose message is one line naming the file
and the problem; no input makes the report fail with a traceback.
"""

import json
import math
import os
import re

SCHEMA = 1
DTYPE_ORDER = {"f32": 0, "tf32": 1, "f16": 2, "bf16": 3}
OP_ORDER = {"gemm": 0, "softmax": 1, "log_softmax": 2, "attention": 3}
TORCH_TOOL = "torch_attention"  # bench/scripts/torch_attention.py's runs
VENDOR_NAMES = {
    "cublas": "cuBLAS", "cublaslt": "cuBLASLt", "cudnn": "cuDNN", "openblas": "OpenBLAS", "rocblas": "rocBLAS",
    "hipblas": "hipBLAS", "hipblaslt": "hipBLASLt", "miopen": "MIOpen",
}

class ReportError(Exception):
    """An input the report cannot use; the message names the file and the problem."""


# ---------------------------------------------------------------- loading

def device_label(device):
    """"NVIDIA H100 80GB HBM3 (cuda)"; CPU runs name their thread count, "AMD EPYC (cpu,
    2 threads)", since runs of one CPU at different thread counts are different results."""
    if device["backend"] == "cpu" and isinstance(device.get("compute_units"), int):
        threads = device["compute_units"]
        return "{} (cpu, {} thread{})".format(device["name"], threads, "" if threads == 1 else "s")
    return "{} ({})".format(device["name"], device["backend"])


def slug(text):
    out, dash = [], False
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
            dash = False
        elif out and not dash:
            out.append("-")
            dash = True
    return "".join(out).strip("-") or "device"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


# What each field the report reads must hold: kind -> (test, what the message asks for).
KINDS = {
    "text": (lambda v: isinstance(v, str), "a string"),
    "name": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "count": (lambda v: is_whole(v) and v >= 0, "a whole number >= 0"),
    "size": (lambda v: is_whole(v) and v > 0, "a whole number > 0"),
    "number": (is_number, "a finite number"),
    "positive": (lambda v: is_number(v) and v > 0, "a finite number > 0"),
    "flag": (lambda v: isinstance(v, bool), "true or false"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "op": (lambda v: v in ("gemm", "softmax", "attention"), "\"gemm\", \"softmax\" or \"attention\""),
    "layout": (lambda v: v in ("NN", "NT", "TN", "TT"), "NN, NT, TN or TT"),
}
# (field, kind, required, null allowed); fields the report does not read are not checked.
RUN_FIELDS = [("device", "object", True, False), ("results", "list", True, False),
              ("skipped", "list", False, False), ("settings", "object", False, False),
              ("date", "text", False, False), ("time_utc", "text", False, False),
              ("git_commit", "text", False, False)]
DEVICE_FIELDS = [("name", "name", True, False), ("backend", "name", True, False),
                 ("arch", "text", False, False), ("compute_units", "count", False, False),
                 ("clock_mhz", "number", False, False), ("peak_f32_gflops", "number", False, False),
                 ("peak_tensor_gflops", "number", False, False), ("runtime_version", "text", False, False),
                 ("extra", "object", False, False)]
SETTINGS_FIELDS = [("host_load_start", "number", False, True), ("host_load_end", "number", False, True),
                   ("host_cpus", "count", False, True)]
RECORD_FIELDS = [("op", "op", True, False), ("variant", "name", True, False), ("dtype", "name", True, False),
                 ("rung_index", "count", False, False), ("is_reference", "flag", False, False)]
SHAPE_FIELDS = {"gemm": [("m", "size", True, False), ("n", "size", True, False), ("k", "size", True, False),
                         ("layout", "layout", False, False), ("suite", "name", False, True),
                         ("batch", "size", False, False), ("bias", "name", False, False),
                         ("act", "name", False, False), ("batch_reduced_from", "size", False, True)],
                "attention": [("batch", "size", True, False), ("heads", "size", True, False),
                              ("seq", "size", True, False), ("head_dim", "size", True, False),
                              ("causal", "flag", True, False), ("batch_reduced_from", "size", False, True),
                              ("rungs", "object", False, False), ("note", "text", False, True)],
                "softmax": [("rows", "size", True, False), ("cols", "size", True, False),
                            ("log_softmax", "flag", False, False)]}
SKIPPED_FIELDS = [("reason", "text", False, False)]
MEASURED_FIELDS = [("ms", "positive", True, False), ("reference", "name", False, True),
                   ("pct_of_reference", "number", False, True), ("pct_of_peak", "number", False, True),
                   ("rel_error", "number", False, True), ("error_ok", "flag", False, False),
                   ("error_bound", "number", False, True)]
STREAM_FIELDS = [("pct_of_copy", "number", False, True), ("copy_gbps", "positive", False, True),
                 ("pct_of_read", "number", False, True), ("read_gbps", "positive", False, True)]
RATE_FIELDS = {"gemm": [("gflops", "positive", True, False), ("gbps", "positive", False, True)] + STREAM_FIELDS,
               "softmax": [("gbps", "positive", True, False)] + STREAM_FIELDS,
               "attention": [("gflops", "positive", True, False), ("scores_ms", "number", False, False),
                             ("softmax_ms", "number", False, False), ("weighted_ms", "number", False, False)]}
# bench/scripts/torch_attention.py's records.
TORCH_FIELDS = [("dtype", "name", True, False), ("batch", "size", True, False), ("heads", "size", True, False),
                ("seq", "size", True, False), ("head_dim", "size", True, False), ("causal", "flag", True, False),
                ("math_gflops", "positive", True, False), ("sdpa_gflops", "positive", True, False)]


def shown(value):
    """A value as it appears in the JSON, shortened for a one-line message."""
    try:
        text = json.dumps(value)
    except ValueError:  # NaN / Infinity
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_fields(path, where, obj, fields):
    if not isinstance(obj, dict):
        raise ReportError("{}: {} must be an object, not {}".format(path, where, shown(obj)))
    for name, kind, required, nullable in fields:
        if name not in obj:
            if required:
                raise ReportError("{}: {}: '{}' is missing".format(path, where, name))
            continue
        value = obj[name]
        if value is None and nullable:
            continue
        test, wanted = KINDS[kind]
        if not test(value):
            raise ReportError("{}: {}: '{}' must be {}{}, not {}".format(
                path, where, name, wanted, " or null" if nullable else "", shown(value)))


def check_record(path, where, record, measured):
    check_fields(path, where, record, RECORD_FIELDS)
    op = record["op"]
    check_fields(path, where, record, SHAPE_FIELDS[op] + (MEASURED_FIELDS + RATE_FIELDS[op] if measured
                                                          else SKIPPED_FIELDS))


def load_run(path):
    """One gpukern-bench run, checked field by field (ReportError names the first problem)."""
    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise ReportError("{}: cannot read JSON: {}".format(path, getattr(e, "strerror", None) or e))
    if not isinstance(run, dict) or not is_whole(run.get("schema")) or run["schema"] != SCHEMA:
        raise ReportError("{}: not a gpukern-bench run of schema {}".format(path, SCHEMA))
    if run.get("tool") == TORCH_TOOL:
        check_fields(path, "the run", run, RUN_FIELDS[:2])
        check_fields(path, "device", run["device"], DEVICE_FIELDS[:2])
        for i, record in enumerate(run["results"]):
            check_fields(path, "results[{}]".format(i), record, TORCH_FIELDS)
        run["_path"] = path
        return run
    check_fields(path, "the run", run, RUN_FIELDS)
    check_fields(path, "device", run["device"], DEVICE_FIELDS)
    check_fields(path, "settings", run.get("settings", {}), SETTINGS_FIELDS)
    for i, record in enumerate(run["results"]):
        check_record(path, "results[{}]".format(i), record, True)
    for i, record in enumerate(run.get("skipped", [])):
        check_record(path, "skipped[{}]".format(i), record, False)
    run["_path"] = path
    return run


def op_of(record):
    if record.get("op") == "softmax" and record.get("log_softmax"):
        return "log_softmax"
    return record.get("op")


def shape_label(dims):
    """(m, n, k) -> "4096³" or "4097x4095x4093"; (rows, cols) -> "4096x4096"."""
    if len(dims) == 3 and dims[0] == dims[1] == dims[2]:
        return "{}³".format(dims[0])
    return "x".join(str(d) for d in dims)


def is_torch(run):
    return run.get("tool") == TORCH_TOOL


def attention_label(batch, heads, seq, head_dim):
    return "{}x{} S {} d {}".format(batch, heads, seq, head_dim)


def shape_of(record):
    """(label, work, sort key, dims) of a record's problem size."""
    if record.get("op") == "attention":
        b, h, s, d = (int(record[key]) for key in ("batch", "heads", "seq", "head_dim"))
        return attention_label(b, h, s, d), 4.0 * b * h * s * s * d, (d, s, b * h), (b, h, s, d)
    if record.get("op") == "gemm":
        m, n, k = int(record["m"]), int(record["n"]), int(record["k"])
        return shape_label((m, n, k)), 2.0 * m * n * k, (m * n * k, m, n, k), (m, n, k)
    rows, cols = int(record["rows"]), int(record["cols"])
    return shape_label((rows, cols)), float(rows * cols), (rows * cols, cols, rows, 0), (rows, cols)


class Entry:
    """One measured or skipped (device, op, dtype, size, rung) after merging."""

    def __init__(self, run, record, measured):
        self.device = device_label(run["device"])
        self.device_info = run["device"]
        self.op = op_of(record)
        self.variant = record["variant"]
        self.rung_index = int(record.get("rung_index", 0))
        self.is_reference = bool(record.get("is_reference", False))
        self.dtype = record["dtype"]
        self.shape, self.work, self.shape_key, self.dims = shape_of(record)
        self.rows = record.get("rows")
        self.cols = record.get("cols")
        # gemm: op(A) op(B) ("NN" in runs that predate the field) and the --suite of the case.
        self.layout = record.get("layout") or "NN"
        self.suite = record.get("suite")
        # gemm: strided batches and the fused epilogue (batch 1 and none in older runs);
        # attention: the causal mask and the rungs of its three calls.
        self.batch = int(record.get("batch") or 1)
        self.bias = record.get("bias") or "none"
        self.bias_dtype = record.get("bias_dtype")
        self.act = record.get("act") or "none"
        self.causal = bool(record.get("causal", False))
        self.batch_reduced_from = record.get("batch_reduced_from")
        self.note = record.get("note")
        # gemm: calls timed back to back per timed call (--chain; 1 in older runs).
        self.chain = int(record.get("chain") or 1)
        self.rungs = record.get("rungs") or {}
        self.extra = ((self.batch, self.bias, self.act, self.chain) if self.op == "gemm" else
                      (self.causal,) if self.op == "attention" else ())
        self.measured = measured
        self.reason = record.get("reason", "")
        self.stamp = (run.get("time_utc") or run.get("date") or "", run["_path"])
        self.run_path = run["_path"]
        self.run_commit = run.get("git_commit") or "?"
        self.run_date = run.get("date") or "?"
        if not measured:
            return
        self.ms = float(record["ms"])
        # Rates: gemm GFLOP/s; softmax GB/s (bytes read + written), shown as TB/s on GPUs.
        self.rate = float(record["gflops"]) if self.op in ("gemm", "attention") else float(record["gbps"])
        self.reference = record.get("reference")
        self.pct_of_reference = record.get("pct_of_reference")
        self.pct_of_peak = record.get("pct_of_peak")
        self.rel_error = record.get("rel_error")
        self.error_ok = record.get("error_ok", True)
        self.error_bound = record.get("error_bound")
        self.pct_of_copy = record.get("pct_of_copy")
        copy_gbps = record.get("copy_gbps")
        self.copy_rate = None if copy_gbps is None else float(copy_gbps)
        # Bytes moved over time (gemm: A, B and C once; softmax: the rate itself) and the
        # CPU's read-only stream of the same bytes.
        gbps = record.get("gbps")
        self.gbps = None if gbps is None else float(gbps)
        self.pct_of_read = record.get("pct_of_read")
        self.pct_of_plain = record.get("pct_of_plain")

    def is_plain(self):
        """A gemm of one item without epilogue timed call by call, or a softmax: what the ladder
        tables show."""
        return self.op != "attention" and self.batch == 1 and not self.has_epilogue() and self.chain == 1

    def has_epilogue(self):
        return self.bias != "none" or self.act != "none"

    def epilogue_label(self):
        """"bias f32 + gelu_tanh" (the bias's dtype), "relu", "none"."""
        parts = (["bias " + (self.bias_dtype or self.bias)] if self.bias != "none" else []) + ([self.act] if self.act != "none" else [])
        return " + ".join(parts) or "none"

    def shown_shape(self):
        """The shape with its layout where it is not NN, its batch and epilogue: "1x4096x4096 NT"."""
        text = self.shape if self.layout == "NN" or self.op != "gemm" else "{} {}".format(self.shape, self.layout)
        if self.op == "gemm" and self.batch > 1:
            text += " batch {}".format(self.batch)
        if self.op == "gemm" and self.has_epilogue():
            text += " " + self.epilogue_label()
        if self.op == "gemm" and self.chain > 1:
            text += " chain {}".format(self.chain)
        if self.op == "attention" and self.causal:
            text += " causal"
        return text

    def case_key(self):
        # A suite's cell is its own case: a ladder run's cell of the same shape stays beside it.
        return (self.device, self.op, self.dtype, self.shape_key, self.layout, self.suite or "", self.extra)

    def key(self):
        return self.case_key() + (self.variant,)


def merge(runs):
    """Entries of all runs; of repeated (device, op, dtype, size, layout, suite, rung) the newest run wins."""
    chosen = {}
    for run in runs:
        if is_torch(run):
            continue
        for record in run["results"]:
            e = Entry(run, record, True)
            if e.key() not in chosen or chosen[e.key()].stamp <= e.stamp:
                chosen[e.key()] = e
        for record in run.get("skipped", []):
            e = Entry(run, record, False)
            if e.key() not in chosen or (not chosen[e.key()].measured and chosen[e.key()].stamp <= e.stamp):
                chosen[e.key()] = e
    return [chosen[k] for k in sorted(chosen, key=sort_key_of(chosen))]


def sort_key_of(chosen):
    def key(k):
        e = chosen[k]
        return (e.device, OP_ORDER.get(e.op, 9), e.op, DTYPE_ORDER.get(e.dtype, 9), e.dtype,
                e.layout, e.shape_key, e.extra, e.rung_index, e.variant)
    return key


# ---------------------------------------------------------------- formatting

def fmt_rate(value):
    """Three significant digits, thousands separated: 0.0123, 2.12, 45.6, 5,700."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if value >= 100:
        return "{:,.0f}".format(value)
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return "{:.{}f}".format(value, digits)


def fmt_compact(value):
    """Bar labels: 3 significant digits with k / M, e.g. 6.06k, 670k, 1.07M."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return fmt_rate(value / scale) + suffix
    return fmt_rate(value)


def speed_vs(own, ref):
    """own's speed as % of ref's (100 * ref time / own time): own's pct_of_reference where ref is
    the reference own was measured against (on a GPU timed in one loop with it), else the two
    records' medians."""
    if own is None or ref is None:
        return None
    if own.reference == ref.variant and own.pct_of_reference is not None:
        return own.pct_of_reference
    return 100.0 * ref.ms / own.ms


def fmt_pct(value):
    return "—" if value is None else "{:.0f}%".format(value) if value >= 10 else "{:.1f}%".format(value)


def fmt_speedup(value):
    if value is None:
        return "—"
    return "{:.1f}×".format(value) if value >= 1 else "{:.2g}×".format(value)


def fmt_error(e):
    if e.rel_error is None:
        return "NaN/inf (bad)"
    text = "{:.1e}".format(e.rel_error)
    if not e.error_ok and e.error_bound is not None:
        text += " (above {:.0e})".format(e.error_bound)
    return text


def vendor_name(name):
    return VENDOR_NAMES.get(name, name) if name else "vendor"


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return "\n".join(lines)


class Unit:
    """How rates of one table or chart are shown: GEMM in GFLOP/s; softmax in TB/s,
    or GB/s where every rate is below half a TB/s (CPUs), so digits stay readable."""

    def __init__(self, op, rates):
        if op == "gemm":
            self.name, self.scale = "GFLOP/s", 1.0
        elif max(rates, default=0.0) >= 500.0:
            self.name, self.scale = "TB/s", 1e-3
        else:
            self.name, self.scale = "GB/s", 1.0

    def show(self, rate):
        return fmt_rate(None if rate is None else rate * self.scale)

    def of(self, rate):
        return rate * self.scale


def op_title(op):
    return {"gemm": "GEMM", "softmax": "softmax", "log_softmax": "log-softmax"}.get(op, op)


# ---------------------------------------------------------------- analysis

def group(entries, key):
    out = {}
    for e in entries:
        out.setdefault(key(e), []).append(e)
    return out


def short_reason(reason):
    """The library's reason without the call it repeats: "Unsupported: gemm variant 'wmma'
    declines NN m=1000 n=1000 k=1000 f32: no f32 support" -> "no f32 support"."""
    return re.sub(r"^\w+: \w+ variant '[^']*' declines [^:]*: ", "", reason).strip()


def skipped_notes(items):
    """Bullet lines for the rungs not measured in one table, one per reason, naming the
    rungs and sizes (or "every size")."""
    all_shapes = sorted({e.shape_key: e.shape for e in items}.items())
    skipped = [e for e in items if not e.measured]
    lines = []
    by_reason = group(skipped, lambda e: short_reason(e.reason))
    for reason in sorted(by_reason, key=lambda r: (min(e.rung_index for e in by_reason[r]), r)):
        shapes_of = {}
        for e in by_reason[reason]:
            shapes_of.setdefault((e.rung_index, e.variant), set()).add(e.shape_key)
        by_shapes = {}
        for rung, keys in sorted(shapes_of.items()):
            by_shapes.setdefault(tuple(sorted(keys)), []).append(rung[1])
        parts = []
        for keys, rungs in sorted(by_shapes.items(), key=lambda kv: kv[1][0]):
            where = "every size" if len(keys) == len(all_shapes) else ", ".join(
                shape for key, shape in all_shapes if key in keys)
            parts.append("{} at {}".format(", ".join(rungs), where))
        lines.append("- not measured ({}): {}".format(reason, "; ".join(parts)))
    return lines

