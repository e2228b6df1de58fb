#!/usr/bin/python3
"""scripts/plan-calibrate --report on a made-up sweep report with exact answers: every rank's
compute phases are exactly key, row and byte costs times the plan's work counts, and the step adds
the comm-byte cost of the slowest rank; the fit gives those costs back. Repetitions of a point are
merged into their medians (one odd run does not move them), and the script prints a single run's
spread from its point's median. --hardware --out replaces a description's costs by the fit and keeps
the rest; a bad description is exit 2. Exit 0 when every check holds."""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "plan-calibrate")
COST = {"seconds_per_key": 2e-8, "seconds_per_row": 3e-8, "seconds_per_byte": 5e-11, "seconds_per_comm_byte": 4e-10}
ITERATIONS, RANKS, REPETITIONS = 6, 2, 3
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def write_report(path, layers=1):
    """Eight points of `layers` layers (all row_wise), each run REPETITIONS times; repetition 1 of
    every point is 50 % slower everywhere (the odd run the medians ignore)."""
    rng = np.random.default_rng(3)
    with h5py.File(path, "w") as f:
        runs = f.create_group("runs")
        for point in range(8 if layers == 1 else 2):
            ranks = [{"key_ops": float(k), "row_ops": float(r), "memory_traffic_bytes": float(b), "comm_bytes": float(c)}
                     for k, r, b, c in zip(rng.uniform(1e4, 1e6, RANKS), rng.uniform(1e3, 1e5, RANKS),
                                           rng.uniform(1e6, 1e8, RANKS), rng.uniform(1e5, 1e7, RANKS))]
            compute = np.array([COST["seconds_per_key"] * r["key_ops"] + COST["seconds_per_row"] * r["row_ops"] +
                                COST["seconds_per_byte"] * r["memory_traffic_bytes"] for r in ranks])
            slowest = int(np.argmax(compute))
            step = compute[slowest] + COST["seconds_per_comm_byte"] * ranks[slowest]["comm_bytes"]
            names = ["emb1"] if layers == 1 else [f"emb{i + 1}" for i in range(layers)]
            plan = {"layers": [{"name": n, "scheme": "row_wise", "collectives": 4, "ranks": ranks} for n in names]}
            prefix = [""] if layers == 1 else [n + "." for n in names]
            for repetition in range(REPETITIONS):
                slow = 1.5 if repetition == 1 else 1.0
                run = runs.create_group(f"p{point:02d}.r{repetition}")
                run.attrs["sharding_plan"] = json.dumps(plan).encode()
                run.attrs["phases"] = ",".join(p + q for p in prefix for q in ("lookup", "exchange")).encode()
                run.attrs["point"] = point
                run.attrs["repetition"] = repetition
                # the compute phase holds it all; the collective phase nothing (it is the step's rest)
                for p in prefix:
                    run.create_dataset(f"timings/{p}lookup", data=np.tile(compute * slow, (ITERATIONS, 1)))
                    run.create_dataset(f"timings/{p}exchange", data=np.zeros((ITERATIONS, RANKS)))
                    run.create_dataset(f"series/{p}exchange.algbw", data=np.ones(ITERATIONS))
                run.create_dataset("series/step_time", data=np.full(ITERATIONS, step * slow))


with tempfile.TemporaryDirectory() as work:
    report = os.path.join(work, "cal.h5")
    write_report(report)
    result = subprocess.run([SCRIPT, "--report", report], capture_output=True, text=True)
    check(result.returncode == 0, f"exit {result.returncode}: {result.stderr}")
    out = result.stdout
    section = re.search(r"planner section:\n\s+(\{.*\})", out)
    check(section is not None, f"no planner section in: {out}")
    if section:
        fitted = json.loads(section.group(1))
        for name, value in COST.items():
            check(abs(fitted[name] / value - 1) < 0.01, f"{name}: fitted {fitted[name]}, made with {value}")
    check("median of its 3 runs" in out, f"the step line does not say it fits medians: {out}")
    check(len(re.findall(r"^\s+p\d\d\.r0 ", out, re.M)) == 8, f"not one line per point: {out}")
    spread = re.search(r"a single run's step from its point's median: median ([\d.]+)%.*max ([\d.]+)%", out)
    check(spread is not None and abs(float(spread.group(2)) - 50.0) < 0.1,
          f"the spread line does not show the odd run's 50 %: {out}")
    within = re.search(r"step time predicted within: median ([\d.]+)%", out)
    check(within is not None and float(within.group(1)) < 0.1, f"exact steps are not predicted exactly: {out}")

    # Two layers of one scheme in a run are two rows of a point, not two repetitions.
    two = os.path.join(work, "two.h5")
    write_report(two, layers=2)
    result = subprocess.run([SCRIPT, "--report", two], capture_output=True, text=True)
    check(result.returncode == 0, f"two layers: exit {result.returncode}: {result.stderr}")
    check(len(re.findall(r"^\s+p\d\d\.r0 ", result.stdout, re.M)) == 4,
          f"two layers of 2 points are not 4 rows: {result.stdout}")
    check("median of its 3 runs" in result.stdout, f"two layers: the repetitions are not 3: {result.stdout}")
    # --hardware --out: the description's costs replaced by the fit, the rest kept.
    hardware, updated = os.path.join(work, "hw.json"), os.path.join(work, "hw_new.json")
    original = {"hardware_version": 1, "name": "made up", "device": {"model": "D", "memory_bytes": 1},
                "costs": {"seconds_per_key": 1.0, "seconds_per_row": 1.0, "source": "old"}}
    with open(hardware, "w") as f:
        json.dump(original, f)
    result = subprocess.run([SCRIPT, "--report", report, "--hardware", hardware, "--out", updated],
                            capture_output=True, text=True)
    check(result.returncode == 0, f"--hardware --out: exit {result.returncode}: {result.stderr}")
    with open(updated) as f:
        written = json.load(f)
    costs = written.get("costs", {})
    check(abs(costs.get("seconds_per_key", 0) / COST["seconds_per_key"] - 1) < 0.01, f"costs written: {costs}")
    check(abs(costs.get("seconds_per_row", 0) / COST["seconds_per_row"] - 1) < 0.01, f"costs written: {costs}")
    check("median of 3 runs" in costs.get("source", ""), f"the source does not say how: {costs}")
    check({k: v for k, v in written.items() if k != "costs"} == {k: v for k, v in original.items() if k != "costs"},
          f"the rest of the description changed: {written}")
    # Bad input: exit 2, nothing written.
    for args in (["--hardware", hardware], ["--hardware", os.path.join(work, "none.json"), "--out", updated + "2"],
                 ["--hardware", report, "--out", updated + "3"], ["--hardware", hardware, "--out", "/nonexistent/x.json"],
                 ["--repetitions", "0"]):
        result = subprocess.run([SCRIPT, "--report", report] + args, capture_output=True, text=True)
        check(result.returncode == 2 and "plan-calibrate:" in result.stderr, f"{args}: exit {result.returncode}")
    check(not os.path.exists(updated + "2") and not os.path.exists(updated + "3"), "a file was written on bad input")

sys.exit(1 if failures else 0)
