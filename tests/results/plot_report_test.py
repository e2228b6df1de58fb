#!/usr/bin/python3
"""results/plot_report.py's figures on small reports built here by h5py, where the right answer is
known exactly: what each legend says, what each bar stacks, what each title reports.

    plot_report_test.py        (exit 0: all passed; 1: a failure, named)

- Two runs of different schemes that share a phase name with different meanings: every legend
  entry carries each run's own meaning, tagged with its scheme (plots once took the first run's).
- phase_breakdown stacks the phases of each iteration's slowest rank, so the stack equals the
  step time (it once stacked every phase's slowest rank, which exceeds the step).
- imbalance.png reports the balance without the exchange phases, where waiting hides imbalance,
  and its two panels' titles do not overlap.
"""
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results"))
import plot_report  # noqa: E402

FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print(f"FAIL [plot_report_test]: {what}", file=sys.stderr)


# Per rank (columns) and iteration (rows), ms: rank 0 routes slowly, rank 1 looks up slowly in the
# first iteration and waits in the exchange after it. Steps (the slowest rank's sum): 11, 10, 10 ms.
TIMINGS_MS = {
    "route": np.array([[4.0, 1.0], [4.0, 1.0], [4.0, 1.0]]),
    "exchange_keys": np.array([[1.0, 1.0], [1.0, 4.0], [1.0, 4.0]]),
    "lookup": np.array([[5.0, 9.0], [5.0, 5.0], [5.0, 5.0]]),
}
MEANINGS = {
    "row_wise": {"route": "send every key to the rank owning its row block", "exchange_keys": "alltoallv of the keys",
                 "lookup": "read the owned rows"},
    "all2all_dense": {"route": "de-duplicate, then key % ranks", "exchange_keys": "alltoallv of the keys",
                      "lookup": "read the owned rows"},
}


def write_report(path):
    summary = []
    with h5py.File(path, "w") as f:
        f.attrs["schema_version"] = np.int64(1)
        for run_id, scheme in (("a", "row_wise"), ("b", "all2all_dense")):
            run = f.create_group(f"runs/{run_id}")
            run.attrs["phases"] = np.bytes_(",".join(TIMINGS_MS))
            run.attrs["phase_meanings"] = np.bytes_("\n".join(f"{p}: {m}" for p, m in MEANINGS[scheme].items()))
            for phase, ms in TIMINGS_MS.items():
                run[f"timings/{phase}"] = ms / 1e3
            run["counters/exchange_keys.bytes_sent"] = np.full((3, 2), 64, dtype=np.int64)
            run["counters/lookups"] = np.array([[30, 10], [30, 10], [30, 10]], dtype=np.int64)
            steps = sum(TIMINGS_MS.values()).max(axis=1) / 1e3
            run["series/step_time"] = steps
            summary.append((run_id.encode(), scheme.encode(), 2, 1024, float(np.median(steps))))
        f["summary"] = np.array(summary, dtype=[("run_id", "S8"), ("scheme", "S16"), ("ranks", "i8"),
                                                ("batchsize", "i8"), ("step_time_median_s", "f8")])


def drawn(plot, report):
    """The figure `plot` draws for `report` (plot_report.save is replaced to keep it open)."""
    figures = []
    saved = plot_report.save
    plot_report.save = lambda fig, outdir, name: figures.append(fig)
    try:
        plot(report, "unused")
    finally:
        plot_report.save = saved
    check(len(figures) == 1, f"{plot.__name__} drew {len(figures)} figures, expected 1")
    return figures[0]


def legend_texts(fig):
    axes = fig.get_axes() + [ax for sub in fig.subfigs for ax in sub.get_axes()]
    return [t.get_text() for ax in axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_phase_breakdown(report):
    fig = drawn(plot_report.phase_breakdown, report)
    labels = legend_texts(fig)
    route = [t for t in labels if t.startswith("route:")]
    check(route == ["route: send every key to the rank owning its row block (row_wise); "
                    "de-duplicate, then key % ranks (all2all_dense)"],
          f"the route legend entry does not give each scheme's own meaning: {route}")
    check("lookup: read the owned rows" in labels, f"a meaning both schemes share is not given once: {labels}")
    ax = fig.get_axes()[0]
    # Per bar: the stacked phases' heights, summed (each run its own bar: the schemes differ).
    heights = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2)
        heights[x] = heights.get(x, 0.0) + patch.get_height()
    # The slowest rank each iteration: rank 1 (11 ms) in the first, then a tie at 10 ms (rank 0):
    # median(route 1, 4, 4) + median(exchange 1, 1, 1) + median(lookup 9, 5, 5) = 4 + 1 + 5 = 10 ms,
    # the median step; every phase's slowest rank would stack 4 + median(1, 4, 4) + 5 = 13 ms.
    for x, height in heights.items():
        check(abs(height - 10.0) < 1e-9, f"bar {x} stacks {height} ms, expected the slowest rank's 10 ms")
    check("slowest rank" in ax.get_title(), f"the title does not say what is stacked: {ax.get_title()!r}")


def test_imbalance(report):
    fig = drawn(plot_report.imbalance, report)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for sub in fig.subfigs:
        left, right = sub.get_axes()
        a, b = (ax.title.get_window_extent(renderer) for ax in (left, right))
        check(a.x1 <= b.x0, f"the panel titles overlap: {left.get_title()!r} ends at {a.x1:.0f} px, "
                            f"{right.get_title()!r} starts at {b.x0:.0f} px")
        # Each rank's medians: rank 0 4 + 1 + 5 = 10 ms, rank 1 1 + 4 + 5 = 10 ms (balanced);
        # without the exchange 9 and 6 ms: max/mean 9 / 7.5 = 1.2.
        check("max/mean of the total 1.000" in right.get_title(), f"total balance: {right.get_title()!r}")
        check("without the exchanges (hatched, where ranks wait) 1.200" in right.get_title(),
              f"the balance without the exchanges is not reported: {right.get_title()!r}")
    labels = legend_texts(fig)
    for scheme, meanings in MEANINGS.items():  # each run's legend its own meaning, untagged
        check(f"route: {meanings['route']}" in labels, f"{scheme}'s route is not in the legends: {labels}")


def main():
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "two_schemes.h5")
        write_report(path)
        report = plot_report.Report(path)
        test_phase_breakdown(report)
        test_imbalance(report)
    if FAILURES:
        return 1
    print("plot_report_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
