"""The workload suites in gpukern-report (gpukern-bench --suite llm / square).

llm: per device, dtype and layout, the fastest own rung of each (T, N, K) cell against the
vendor rung measured in the same run: a plot of own-best / vendor against T (log2 axis),
one line per weight shape (N, K), one panel per dtype and layout; a plot of the effective
bandwidth as % of the same-run copy (own best solid, vendor dashed); and tables of both
(rows T, columns N x K). square: a table of the fastest own rung per size and dtype, % of
the vendor. Cells timed back to back (--chain N, any suite): the same table per chain
length. The ladder sections of the report leave the llm and chained cells out (they are
here).
"""

from report_data import DTYPE_ORDER, fmt_pct, group, md_table, slug, speed_vs, vendor_name

LAYOUT_ORDER = {"NN": 0, "NT": 1, "TN": 2, "TT": 3}


def is_llm(entry):
    """A cell of the llm suite timed call by call (chained runs, --chain, stay out of its tables)."""
    return entry.op == "gemm" and entry.suite == "llm" and entry.chain == 1


def own_best(items):
    """The fastest measured rung other than the vendor reference (and other than "auto",
    which dispatches to one of them), or None."""
    ours = [e for e in items if e.measured and not e.is_reference and e.variant != "auto"]
    return max(ours, key=lambda e: (e.rate, -e.rung_index)) if ours else None


def vendor_of(items):
    refs = [e for e in items if e.measured and e.is_reference]
    return refs[0] if refs else None


def cells(entries):
    """(dtype, layout, (n, k), t) -> (own best or None, vendor or None), measured cells only."""
    out = {}
    for (dtype, layout, dims), items in group(entries, lambda e: (e.dtype, e.layout, e.dims)).items():
        best, vendor = own_best(items), vendor_of(items)
        if best or vendor:
            out[(dtype, layout, (dims[1], dims[2]), dims[0])] = (best, vendor)
    return out


def ratio(best, vendor):
    """own best / vendor as a speed ratio (vendor time over own time; speed_vs)."""
    v = speed_vs(best, vendor)
    return None if v is None else v / 100.0


def panels(table):
    """The (dtype, layout) panels present, in dtype then layout order."""
    keys = {(d, l) for d, l, _, _ in table}
    return sorted(keys, key=lambda k: (DTYPE_ORDER.get(k[0], 9), k[0], LAYOUT_ORDER.get(k[1], 9), k[1]))


def weights_of(table, dtype, layout):
    return sorted({w for d, l, w, _ in table if (d, l) == (dtype, layout)}, key=lambda w: (w[1], w[0]))


def tokens_of(table, dtype, layout):
    return sorted({t for d, l, _, t in table if (d, l) == (dtype, layout)})


def weight_label(w):
    return "{}x{}".format(*w)


def llm_chart(plt, save, out_dir, device, table, metric):
    """metric "vendor": own-best / vendor against T; "copy": % of the same-run copy."""
    from matplotlib.ticker import FuncFormatter
    keys = panels(table)
    dtypes = sorted({d for d, _ in keys}, key=lambda d: (DTYPE_ORDER.get(d, 9), d))
    layouts = sorted({l for _, l in keys}, key=lambda l: (LAYOUT_ORDER.get(l, 9), l))
    fig, axes = plt.subplots(len(dtypes), len(layouts), figsize=(4.6 * len(layouts), 3.3 * len(dtypes)),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    all_weights = sorted({w for _, _, w, _ in table}, key=lambda w: (w[1], w[0]))
    for row, dtype in enumerate(dtypes):
        for col, layout in enumerate(layouts):
            ax = axes[row][col]
            for wi, w in enumerate(all_weights):
                color = colors[wi % len(colors)]
                points = [(t,) + table[(dtype, layout, w, t)] for t in tokens_of(table, dtype, layout)
                          if (dtype, layout, w, t) in table]
                if metric == "vendor":
                    xy = [(t, ratio(b, v)) for t, b, v in points if ratio(b, v) is not None]
                    if xy:
                        ax.plot(*zip(*xy), "-", marker="o", markersize=3, color=color, label=weight_label(w))
                    continue
                own = [(t, b.pct_of_copy) for t, b, _ in points if b and b.pct_of_copy is not None]
                ref = [(t, v.pct_of_copy) for t, _, v in points if v and v.pct_of_copy is not None]
                if own:
                    ax.plot(*zip(*own), "-", marker="o", markersize=3, color=color, label=weight_label(w))
                if ref:
                    ax.plot(*zip(*ref), "--", marker=".", markersize=3, color=color, linewidth=0.9,
                            label=None if own else weight_label(w))
            if metric == "vendor":
                ax.axhline(1.0, color="k", linewidth=1)
                ax.set_ylabel("own best / vendor")
            else:
                ax.axhline(100.0, color="k", linewidth=1)
                ax.set_ylabel("% of copy (solid own, dashed vendor)")
                ax.set_ylim(bottom=0)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: "{:g}".format(v)))
            ax.set_xlabel("T (tokens, gemm m)")
            ax.set_title("{}: {} {}".format(device, dtype, layout), fontsize=8)
    fig.tight_layout()
    handles, labels = {}, []
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles:
                handles[label] = h
                labels.append(label)
    fig.legend([handles[k] for k in labels], ["N x K = " + k for k in labels], fontsize=7, loc="upper left",
               bbox_to_anchor=(1.0, 0.95))
    name = "{}-llm-{}.png".format(slug(device), "vs-vendor" if metric == "vendor" else "copy")
    return save(fig, out_dir, name)


def vendor_label(table, dtype, layout):
    """The vendor rung's display name in one (dtype, layout) panel, or "vendor"."""
    refs = {v.variant for (d, l, _, _), (_, v) in table.items() if (d, l) == (dtype, layout) and v}
    return vendor_name(sorted(refs)[0]) if len(refs) == 1 else "vendor"


def matrix(table, dtype, layout, metric):
    """(header, rows) of one panel: rows T, columns N x K; cells "pct rung" (metric
    "vendor": the fastest own rung as % of the vendor's speed) or "own / vendor" (metric
    "copy" or "read": both as % of the same-run copy or read stream; rows T without any
    such figure are left out: runs before the GPU read stream have none)."""
    weights = weights_of(table, dtype, layout)
    rows = []
    for t in tokens_of(table, dtype, layout):
        if metric != "vendor":
            field = "pct_of_" + metric
            figures = [getattr(e, field) for w in weights for e in table.get((dtype, layout, w, t), (None, None))
                       if e is not None]
            if all(f is None for f in figures):
                continue
        row = [str(t)]
        for w in weights:
            best, ref = table.get((dtype, layout, w, t), (None, None))
            if metric == "vendor":
                r = ratio(best, ref)
                row.append("—" if best is None else "{} {}".format(fmt_pct(None if r is None else 100 * r),
                                                                   best.variant))
            else:
                field = "pct_of_" + metric
                row.append("{} / {}".format(fmt_pct(getattr(best, field) if best else None),
                                            fmt_pct(getattr(ref, field) if ref else None)))
        rows.append(row)
    return ["T"] + ["N×K " + weight_label(w) for w in weights], rows


def llm_tables(table):
    lines = []
    for dtype, layout in panels(table):
        vendor = vendor_label(table, dtype, layout)
        metrics = [("vendor", "fastest own rung, % of " + vendor),
                   ("copy", "% of the same-run copy, own best / " + vendor)]
        if any(b is not None and b.pct_of_read is not None
               for (d, l, _, _), (b, _) in table.items() if (d, l) == (dtype, layout)):
            metrics.append(("read", "% of the same-run read stream, own best / " + vendor))
        for metric, title in metrics:
            header, rows = matrix(table, dtype, layout, metric)
            lines += ["#### {} {}: {}".format(dtype, layout, title), "", md_table(header, rows), ""]
    return lines


def square_table(entries, title="#### square suite: fastest own rung, % of the vendor"):
    by_case = group([e for e in entries if e.measured], lambda e: (e.dtype, e.layout, e.dims))
    columns = sorted({(d, l) for d, l, _ in by_case},
                     key=lambda k: (DTYPE_ORDER.get(k[0], 9), k[0], LAYOUT_ORDER.get(k[1], 9), k[1]))
    sizes = sorted({dims for _, _, dims in by_case})
    rows = []
    for dims in sizes:
        row = ["{}³".format(dims[0]) if dims[0] == dims[1] == dims[2] else "x".join(map(str, dims))]
        for d, l in columns:
            items = by_case.get((d, l, dims), [])
            best, ref = own_best(items), vendor_of(items)
            r = ratio(best, ref)
            row.append("—" if best is None else "{} {}".format(fmt_pct(None if r is None else 100 * r), best.variant))
        rows.append(row)
    header = ["size"] + ["{} {}".format(d, l) for d, l in columns]
    return [title, "", md_table(header, rows), ""]


def suite_sections(entries, plt, save, out_dir):
    """Report lines for the suites' entries (every device); plots with matplotlib's `plt`
    (None: tables only), written by save(fig, out_dir, name)."""
    lines = []
    # Chained cells (--chain, any suite or none) have a table of their own.
    suites = [e for e in entries if e.op == "gemm" and (e.suite in ("llm", "square") or e.chain > 1)]
    for device, every in sorted(group(suites, lambda e: e.device).items()):
        items = [e for e in every if e.chain == 1]
        llm = [e for e in items if e.suite == "llm"]
        square = [e for e in items if e.suite == "square"]
        chained = group([e for e in every if e.chain > 1], lambda e: e.chain)
        lines += ["## {}: workload suites".format(device), ""]
        if llm:
            table = cells(llm)
            lines += ["### llm suite (T × N × K; A = T×K activations, NT = B stored N×K)", "",
                      "Per cell the fastest own rung against the vendor rung of the same run, and the "
                      "effective bandwidth (bytes of A, B and C over the median time) as % of a "
                      "device-to-device copy of the same traffic timed in the same run.", ""]
            if plt is not None and table:
                for metric in ("vendor", "copy"):
                    name = llm_chart(plt, save, out_dir, device, table, metric)
                    lines += ["![{}]({})".format(name[:-4], name), ""]
            lines += llm_tables(table)
        if square:
            lines += square_table(square)
        for chain, links in sorted(chained.items()):
            lines += square_table(links, "#### calls back to back (--chain {}): fastest own rung, % of the "
                                         "vendor's chain".format(chain))
    return lines
