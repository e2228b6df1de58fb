#!/usr/bin/python3
"""scripts/fit-links on made-up collectives reports with exact answers: times that are exactly
latency + bytes sent per rank / bandwidth give back that latency and bandwidth (alltoall's
(n - 1) / n and allreduce's 2 (n - 1) / n per byte of size); rows of other counts, placements or
calibrations are left out; --hardware --out replaces the one link and keeps the rest; a run report
and a missing collective are bad input (exit 2). Exit 0 when every check holds."""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "fit-links")
LATENCY, BANDWIDTH, RANKS = 7e-6, 2.5e10, 4
FIELDS = [("collective", "S16"), ("counts", "S8"), ("placement", "S16"), ("blocking", "<i8"), ("calibrate", "<i8"),
          ("ranks", "<i8"), ("size_bytes", "<i8"), ("time_us", "<f8"), ("time_median_us", "<f8")]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def write_report(path, kind=b"collectives"):
    rows = []
    for collective, factor in (("alltoall", (RANKS - 1) / RANKS), ("allreduce", 2 * (RANKS - 1) / RANKS)):
        for size in (1 << 10, 1 << 14, 1 << 18, 1 << 22):
            seconds = LATENCY + size * factor / BANDWIDTH
            rows.append((collective, "equal", "out_of_place", 1, 0, RANKS, size, seconds * 1e6 * 1.3, seconds * 1e6))
    # Left out: skewed counts, in place, calibration runs (made far off the line).
    rows.append(("alltoall", "skewed", "out_of_place", 1, 0, RANKS, 1 << 16, 1e6, 1e6))
    rows.append(("alltoall", "equal", "in_place", 1, 0, RANKS, 1 << 16, 1e6, 1e6))
    rows.append(("alltoall", "equal", "out_of_place", 1, 1, RANKS, 1 << 16, 1e6, 1e6))
    with h5py.File(path, "w") as f:
        f.attrs["report_kind"] = kind
        f.attrs["command_line"] = b"embscale collectives -b 1K -e 4M"
        f["summary"] = np.array(rows, dtype=FIELDS)


def link_of(stdout):
    return json.loads(stdout[stdout.index("{"):stdout.rindex("}") + 1])


with tempfile.TemporaryDirectory() as work:
    report = os.path.join(work, "c.h5")
    write_report(report)
    for collective in ("alltoall", "allreduce"):
        done = subprocess.run([SCRIPT, report, "--collective", collective], capture_output=True, text=True)
        check(done.returncode == 0, f"{collective}: exit {done.returncode}: {done.stderr}")
        if done.returncode == 0:
            link = link_of(done.stdout)
            check(abs(link["latency_seconds"] - LATENCY) < 1e-9 * LATENCY + 1e-15, f"{collective} latency {link}")
            check(abs(link["bandwidth"] / BANDWIDTH - 1) < 1e-9, f"{collective} bandwidth {link}")
            check("c.h5" in link["source"] and "embscale collectives" in link["source"], f"source {link['source']}")

    # The description with the link replaced, the rest kept.
    hardware = os.path.join(work, "hw.json")
    original = {"hardware_version": 1, "name": "x", "links": {"intra_node": {"bandwidth": 1, "latency_seconds": 0,
                                                                            "source": "s"},
                                                             "inter_node": {"bandwidth": 2, "latency_seconds": 0,
                                                                            "source": "t"}}}
    with open(hardware, "w") as f:
        json.dump(original, f)
    out = os.path.join(work, "new.json")
    done = subprocess.run([SCRIPT, report, "--hardware", hardware, "--link", "intra_node", "--out", out],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"--out: exit {done.returncode}: {done.stderr}")
    if done.returncode == 0:
        updated = json.load(open(out))
        check(abs(updated["links"]["intra_node"]["bandwidth"] / BANDWIDTH - 1) < 1e-9, f"written link {updated}")
        check(updated["links"]["inter_node"] == original["links"]["inter_node"], "the other link changed")
        check(updated["name"] == "x", "the rest changed")

    # Bad input.
    run_report = os.path.join(work, "run.h5")
    write_report(run_report, kind=b"run")
    done = subprocess.run([SCRIPT, run_report], capture_output=True, text=True)
    check(done.returncode == 2 and "expected 'collectives'" in done.stderr, f"a run report: {done.returncode} {done.stderr}")
    done = subprocess.run([SCRIPT, report, "--collective", "allgather"], capture_output=True, text=True)
    check(done.returncode == 2 and "no fit for allgather" in done.stderr, f"no allgather: {done.returncode} {done.stderr}")
    done = subprocess.run([SCRIPT, os.path.join(work, "none.h5")], capture_output=True, text=True)
    check(done.returncode == 2 and "no such file" in done.stderr, f"missing file: {done.returncode} {done.stderr}")

print("fit-links:", "FAILED" if failures else "PASSED")
sys.exit(1 if failures else 0)
