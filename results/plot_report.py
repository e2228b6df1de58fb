#!/usr/bin/python3
"""Plots of an embscale report (results/schema.md), for people rather than parsers.

    plot_report.py REPORT.h5 OUTDIR        (or: embscale report REPORT.h5 --plot OUTDIR)

Each PNG is written only when the report holds what it needs, and named on stdout:

  phase_breakdown.png    one stacked bar per point: the phases of each iteration's slowest rank
                         (the largest sum of phases; in a parameter-server run among the
                         trainers), median per phase over the iterations of all repetitions, so
                         that the stack comes to the step time; the median step time as a tick
                         with its spread (min-max of the repetitions' medians, or 25-75 % of one
                         run's iterations). Several schemes: the union of their phases; a phase
                         name the schemes give different meanings lists each with its schemes.
                         Always, when a run has timings.
  throughput_vs_<f>.png  samples/s against each swept numeric field f (the report's sweep_axes,
                         else every parameter that varies; dots in f become '_'), one line per
                         combination of the other swept fields: median over repetitions with
                         min-max bars, or with one run per point the 25-75 % band of per-iteration
                         throughput (batchsize / step time). Log x when the values span > 10x;
                         lines are shifted a little apart in x so that their bars stay readable.
                         Only when some line has two or more values of f; a field that changes
                         with an earlier one (ranks and batchsize in a weak-scaling list) is
                         drawn once, against the earlier one.
  scaling_strong.png     when `ranks` varies at one global batch (everything else equal):
                         speed-up T(r0)/T(r) and efficiency speed-up/(r/r0) against ranks.
  scaling_weak.png       when `ranks` varies at one batch per rank: scaled speed-up
                         throughput(r)/throughput(r0) and efficiency T(r0)/T(r) against ranks.
                         (T: median step time, r0: the smallest rank count of the study.)
  imbalance.png          for up to four multi-rank points (most ranks, then worst load_imbalance
                         first), a row each: keys each rank served as owner (counters/lookups,
                         summed over iterations) and each rank's median time per phase, the
                         exchange phases hatched; max/mean of the keys, of the total time, and
                         of the time without the exchanges (a rank waiting for a slower one
                         waits in them, which evens out the totals).
  loss.png               series/loss per iteration, a small panel per point (first repetition).
  step_time.png          series/step_time per iteration (first repetition): a line per point, or
                         with more than six points a panel each on one y scale.
  miss_ratio_<f>.png     a sweep over a table's capacity (f ends in max_capacity or
                         global_hbm_for_values) with an eviction section: the hit rate of the table
                         and of every oracle against f, mean over repetitions (miss-ratio curves).
  eviction_<run>.png     every table under /runs/<run>/eviction/ (results/schema.md "Tables")
                         with rows and two or more columns: columns 1.. against column 0, named
                         by the `columns` attribute; 1-D datasets (no tables, which a reader of
                         the schema refuses) are drawn against their index; the rest is skipped.

A collectives report (root attribute report_kind "collectives") gets none of these but its own
(results/plot_collectives.py): busbw_<collective>.png and overhead.png.

Runs with the same parameters (all /summary columns but run_id, point, repetition and the figures)
are repetitions of one point. Without /summary (the schema allows it) the runs' parameter
attributes and series/step_time stand in for it. With `samples = "capped"` only the raw
iterations are used.
Exit codes: 0 done, 2 bad input (missing file, not an embscale report, another schema version, a
report_kind other than run and collectives), with a message naming the file.
"""
import argparse
import functools
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import EngFormatter, MaxNLocator  # noqa: E402

import plot_collectives  # noqa: E402  (beside this script: Python puts its directory on sys.path)

SCHEMA_VERSION = 1
KINDS = ("run", "collectives")  # report_kind values this script draws (absent: "run")
IDENTITY = {"run_id", "point", "repetition"}
FIGURES = {"step_time_median_s", "step_time_p95_s", "throughput_samples_per_s", "throughput_keys_per_s",
           "bytes_sent_per_step", "load_imbalance", "bytes_imbalance", "unique_key_ratio", "final_loss"}
# The eviction study's /summary columns (results/schema.md), each optionally "<layer>."-prefixed.
EVICTION_FIGURE = re.compile(r"(^|\.)(hit_rate(_[a-z_]+)?|gap_to_[a-z_]+|retention_recall|hot_key_recall)$")
STRUCTURE = {"phases", "phase_meanings", "samples", "raw_iterations", "summary_stride"}  # run attributes that are no parameters
MAX_LINES = 12  # more curves (or panels) than this are unreadable: the first ones are drawn
COLORS = plt.get_cmap("tab20").colors  # 20 distinct colours: enough for the phases of two layers


class BadInput(Exception):
    pass


def text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def fmt(value):
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


def grouper(columns):
    """A groupby key: one column by name (pandas warns about one-element lists), else the list."""
    return columns[0] if len(columns) == 1 else columns


def short_name(field):
    """The last component of a dotted config path: the name people use for it."""
    return field.split(".")[-1]


def describe(row, fields, sep=", "):
    """`name=value` for each field, once per name (a sweep's config path repeats a /summary column)."""
    parts = []
    for field in fields:
        part = f"{short_name(field)}={fmt(row[field])}"
        if part not in parts:
            parts.append(part)
    return sep.join(parts)


class Report:
    """A report's /summary as a DataFrame (text decoded) plus access to its runs."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise BadInput(f"{path}: no such report file")
        try:
            self.file = h5py.File(path, "r")
        except OSError as e:
            raise BadInput(f"{path}: not an HDF5 file ({e})") from e
        version = self.file.attrs.get("schema_version")
        if version is None:
            raise BadInput(f"{path}: not an embscale report (no root attribute schema_version)")
        if int(version) != SCHEMA_VERSION:
            raise BadInput(f"{path}: report schema version {int(version)}, this script reads version {SCHEMA_VERSION}")
        self.kind = text(self.file.attrs.get("report_kind", "run"))
        if self.kind not in KINDS:
            raise BadInput(f"{path}: a report of kind {self.kind!r} (root attribute report_kind), "
                           f"this script draws {' and '.join(KINDS)} reports")
        if not isinstance(self.file.get("runs"), h5py.Group):
            raise BadInput(f"{path}: the report has no /runs (nothing to plot)")
        frame = pd.DataFrame(self.file["summary"][()]) if "summary" in self.file else self.summary_from_runs()
        frame = frame.apply(lambda c: c.map(text) if c.dtype == object else c)
        self.summary = frame[frame["run_id"].isin(list(self.file["runs"]))] if "run_id" in frame else frame.iloc[:0]
        self.parameters = [c for c in self.summary.columns
                           if c not in IDENTITY | FIGURES and not EVICTION_FIGURE.search(c)]
        self.varying = [c for c in self.parameters if self.summary[c].nunique() > 1]
        axes = text(self.file.attrs.get("sweep_axes", b""))
        swept = [a for a in axes.split(",") if a in self.summary.columns] if axes else self.varying
        self.axes = [a for a in swept if self.summary[a].nunique() > 1]  # one value is no axis

    def summary_from_runs(self):
        """A stand-in for an absent /summary (the schema lets a producer omit it): each run's parameter
        attributes, and its median step time and throughput from series/step_time."""
        rows = []
        for run_id, run in self.file["runs"].items():
            row = {"run_id": run_id}
            row.update({k: v for k, v in run.attrs.items() if k not in STRUCTURE and np.ndim(v) == 0})
            steps = run.get("series/step_time")
            if isinstance(steps, h5py.Dataset) and steps.size:
                row["step_time_median_s"] = float(np.median(steps[()]))
                if "batchsize" in row:
                    row["throughput_samples_per_s"] = row["batchsize"] / row["step_time_median_s"]
            rows.append(row)
        return pd.DataFrame(rows)

    def run(self, run_id):
        return self.file["runs"][run_id]

    def dataset(self, run_id, path):
        """The dataset at runs/<run_id>/<path> as an array, or None when absent or empty."""
        node = self.run(run_id).get(path)
        if not isinstance(node, h5py.Dataset) or node.size == 0:
            return None
        return node[()]

    def phases(self, run_id):
        names = [p for p in text(self.run(run_id).attrs.get("phases", b"")).split(",") if p]
        return [p for p in names if self.dataset(run_id, f"timings/{p}") is not None]

    def run_phase_meanings(self, run_id):
        """{phase: what it covers} of one run, from its own phase_meanings attribute (schemes share
        phase names with different meanings; reports of embscale before it have none)."""
        meanings = {}
        for line in text(self.run(run_id).attrs.get("phase_meanings", b"")).splitlines():
            name, sep, meaning = line.partition(": ")
            if sep:
                meanings[name] = meaning
        return meanings

    def scheme_of(self, run_id):
        rows = self.summary[self.summary["run_id"] == run_id]
        return str(rows["scheme"].iloc[0]) if "scheme" in rows and len(rows) else run_id

    def phase_label(self, phase, run_ids):
        """A legend entry for `phase` as the runs `run_ids` recorded it: its name and what it covers,
        each distinct meaning followed by the schemes it belongs to when the runs disagree."""
        meanings = {}  # meaning -> schemes, in first-seen order
        for run_id in run_ids:
            meaning = self.run_phase_meanings(run_id).get(phase)
            if meaning is not None and phase in self.phases(run_id):
                schemes = meanings.setdefault(meaning, [])
                if self.scheme_of(run_id) not in schemes:
                    schemes.append(self.scheme_of(run_id))
        if not meanings:
            return phase
        if len(meanings) == 1:
            return f"{phase}: {next(iter(meanings))}"
        return phase + ": " + "; ".join(f"{m} ({', '.join(s)})" for m, s in meanings.items())

    def exchange_phases(self, run_id):
        """The run's phases that run a collective (they have per-phase byte counters): a rank's
        waiting for slower ranks shows up in them."""
        return [p for p in self.phases(run_id) if self.dataset(run_id, f"counters/{p}.bytes_sent") is not None]

    def slowest_rank_ms(self, run_id):
        """{phase: ms per iteration} of each iteration's slowest rank (the largest sum of phases; in
        a parameter-server run among the trainers, as the step time is), so that the phases stack
        up to the step time."""
        phases = self.phases(run_id)
        if not phases:
            return {}
        times = np.stack([self.dataset(run_id, f"timings/{p}") for p in phases])  # [phase, iteration, rank]
        trainers = self.run(run_id).attrs.get("trainers")
        if trainers is not None and 0 < int(trainers) <= times.shape[2]:
            times = times[:, :, : int(trainers)]
        slowest = times.sum(axis=0).argmax(axis=1)  # per iteration
        chosen = times[:, np.arange(times.shape[1]), slowest]  # [phase, iteration]
        return {p: chosen[i] * 1e3 for i, p in enumerate(phases)}

    @functools.cached_property
    def phase_colors(self):
        """One colour per phase name across the report, so that every plot and scheme agrees."""
        names = []
        for run_id in self.summary["run_id"]:
            names = merge_order(names, self.phases(run_id))
        return {p: COLORS[i % len(COLORS)] for i, p in enumerate(names)}

    def phase_ms(self, run_id, phase):
        """Per iteration the slowest rank's time in the phase (ms); empty when the run lacks it."""
        times = self.dataset(run_id, f"timings/{phase}")
        return np.empty(0) if times is None else times.max(axis=1) * 1e3

    def points(self):
        """Groups of runs with identical parameters (the repetitions of a point), in first-seen order."""
        if not self.parameters:
            return [(row["run_id"], self.summary.iloc[[i]]) for i, (_, row) in enumerate(self.summary.iterrows())]
        return list(self.summary.groupby(grouper(self.parameters), sort=False, dropna=False))

    def first_repetitions(self):
        return self.summary.drop_duplicates(subset=self.parameters or None, keep="first")

    @functools.cached_property
    def label_fields(self):
        """The fields that tell the points apart: the swept axes, the scheme when it varies, else all that vary."""
        fields = self.axes + [c for c in ("scheme",) if c in self.varying and c not in self.axes]
        points = self.first_repetitions()
        if len(points.drop_duplicates(subset=fields or None)) < len(points):
            fields = self.varying
        return fields

    def label(self, row, sep=", "):
        return describe(row, self.label_fields, sep) or str(row["run_id"])

    def setting_note(self):
        """Where the runs ran, and whether ranks outnumbered cores (then the curves measure sharing)."""
        runs = self.summary.sort_values("ranks", ascending=False) if "ranks" in self.summary else self.summary
        source = self.file.attrs
        if len(runs) and "metadata" in self.run(runs["run_id"].iloc[0]):
            source = self.run(runs["run_id"].iloc[0])["metadata"].attrs  # the largest run's own setting
        if "simulation" in source:  # embscale simulate: counted in one process, times predicted
            return text(source["simulation"])
        hosts, machine = text(source.get("hosts", b"?")), text(source.get("machine", b"?"))
        note = f"hosts: {hosts}; rank 0's machine: {machine}"
        per_host = [int(n) for n in re.findall(r"\((\d+) ranks?\)", hosts)]
        cores = re.search(r"(\d+) logical cores", machine)
        if per_host and cores and max(per_host) > int(cores.group(1)):
            note += f"  (oversubscribed: {max(per_host)} ranks on {cores.group(1)} cores)"
        return note


WRITTEN = []  # the paths save() wrote, for main's "nothing to plot" note


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(path)
    WRITTEN.append(path)


def integer_iterations(ax):
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration (after warm-up)")


# ---- phase breakdown ---------------------------------------------------------------------------

def point_phases_ms(report, runs):
    """A point's {phase: median ms of the slowest rank}, pooling the iterations of its repetitions,
    and its step time as (median, low, high): min-max of the repetitions' medians, or for one run
    the 25-75 % of its iterations."""
    run_ids = list(runs["run_id"])
    laps = [report.slowest_rank_ms(r) for r in run_ids]
    per_phase = {p: float(np.median(np.concatenate([lap[p] for lap in laps if p in lap]))) for p in laps[0]}
    steps = [s * 1e3 for s in (report.dataset(r, "series/step_time") for r in run_ids) if s is not None]
    if not steps:
        return per_phase, (np.nan, np.nan, np.nan)
    median = float(np.median(np.concatenate(steps)))
    if len(steps) > 1:
        medians = [float(np.median(s)) for s in steps]
        return per_phase, (median, min(medians), max(medians))
    return per_phase, (median, float(np.percentile(steps[0], 25)), float(np.percentile(steps[0], 75)))


def merge_order(union, names):
    """The union of two phase orders, each new name placed right after its predecessor in `names`."""
    union = list(union)
    for i, name in enumerate(names):
        if name not in union:
            union.insert(union.index(names[i - 1]) + 1 if i else 0, name)
    return union


def phase_breakdown(report, outdir):
    labels, stacks, steps, phases, run_ids = [], [], [], [], []
    repeated = single = False
    for _, runs in report.points():
        per_phase, step = point_phases_ms(report, runs)
        if not per_phase:
            continue
        repeated, single = repeated or len(runs) > 1, single or len(runs) == 1
        phases = merge_order(phases, list(per_phase))
        stacks.append(per_phase)
        steps.append(step)
        run_ids += list(runs["run_id"])
        labels.append(report.label(runs.iloc[0], sep="\n"))
    if not stacks:
        return
    longest = max(len(line) for label in labels for line in label.split("\n"))
    per_bar = max(0.6, 0.075 * longest + 0.3)  # inches: a bar under its widest label line
    crowded = per_bar * len(labels) > 20  # then one rotated line per bar
    fig, ax = plt.subplots(figsize=(3 + (min(20.0, 0.3 * len(labels)) if crowded else per_bar * len(labels)), 5.2))
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    bars = []
    for phase in phases:
        ms = np.array([stack.get(phase, 0.0) for stack in stacks])
        bars.append(ax.bar(x, ms, bottom=bottom, width=0.7, label=phase, color=report.phase_colors.get(phase, "0.5")))
        bottom += ms
    median, low, high = (np.array(v) for v in zip(*steps))
    ax.hlines(median, x - 0.35, x + 0.35, color="black", lw=2.5, zorder=3)  # as wide as the bar
    ax.errorbar(x, median, yerr=[median - low, high - median], fmt="none", ecolor="black", capsize=5, zorder=3)
    ax.set_xticks(x)
    ax.set_xticklabels([label.replace("\n", ", ") for label in labels] if crowded else labels,
                       rotation=90 if crowded else 0, fontsize="small")
    # explicit: the 0-high segments of a phase a point lacks would pin the autoscaled top to its bar
    ax.set_ylim(0, 1.06 * np.nanmax(np.concatenate([bottom, high])))
    ax.set_ylabel("time per step (ms)")
    schemes = report.summary["scheme"].unique() if "scheme" in report.summary else []
    scheme = f" ({schemes[0]})" if len(schemes) == 1 else ""
    what = "Phase breakdown per point" if len(labels) > 1 else f"Phase breakdown of a step, {labels[0]}"
    ax.set_title(f"{what}{scheme}\n"
                 "stacked: the phases of each iteration's slowest rank, median over iterations (and repetitions)\n"
                 f"step time: median, {spread_note(repeated, single)}",
                 fontsize="medium")
    step_key = Line2D([], [], color="black", lw=2.5)
    ax.legend(bars[::-1] + [step_key], [report.phase_label(p, run_ids) for p in phases[::-1]] + ["step time (median)"],
              title="phase (top to bottom)",
              bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    save(fig, outdir, "phase_breakdown.png")


# ---- throughput against each swept field -------------------------------------------------------

def throughput_spread(report, runs):
    """Median throughput and its (low, high) spread over repetitions, or over iterations for one run."""
    values = runs["throughput_samples_per_s"].to_numpy()
    if len(values) > 1:
        return np.median(values), values.min(), values.max()
    steps = report.dataset(runs["run_id"].iloc[0], "series/step_time")
    if steps is None or "batchsize" not in runs:
        return values[0], values[0], values[0]
    per_iteration = runs["batchsize"].iloc[0] / steps
    return values[0], min(values[0], np.percentile(per_iteration, 25)), max(values[0], np.percentile(per_iteration, 75))


def co_varying(summary, axis, others):
    """The other axes whose value follows from `axis` (a list sweep of ranks with batchsize, say)."""
    return [o for o in others if summary.groupby(axis)[o].nunique().max() == 1
            and summary.groupby(o)[axis].nunique().max() == 1]


def spread_note(repeated, single):
    if repeated and single:
        return "bars: min-max over repetitions, or 25-75 % of iterations for single runs"
    return "bars: min-max over repetitions" if repeated else "bars: 25-75 % of iterations (one run per point)"


def dodge(xs, step, values, logx):
    """Shifts a line's x by `step` small steps, so that the bars of lines sharing an x stay apart."""
    if logx:
        return xs * (values.max() / values.min()) ** (0.008 * step)
    span = values.max() - values.min()
    return xs + 0.008 * step * (span if span else 1)


def throughput_vs(report, outdir, axis):
    s = report.summary
    others = [a for a in report.axes if a != axis]
    tied = co_varying(s, axis, others)
    others = [a for a in others if a not in tied]
    groups = list(s.groupby(grouper(others), sort=False)) if others else [((), s)]
    if all(rows[axis].nunique() < 2 for _, rows in groups):
        return  # no line to draw: every combination of the other fields has one value of this one
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    repeated = single = False
    values = np.sort(s[axis].unique())
    logx = values.min() > 0 and values.max() / values.min() > 10
    shown = groups[:MAX_LINES]
    for line, (_, rows) in enumerate(shown):
        xs, mid, low, high = [], [], [], []
        for x, runs in rows.groupby(axis, sort=True):
            m, lo, hi = throughput_spread(report, runs)
            repeated, single = repeated or len(runs) > 1, single or len(runs) == 1
            xs.append(x), mid.append(m), low.append(lo), high.append(hi)
        mid, low, high = map(np.array, (mid, low, high))
        xs = dodge(np.array(xs, dtype=float), line - (len(shown) - 1) / 2, values, logx)
        ax.errorbar(xs, mid, yerr=[mid - low, high - mid], marker="o", capsize=4,
                    label=describe(rows.iloc[0], others) if others else None)
    if logx:
        ax.set_xscale("log")
    if len(values) <= 12:
        ax.set_xticks(values)
        ax.set_xticklabels([fmt(v) for v in values])
        ax.minorticks_off()
    ax.set_xlabel(axis + (f"  ({', '.join(map(short_name, tied))} changing with it)" if tied else ""))
    ax.set_ylabel("throughput (samples/s)")
    ax.yaxis.set_major_formatter(EngFormatter(sep=""))
    title = f"Throughput against {short_name(axis)}\n{spread_note(repeated, single)}"
    if len(groups) > MAX_LINES:
        title += f"; first {MAX_LINES} of {len(groups)} lines"
    ax.set_title(title, fontsize="medium")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if others:
        ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    save(fig, outdir, "throughput_vs_" + re.sub(r"[^A-Za-z0-9_]+", "_", axis) + ".png")


def throughput_vs_axes(report, outdir):
    if "throughput_samples_per_s" not in report.summary:
        return
    numeric = [a for a in report.axes if pd.api.types.is_numeric_dtype(report.summary[a])]
    for i, axis in enumerate(numeric):
        if not co_varying(report.summary, axis, numeric[:i]):  # else drawn already, against that axis
            throughput_vs(report, outdir, axis)


# ---- strong and weak scaling -------------------------------------------------------------------

def scaling_studies(report):
    """{"strong": [(label, step times per ranks)], "weak": [...]}: runs equal but for ranks and the batch."""
    s = report.summary
    s = s.assign(per_rank=s["batchsize"] / s["ranks"])
    fixed = [c for c in report.parameters if c != "ranks" and not c.endswith("batchsize")]
    shown = [c for c in report.label_fields if c in fixed]  # what tells the studies apart
    studies = {"strong": [], "weak": []}
    for _, rows in (s.groupby(grouper(fixed), sort=False, dropna=False) if fixed else [((), s)]):
        for kind, by in (("strong", "batchsize"), ("weak", "per_rank")):
            for value, study in rows.groupby(by, sort=False):
                if study["ranks"].nunique() < 2:
                    continue
                batch = f"global batch {int(value)}" if kind == "strong" else f"{value:g} samples per rank"
                label = ", ".join(filter(None, [describe(study.iloc[0], shown), batch]))
                studies[kind].append((label, study.groupby("ranks")["step_time_median_s"].apply(np.array)))
    return studies


def scaling_curves(kind, times):
    """Ranks, then (speed-up, efficiency) each as (median, low, high) over the repetitions."""
    r = times.index.to_numpy(dtype=float)
    t0 = np.median(times.iloc[0])
    med, fast, slow = (np.array([f(t) for t in times]) for f in (np.median, np.min, np.max))
    grow = r / r[0]
    if kind == "strong":
        speedup = [t0 / med, t0 / slow, t0 / fast]
        efficiency = [x / grow for x in speedup]
    else:  # the batch grows with the ranks: throughput ratio = (r/r0) T(r0)/T(r)
        efficiency = [t0 / med, t0 / slow, t0 / fast]
        speedup = [x * grow for x in efficiency]
    return r, speedup, efficiency


def scaling(report, outdir):
    s = report.summary
    if not {"ranks", "batchsize", "step_time_median_s"} <= set(s.columns) or s["ranks"].nunique() < 2:
        return
    for kind, found in scaling_studies(report).items():
        if not found:
            continue
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
        repeated = any(len(t) > 1 for _, times in found for t in times)
        for label, times in found[:MAX_LINES]:
            r, speedup, efficiency = scaling_curves(kind, times)
            for ax, (mid, low, high) in ((left, speedup), (right, efficiency)):
                ax.errorbar(r, mid, yerr=[mid - low, high - mid], marker="o", capsize=4, label=label)
        ranks = np.array(sorted({x for _, times in found for x in times.index}), dtype=float)
        left.plot(ranks, ranks / ranks[0], "k--", alpha=0.5, label="ideal")
        right.axhline(1.0, color="k", ls="--", alpha=0.5, label="ideal")
        for ax in (left, right):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks)
            ax.set_xticklabels([str(int(x)) for x in ranks])
            ax.minorticks_off()
            ax.set_xlabel("ranks (r)")
            ax.grid(alpha=0.3)
        right.legend(fontsize="small", loc="lower left")
        left.set_ylim(bottom=0)
        right.set_ylim(0, max(1.2, right.get_ylim()[1]))
        if kind == "strong":
            left.set_ylabel("speed-up  T(r0) / T(r)")
            right.set_ylabel("efficiency  speed-up / (r / r0)")
            what = "Strong scaling: the same global batch on more ranks"
        else:
            left.set_ylabel("scaled speed-up  throughput(r) / throughput(r0)")
            right.set_ylabel("efficiency  T(r0) / T(r)")
            what = "Weak scaling: the same batch per rank on more ranks"
        bars = "; bars: min-max over repetitions" if repeated else ""
        fig.suptitle(f"{what}\nT: median step time, r0: the fewest ranks{bars}", fontsize="medium")
        fig.text(0.01, -0.02, report.setting_note(), fontsize="small", color="0.3")
        save(fig, outdir, f"scaling_{kind}.png")


# ---- per-rank imbalance ------------------------------------------------------------------------

def imbalance_runs(report, most=4):
    """The first repetition of up to `most` points with several ranks: most ranks, then worst balance first."""
    s = report.first_repetitions()
    order = [c for c in ("ranks", "load_imbalance") if c in s]
    s = s.sort_values(order, ascending=False, kind="stable") if order else s
    chosen = []
    for run_id in s["run_id"]:
        lookups = report.dataset(run_id, "counters/lookups")
        if lookups is not None and lookups.shape[1] > 1:
            chosen.append(s[s["run_id"] == run_id].iloc[0])
    return chosen[:most], len(chosen)


def imbalance(report, outdir):
    chosen, total = imbalance_runs(report)
    if not chosen:
        return
    # A subfigure per run: its name as the row's title, above two panels with short titles of
    # their own (two long titles side by side overlapped).
    fig = plt.figure(figsize=(13, 3.9 * len(chosen)), layout="constrained")
    legend_shown = None
    for sub, row in zip(np.atleast_1d(fig.subfigures(len(chosen), 1)), chosen):
        left, right = sub.subplots(1, 2)
        run_id = row["run_id"]
        sub.suptitle(f"{run_id} ({report.label(row)})" if report.label(row) != run_id else run_id,
                     fontsize="medium", fontweight="bold")
        lookups = report.dataset(run_id, "counters/lookups").sum(axis=0).astype(float)
        ranks = np.arange(len(lookups))
        left.bar(ranks, lookups, color="tab:blue", width=0.7)
        left.axhline(lookups.mean(), color="k", ls="--", alpha=0.6, label="mean")
        left.set_ylabel("keys served as owner")
        left.yaxis.set_major_formatter(EngFormatter(sep=""))
        left.set_title(f"keys served as owner, all iterations\nmax/mean {lookups.max() / lookups.mean():.3f}",
                       fontsize="small")
        left.legend(fontsize="small", loc="lower right")
        bottom, outside = np.zeros(len(ranks)), np.zeros(len(ranks))
        exchanges = report.exchange_phases(run_id)
        for phase in report.phases(run_id):
            ms = np.median(report.dataset(run_id, f"timings/{phase}"), axis=0) * 1e3
            right.bar(ranks, ms, bottom=bottom, width=0.7, label=report.phase_label(phase, [run_id]),
                      color=report.phase_colors.get(phase, "0.5"), hatch="//" if phase in exchanges else None,
                      edgecolor="white" if phase in exchanges else None, linewidth=0)
            bottom += ms
            if phase not in exchanges:
                outside += ms
        right.set_ylabel("median time per step (ms)")
        # A rank that waits for a slower one waits inside the exchanges (hatched), which evens out
        # the totals: the ratio without them shows the imbalance of the work itself.
        balance = f"max/mean of the total {bottom.max() / bottom.mean():.3f}"
        if exchanges and outside.mean() > 0:
            balance += f", without the exchanges (hatched, where ranks wait) {outside.max() / outside.mean():.3f}"
        right.set_title(f"each rank's median time per phase\n{balance}", fontsize="small")
        handles, names = right.get_legend_handles_labels()
        if names != legend_shown:  # once per set of phases: the rows below share the colours
            legend_shown = names
            right.legend(handles[::-1], names[::-1], fontsize="x-small", bbox_to_anchor=(1.01, 1), loc="upper left",
                         title="phase (top to bottom)", title_fontsize="x-small")
        for ax in (left, right):
            ax.set_xticks(ranks if len(ranks) <= 32 else ranks[:: len(ranks) // 16])
            ax.set_xlabel("rank")
    if total > len(chosen):
        fig.suptitle(f"Per-rank balance of {len(chosen)} of {total} points (most ranks, then worst balance)")
    save(fig, outdir, "imbalance.png")


# ---- per-iteration series ----------------------------------------------------------------------

def series_runs(report, name):
    rows = report.first_repetitions()
    return [row for _, row in rows.iterrows() if report.dataset(row["run_id"], f"series/{name}") is not None]


def small_multiples(report, rows, series, scale, ylabel, title, sharey):
    """A panel per point (first MAX_LINES), four to a row: one trace each, titled by the point."""
    shown = rows[:MAX_LINES]
    cols = min(4, len(shown))
    nrows = (len(shown) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols + 1, 2.8 * nrows + 0.6), squeeze=False,
                             sharex=True, sharey=sharey)
    for ax, row in zip(axes.flat, shown):
        values = report.dataset(row["run_id"], f"series/{series}") * scale
        ax.plot(np.arange(1, len(values) + 1), values, color="tab:purple")
        ax.set_title(report.label(row), fontsize="small")
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelbottom=True, labelleft=True)
    for i, ax in enumerate(axes.flat):
        if i >= len(shown):
            ax.set_visible(False)
        elif i + cols >= len(shown):  # nothing drawn below it
            ax.set_xlabel("iteration (after warm-up)")
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    if sharey:
        axes[0, 0].set_ylim(bottom=0)
    more = f" (first {MAX_LINES} of {len(rows)} points)" if len(rows) > MAX_LINES else ""
    fig.suptitle(title + more)
    fig.tight_layout()
    return fig


def loss_plot(report, outdir):
    """A panel per point: losses differ in scale (widths, batches), so each gets its own y axis."""
    rows = series_runs(report, "loss")
    if rows:
        fig = small_multiples(report, rows, "loss", 1.0, "loss (objective)", "Loss per iteration", sharey=False)
        save(fig, outdir, "loss.png")


def step_time_plot(report, outdir):
    """Up to six points as lines in one axes; more as panels on one y scale (lines would tangle)."""
    rows = series_runs(report, "step_time")
    if not rows:
        return
    ylabel, title = "step time (ms, slowest rank)", "Step time per iteration"
    if len(rows) > 6:
        save(small_multiples(report, rows, "step_time", 1e3, ylabel, title, sharey=True), outdir, "step_time.png")
        return
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    for row in rows:
        ms = report.dataset(row["run_id"], "series/step_time") * 1e3
        ax.plot(np.arange(1, len(ms) + 1), ms, marker="." if len(ms) <= 50 else None, label=report.label(row))
    integer_iterations(ax)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(title + (f" ({report.label(rows[0])})" if len(rows) == 1 else ""))
    ax.grid(alpha=0.3)
    if len(rows) > 1:  # outside: the curves fill the axes
        ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    save(fig, outdir, "step_time.png")


# ---- eviction tables (results/schema.md "Tables") ----------------------------------------------

def eviction_panel(ax, name, data, columns):
    """1-D: against the index; 2-D: columns 1.. against column 0 (names from `columns` if given)."""
    if data.ndim == 1:
        ax.plot(data, marker="." if len(data) <= 50 else None)
        ax.set_xlabel("index")
        ax.set_ylabel(name)
        return True
    if data.ndim != 2 or data.shape[1] < 2:
        return False
    names = columns if len(columns) == data.shape[1] else [f"column {c}" for c in range(data.shape[1])]
    for c in range(1, data.shape[1]):
        ax.plot(data[:, 0], data[:, c], marker="o" if len(data) <= 50 else None, label=names[c])
    x = data[:, 0]
    if x.min() > 0 and x.max() / x.min() > 100:
        ax.set_xscale("log")
    ax.set_xlabel(names[0])
    ax.set_ylabel(name)
    ax.legend(fontsize="small")
    return True


def eviction(report, outdir):
    for run_id in report.summary["run_id"]:
        group = report.run(run_id).get("eviction")
        if not isinstance(group, h5py.Group):
            continue
        tables = [(n, group[n]) for n in group if isinstance(group[n], h5py.Dataset) and group[n].size]
        tables = [(n, d[()], text(d.attrs.get("columns", b"")).split(",")) for n, d in tables if d.ndim in (1, 2)]
        if not tables:
            continue
        fig, axes = plt.subplots(len(tables), 1, figsize=(7, 3.2 * len(tables)), squeeze=False)
        for ax, (name, data, columns) in zip(axes[:, 0], tables):
            if eviction_panel(ax, name, data, columns):
                ax.set_title(f"{run_id}: eviction/{name}", fontsize="medium")
                ax.grid(alpha=0.3)
            else:
                ax.set_visible(False)
        fig.tight_layout()
        save(fig, outdir, f"eviction_{run_id}.png")


# ---- miss-ratio curves (a sweep over a table's capacity with an eviction section) ---------------

def miss_ratio_curves(report, outdir):
    """Hit rate against each swept capacity field, a line for the table and one per oracle (mean over
    repetitions); one panel per combination of the other swept fields."""
    s = report.summary
    prefixes = sorted({m.group(1) or "" for m in (re.match(r"^(.*\.)?hit_rate$", c) for c in s.columns) if m})
    for axis in [a for a in report.axes if a.endswith("max_capacity") or a.endswith("global_hbm_for_values")]:
        others = [a for a in report.axes if a != axis]
        groups = (list(s.groupby(grouper(others), sort=False)) if others else [((), s)])[:6]
        for prefix in prefixes:
            columns = [c for c in s.columns if c == prefix + "hit_rate" or
                       (c.startswith(prefix + "hit_rate_") and "." not in c[len(prefix):])]
            fig, axs = plt.subplots(len(groups), 1, figsize=(7.5, 3.8 * len(groups)), squeeze=False)
            for ax, (_, rows) in zip(axs[:, 0], groups):
                means = rows.groupby(axis, sort=True)[columns].mean()
                for c in columns:
                    name = c[len(prefix):].removeprefix("hit_rate").removeprefix("_") or "table"
                    ax.plot(means.index, means[c], marker="o", label=name,
                            linewidth=2.5 if name == "table" else 1.2)
                ax.set_xscale("log", base=2)
                ax.set_xlabel(axis)
                ax.set_ylabel("hit rate")
                ax.set_ylim(0, 1)
                ax.grid(alpha=0.3)
                ax.legend(fontsize="small")
                title = f"{prefix}hit rate against {short_name(axis)} (timed iterations, all ranks)"
                if others:
                    title += "\n" + describe(rows.iloc[0], others)
                ax.set_title(title, fontsize="medium")
            fig.tight_layout()
            save(fig, outdir, "miss_ratio_" + re.sub(r"[^A-Za-z0-9_]+", "_", prefix + axis) + ".png")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="Exit codes: 0 done, 2 bad input.")
    parser.add_argument("report", help="an embscale report (HDF5, results/schema.md)")
    parser.add_argument("outdir", help="directory for the PNGs (created if missing)")
    args = parser.parse_args(argv)
    try:
        report = Report(args.report)
    except BadInput as e:
        print(f"plot_report: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.outdir, exist_ok=True)
    if report.kind == "collectives":
        plot_collectives.plot(plt, report.summary, args.outdir, save, report.setting_note())
        missing = "no /summary with collective, size_bytes and busbw_GBps"
    else:
        if not report.summary.empty:
            for plot in (phase_breakdown, throughput_vs_axes, scaling, imbalance, loss_plot, step_time_plot,
                         eviction, miss_ratio_curves):
                plot(report, args.outdir)
        missing = "no run with recorded iterations"
    if not WRITTEN:
        print(f"plot_report: {args.report}: nothing to plot ({missing})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
