"""Attention, batched and epilogue results in gpukern-report (report.md sections and README tables).

- attention (gpukern-bench --op attention): per device, dtype and mask, one row per (d, S):
  the library's three calls (auto rungs) and the same steps on the vendor rungs (cuBLAS +
  cuDNN on CUDA) in TFLOP/s, own as % of the vendor, and where a torch_attention.py run of
  the same device is given, torch's unfused math path and its fused scaled_dot_product_attention
  (throughput: a batch reduced for memory still compares).
- batched (gpukern-bench --suite attention): per device and dtype, rows (d, S), columns Q·Kᵀ
  and P·V: the fastest own rung as % of the vendor rung of the same run.
- epilogue (gpukern-bench --suite epilogue, or any run with --bias/--act): per device and
  dtype, rows (size, epilogue): the fastest own rung, its rate, % of the same rung's plain
  call and % of cuBLASLt with the same epilogue (the fused-epilogue reference).
"""

from report_data import DTYPE_ORDER, device_label, fmt_pct, fmt_rate, group, slug, speed_vs, vendor_name


def own_best(items):
    ours = [e for e in items if e.measured and not e.is_reference and e.variant != "auto"]
    return max(ours, key=lambda e: (e.rate, -e.rung_index)) if ours else None


def pct(numerator_ms, denominator_ms):
    """Speed as % of another: 100 * other's time / this time."""
    return None if numerator_ms is None or denominator_ms is None else 100.0 * numerator_ms / denominator_ms


def tflops(value):
    return "—" if value is None else fmt_rate(value / 1e3)


# ---------------------------------------------------------------- attention (--op attention)

def torch_cells(torch_runs):
    """(device slug, dtype, seq, head_dim, causal) -> torch record (the newest run wins)."""
    out = {}
    for run in sorted(torch_runs, key=lambda r: (r.get("time_utc") or "", r["_path"])):
        device = slug(device_label(run["device"]))
        for x in run["results"]:
            out[(device, x["dtype"], x["seq"], x["head_dim"], bool(x["causal"]))] = x
    return out


def attention_rows(entries, torch_runs, device, dtype, causal):
    """(header, rows, used entries) of one device, dtype and mask; rows by (d, S)."""
    items = [e for e in entries if e.op == "attention" and slug(e.device) == device and e.dtype == dtype
             and e.causal == causal]
    torch = torch_cells(torch_runs)
    cases = group(items, lambda e: e.dims)
    have_torch = any((device, dtype, dims[2], dims[3], causal) in torch for dims in cases)
    vendor = next((e for e in items if e.is_reference and e.measured), None)
    vendor_label = " + ".join(vendor_name(vendor.rungs.get(k)) for k in ("scores", "softmax")) if vendor else "vendor"
    header = ["d", "S", "batch × heads", "own TFLOP/s", vendor_label + " TFLOP/s", "own % of " + vendor_label]
    if have_torch:
        header += ["torch math TFLOP/s", "own % of torch math", "torch SDPA TFLOP/s"]
    header += ["own rungs"]
    rows, used = [], []
    for dims in sorted(cases, key=lambda dims: (dims[3], dims[2], dims[0])):
        case = cases[dims]
        own = next((e for e in case if not e.is_reference and e.measured), None)
        ref = next((e for e in case if e.is_reference and e.measured), None)
        used += [e for e in (own, ref) if e]
        shape = "{} × {}".format(dims[0], dims[1])
        if any(e.batch_reduced_from for e in case):
            shape += " (of {}: memory)".format(max(e.batch_reduced_from or 0 for e in case))
        row = [str(dims[3]), str(dims[2]), shape, tflops(own.rate if own else None),
               tflops(ref.rate if ref else None), fmt_pct(pct(ref.ms, own.ms) if own and ref else None)]
        if have_torch:
            t = torch.get((device, dtype, dims[2], dims[3], causal))
            math = t["math_gflops"] if t else None
            row += [tflops(math), fmt_pct(100.0 * own.rate / math if own and math else None),
                    tflops(t["sdpa_gflops"] if t else None)]
        row.append(", ".join(own.rungs.get(k, "?") for k in ("scores", "softmax", "weighted")) if own else "—")
        rows.append(row)
    notes = sorted({e.note for e in items if e.note})
    return header, rows, used, notes


# ---------------------------------------------------------------- batched (--suite attention)

def batched_rows(entries, device, dtype):
    """Rows (d, S), columns Q·Kᵀ (NT) and P·V (NN): "% of vendor, fastest own rung"."""
    items = [e for e in entries if e.op == "gemm" and e.suite == "attention" and slug(e.device) == device
             and e.dtype == dtype]
    cells = group(items, lambda e: (e.dims, e.layout, e.batch))
    table, used = {}, []
    for (dims, layout, batch), case in cells.items():
        m, n, k = dims
        d, s = (k, m) if layout == "NT" else (n, m)
        best = own_best(case)
        ref = next((e for e in case if e.is_reference and e.measured), None)
        table[(d, s, layout)] = (best, ref, batch)
        used += [e for e in (best, ref) if e]
    refs = sorted({e.variant for e in used if e.is_reference})
    vendor = vendor_name(refs[0]) if len(refs) == 1 else "vendor"
    rows = []
    for d, s in sorted({(d, s) for d, s, _ in table}):
        row = [str(d), str(s)]
        for layout in ("NT", "NN"):
            best, ref, batch = table.get((d, s, layout), (None, None, None))
            row.append("—" if best is None else "{} {}".format(fmt_pct(speed_vs(best, ref)), best.variant))
        batches = sorted({table[key][2] for key in table if key[:2] == (d, s)})
        row.append(", ".join(str(b) for b in batches))
        rows.append(row)
    header = ["d", "S", "Q·Kᵀ (NT) % of " + vendor, "P·V (NN) % of " + vendor, "batch"]
    return header, rows, used


# ---------------------------------------------------------------- epilogue

def epilogue_rows(entries, device, dtype, unit_scale=1e-3):
    """Rows (size, epilogue), plain first: fastest own rung, TFLOP/s, % of its plain call,
    % of cuBLASLt with the same epilogue, % of the plain vendor reference."""
    items = [e for e in entries if e.op == "gemm" and slug(e.device) == device and e.dtype == dtype
             and e.batch == 1 and e.chain == 1 and (e.suite == "epilogue" or e.has_epilogue())]
    cases = group(items, lambda e: (e.shape_key, e.layout, e.bias, e.act))
    rows, used = [], []
    for key in sorted(cases, key=lambda k: (k[0], k[1], k[2] != "none" or k[3] != "none", k[2], k[3])):
        case = cases[key]
        best = own_best(case)
        if best is None:
            continue
        lt = next((e for e in case if e.variant == "cublaslt" and e.measured), None)
        plain_ref = next((e for e in case if e.is_reference and e.variant != "cublaslt" and e.measured), None)
        used += [e for e in (best, lt, plain_ref) if e]
        rows.append([best.shown_shape().split(" ")[0] + ("" if key[1] == "NN" else " " + key[1]),
                     best.epilogue_label(), best.variant, fmt_rate(best.rate * unit_scale),
                     fmt_pct(best.pct_of_plain) if best.has_epilogue() else "—",
                     fmt_pct(speed_vs(best, lt)), fmt_pct(speed_vs(best, plain_ref))])
    header = ["size", "epilogue", "fastest own rung", "TFLOP/s", "% of its plain call", "% of cuBLASLt",
              "% of cuBLAS (+ epilogue pass)"]
    return header, rows, used


# ---------------------------------------------------------------- report.md

def sections(entries, torch_runs, md_table):
    """report.md lines for attention, the attention suite and epilogues (every device)."""
    lines = []
    for device, items in sorted(group(entries, lambda e: e.device).items()):
        dslug = slug(device)
        dtypes = sorted({e.dtype for e in items}, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
        part = []
        for causal in (False, True):
            for dtype in dtypes:
                header, rows, _, notes = attention_rows(items, torch_runs, dslug, dtype, causal)
                if rows:
                    part += ["#### attention {}{}".format(dtype, ", causal" if causal else ""), "",
                             md_table(header, rows), ""] + ["- " + n for n in notes] + ([""] if notes else [])
        for dtype in dtypes:
            header, rows, _ = batched_rows(items, dslug, dtype)
            if rows:
                part += ["#### attention suite (batched gemms) {}".format(dtype), "", md_table(header, rows), ""]
        for dtype in dtypes:
            header, rows, _ = epilogue_rows(items, dslug, dtype)
            if rows:
                part += ["#### fused epilogue {}".format(dtype), "", md_table(header, rows), ""]
        if part:
            lines += ["## {}: attention, batched gemm, fused epilogue".format(device), ""] + part
    return lines


def is_own_section(entry):
    """Entries these sections show instead of the ladder sections."""
    return entry.op == "attention" or (entry.op == "gemm" and entry.suite in ("attention", "epilogue"))

