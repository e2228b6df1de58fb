#!/usr/bin/python3
"""Plots of an embscale report (results/schema.md), for people rather than parsers.

    plot_report.py REPORT.h5 OUTDIR        (or: embscale report REPORT.h5 --plot OUTDIR)

Each PNG is written only when the report holds what it needs, and named on stdout:

  phase_breakdown.png    per point (repetitions pooled), the time of each phase in a step, stacked:
                         per iteration the slowest rank's time in the phase, median over iterations.
  throughput_vs_<f>.png  samples/s against each swept numeric field f (the report's sweep_axes, else
                         every parameter that varies), one line per combination of the other fields:
                         median over repetitions with min-max bars, or with one repetition the
                         25-75 % band of per-iteration throughput.
  scaling_strong.png     when `ranks` varies at a fixed global batch: speed-up T(r0)/T(r) and
                         efficiency speed-up / (r/r0) against ranks, r0 the smallest rank count.
  scaling_weak.png       when `ranks` varies at a fixed batch per rank: scaled speed-up
                         throughput(r)/throughput(r0) and efficiency T(r0)/T(r) against ranks.
  imbalance.png          for the runs with the most ranks (up to four): keys each rank served as
                         owner relative to the mean, and each rank's median time per phase.
  loss.png, step_time.png  the objective (relative to its first iteration) and the step time per
                         iteration, for the first repetition of each point.
  eviction_<run>.png     every dataset under /runs/<run>/eviction/ (written by the KV-table work):
                         1-D against its index, 2-D as columns against the first column (named
                         by the dataset's "columns" attribute, comma-separated, when present).

Runs with the same parameters (all /summary columns but run_id, point, repetition and the figures)
are repetitions of one point. Exit codes: 0 written, 2 bad input (missing file, not an embscale
report, another schema version), with a message naming the file.
"""
import argparse
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

SCHEMA_VERSION = 1
IDENTITY = {"run_id", "point", "repetition"}
FIGURES = {"step_time_median_s", "step_time_p95_s", "throughput_samples_per_s", "throughput_keys_per_s",
           "bytes_sent_per_step", "load_imbalance", "final_loss"}
MAX_LINES = 12  # more curves than this in one axes are unreadable: the first ones are drawn


class BadInput(Exception):
    pass


def text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def grouper(columns):
    """A groupby key: one column by name (pandas warns about one-element lists), else the list."""
    return columns[0] if len(columns) == 1 else columns


def short_name(field):
    """The last component of a dotted config path: the name people use for it."""
    return field.split(".")[-1]


class Report:
    """A report's /summary as a DataFrame plus access to its runs."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise BadInput(f"{path}: no such report file")
        try:
            self.file = h5py.File(path, "r")
        except OSError as e:
            raise BadInput(f"{path}: not an HDF5 file ({e})") from e
        version = self.file.attrs.get("schema_version")
        if version is None:
            raise BadInput(f"{path}: not an embscale report (no schema_version attribute)")
        if int(version) != SCHEMA_VERSION:
            raise BadInput(f"{path}: report schema version {int(version)}, this script reads version {SCHEMA_VERSION}")
        if "summary" not in self.file or "runs" not in self.file:
            raise BadInput(f"{path}: the report has no /summary or no /runs")
        frame = pd.DataFrame(self.file["summary"][()])
        self.summary = frame.apply(lambda c: c.map(text) if c.dtype == object else c)
        self.parameters = [c for c in self.summary.columns if c not in IDENTITY | FIGURES]
        axes = text(self.file.attrs.get("sweep_axes", b""))
        varying = [c for c in self.parameters if self.summary[c].nunique() > 1]
        swept = [a for a in axes.split(",") if a in self.summary.columns] if axes else varying
        self.axes = [a for a in swept if self.summary[a].nunique() > 1]  # one value is no axis

    def run(self, run_id):
        return self.file["runs"][run_id]

    def phases(self, run_id):
        return [p for p in text(self.run(run_id).attrs.get("phases", b"")).split(",") if p]

    def phase_ms(self, run_id, phase):
        """Per iteration the slowest rank's time in the phase (ms)."""
        return self.run(run_id)["timings"][phase][()].max(axis=1) * 1e3

    def points(self):
        """Groups of runs with identical parameters (the repetitions of a point), in first-seen order."""
        return list(self.summary.groupby(grouper(self.parameters), sort=False, dropna=False))

    def label(self, row, fields):
        return ", ".join(f"{short_name(f)}={row[f]}" for f in fields) or str(row["run_id"])


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(path)


def phase_breakdown(report, outdir):
    points = report.points()
    labels, stacks, phases = [], [], None
    for _, runs in points:
        first = runs.iloc[0]
        names = report.phases(first["run_id"])
        phases = phases or names
        if names != phases:
            continue  # another scheme's phases: not stackable with these
        per_phase = [np.median(np.concatenate([report.phase_ms(r, p) for r in runs["run_id"]])) for p in phases]
        stacks.append(per_phase)
        labels.append(report.label(first, [a for a in report.axes]))
    if not stacks:
        return
    stacks = np.array(stacks)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(labels) + 3), 4.8))
    bottom = np.zeros(len(labels))
    colors = plt.get_cmap("tab20").colors
    for i, phase in enumerate(phases):
        ax.bar(range(len(labels)), stacks[:, i], bottom=bottom, label=phase, color=colors[i % len(colors)])
        bottom += stacks[:, i]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 3 else 0, ha="right" if len(labels) > 3 else "center")
    ax.set_ylabel("time per step (ms; slowest rank per phase, median)")
    scheme = report.summary["scheme"].iloc[0] if "scheme" in report.summary else ""
    ax.set_title(f"Phase breakdown per point ({scheme})")
    ax.legend(title="phase", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    save(fig, outdir, "phase_breakdown.png")


def throughput_spread(report, runs):
    """Median throughput and its (low, high) spread over repetitions, or over iterations for one run."""
    values = runs["throughput_samples_per_s"].to_numpy()
    if len(values) > 1:
        return np.median(values), values.min(), values.max()
    run = report.run(runs["run_id"].iloc[0])
    per_iteration = runs["batchsize"].iloc[0] / run["series"]["step_time"][()]
    return values[0], np.percentile(per_iteration, 25), np.percentile(per_iteration, 75)


def throughput_vs_axes(report, outdir):
    for axis in report.axes:
        if axis == "ranks" or not pd.api.types.is_numeric_dtype(report.summary[axis]):
            continue
        others = [a for a in report.axes if a != axis]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        groups = list(report.summary.groupby(grouper(others), sort=False)) if others else [((), report.summary)]
        repeated = False
        for key, rows in groups[:MAX_LINES]:
            xs, mid, low, high = [], [], [], []
            for x, runs in rows.groupby(axis, sort=True):
                m, lo, hi = throughput_spread(report, runs)
                repeated = repeated or len(runs) > 1
                xs.append(x), mid.append(m), low.append(lo), high.append(hi)
            mid, low, high = map(np.array, (mid, low, high))
            label = report.label(rows.iloc[0], others) if others else None
            ax.errorbar(xs, mid, yerr=[mid - low, high - mid], marker="o", capsize=4, label=label)
        values = np.sort(report.summary[axis].unique())
        if values.min() > 0 and values.max() / values.min() >= 4:  # sizes and rates read best on a log axis
            ax.set_xscale("log", base=2 if all(float(v).is_integer() for v in values) else 10)
        if len(values) <= 12:
            ax.set_xticks(values)
            ax.set_xticklabels([f"{v:g}" for v in values])
            ax.minorticks_off()
        ax.set_xlabel(axis)
        ax.set_ylabel("throughput (samples/s)")
        spread = "median, min-max over repetitions" if repeated else "25-75 % of iterations"
        ax.set_title(f"Throughput against {short_name(axis)} ({spread})")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if others:
            ax.legend(fontsize="small")
        save(fig, outdir, "throughput_vs_" + re.sub(r"[^A-Za-z0-9_]+", "_", axis) + ".png")


def machine_note(report):
    """Where the runs ran: scaling curves mean little without it (ranks beyond the cores share them)."""
    hosts = text(report.file.attrs.get("hosts", b"?"))
    machine = text(report.file.attrs.get("machine", b"?"))
    return f"hosts: {hosts}; rank 0's machine: {machine}"


def scaling(report, outdir):
    s = report.summary
    if "ranks" not in s or s["ranks"].nunique() < 2 or "batchsize" not in s:
        return
    s = s.assign(per_rank=s["batchsize"] / s["ranks"])
    fixed = [c for c in report.parameters if c not in ("ranks", "batchsize") and not c.endswith("batchsize")]
    fixed = [c for c in fixed if c != "ranks"]
    studies = {"strong": [], "weak": []}
    for _, rows in (s.groupby(grouper(fixed), sort=False, dropna=False) if fixed else [((), s)]):
        for kind, by in (("strong", "batchsize"), ("weak", "per_rank")):
            for _, study in rows.groupby(by, sort=False):
                if study["ranks"].nunique() >= 2:
                    t = study.groupby("ranks")["step_time_median_s"].median().sort_index()
                    studies[kind].append((study.iloc[0], t))
    for kind, found in studies.items():
        if not found:
            continue
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
        top = 1
        for row, t in found[:MAX_LINES]:
            r = t.index.to_numpy(dtype=float)
            base = r[0]
            if kind == "strong":
                speedup = t.iloc[0] / t.to_numpy()
                efficiency = speedup / (r / base)
                label = f"global batch {int(row['batchsize'])}"
            else:
                speedup = (r / base) * t.iloc[0] / t.to_numpy()  # throughput ratio at a growing batch
                efficiency = t.iloc[0] / t.to_numpy()
                label = f"{int(row['per_rank'])} samples per rank"
            left.plot(r, speedup, marker="o", label=label)
            right.plot(r, efficiency, marker="o", label=label)
            top = max(top, r.max() / base)
        ideal = np.array(sorted({x for _, t in found for x in t.index}), dtype=float)
        left.plot(ideal, ideal / ideal[0], "k--", alpha=0.5, label="ideal")
        right.axhline(1.0, color="k", ls="--", alpha=0.5, label="ideal")
        for ax in (left, right):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ideal)
            ax.set_xticklabels([str(int(x)) for x in ideal])
            ax.set_xlabel("ranks")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        if kind == "strong":
            left.set_ylabel("speed-up  T(r0) / T(r)")
            right.set_ylabel("efficiency  speed-up / (r / r0)")
            fig.suptitle("Strong scaling: the same global batch on more ranks (median step time)")
        else:
            left.set_ylabel("scaled speed-up  throughput(r) / throughput(r0)")
            right.set_ylabel("efficiency  T(r0) / T(r)")
            fig.suptitle("Weak scaling: the same batch per rank on more ranks (median step time)")
        right.set_ylim(0, max(1.2, right.get_ylim()[1]))
        fig.text(0.01, -0.02, machine_note(report), fontsize="small", color="0.3")
        save(fig, outdir, f"scaling_{kind}.png")


def imbalance(report, outdir):
    s = report.summary.drop_duplicates(subset=report.parameters, keep="first")  # one run per point
    s = s.sort_values("ranks", ascending=False, kind="stable") if "ranks" in s else s
    chosen = [r for r in s["run_id"] if "lookups" in report.run(r).get("counters", {})]
    chosen = [r for r in chosen if report.run(r)["counters"]["lookups"].shape[1] > 1][:4]
    if not chosen:
        return
    fig, axes = plt.subplots(len(chosen), 2, figsize=(11, 3.2 * len(chosen)), squeeze=False)
    colors = plt.get_cmap("tab20").colors
    for (left, right), run_id in zip(axes, chosen):
        lookups = report.run(run_id)["counters"]["lookups"][()].sum(axis=0).astype(float)
        ranks = np.arange(len(lookups))
        share = lookups / lookups.mean()
        left.bar(ranks, share, color="tab:blue")
        left.axhline(1.0, color="k", ls="--", alpha=0.5)
        left.set_ylabel("keys served / mean")
        left.set_title(f"{run_id}: keys served as owner, max/mean {share.max():.3f}")
        bottom = np.zeros(len(ranks))
        for i, phase in enumerate(report.phases(run_id)):
            ms = np.median(report.run(run_id)["timings"][phase][()], axis=0) * 1e3
            right.bar(ranks, ms, bottom=bottom, label=phase, color=colors[i % len(colors)])
            bottom += ms
        right.set_ylabel("median time per step (ms)")
        right.set_title(f"{run_id}: each rank's phases, max/mean {bottom.max() / bottom.mean():.3f}")
        if run_id == chosen[0]:
            right.legend(fontsize="x-small", bbox_to_anchor=(1.01, 1), loc="upper left")
        for ax in (left, right):
            ax.set_xticks(ranks)
            ax.set_xlabel("rank")
    fig.tight_layout()
    save(fig, outdir, "imbalance.png")


def series_plot(report, outdir, name, ylabel, scale, title, relative=False):
    first = report.summary.drop_duplicates(subset=report.parameters, keep="first")
    runs = [r for r in first["run_id"] if name in report.run(r).get("series", {})]
    if not runs:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for _, row in first[first["run_id"].isin(runs)].head(MAX_LINES).iterrows():
        values = report.run(row["run_id"])["series"][name][()] * scale
        if relative and len(values) and values[0] != 0:
            values = values / values[0]  # points of other scales (widths, batches) side by side
        ax.plot(np.arange(1, len(values) + 1), values, label=report.label(row, report.axes))
    ax.set_xlabel("iteration (after warm-up)")
    ax.set_ylabel(ylabel)
    ax.set_title(title + ("" if len(runs) <= MAX_LINES else f" (first {MAX_LINES} of {len(runs)} points)"))
    ax.grid(alpha=0.3)
    if len(runs) > 1:  # outside: the curves fill the axes
        ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    save(fig, outdir, f"{name}.png")


def eviction(report, outdir):
    for run_id in report.summary["run_id"]:
        group = report.run(run_id).get("eviction")
        if group is None:
            continue
        names = [n for n in group if isinstance(group[n], h5py.Dataset)]
        if not names:
            continue
        fig, axes = plt.subplots(len(names), 1, figsize=(7, 3.2 * len(names)), squeeze=False)
        for ax, name in zip(axes[:, 0], names):
            data = group[name][()]
            if data.ndim == 1:
                ax.plot(data)
                ax.set_xlabel("index")
            elif data.ndim == 2 and data.shape[1] > 1:
                # An optional "columns" attribute names the columns ("capacity,lru,lfu").
                names = text(group[name].attrs.get("columns", b"")).split(",")
                names = names if len(names) == data.shape[1] else [f"column {c}" for c in range(data.shape[1])]
                for c in range(1, data.shape[1]):
                    ax.plot(data[:, 0], data[:, c], label=names[c])
                ax.set_xlabel(names[0])
                ax.legend(fontsize="small")
            ax.set_title(f"{run_id}: eviction/{name}")
            ax.grid(alpha=0.3)
        fig.tight_layout()
        save(fig, outdir, f"eviction_{run_id}.png")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="an embscale report (HDF5)")
    parser.add_argument("outdir", help="directory for the PNGs (created if missing)")
    args = parser.parse_args(argv)
    try:
        report = Report(args.report)
    except BadInput as e:
        print(f"plot_report: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.outdir, exist_ok=True)
    phase_breakdown(report, args.outdir)
    throughput_vs_axes(report, args.outdir)
    scaling(report, args.outdir)
    imbalance(report, args.outdir)
    series_plot(report, args.outdir, "loss", "objective / objective at iteration 1", 1.0, "Loss per iteration",
                relative=True)
    series_plot(report, args.outdir, "step_time", "step time (ms, slowest rank)", 1e3, "Step time per iteration")
    eviction(report, args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
