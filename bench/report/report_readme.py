"""The measured tables of a README, generated from gpukern-bench runs (gpukern-report --readme).

A README marks each generated table with a pair of HTML comments, which Markdown hides:

    <!-- gpukern-report:begin ladder device=nvidia-h100-80gb-hbm3-cuda op=gemm dtype=f32 -->
    (generated: rewritten at every run, never edited by hand)
    <!-- gpukern-report:end -->

Everything outside the markers is left as it is, byte for byte. Kinds of table:

- ladder: one row per rung in ladder order, one column per size (per dtype and size when
  dtype lists several); cells "rate (% of the vendor reference measured in the same run)",
  the fastest rung other than the reference in bold; what was not measured is listed
  under the table with the reason.
- best: one row per size, one column per dtype; cells "fastest rung, its rate (% of the
  device copy for softmax, % of the vendor reference for gemm)".
- llm: the llm suite (gpukern-bench --suite llm) of one device, dtype and layout: one row
  per T, one column per N x K; cells "% of the vendor, fastest own rung" (metric=vendor,
  the default) or "own best / vendor as % of the same-run copy" (metric=copy) or read stream
  (metric=read). Keys device,
  dtype (required), layout (default NN), metric.

- attention: gpukern-bench --op attention of one device and dtype (causal=1 for the masked
  runs): one row per (d, S), the library's three calls against the same steps on the vendor
  rungs, with torch's math path and SDPA when a torch_attention.py run of the device is given.
  Keys device, dtype (required), causal (0 or 1, default 0).
- batched: the attention suite (gpukern-bench --suite attention) of one device and dtype: rows
  (d, S), columns Q·Kᵀ and P·V, the fastest own rung as % of the vendor. Keys device, dtype.
- epilogue: fused-epilogue cells (gpukern-bench --suite epilogue) of one device and dtype: rows
  (size, epilogue), the fastest own rung, % of its plain call, % of cuBLASLt. Keys device, dtype.

Keys: device (the slug of the report's device heading, e.g. amd-epyc-cpu-2-threads),
op (gemm, softmax, log_softmax); optional dtype, sizes (N, MxNxK or RxC, comma lists:
the columns or rows, in that order), rungs (ladder only: rows to keep), unit (GFLOP/s,
TFLOP/s, GB/s, TB/s), layout (gemm: NN (default), NT, TN or TT). A suite's cells
(gpukern-bench --suite llm or square) are never in these tables; gpukern-report's report has them. Each table ends with the run files it comes from, linked relative
to the README.
"""

import os
import re

from report_data import (DTYPE_ORDER, OP_ORDER, ReportError, Unit, device_label, group, md_table, op_title,
                         shape_label, skipped_notes, slug, vendor_name)
import report_attention
import report_suite

BEGIN = re.compile(r"^<!-- gpukern-report:begin (?P<kind>\S+)(?P<params>(?: +\S+)*) *-->$")
END = "<!-- gpukern-report:end -->"
KEYS = {"ladder": {"device", "op", "dtype", "sizes", "rungs", "unit", "layout"},
        "best": {"device", "op", "dtype", "sizes", "unit", "layout"},
        "llm": {"device", "dtype", "layout", "metric"},
        "attention": {"device", "dtype", "causal"},
        "batched": {"device", "dtype"},
        "epilogue": {"device", "dtype"}}
REQUIRED = {"ladder": ("device", "op"), "best": ("device", "op"), "llm": ("device", "dtype"),
            "attention": ("device", "dtype"), "batched": ("device", "dtype"), "epilogue": ("device", "dtype")}
UNITS = {"GFLOP/s": ("gemm", 1.0), "TFLOP/s": ("gemm", 1e-3), "GB/s": ("softmax", 1.0),
         "TB/s": ("softmax", 1e-3)}
KINDS_HELP = "kinds: ladder, best, llm, attention, batched, epilogue; see report_readme.py"


class Problem(Exception):
    """A marker the README cannot be regenerated from; update() adds the file and line."""


# ---------------------------------------------------------------- parameters

def parse_params(kind, text):
    if kind not in KEYS:
        raise Problem("unknown table kind '{}' (known: {})".format(kind, ", ".join(sorted(KEYS))))
    params = {}
    for item in text.split():
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise Problem("'{}' is not key=value".format(item))
        if key not in KEYS[kind]:
            raise Problem("unknown key '{}' for {} (known: {})".format(key, kind, ", ".join(sorted(KEYS[kind]))))
        params[key] = value
    for key in REQUIRED[kind]:
        if key not in params:
            raise Problem("{} needs {}=".format(kind, key))
    if kind in ("attention", "batched", "epilogue"):
        if params.get("causal", "0") not in ("0", "1"):
            raise Problem("causal={} is not 0 or 1".format(params["causal"]))
        return params
    if kind == "llm":
        if params.get("metric", "vendor") not in ("vendor", "copy", "read"):
            raise Problem("metric={} is not vendor, copy or read".format(params["metric"]))
        if params.get("layout", "NN") not in ("NN", "NT", "TN", "TT"):
            raise Problem("layout={} is not NN, NT, TN or TT".format(params["layout"]))
        return params
    if params["op"] not in OP_ORDER:
        raise Problem("op={} is not one of {}".format(params["op"], ", ".join(OP_ORDER)))
    if params.get("layout", "NN") not in ("NN", "NT", "TN", "TT"):
        raise Problem("layout={} is not NN, NT, TN or TT".format(params["layout"]))
    if "unit" in params and (params["unit"] not in UNITS or
                             UNITS[params["unit"]][0] != ("gemm" if params["op"] == "gemm" else "softmax")):
        raise Problem("unit={} does not fit op={}".format(params["unit"], params["op"]))
    return params


def parse_sizes(op, text):
    """"4096,4097x4095x4093" -> [(4096, 4096, 4096), (4097, 4095, 4093)] (softmax: (rows, cols))."""
    out = []
    for item in text.split(","):
        try:
            dims = tuple(int(d) for d in item.lower().split("x"))
        except ValueError:
            dims = ()
        want = 3 if op == "gemm" else 2
        if len(dims) == 1:
            dims = dims * want
        if len(dims) != want or min(dims) <= 0:
            raise Problem("sizes: '{}' is not N or {} with positive integers".format(
                item, "MxNxK" if op == "gemm" else "RxC"))
        out.append(dims)
    return out


def listed(params, key):
    return params[key].split(",") if key in params else None


def select(entries, params):
    """The entries of the marker's device and op (and dtypes), or a Problem naming what exists."""
    # One gemm layout per table (layout=, default NN); ladder tables come from ladder runs only:
    # a suite's cells (llm, square) are measured with other settings and the `auto` rung, and
    # mixing them into a ladder run's table would give a size two rows of one rung.
    layout = params.get("layout", "NN")
    chosen = [e for e in entries if slug(e.device) == params["device"] and e.op == params["op"]
              and not e.suite and e.is_plain() and (e.op != "gemm" or e.layout == layout)]
    dtypes = listed(params, "dtype") or sorted({e.dtype for e in chosen}, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
    chosen = [e for e in chosen if e.dtype in dtypes]
    if not any(e.measured for e in chosen):
        have = sorted({"{} {} {}".format(slug(e.device), e.op, e.dtype) for e in entries if e.measured})
        raise Problem("no measurement for device={} op={} dtype={} in the runs (they hold: {})".format(
            params["device"], params["op"], ",".join(dtypes), "; ".join(have) or "nothing"))
    return chosen, dtypes


def table_unit(params, entries):
    if "unit" in params:
        unit = Unit(params["op"], [])
        unit.name, unit.scale = params["unit"], UNITS[params["unit"]][1]
        return unit
    return Unit(params["op"], [e.rate for e in entries if e.measured])


def sources(entries, readme_dir):
    """"From [file](link) (gpukern-bench at commit, date)." for the runs behind a table."""
    runs = sorted({(e.run_path, e.run_commit, e.run_date) for e in entries if e.measured})
    links = ["[{}]({}) (gpukern-bench at {}, {})".format(
        os.path.basename(path), os.path.relpath(path, readme_dir).replace(os.sep, "/"), commit, date)
        for path, commit, date in runs]
    return "From " + "; ".join(links) + "."


def measured_sizes(entries):
    """The measured sizes, smallest work first (the report's order)."""
    keys = {e.dims: e.shape_key for e in entries if e.measured}
    return sorted(keys, key=lambda dims: keys[dims])


def fmt_share(value):
    return "—" if value is None else "{:.1f}%".format(value)


# ---------------------------------------------------------------- tables

def ladder_table(entries, params, readme_dir, _torch=()):
    chosen, dtypes = select(entries, params)
    unit = table_unit(params, chosen)
    op = params["op"]
    columns = []  # (dtype, dims)
    for dtype in dtypes:
        sizes = parse_sizes(op, params["sizes"]) if "sizes" in params else measured_sizes(
            [e for e in chosen if e.dtype == dtype])
        columns += [(dtype, dims) for dims in sizes]
    at = {(e.variant, e.dtype, e.dims): e for e in chosen}
    wanted = listed(params, "rungs")
    rungs = [name for _, name in sorted({(e.rung_index, e.variant) for e in chosen})
             if (wanted is None or name in wanted)
             and any(at.get((name,) + c) is not None and at[(name,) + c].measured for c in columns)]
    if not rungs:
        raise Problem("no rung{} measured at the sizes asked for".format(" of rungs=" + params["rungs"] if wanted else ""))

    best = {}
    for c in columns:
        ours = [at[(r,) + c] for r in rungs if (r,) + c in at and at[(r,) + c].measured
                and not at[(r,) + c].is_reference and r != "auto"]
        if ours:
            best[c] = max(ours, key=lambda e: (e.rate, -e.rung_index)).variant
    rows = []
    for rung in rungs:
        row = [rung]
        for c in columns:
            e = at.get((rung,) + c)
            if e is None or not e.measured:
                row.append("—")
                continue
            text = unit.show(e.rate) if e.is_reference else "{} ({})".format(
                unit.show(e.rate), fmt_share(e.pct_of_reference))
            row.append("**{}**".format(text) if best.get(c) == rung else text)
        rows.append(row)
    header = ["rung"] + ["{}{}".format(dtype + " " if len(dtypes) > 1 else "", shape_label(dims))
                         for dtype, dims in columns]

    refs = sorted({e.reference for e in chosen if e.measured and e.reference})
    vendor = vendor_name(refs[0]) if len(refs) == 1 else "the vendor reference"
    lines = ["{}, {} {}: {} (% of {} in the same run; bold: the fastest rung other than the reference).".format(
        chosen[0].device, op_title(op), ", ".join(dtypes), unit.name, vendor), "", md_table(header, rows), ""]
    for dtype in dtypes:
        sizes = {dims for d, dims in columns if d == dtype}
        notes = skipped_notes([e for e in chosen if e.dtype == dtype and e.variant in rungs and e.dims in sizes])
        lines += ["- {}: {}".format(dtype, n[2:]) if len(dtypes) > 1 else n for n in notes]
    if lines[-1] != "":
        lines.append("")
    return lines + [sources([at[(r,) + c] for r in rungs for c in columns if (r,) + c in at], readme_dir)]


def best_table(entries, params, readme_dir, _torch=()):
    chosen, dtypes = select(entries, params)
    unit = table_unit(params, chosen)
    op = params["op"]
    measured = [e for e in chosen if e.measured and not e.is_reference and e.variant != "auto"]
    sizes = parse_sizes(op, params["sizes"]) if "sizes" in params else measured_sizes(measured)
    by_case = group(measured, lambda e: (e.dims, e.dtype))
    rows, used = [], []
    for dims in sizes:
        row = [shape_label(dims)]
        for dtype in dtypes:
            ours = by_case.get((dims, dtype))
            if not ours:
                row.append("—")
                continue
            e = max(ours, key=lambda x: (x.rate, -x.rung_index))
            used.append(e)
            row.append("{} {} ({})".format(e.variant, unit.show(e.rate),
                                           fmt_share(e.pct_of_reference if op == "gemm" else e.pct_of_copy)))
        rows.append(row)
    if not used:
        raise Problem("nothing measured at the sizes asked for")
    share = ("% of " + vendor_name(used[0].reference) + " in the same run" if op == "gemm"
             else "% of a device copy of the same bytes in the same run")
    return ["{}, {}: the fastest rung per {} and dtype, {} ({}).".format(
                used[0].device, op_title(op), "size" if op == "gemm" else "shape", unit.name, share), "",
            md_table(["size" if op == "gemm" else "shape"] + dtypes, rows), "", sources(used, readme_dir)]


def llm_table(entries, params, readme_dir, _torch=()):
    """The llm suite of one device, dtype and layout: rows T, columns N x K (report_suite)."""
    layout = params.get("layout", "NN")
    chosen = [e for e in entries if slug(e.device) == params["device"] and report_suite.is_llm(e)
              and e.dtype == params["dtype"] and e.layout == layout]
    table = report_suite.cells(chosen)
    if not table:
        have = sorted({"{} {} {}".format(slug(e.device), e.dtype, e.layout) for e in entries
                       if report_suite.is_llm(e) and e.measured})
        raise Problem("no llm suite cell for device={} dtype={} layout={} in the runs (they hold: {})".format(
            params["device"], params["dtype"], layout, "; ".join(have) or "none"))
    metric = params.get("metric", "vendor")
    vendor = report_suite.vendor_label(table, params["dtype"], layout)
    header, rows = report_suite.matrix(table, params["dtype"], layout, metric)
    what = {"vendor": "the fastest own rung per cell, % of {} in the same run".format(vendor),
            "copy": "effective bandwidth as % of a same-run device copy of the same bytes, own best / {}".format(vendor),
            "read": "effective bandwidth as % of a same-run read stream of the same bytes, own best / {}".format(
                vendor)}[metric]
    used = [e for pair in table.values() for e in pair if e]
    if metric != "vendor":  # only the runs whose cells the table shows
        used = [e for e in used if getattr(e, "pct_of_" + metric) is not None]
    return ["{}, GEMM {} {} (llm suite, T × N × K): {}.".format(chosen[0].device, params["dtype"], layout, what),
            "", md_table(header, rows), "", sources(used, readme_dir)]


def missing(kind, params, entries, test):
    have = sorted({"{} {}".format(slug(e.device), e.dtype) for e in entries if e.measured and test(e)})
    return Problem("no {} cell for device={} dtype={} in the runs (they hold: {})".format(
        kind, params["device"], params["dtype"], "; ".join(have) or "none"))


def attention_table(entries, params, readme_dir, torch=()):
    causal = params.get("causal", "0") == "1"
    header, rows, used, notes = report_attention.attention_rows(entries, torch, params["device"], params["dtype"],
                                                                causal)
    if not used:
        raise missing("attention", params, entries, lambda e: e.op == "attention" and e.causal == causal)
    torch_files = sorted({run["_path"] for run in torch if slug(device_label(run["device"]))
                          == params["device"]})
    source = sources(used, readme_dir)
    if torch_files and len(header) > 7:
        source = source[:-1] + "; torch: " + ", ".join("[{}]({})".format(
            os.path.basename(p), os.path.relpath(p, readme_dir).replace(os.sep, "/")) for p in torch_files) + "."
    return ["{}, attention forward {}{} (Q·Kᵀ/√d, softmax, P·V; TFLOP/s = 4·batch·heads·S²·d over the median "
            "time of the three calls; % = speed against the other path in the same run).".format(
                used[0].device, params["dtype"], ", causal" if causal else ""), "",
            md_table(header, rows), ""] + ["- " + n for n in notes] + ([""] if notes else []) + [source]


def batched_table(entries, params, readme_dir, _torch=()):
    header, rows, used = report_attention.batched_rows(entries, params["device"], params["dtype"])
    if not used:
        raise missing("attention suite", params, entries, lambda e: e.op == "gemm" and e.suite == "attention")
    return ["{}, batched GEMM {} of attention (gpukern-bench --suite attention): the fastest own rung as % of "
            "the vendor's strided-batched call in the same run.".format(used[0].device, params["dtype"]), "",
            md_table(header, rows), "", sources(used, readme_dir)]


def epilogue_table(entries, params, readme_dir, _torch=()):
    header, rows, used = report_attention.epilogue_rows(entries, params["device"], params["dtype"])
    if not used:
        raise missing("epilogue", params, entries, lambda e: e.op == "gemm" and e.suite == "epilogue")
    return ["{}, GEMM {} with a fused epilogue (gpukern-bench --suite epilogue): the fastest own rung, its "
            "speed as % of its own plain call and of cuBLASLt with the same epilogue, in the same run.".format(
                used[0].device, params["dtype"]), "", md_table(header, rows), "", sources(used, readme_dir)]


TABLES = {"ladder": ladder_table, "best": best_table, "llm": llm_table, "attention": attention_table,
          "batched": batched_table, "epilogue": epilogue_table}


# ---------------------------------------------------------------- the README

def regenerate(text, entries, readme_dir, path, torch=()):
    """The README text with every marked section rebuilt; ReportError "FILE:LINE: problem"."""
    lines = text.split("\n")
    out, i, sections = [], 0, 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.strip() == END:
            raise ReportError("{}:{}: {} without a begin marker before it".format(path, i, END))
        match = BEGIN.match(line.strip())
        if not match:
            if "gpukern-report:begin" in line:
                raise ReportError("{}:{}: malformed marker; expected <!-- gpukern-report:begin KIND key=value ... -->"
                                  .format(path, i))
            continue
        begin_line = i
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == END
                    or "gpukern-report:begin" in lines[j]), None)
        if end is None or lines[end].strip() != END:
            raise ReportError("{}:{}: no {} after this begin marker".format(path, begin_line, END))
        try:
            params = parse_params(match.group("kind"), match.group("params"))
            table = TABLES[match.group("kind")](entries, params, readme_dir, torch)
        except Problem as e:
            raise ReportError("{}:{}: {}".format(path, begin_line, e))
        out += [""] + table + ["", lines[end]]
        i = end + 1
        sections += 1
    if sections == 0:
        raise ReportError("{}: no <!-- gpukern-report:begin ... --> marker".format(path))
    return "\n".join(out)


def update(path, entries, write=True, torch=()):
    """Regenerates the README at `path`; returns whether its text changed (written when `write`)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        raise ReportError("{}: cannot read: {}".format(path, e.strerror or e))
    except UnicodeDecodeError as e:
        raise ReportError("{}: not a UTF-8 text file ({})".format(path, e))
    new = regenerate(text, entries, os.path.dirname(os.path.abspath(path)), path, torch)
    if new != text and write:
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(new)
        except OSError as e:
            raise ReportError("{}: cannot write: {}".format(path, e.strerror or e))
    return new != text
