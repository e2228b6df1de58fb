#!/usr/bin/python3
"""A parameter-server sweep's trainers' pull and step, and the servers' busy share, per point.

usage: bench/sweeps/ps_phases_table.py REPORT.h5

Per run: the median over iterations of the trainers' mean `pull` phase and of the step time
(series/step_time), and the servers' busy share (server_read + server_update + server_messages
over those plus server_idle, summed over iterations). Per point (the runs of the same transport,
pulls, storage, mode and ranks): the min and max over its repetitions, in ms."""
import sys
from collections import defaultdict

import h5py
import numpy as np


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main(path):
    with h5py.File(path, "r") as f:
        summary = f["summary"][()]
        names = summary.dtype.names
        points = defaultdict(list)
        for row in summary:
            fields = dict(zip(names, row))
            run = f["runs"][text(fields["run_id"])]
            trainers, servers = int(fields["trainers"]), int(fields["servers"])
            timings = run["timings"]
            pull = np.median(timings["pull"][:, :trainers].mean(axis=1)) * 1e3
            step = np.median(run["series"]["step_time"][:]) * 1e3
            busy = sum(timings[p][:, trainers:trainers + servers].sum() for p in
                       ("server_read", "server_update", "server_messages"))
            idle = timings["server_idle"][:, trainers:trainers + servers].sum()
            key = tuple(text(fields.get(k, "-")) for k in ("ranks", "storage", "transport", "pulls", "ps_mode"))
            points[key].append((pull, step, busy / (busy + idle) if busy + idle > 0 else float("nan")))
    print("| ranks | storage | transport | pulls | mode | runs | trainers' pull, ms | step, ms | servers busy |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, runs in points.items():
        cols = list(zip(*runs))
        span = lambda v, f: f"{min(v):{f}}-{max(v):{f}}"
        print(f"| {' | '.join(key)} | {len(runs)} | {span(cols[0], '.2f')} | {span(cols[1], '.2f')} | "
              f"{min(cols[2]):.0%}-{max(cols[2]):.0%} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
