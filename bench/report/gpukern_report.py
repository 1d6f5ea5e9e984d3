#!/usr/bin/env python3
"""gpukern-report: merges gpukern-bench runs (JSON schema 1) from several machines
into DIR/report.md with ladder tables and PNG plots, and rewrites the measured tables
of a README between markers (report_readme.py).

    gpukern-report bench/results/*.json --out bench/report [--profile ncu.csv]
    gpukern-report bench/results/*.json --readme README.md [--check]

Per device and operation: ladder tables in the style of the seeds (rung, dtype, size,
GFLOP/s or TB/s, speed-up over the naive rung, % of the vendor library measured in
the same run), a ladder bar chart, GFLOP/s against size (gemm) and TB/s against the
number of columns with the device-copy line (softmax). Across devices: the best rung
per operation and dtype. The output is deterministic: same inputs, same bytes.
A bad input is one line "FILE: problem" on stderr and exit status 2.
"""

import argparse
import csv
import io
import os
import sys

from report_data import (DTYPE_ORDER, OP_ORDER, ReportError, Unit, device_label, fmt_compact,
                         fmt_error, fmt_pct, fmt_rate, fmt_speedup, group, is_torch, load_run, md_table,
                         merge, op_title, skipped_notes, slug, vendor_name)
import report_attention
import report_readme
import report_suite

LEGEND_ORDER = {"device copy": (-1, "device copy")}  # legend label -> (ladder index, name)
PROFILE_COLUMNS = [
    ("rung", "rung"), ("kernel", "kernel"), ("sm_throughput_pct", "SM %"),
    ("dram_throughput_pct", "DRAM %"), ("l2_throughput_pct", "L2 %"),
    ("achieved_occupancy_pct", "occupancy %"), ("registers_per_thread", "regs/thread"),
    ("shared_mem_per_block_bytes", "smem/block (B)"), ("elapsed_cycles", "cycles"),
    ("duration_us", "µs"),
]


# ---------------------------------------------------------------- analysis

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
            ours = [e for e in case if not e.is_reference and e.variant != "auto"]
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
    path = os.path.join(out_dir, name)
    try:
        fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight")
    except OSError as e:
        raise ReportError("{}: cannot write: {}".format(path, e.strerror or e))
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
                    base = naive.get((e.device, e.op, "f32", e.shape_key, e.layout))
                    if base:
                        speedup, over_f32 = fmt_speedup(e.rate / base) + " †", True
                row = [e.variant + (" (reference)" if e.is_reference else ""), e.dtype, e.shown_shape(),
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


def read_profile(path):
    """Rows of a profile CSV (scripts/profile_ncu.sh), read before anything is written."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        if "\0" in text:
            raise ReportError("{}: not a CSV text file (it holds NUL bytes)".format(path))
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except OSError as e:
        raise ReportError("{}: cannot read profile: {}".format(path, e.strerror or e))
    except (UnicodeDecodeError, csv.Error) as e:
        raise ReportError("{}: not a CSV text file ({})".format(path, e))
    return path, rows


def profile_section(profiles):
    lines = ["## Nsight Compute profile", ""]
    for path, rows in profiles:
        lines += ["From `{}` (scripts/profile_ncu.sh).".format(os.path.basename(path)), ""]
        extra = [c for c in ("op", "dtype", "shape") if rows and c in rows[0]]
        columns = [(c, c) for c in extra] + [c for c in PROFILE_COLUMNS if not rows or c[0] in rows[0]]
        table = [[row.get(key) or "" for key, _ in columns] for row in rows]
        lines += [md_table([title for _, title in columns], table), ""]
    return lines


def prepare_out(out_dir):
    """Makes --out a writable directory, or says in one line why it cannot be one."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ReportError("{}: not a directory (--out)".format(out_dir))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise ReportError("{}: cannot create the directory (--out): {}".format(out_dir, e.strerror or e))
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ReportError("{}: cannot write in the directory (--out)".format(out_dir))


def write_report(runs, out_dir, profiles, with_plots):
    entries = merge(runs)
    plt = plotting() if with_plots else None
    prepare_out(out_dir)
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

    # The llm suite's and the chained cells have their own section (report_suite), attention, the attention
    # suite and the epilogue suite theirs (report_attention); the ladder sections and the
    # best-rung table keep the ladder's sizes and the square suite.
    suite_entries = entries
    entries = [e for e in entries
               if not report_suite.is_llm(e) and not report_attention.is_own_section(e) and e.chain == 1]
    best = best_rows([e for e in entries if e.is_plain()])
    if best:
        lines += ["## Best rung per operation and dtype", "",
                  "At each device's largest measured size: its fastest rung other than the vendor "
                  "reference, and the reference.", "",
                  md_table(["op", "dtype", "device", "size", "best rung", "rate", "vendor",
                            "% of vendor", "% of peak"], best), ""]

    for device, items in sorted(group(entries, lambda e: e.device).items()):
        lines += device_section(device, items, plt, out_dir)
    lines += report_suite.suite_sections(suite_entries, plt, save, out_dir)
    lines += report_attention.sections(suite_entries, [r for r in runs if is_torch(r)], md_table)
    if profiles:
        lines += profile_section(profiles)
    write_text(os.path.join(out_dir, "report.md"), "\n".join(lines).rstrip("\n") + "\n")


def write_text(path, text):
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ReportError("{}: cannot write: {}".format(path, e.strerror or e))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="gpukern-report",
        description="Merge gpukern-bench JSON runs into DIR/report.md with ladder tables and plots, "
                    "and/or rewrite the README's tables between gpukern-report markers.")
    parser.add_argument("runs", nargs="+", metavar="FILE.json", help="gpukern-bench --json outputs")
    parser.add_argument("--out", metavar="DIR", help="directory for report.md and the PNGs")
    parser.add_argument("--profile", action="append", default=[], metavar="FILE",
                        help="CSV from scripts/profile_ncu.sh to include (repeatable)")
    parser.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib needed)")
    parser.add_argument("--readme", metavar="FILE",
                        help="rewrite the tables of FILE between <!-- gpukern-report:begin KIND key=value... --> "
                             "and <!-- gpukern-report:end --> from the runs (" + report_readme.KINDS_HELP + ")")
    parser.add_argument("--check", action="store_true",
                        help="with --readme: write nothing; exit 1 when the README's tables differ from the runs")
    args = parser.parse_args(argv)
    if not args.out and not args.readme:
        parser.error("give --out DIR, --readme FILE or both")
    if args.check and not args.readme:
        parser.error("--check goes with --readme")
    try:
        runs = [load_run(p) for p in sorted(args.runs)]
        profiles = [read_profile(p) for p in sorted(args.profile)]
        if args.out and not args.no_plots:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise ReportError("gpukern-report: matplotlib is not installed (Debian: python3-matplotlib); "
                                  "install it or pass --no-plots")
        if args.readme:
            changed = report_readme.update(args.readme, merge(runs), write=not args.check,
                                           torch=[r for r in runs if is_torch(r)])
            if args.check and changed:
                print("{}: tables out of date with the runs; regenerate with gpukern-report --readme".format(
                    args.readme), file=sys.stderr)
                return 1
        if args.out:
            write_report(runs, args.out, profiles, not args.no_plots)
    except ReportError as e:
        print(e, file=sys.stderr)
        return 2
    if args.readme and not args.check:
        print("wrote {}".format(args.readme))
    if args.out:
        print("wrote {}".format(os.path.join(args.out, "report.md")))
    return 0


def run():
    """Entry point of the packaged gpukern-report (a zipapp)."""
    sys.exit(main())


if __name__ == "__main__":
    run()
