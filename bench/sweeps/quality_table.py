#!/usr/bin/python3
"""The quality curves of a sweep: the last evaluation's AUC per point, its runs of other seeds
together (mean, standard deviation over seeds, each seed's value), beside the planted model's
ceiling, and for parameter-server runs the staleness the servers served.

    bench/sweeps/quality_table.py REPORT.h5 [--over solver.seed]

Rows group the summary's runs by every swept parameter (the summary's columns between run_id and
scheme, but point and repetition) except --over; Debian's python3 with h5py (scripts/setup installs it).
"""
import argparse
import collections
import statistics
import sys

import h5py


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("--over", default="solver.seed", help="the parameter whose runs are averaged (default solver.seed)")
    args = parser.parse_args()
    with h5py.File(args.report, "r") as f:
        if "summary" not in f:
            sys.exit(f"{args.report}: no /summary table (not an embscale report?)")
        summary = f["summary"][()]
        names = summary.dtype.names
        if "eval_auc" not in names:
            sys.exit(f"{args.report}: no eval_auc column: the runs had no evaluation (solver.eval_interval)")
        swept = [n for n in names[1:names.index("scheme")] if n not in (args.over, "point", "repetition")]
        groups = collections.OrderedDict()
        for row in summary:
            r = {n: text(row[n]) for n in names}
            key = tuple(r[n] for n in swept)
            staleness = 0
            counters = f[f"runs/{r['run_id']}/counters"]
            if "staleness" in counters:
                staleness = int(counters["staleness"][()].max())
            groups.setdefault(key, []).append((r["eval_auc"], r.get("eval_auc_ceiling", float("nan")), staleness))
    print(" | ".join(swept + ["runs", "AUC mean", "sd", "each run", "ceiling", "max staleness"]))
    for key, runs in groups.items():
        aucs = [a for a, _, _ in runs]
        sd = statistics.stdev(aucs) if len(aucs) > 1 else float("nan")
        print(" | ".join([str(k) for k in key] +
                         [str(len(runs)), f"{statistics.fmean(aucs):.4f}", f"{sd:.4f}",
                          " ".join(f"{a:.4f}" for a in aucs), f"{statistics.fmean(c for _, c, _ in runs):.4f}",
                          str(max(s for _, _, s in runs))]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
