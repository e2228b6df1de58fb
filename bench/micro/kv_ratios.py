#!/usr/bin/env python3
"""Ratios of the KV table benchmarks (embscale_micro_kv) and the KV table's targets.

    bench/micro/kv_ratios.py RESULT.json

RESULT.json: Google Benchmark JSON (--benchmark_out=F --benchmark_out_format=json), with or
without repetitions and aggregates. A benchmark's value is its items_per_second (keys/s): the
median aggregate when present, else the median of its repetitions. Each
kv_<op>/embscale/dim:D/lf:L/threads:T is paired with kv_<op>/<peer>/dim:D/lf:L/threads:T of
every peer (absl, libcuckoo, gather_limit); ratio = embscale / peer (above 1: embscale is
faster). With repetitions, [lo-hi] is the widest ratio the repetitions allow (slowest embscale
over fastest peer, fastest over slowest). Other benchmarks in the file are ignored; one that
failed (error_occurred) is listed as such.

Then the Zipf pairs (kv_zipf_<op>/<variant>/dim:D/s:S/threads:T, kv_bench_zipf.hpp): per pair
the counters vs_none (the filtered table's keys/s over the unfiltered one's, same calls) and
paired_vs_none (the median per-call ratio), as the median over repetitions [min-max], and issue
15's target: vs_none >= 0.9 (at most 10 % lower throughput with the filter).

Targets, checked at every load factor measured:
  find, embscale / absl:          >= 2.0 at dim 8, >= 1.3 at dim 64, on 1 and 2 threads
  find, embscale / gather_limit:  >= 0.5 at dim 64
  insert_or_assign and find_or_insert, embscale / libcuckoo: >= 1.5 on 2 threads
Exit status: 0 (missed targets are reported, not failed); 2 when the file cannot be read or a
kv benchmark in it lacks what is needed (the message names the file and the benchmark).
"""
import json
import re
import statistics
import sys

ZIPF = re.compile(r"^kv_zipf_(?P<op>[a-z_]+)/(?P<variant>[a-z_]+)/dim:(?P<dim>\d+)/s:(?P<s>[0-9.]+)/threads:(?P<threads>\d+)")
ZIPF_TARGET = 0.9
NAME = re.compile(r"^kv_(?P<op>[a-z_]+)/(?P<impl>[a-z_]+)/dim:(?P<dim>\d+)/lf:(?P<lf>[0-9.]+)/threads:(?P<threads>\d+)")
PEERS = ("absl", "libcuckoo", "gather_limit")
OPS = ("find", "insert_or_assign", "find_or_insert", "insert_and_evict")
TARGETS = [  # (op, peer, dim or None, threads or None, minimum ratio)
    ("find", "absl", 8, None, 2.0),
    ("find", "absl", 64, None, 1.3),
    ("find", "gather_limit", 64, None, 0.5),
    ("insert_or_assign", "libcuckoo", None, 2, 1.5),
    ("find_or_insert", "libcuckoo", None, 2, 1.5),
]


class Malformed(Exception):
    pass


def load(path):
    """{(op, impl, dim, lf, threads): {"median": v, "samples": [...]} or {"error": msg}}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise Malformed(f"{path}: cannot read a Google Benchmark JSON file: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise Malformed(f"{path}: no 'benchmarks' list (not a Google Benchmark JSON file)")
    runs = {}
    for i, b in enumerate(doc["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise Malformed(f"{path}: benchmarks[{i}] has no name")
        run_name = b.get("run_name", b["name"])
        m = NAME.match(run_name)
        if not m:
            continue
        key = (m["op"], m["impl"], int(m["dim"]), m["lf"], int(m["threads"]))
        entry = runs.setdefault(key, {"samples": [], "median": None, "error": None})
        if b.get("error_occurred"):
            entry["error"] = b.get("error_message", "error")
            continue
        aggregate = b.get("aggregate_name") if b.get("run_type") == "aggregate" else None
        if aggregate not in (None, "median"):
            continue  # mean, stddev, cv: not used
        value = b.get("items_per_second")
        if not isinstance(value, (int, float)) or value <= 0:
            raise Malformed(f"{path}: benchmark {b['name']} has no positive items_per_second")
        if aggregate == "median":
            entry["median"] = float(value)
        else:
            entry["samples"].append(float(value))
    for key, entry in runs.items():
        if entry["median"] is None and entry["samples"]:
            entry["median"] = statistics.median(entry["samples"])
    return runs


def load_zipf(path):
    """{(op, variant, dim, s, threads): {"vs_none": [...], "paired": [...], "error": msg or None}}."""
    with open(path) as f:
        doc = json.load(f)
    pairs = {}
    for b in doc.get("benchmarks", []):
        m = ZIPF.match(b.get("run_name", b.get("name", "")))
        if not m or (b.get("run_type") == "aggregate"):
            continue
        key = (m["op"], m["variant"], int(m["dim"]), m["s"], int(m["threads"]))
        entry = pairs.setdefault(key, {"vs_none": [], "paired": [], "error": None})
        if b.get("error_occurred"):
            entry["error"] = b.get("error_message", "error")
            continue
        for counter, field in (("vs_none", "vs_none"), ("paired_vs_none", "paired")):
            value = b.get(counter)
            if not isinstance(value, (int, float)) or value <= 0:
                raise Malformed(f"{path}: benchmark {b['name']} has no positive {counter}")
            entry[field].append(float(value))
    return pairs


def spread(values):
    return f"{statistics.median(values):5.2f} [{min(values):.2f}-{max(values):.2f}]"


def print_zipf(pairs):
    if not pairs:
        return
    print(f"\nZipf calls, filter against none (admission filter target: vs_none >= {ZIPF_TARGET}), "
          "median [min-max] over repetitions:")
    print(f"{'op':<15} {'variant':<10} {'dim':>3} {'s':>4} {'T':>1} {'vs_none':<18} {'paired_vs_none':<18} n")
    met = missed = 0
    for key in sorted(pairs):
        op, variant, dim, s, threads = key
        e = pairs[key]
        if e["error"]:
            print(f"ERROR kv_zipf_{op}/{variant}/dim:{dim}/s:{s}/threads:{threads}: {e['error']}")
            continue
        ok = statistics.median(e["vs_none"]) >= ZIPF_TARGET
        met += ok
        missed += not ok
        print(f"{op:<15} {variant:<10} {dim:>3} {s:>4} {threads:>1} {spread(e['vs_none']):<18} "
              f"{spread(e['paired']):<18} {len(e['vs_none'])} {'MET' if ok else 'MISSED'}")
    print(f"{met} met, {missed} missed")


def fmt_rate(v):
    return f"{v / 1e6:8.2f}M"


def ratio_text(e, p):
    r = e["median"] / p["median"]
    text = f"{r:6.2f}"
    if len(e["samples"]) > 1 and len(p["samples"]) > 1:
        lo = min(e["samples"]) / max(p["samples"])
        hi = max(e["samples"]) / min(p["samples"])
        text += f" [{lo:.2f}-{hi:.2f}]"
    return r, text


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path = argv[1]
    try:
        runs = load(path)
        zipf = load_zipf(path)
    except Malformed as e:
        print(f"kv_ratios: {e}", file=sys.stderr)
        return 2
    if not runs:
        print(f"kv_ratios: {path}: no kv_<op>/<implementation>/dim:D/lf:L/threads:T benchmarks")
        print_zipf(zipf)
        return 0

    errors = sorted(k for k, e in runs.items() if e["error"])
    for k in errors:
        print(f"ERROR kv_{k[0]}/{k[1]}/dim:{k[2]}/lf:{k[3]}/threads:{k[4]}: {runs[k]['error']}")

    ratios = {}  # (op, peer, dim, lf, threads) -> ratio of medians
    print(f"{'op':<17} {'dim':>3} {'lf':>4} {'T':>1} {'embscale':>9}  " + "  ".join(f"{'/' + p:<20}" for p in PEERS))
    shapes = sorted({(k[0], k[2], k[3], k[4]) for k in runs if k[1] == "embscale"},
                    key=lambda s: (OPS.index(s[0]) if s[0] in OPS else 99, s[1], s[2], s[3]))
    for op, dim, lf, threads in shapes:
        e = runs[(op, "embscale", dim, lf, threads)]
        if e["median"] is None:
            continue
        cells = []
        for peer in PEERS:
            p = runs.get((op, peer, dim, lf, threads))
            if not p or p["median"] is None:
                cells.append(f"{'-':<20}")
                continue
            r, text = ratio_text(e, p)
            ratios[(op, peer, dim, lf, threads)] = r
            cells.append(f"{text:<20}")
        print(f"{op:<17} {dim:>3} {lf:>4} {threads:>1} {fmt_rate(e['median']):>9}  " + "  ".join(cells))

    print("\ntargets (KV table), ratio of medians:")
    met = missed = 0
    for op, peer, dim, threads, minimum in TARGETS:
        found = False
        for (rop, rpeer, rdim, rlf, rthreads), r in sorted(ratios.items()):
            if rop != op or rpeer != peer or (dim and rdim != dim) or (threads and rthreads != threads):
                continue
            found = True
            ok = r >= minimum
            met += ok
            missed += not ok
            print(f"  {'MET   ' if ok else 'MISSED'} {op} embscale/{peer} dim:{rdim} lf:{rlf} threads:{rthreads}: "
                  f"{r:.2f} (target >= {minimum})")
        if not found:
            print(f"  NOT MEASURED {op} embscale/{peer}" + (f" dim:{dim}" if dim else "") +
                  (f" threads:{threads}" if threads else "") + f" (target >= {minimum})")
    print(f"{met} met, {missed} missed")
    print_zipf(zipf)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
