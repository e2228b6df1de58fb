"""Plots of a collectives report (report_kind "collectives", results/schema.md "Collectives
reports"), drawn by plot_report.py from the report's /summary:

  busbw_<collective>.png  bus bandwidth (GB/s) against the call's size (bytes, log2 axis), one line
                          per combination of type, redop, placement and counts (and ranks,
                          blocking, root, scheme or zipf_alpha where they vary): alltoallv's equal
                          and skewed counts share the axes, skewed dashed, so the skew's cost shows
                          as the gap between them. Several runs of one size (repetitions, merges):
                          their median. More than MAX_LINES lines: a panel per type.
  overhead.png            the Communicator's overhead over the bare MPI call, in %, against size:
                          a line per collective (alltoallv's skewed counts apart), the median over
                          its types, ops and placements with their min-max as a band; the issue's
                          5 % target as a dashed line. Only when some run has a bare equivalent.
"""
import numpy as np

LINE_FIELDS = ["type", "redop", "placement", "counts"]  # a line each, always told apart
# Told apart too where they vary within a collective (a merge of 2- and 4-rank reports, say).
OTHER_FIELDS = ["ranks", "blocking", "root", "scheme", "zipf_alpha"]
MAX_LINES = 12  # more lines than this in one axes are unreadable: a panel per type instead
OVERHEAD_TARGET = 5.0  # %: the bound on the Communicator's overhead
COLUMNS = {"collective", "size_bytes", "busbw_GBps"}  # what the busbw plots need of /summary


def size_label(size, _position=None):
    """Bytes as people write sizes on a log2 axis: 512B, 1K, 64K, 16M, 2G."""
    for unit, name in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if size >= unit:
            value = size / unit
            return f"{value:.0f}{name}" if value == int(value) else f"{value:.3g}{name}"
    return f"{size:.0f}B"


def size_axis(ax):
    from matplotlib.ticker import FuncFormatter, LogLocator
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    ax.set_xlabel("size (bytes per call, nccl-tests' size)")
    ax.grid(alpha=0.3, which="both")


def skewed(rows):
    """Per row: whether its counts are skewed (alltoallv's embedding traffic)."""
    return rows["counts"] == "skewed" if "counts" in rows else rows["collective"] != rows["collective"]


def line_fields(rows):
    """The fields that tell this collective's lines apart: the four of LINE_FIELDS, then the others
    that vary among its rows."""
    fields = [f for f in LINE_FIELDS if f in rows]
    return fields + [f for f in OTHER_FIELDS if f in rows and rows[f].nunique() > 1]


def line_label(key, fields, shown):
    """`float sum out_of_place equal` (the values of `shown`), `ranks=4` style for the others."""
    values = dict(zip(fields, key if isinstance(key, tuple) else (key,)))
    if values.get("counts") != "skewed":  # equal counts have no sharding scheme or key distribution
        shown = [f for f in shown if f not in ("scheme", "zipf_alpha")]
    parts = [str(values[f]) if f in LINE_FIELDS else f"{f}={values[f]}" for f in shown]
    return " ".join(parts) or "all runs"


def draw_lines(ax, rows, fields, shown):
    for key, line in rows.groupby(fields, sort=True, dropna=False):
        curve = line.groupby("size_bytes")["busbw_GBps"].median()
        dashed = dict(zip(fields, key if isinstance(key, tuple) else (key,))).get("counts") == "skewed"
        ax.plot(curve.index, curve.to_numpy(), marker="o", markersize=3, ls="--" if dashed else "-",
                label=line_label(key, fields, shown))
    size_axis(ax)
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="x-small", bbox_to_anchor=(1.01, 1), loc="upper left")


def busbw(plt, summary, outdir, save, note):
    for collective, rows in summary.groupby("collective", sort=False):
        fields = line_fields(rows)
        # The lines' labels name what varies; with one line, everything (the title has no room).
        shown = [f for f in fields if rows[f].nunique() > 1] or fields
        lines = rows.groupby(fields, dropna=False).ngroups
        by_type = lines > MAX_LINES and "type" in rows and rows["type"].nunique() > 1
        panels = list(rows.groupby("type", sort=False)) if by_type else [(None, rows)]
        cols = 2 if len(panels) > 1 else 1
        nrows = (len(panels) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(8.5 * cols, 4.2 * nrows), squeeze=False)
        for ax, (dtype, panel) in zip(axes.flat, panels):
            draw_lines(ax, panel, fields, [f for f in shown if f != "type"] if by_type else shown)
            if dtype is not None:
                ax.set_title(f"type {dtype}", fontsize="medium")
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        ranks = sorted(rows["ranks"].unique()) if "ranks" in rows else []
        on = f" on {', '.join(str(r) for r in ranks)} ranks" if ranks else ""
        fig.suptitle(f"{collective}: bus bandwidth against size{on}\n"
                     "busbw = size / time x the collective's bus factor (nccl-tests); median over runs of a size"
                     + ("; dashed: skewed counts" if skewed(rows).any() else ""),
                     fontsize="medium")
        fig.text(0.01, -0.02, note, fontsize="small", color="0.3")
        fig.tight_layout()
        save(fig, outdir, f"busbw_{collective}.png")


def overhead(plt, summary, outdir, save, note):
    if "overhead" not in summary:
        return
    rows = summary[np.isfinite(summary["overhead"].astype(float))]
    if rows.empty:
        return
    name = rows["collective"].where(~skewed(rows), rows["collective"] + " (skewed)")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for line, runs in rows.assign(line=name).groupby("line", sort=False):
        percent = runs.groupby("size_bytes")["overhead"].agg(["median", "min", "max"]) * 100
        drawn = ax.plot(percent.index, percent["median"], marker="o", markersize=3, label=line)
        if (percent["max"] > percent["min"]).any():
            ax.fill_between(percent.index, percent["min"], percent["max"], color=drawn[0].get_color(), alpha=0.15)
    ax.axhline(OVERHEAD_TARGET, color="k", ls="--", alpha=0.5, label=f"{OVERHEAD_TARGET:g} % target")
    ax.axhline(0, color="k", lw=0.8)
    size_axis(ax)
    ax.set_ylabel("overhead (%): time / bare MPI time - 1")
    ax.set_title("The Communicator's overhead over the bare MPI call\n"
                 "median over the collective's types, ops and placements; band: their min-max",
                 fontsize="medium")
    ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.text(0.01, -0.02, note, fontsize="small", color="0.3")
    save(fig, outdir, "overhead.png")


def plot(plt, summary, outdir, save, note):
    """Every collectives plot the summary can give; `save(fig, outdir, name)` writes each."""
    if not COLUMNS <= set(summary.columns):
        return
    busbw(plt, summary, outdir, save, note)
    overhead(plt, summary, outdir, save, note)
