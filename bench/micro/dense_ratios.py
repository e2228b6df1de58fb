#!/usr/bin/env python3
"""Ratios of the dense-layer benchmarks (embscale_micro_dense) and issue 32's target.

    bench/micro/dense_ratios.py RESULT.json

RESULT.json: Google Benchmark JSON (--benchmark_out=F --benchmark_out_format=json), with or
without repetitions. A benchmark's value is its real time per iteration (the median aggregate
when present, else the median of its repetitions). Each dense/inner_product_<pass>/<shape> is
paired with dense/sgemm_<pass>/<shape>: ratio = sgemm's time / the layer's (1: the layer costs
what its products cost; the target is >= 0.8, forward and backward). FusedInnerProduct's forward
is paired with sgemm's forward too. Exit status 0 (a missed target is reported, not failed); 2
when the file cannot be read or a pair lacks a side (the message names it).
"""
import json
import re
import statistics
import sys

NAME = re.compile(r"^dense/(?P<impl>[a-z_]+)_(?P<pass>forward|backward)/(?P<shape>\d+x\d+x\d+)")
TARGET = 0.8


def times(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"dense_ratios.py: {path}: cannot read Google Benchmark JSON: {e}")
    runs, medians = {}, {}
    for b in data.get("benchmarks", []):
        m = NAME.match(b.get("run_name", b["name"]))
        if not m:
            continue
        key = (m["impl"], m["pass"], m["shape"])
        if b.get("error_occurred"):
            sys.exit(f"dense_ratios.py: {path}: {b['name']} failed: {b.get('error_message', '')}")
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = b["real_time"]
        else:
            runs.setdefault(key, []).append(b["real_time"])
    for key, values in runs.items():
        medians.setdefault(key, statistics.median(values))
    return medians


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    t = times(sys.argv[1])
    missed = 0
    print(f"{'layer':<30} {'shape':<16} {'layer time':>12} {'sgemm time':>12} {'sgemm/layer':>12}")
    for (impl, pass_, shape), value in sorted(t.items()):
        if impl == "sgemm":
            continue
        base = t.get(("sgemm", pass_, shape))
        if base is None:
            sys.exit(f"dense_ratios.py: {sys.argv[1]}: dense/{impl}_{pass_}/{shape} has no sgemm_{pass_} pair")
        ratio = base / value
        flag = "" if ratio >= TARGET else f"  (target >= {TARGET}: missed)"
        missed += ratio < TARGET
        print(f"{impl + '_' + pass_:<30} {shape:<16} {value:>12.1f} {base:>12.1f} {ratio:>12.3f}{flag}")
    print(f"{missed} pair(s) below the target {TARGET}")


if __name__ == "__main__":
    main()
