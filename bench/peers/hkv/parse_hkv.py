#!/usr/bin/env python3
"""Turn the raw stdout of HierarchicalKV's merlin_hashtable_benchmark (stock
main() or bench/peers/hkv/hkv_shapes.cu) into JSON lines, one per (table row, API column):

  {"op": "find", "dim": 8, "capacity": 134217728, "load_factor": 0.5,
   "hybrid": false, "bkv_per_s": 2.47, ...extras}

bkv_per_s is the printed number: keys per second / 2**30 (the benchmark
divides by 1024*1024*1024 and calls it "Billion-KV/second"), 3 decimals.
Extras: kv_per_s (= bkv_per_s * 2**30), batch, hbm_gb, hmem_gb, gpu.
op is the column name as printed ("find*" and "find_or_insert*" are the
pointer-returning variants).

Usage: parse.py [RAW_STDOUT ...]   (stdin when no file); JSON lines on stdout,
warnings on stderr; exit 1 when no value was found.
"""
import json
import re
import sys

RE_GPU = re.compile(r"^\* GPU: 1 x (.*)$")
RE_BATCH = re.compile(r"^\* Key-Values per OP = (\d+)")
RE_CAPKV = re.compile(r"^\* capacity_kv = (\d+)")
RE_CONF = re.compile(
    r"^\* dim = (\d+), capacity = (-?\d+) Million-KV, HBM = (\d+) GB, HMEM = (\d+) GB")
RE_NUM = re.compile(r"^-?\d+(\.\d+)?$")


def cells(line):
    """'| a | b |' -> ['a', 'b'], and whether the line was closed by '|'."""
    s = line.rstrip("\n").rstrip()
    closed = s.endswith("|")
    parts = s.split("|")[1:]
    if closed:
        parts = parts[:-1]
    return [p.strip() for p in parts], closed


def parse(lines, out, warn):
    state = {"gpu": None, "batch": None, "capacity_kv": None, "hybrid": None,
             "dim": None, "capacity": None, "hbm_gb": None, "hmem_gb": None}
    header = None
    n = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        m = RE_GPU.match(line)
        if m:
            # A new run: forget the shape of the previous one.
            for k in state:
                state[k] = None
            header = None
            state["gpu"] = m.group(1)
            continue
        m = RE_BATCH.match(line)
        if m:
            state["batch"] = int(m.group(1))
            continue
        m = RE_CAPKV.match(line)
        if m:
            state["capacity_kv"] = int(m.group(1))
            continue
        if line.startswith("### On pure HBM mode"):
            state["hybrid"] = False
            header = None
            continue
        if line.startswith("### On HBM+HMEM hybrid mode"):
            state["hybrid"] = True
            header = None
            continue
        m = RE_CONF.match(line)
        if m:
            dim, mkv, hbm, hmem = (int(x) for x in m.groups())
            cap = mkv * 1024 * 1024  # the benchmark prints capacity / 2**20
            ck = state["capacity_kv"]
            if ck is not None and ck // (1024 * 1024) == mkv:
                cap = ck  # exact value printed by hkv_shapes
            state.update(dim=dim, capacity=cap, hbm_gb=hbm, hmem_gb=hmem)
            header = None
            continue
        if line.startswith("free HBM is not enough"):
            warn(f"line {lineno}: benchmark skipped a table (free HBM is not enough)"
                 f" dim={state['dim']} capacity={state['capacity']}")
            continue
        if not line.startswith("|"):
            continue
        cs, closed = cells(line)
        if not cs:
            continue
        if set(line.replace("|", "").replace(":", "").strip()) <= {"-"}:
            continue  # separator row
        if not RE_NUM.match(cs[0]):
            header = cs[1:]  # first column is the load factor (lambda)
            continue
        if header is None:
            warn(f"line {lineno}: data row without a header, skipped")
            continue
        if state["dim"] is None:
            warn(f"line {lineno}: data row before any '* dim = ...' line, skipped")
            continue
        if not closed:
            warn(f"line {lineno}: row not closed by '|' (run cut short?)")
        lf = float(cs[0])
        hybrid = state["hybrid"]
        if hybrid is None:
            hybrid = (state["hmem_gb"] or 0) > 0
        for name, val in zip(header, cs[1:]):
            if not RE_NUM.match(val):
                warn(f"line {lineno}: {name}: not a number: {val!r}")
                continue
            v = float(val)
            rec = {"op": name, "dim": state["dim"], "capacity": state["capacity"],
                   "load_factor": lf, "hybrid": hybrid, "bkv_per_s": v,
                   "kv_per_s": v * 2 ** 30, "batch": state["batch"],
                   "hbm_gb": state["hbm_gb"], "hmem_gb": state["hmem_gb"],
                   "gpu": state["gpu"]}
            out.write(json.dumps(rec) + "\n")
            n += 1
        if len(cs) - 1 > len(header):
            warn(f"line {lineno}: more values than header columns")
    return n


def main(argv):
    def warn(msg):
        sys.stderr.write("parse.py: " + msg + "\n")

    n = 0
    if len(argv) > 1:
        for path in argv[1:]:
            with open(path, encoding="utf-8", errors="replace") as f:
                n += parse(f, sys.stdout, warn)
    else:
        n = parse(sys.stdin, sys.stdout, warn)
    if n == 0:
        warn("no values found")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
