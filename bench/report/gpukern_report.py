#!/usr/bin/env python3
"""gpukern-report: merges gpukern-bench runs (JSON schema 1) from several machines
into DIR/report.md with ladder tables and PNG plots.

    gpukern-report bench/results/*.json --out bench/report [--profile ncu.csv]

Per device and operation: ladder tables in the style of the seeds (rung, dtype, size,
GFLOP/s or TB/s, speed-up over the naive rung, % of the vendor library measured in
the same run), a ladder bar chart, GFLOP/s against size (gemm) and TB/s against the
number of columns with the device-copy line (softmax). Across devices: the best rung
per operation and dtype. The output is deterministic: same inputs, same bytes.
"""

import argparse
import csv
import json
import math
import os
import re
import sys

SCHEMA = 1
DTYPE_ORDER = {"f32": 0, "tf32": 1, "f16": 2, "bf16": 3}
OP_ORDER = {"gemm": 0, "softmax": 1, "log_softmax": 2}
VENDOR_NAMES = {
    "cublas": "cuBLAS", "cudnn": "cuDNN", "openblas": "OpenBLAS", "rocblas": "rocBLAS",
    "hipblas": "hipBLAS", "hipblaslt": "hipBLASLt", "miopen": "MIOpen",
}
LEGEND_ORDER = {"device copy": (-1, "device copy")}  # legend label -> (ladder index, name)
PROFILE_COLUMNS = [
    ("rung", "rung"), ("kernel", "kernel"), ("sm_throughput_pct", "SM %"),
    ("dram_throughput_pct", "DRAM %"), ("l2_throughput_pct", "L2 %"),
    ("achieved_occupancy_pct", "occupancy %"), ("registers_per_thread", "regs/thread"),
    ("shared_mem_per_block_bytes", "smem/block (B)"), ("elapsed_cycles", "cycles"),
    ("duration_us", "µs"),
]


class ReportError(Exception):
    """An input the report cannot use; the message names the file and the problem."""


# ---------------------------------------------------------------- loading

def device_label(device):
    return "{} ({})".format(device.get("name", "unknown device"), device.get("backend", "?"))


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


def load_run(path):
    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("{}: cannot read JSON: {}".format(path, e))
    if not isinstance(run, dict) or run.get("schema") != SCHEMA:
        raise ReportError("{}: not a gpukern-bench run of schema {}".format(path, SCHEMA))
    device = run.get("device")
    if not isinstance(device, dict) or "name" not in device or "backend" not in device:
        raise ReportError("{}: 'device' must be an object with name and backend".format(path))
    if not isinstance(run.get("results"), list):
        raise ReportError("{}: 'results' must be a list".format(path))
    run["_path"] = path
    return run


def op_of(record):
    if record.get("op") == "softmax" and record.get("log_softmax"):
        return "log_softmax"
    return record.get("op")


def shape_of(record):
    """(label, work, sort key) of a record's problem size."""
    if record.get("op") == "gemm":
        m, n, k = int(record["m"]), int(record["n"]), int(record["k"])
        label = "{}³".format(m) if m == n == k else "{}x{}x{}".format(m, n, k)
        return label, 2.0 * m * n * k, (m * n * k, m, n, k)
    rows, cols = int(record["rows"]), int(record["cols"])
    return "{}x{}".format(rows, cols), float(rows * cols), (rows * cols, cols, rows, 0)


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
        self.shape, self.work, self.shape_key = shape_of(record)
        self.rows = record.get("rows")
        self.cols = record.get("cols")
        self.measured = measured
        self.reason = record.get("reason", "")
        self.stamp = (run.get("time_utc") or run.get("date") or "", run["_path"])
        if not measured:
            return
        self.ms = float(record["ms"])
        # Rates: gemm GFLOP/s; softmax GB/s (bytes read + written), shown as TB/s on GPUs.
        self.rate = float(record["gflops"]) if self.op == "gemm" else float(record["gbps"])
        self.reference = record.get("reference")
        self.pct_of_reference = record.get("pct_of_reference")
        self.pct_of_peak = record.get("pct_of_peak")
        self.rel_error = record.get("rel_error")
        self.error_ok = record.get("error_ok", True)
        self.error_bound = record.get("error_bound")
        self.pct_of_copy = record.get("pct_of_copy")
        copy_gbps = record.get("copy_gbps")
        self.copy_rate = None if copy_gbps is None else float(copy_gbps)

    def case_key(self):
        return (self.device, self.op, self.dtype, self.shape_key)

    def key(self):
        return self.case_key() + (self.variant,)


def merge(runs):
    """Entries of all runs; of repeated (device, op, dtype, size, rung) the newest run wins."""
    chosen = {}
    for run in runs:
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
                e.shape_key, e.rung_index, e.variant)
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
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
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


def naive_rates(entries):
    """(device, op, dtype, size) -> rate of the naive rung, where it ran."""
    return {e.case_key(): e.rate for e in entries if e.measured and e.variant == "naive"}


def largest_case(entries):
    """The measured shape with the most work (ties: the larger shape key)."""
    measured = [e for e in entries if e.measured]
    if not measured:
        return None
    return max(measured, key=lambda e: (e.work, e.shape_key)).shape_key


def fullest_case(entries):
    """The shape where the most rungs were measured (the whole ladder, naive included, where
    possible); ties: the largest."""
    counts = {}
    for e in entries:
        if e.measured:
            counts[e.shape_key] = counts.get(e.shape_key, 0) + 1
    return max(counts, key=lambda k: (counts[k], k)) if counts else None


def best_rows(entries):
    """Cross-device rows: per op, dtype and device, the fastest non-reference rung at the
    device's largest measured size, with the vendor rung of the same case."""
    rows = []
    by_op_dtype = group(entries, lambda e: (OP_ORDER.get(e.op, 9), DTYPE_ORDER.get(e.dtype, 9), e.op, e.dtype))
    for op_dtype in sorted(by_op_dtype):
        op, dtype = op_dtype[2], op_dtype[3]
        for device, items in sorted(group(by_op_dtype[op_dtype], lambda e: e.device).items()):
            shape_key = largest_case(items)
            if shape_key is None:
                continue
            case = [e for e in items if e.measured and e.shape_key == shape_key]
            ours = [e for e in case if not e.is_reference]
            vendor = [e for e in case if e.is_reference]
            if not ours:
                continue
            best = max(ours, key=lambda e: (e.rate, -e.rung_index))
            unit = Unit(op, [e.rate for e in case])
            rows.append([op_title(op), dtype, device, best.shape, best.variant,
                         unit.show(best.rate) + " " + unit.name,
                         "{} {}".format(vendor_name(vendor[0].variant), unit.show(vendor[0].rate)) if vendor else "—",
                         fmt_pct(best.pct_of_reference), fmt_pct(best.pct_of_peak)])
    return rows


# ---------------------------------------------------------------- plots

def plotting():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "font.size": 9,
                         "svg.hashsalt": "gpukern", "axes.grid": True, "grid.alpha": 0.3})
    return plt


def rung_color(entry):
    """The same colour for a rung in every panel of a device (20 distinct colours: ladders
    have up to 13 rungs)."""
    import matplotlib
    return matplotlib.colormaps["tab20"](entry.rung_index % 20)


def figure_legend(fig, axes):
    """One legend for all panels, right of them: each label once, in ladder order."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    order = sorted(seen, key=lambda label: LEGEND_ORDER.get(label, (99, label)))
    fig.legend([seen[k] for k in order], order, fontsize=7, loc="upper left",
               bbox_to_anchor=(1.0, 0.95))


def plain_formatter():
    """Log axes labelled 0.5, 20, 1,000 rather than 10^3."""
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda value, _pos: fmt_rate(value))


def save(fig, out_dir, name):
    # No Software/date metadata: the same inputs give the same bytes.
    fig.savefig(os.path.join(out_dir, name), format="png", metadata={"Software": None},
                bbox_inches="tight")
    fig.clf()
    import matplotlib.pyplot as plt
    plt.close(fig)
    return name


def ladder_chart(plt, out_dir, device, op, entries):
    """Bars per rung (ladder order), one colour per dtype, each at its largest size."""
    by_dtype = group([e for e in entries if e.measured], lambda e: e.dtype)
    dtypes = sorted(by_dtype, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
    rungs = sorted({(e.rung_index, e.variant) for e in entries if e.measured})
    if not rungs:
        return None
    unit = Unit(op, [e.rate for e in entries if e.measured])
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rungs) + 2), 4.2))
    width = 0.8 / max(1, len(dtypes))
    for di, dtype in enumerate(dtypes):
        shape_key = fullest_case(by_dtype[dtype])
        at = {e.variant: e for e in by_dtype[dtype] if e.shape_key == shape_key}
        xs, ys, hatches = [], [], []
        for ri, (_, name) in enumerate(rungs):
            if name in at:
                xs.append(ri + (di - (len(dtypes) - 1) / 2) * width)
                ys.append(unit.of(at[name].rate))
                hatches.append("//" if at[name].is_reference else "")
        shape = next(iter(at.values())).shape
        bars = ax.bar(xs, ys, width, label="{} @ {}".format(dtype, shape))
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        ax.bar_label(bars, labels=[fmt_compact(y) for y in ys], fontsize=6, padding=2, rotation=90)
    ax.set_xticks(range(len(rungs)))
    ax.set_xticklabels([name for _, name in rungs], rotation=30, ha="right")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(plain_formatter())
    ax.margins(y=0.15)
    ax.set_ylabel(unit.name)
    ax.set_title("{} — {} ladder (hatched: vendor reference)".format(device, op_title(op)))
    ax.set_ylim(top=ax.get_ylim()[1] * 3)  # room for the rotated labels
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return save(fig, out_dir, "{}-{}-ladder.png".format(slug(device), op))


def size_chart(plt, out_dir, device, entries):
    """GEMM GFLOP/s against size (cube root of M*N*K), one panel per dtype."""
    by_dtype = group([e for e in entries if e.measured], lambda e: e.dtype)
    dtypes = sorted(by_dtype, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
    if not dtypes:
        return None
    fig, axes = plt.subplots(1, len(dtypes), figsize=(4.2 * len(dtypes), 3.8), squeeze=False)
    for ax, dtype in zip(axes[0], dtypes):
        by_rung = group(by_dtype[dtype], lambda e: (e.rung_index, e.variant))
        for (index, name), items in sorted(by_rung.items()):
            LEGEND_ORDER[name] = (index, name)
            items = sorted(items, key=lambda e: e.shape_key)
            # Square sizes as a line; other shapes as unconnected hollow markers at the cube
            # root of M*N*K (a 4097x4095x4093 point would otherwise make a vertical zigzag).
            square = [e for e in items if e.shape.endswith("³")]
            other = [e for e in items if not e.shape.endswith("³")]
            color = rung_color(items[0])
            ax.plot([(e.work / 2) ** (1 / 3) for e in square], [e.rate for e in square],
                    "--" if items[0].is_reference else "-", marker="o", markersize=3, label=name,
                    color=color)
            if other:
                ax.plot([(e.work / 2) ** (1 / 3) for e in other], [e.rate for e in other], "none",
                        marker="D", markersize=5, markerfacecolor="none", color=color,
                        label=None if square else name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(plain_formatter())
        ax.yaxis.set_major_formatter(plain_formatter())
        ax.set_xlabel("size (cube root of M·N·K; ◇ = not square)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title("{}: {}".format(device, dtype))
    fig.tight_layout()
    figure_legend(fig, axes[0])
    return save(fig, out_dir, "{}-gemm-size.png".format(slug(device)))


def columns_chart(plt, out_dir, device, op, entries):
    """Softmax TB/s against the number of columns, with the device-copy line; at equal
    column counts the shape with the most rows stands for that count."""
    by_dtype = group([e for e in entries if e.measured], lambda e: e.dtype)
    dtypes = sorted(by_dtype, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
    if not dtypes:
        return None
    unit = Unit(op, [e.rate for e in entries if e.measured])
    fig, axes = plt.subplots(1, len(dtypes), figsize=(4.2 * len(dtypes), 3.8), squeeze=False)
    for ax, dtype in zip(axes[0], dtypes):
        items = by_dtype[dtype]
        rows_for_cols = {}
        for e in items:
            rows_for_cols[e.cols] = max(rows_for_cols.get(e.cols, 0), e.rows)
        kept = [e for e in items if rows_for_cols[e.cols] == e.rows]
        copy = {}
        for e in kept:
            if e.copy_rate is not None:
                copy[e.cols] = e.copy_rate
        if copy:
            cols = sorted(copy)
            ax.plot(cols, [unit.of(copy[c]) for c in cols], "k--", linewidth=1.5, label="device copy")
        for (index, name), rung_items in sorted(group(kept, lambda e: (e.rung_index, e.variant)).items()):
            LEGEND_ORDER[name] = (index, name)
            rung_items = sorted(rung_items, key=lambda e: e.cols)
            ax.plot([e.cols for e in rung_items], [unit.of(e.rate) for e in rung_items],
                    ":" if rung_items[0].is_reference else "-", marker="o", markersize=3, label=name,
                    color=rung_color(rung_items[0]))
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(plain_formatter())
        ax.set_xlabel("columns (row length)")
        ax.set_ylabel("{} (read + written)".format(unit.name))
        ax.set_ylim(bottom=0)
        ax.set_title("{}: {}".format(device, dtype))
    fig.tight_layout()
    figure_legend(fig, axes[0])
    return save(fig, out_dir, "{}-{}-cols.png".format(slug(device), op))


# ---------------------------------------------------------------- report

def device_section(device, entries, plt, out_dir):
    info = entries[0].device_info
    lines = ["## {}".format(device), ""]
    facts = ["arch {}".format(info.get("arch", "?")),
             "{} {}".format(info.get("compute_units", "?"),
                            "threads" if info.get("backend") == "cpu" else "compute units"),
             "{} MHz".format(info.get("clock_mhz", "?"))]
    if info.get("peak_f32_gflops"):
        facts.append("FP32 peak {} GFLOP/s".format(fmt_rate(float(info["peak_f32_gflops"]))))
    if info.get("peak_tensor_gflops"):
        facts.append("tensor peak {} GFLOP/s".format(fmt_rate(float(info["peak_tensor_gflops"]))))
    if info.get("runtime_version"):
        facts.append("runtime {}".format(info["runtime_version"]))
    extra = info.get("extra") or {}
    if isinstance(extra, dict) and extra.get("openblas_core"):
        facts.append("OpenBLAS core {}".format(extra["openblas_core"]))
    lines += [", ".join(facts) + ".", ""]

    naive = naive_rates(entries)
    by_op = group(entries, lambda e: e.op)
    for op in sorted(by_op, key=lambda o: (OP_ORDER.get(o, 9), o)):
        op_entries = by_op[op]
        lines += ["### {}".format(op_title(op)), ""]
        for dtype, items in sorted(group(op_entries, lambda e: e.dtype).items(),
                                   key=lambda kv: (DTYPE_ORDER.get(kv[0], 9), kv[0])):
            measured = [e for e in items if e.measured]
            refs = sorted({e.reference for e in measured if e.reference})
            vendor = vendor_name(refs[0]) if len(refs) == 1 else "vendor"
            unit = Unit(op, [e.rate for e in op_entries if e.measured])
            header = ["rung", "dtype", "size", unit.name, "speed-up over naive", "% of " + vendor,
                      "% of peak"]
            if op != "gemm":
                header.append("% of copy")
            header.append("rel. error")
            rows, over_f32 = [], False
            for e in measured:
                base = naive.get(e.case_key())
                speedup = fmt_speedup(e.rate / base if base else None)
                if base is None and not any(x.variant == "naive" and x.measured for x in items):
                    # The naive rung does not take this dtype at all: compare with naive f32.
                    base = naive.get((e.device, e.op, "f32", e.shape_key))
                    if base:
                        speedup, over_f32 = fmt_speedup(e.rate / base) + " †", True
                row = [e.variant + (" (reference)" if e.is_reference else ""), e.dtype, e.shape,
                       unit.show(e.rate), speedup,
                       fmt_pct(e.pct_of_reference), fmt_pct(e.pct_of_peak)]
                if op != "gemm":
                    row.append(fmt_pct(e.pct_of_copy))
                row.append(fmt_error(e))
                rows.append(row)
            lines += ["#### {} {}".format(op_title(op), dtype), "", md_table(header, rows), ""]
            if over_f32:
                lines += ["† over the naive rung in f32 (the naive rung does not take {}).".format(dtype), ""]
            notes = skipped_notes(items)
            if notes:
                lines += notes + [""]
        if plt is not None:
            charts = [ladder_chart(plt, out_dir, device, op, op_entries)]
            if op == "gemm":
                charts.append(size_chart(plt, out_dir, device, op_entries))
            else:
                charts.append(columns_chart(plt, out_dir, device, op, op_entries))
            for name in charts:
                if name:
                    lines += ["![{}]({})".format(name[:-4], name), ""]
    return lines


def profile_section(paths):
    lines = ["## Nsight Compute profile", ""]
    for path in paths:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            raise ReportError("{}: cannot read profile: {}".format(path, e))
        lines += ["From `{}` (scripts/profile_ncu.sh).".format(os.path.basename(path)), ""]
        extra = [c for c in ("op", "dtype", "shape") if rows and c in rows[0]]
        columns = [(c, c) for c in extra] + [c for c in PROFILE_COLUMNS if not rows or c[0] in rows[0]]
        table = [[row.get(key, "") for key, _ in columns] for row in rows]
        lines += [md_table([title for _, title in columns], table), ""]
    return lines


def write_report(runs, out_dir, profiles, with_plots):
    entries = merge(runs)
    plt = plotting() if with_plots else None
    os.makedirs(out_dir, exist_ok=True)
    lines = ["# libgpukern benchmark report", "",
             "Written by gpukern-report from {} run(s) of gpukern-bench. Rates are medians of timed "
             "runs with caches flushed in between; \"% of\" the vendor library compares with its rung "
             "measured in the same run; speed-up is over the naive rung at the same dtype and size; "
             "softmax TB/s counts bytes read + written, and \"% of copy\" compares with a "
             "device-to-device copy of the same bytes.".format(len(runs)), "",
             "## Runs", ""]
    run_rows = []
    for run in sorted(runs, key=lambda r: (device_label(r["device"]), r.get("time_utc", ""), r["_path"])):
        d = run["device"]
        settings = run.get("settings") or {}
        loads = [settings.get("host_load_start"), settings.get("host_load_end")]
        load = " → ".join("{:.1f}".format(x) for x in loads if isinstance(x, (int, float)))
        if load and settings.get("host_cpus"):
            load += " ({} CPUs)".format(settings["host_cpus"])
        run_rows.append([device_label(d), d.get("arch", ""), d.get("compute_units", ""),
                         run.get("date", ""), run.get("git_commit", ""), load or "—",
                         os.path.basename(run["_path"])])
    lines += [md_table(["device", "arch", "units", "date", "commit", "host load", "file"], run_rows), "",
              "Host load: the 1-minute load average at the start and end of the run; well above the "
              "number of CPUs, other work shared the machine and CPU figures understate it.", ""]

    best = best_rows(entries)
    if best:
        lines += ["## Best rung per operation and dtype", "",
                  "At each device's largest measured size: its fastest rung other than the vendor "
                  "reference, and the reference.", "",
                  md_table(["op", "dtype", "device", "size", "best rung", "rate", "vendor",
                            "% of vendor", "% of peak"], best), ""]

    for device, items in sorted(group(entries, lambda e: e.device).items()):
        lines += device_section(device, items, plt, out_dir)
    if profiles:
        lines += profile_section(profiles)
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="gpukern-report",
        description="Merge gpukern-bench JSON runs into DIR/report.md with ladder tables and plots.")
    parser.add_argument("runs", nargs="+", metavar="FILE.json", help="gpukern-bench --json outputs")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for report.md and the PNGs")
    parser.add_argument("--profile", action="append", default=[], metavar="FILE",
                        help="CSV from scripts/profile_ncu.sh to include (repeatable)")
    parser.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib needed)")
    args = parser.parse_args(argv)
    try:
        runs = [load_run(p) for p in sorted(args.runs)]
        if not args.no_plots:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise ReportError("matplotlib is not installed (Debian: python3-matplotlib); "
                                  "install it or pass --no-plots")
        write_report(runs, args.out, sorted(args.profile), not args.no_plots)
    except ReportError as e:
        print("gpukern-report: {}".format(e), file=sys.stderr)
        return 2
    print("wrote {}".format(os.path.join(args.out, "report.md")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
