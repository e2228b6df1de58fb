#!/usr/bin/env python3
"""scripts/gpu-results on a made-up gpu-check log, benchmark file and HierarchicalKV output (as
bench/peers/hkv/parse_hkv.py reads it from HKV's printed table): the machine and each test's
verdict are read from the log, every figure of ours gets HKV's figure of the same operation,
dim, capacity, load factor and memory mode and the exact ratio, and a figure HKV lacks gets
none. Exit 0 when every check holds."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LOG = """== machine
date: 2026-11-28T09:00:00Z  host: gpu1
embscale: 1234567890ab
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)
name, driver_version, memory.total [MiB], clocks.max.sm [MHz], clocks.max.memory [MHz]
NVIDIA H100 80GB HBM3, 580.159, 81559 MiB, 1980 MHz, 2619 MHz
Cuda compilation tools, release 13.0, V13.0.88
+ /b/embscale_gpu_tests
PASS: 10 checks
+ /b/embscale_gpu_kv_table_tests
FAIL kv_table_gpu_test.cu:1: outcomes differ
+ compute-sanitizer --tool memcheck --error-exitcode 1 /b/embscale_gpu_kv_table_tests --quick
PASS: 3 checks
"""

HKV_OUTPUT = """
## Benchmark

* GPU: 1 x NVIDIA H100 80GB HBM3: 9.0
* Key Type = uint64_t
* Value Type = float32 * {dim}
* Key-Values per OP = 1048576
* Evict strategy: LRU
* ***Throughput Unit: Billion-KV/second***

* capacity_kv = 134217728
### On pure HBM mode: 
* dim = 8, capacity = 128 Million-KV, HBM = 4 GB, HMEM = 0 GB

|    \u03bb | insert_or_assign | find |
|-----:|-----------------:|-----:|
| 0.50 |            1.500 | 4.000 |
| 0.75 |            1.250 | 3.500 |
"""


def result(op, lf, keys_per_s):
    return {"op": op, "dim": 8, "capacity": 134217728, "load_factor": lf, "inserted_per_slot": lf, "hybrid": False,
            "seconds": 1048576 / keys_per_s, "keys_per_s": keys_per_s, "bkv_per_s": keys_per_s * 1e-9,
            "fraction_of_gather": 0.5}


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        paths = {name: os.path.join(d, name) for name in ("log.txt", "bench.json", "hkv_raw.txt", "hkv.jsonl", "r.json")}
        with open(paths["log.txt"], "w", encoding="utf-8") as f:
            f.write(LOG)
        with open(paths["hkv_raw.txt"], "w", encoding="utf-8") as f:
            f.write(HKV_OUTPUT)
        bench = {"device": "NVIDIA H100 80GB HBM3", "batch": 1048576, "hit_rate": 0.6, "reps": 20,
                 "copy_gb_per_s": 3000.0, "gather_seconds": {"8": 1e-4},
                 "results": [result("find", 0.5, 4.0 * 2**30 * 0.9), result("insert_or_assign", 0.75, 1.25 * 2**30 * 2),
                             result("find_or_insert", 0.5, 1e9)]}
        with open(paths["bench.json"], "w", encoding="utf-8") as f:
            json.dump(bench, f)
        with open(paths["hkv.jsonl"], "w", encoding="utf-8") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "bench/peers/hkv/parse_hkv.py"), paths["hkv_raw.txt"]],
                           stdout=f, check=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/gpu-results"), "--out", paths["r.json"], "--log",
                        paths["log.txt"], "--bench", paths["bench.json"], "--hkv", paths["hkv.jsonl"],
                        "--hkv-commit", "ae24"], check=True, stdout=subprocess.DEVNULL)
        with open(paths["r.json"], encoding="utf-8") as f:
            r = json.load(f)
    m = r["machine"]
    check(m.get("gpu") == "NVIDIA H100 80GB HBM3" and m.get("driver") == "580.159" and
          m.get("commit") == "1234567890ab" and "13.0" in m.get("nvcc", ""), f"machine: {m}")
    check(r["tests"] == {"embscale_gpu_tests": "pass", "embscale_gpu_kv_table_tests": "failed",
                         "embscale_gpu_kv_table_tests (compute-sanitizer)": "pass"}, f"tests: {r['tests']}")
    check(r["limits"]["copy_gb_per_s"] == 3000.0, "limits")
    check(len(r["hkv"]["records"]) == 4 and r["hkv"]["commit"] == "ae24", "HKV's records")
    by_op = {x["op"]: x for x in r["kv_table"]}
    check(abs(by_op["find"]["ratio_to_hkv"] - 0.9) < 1e-9, f"find ratio {by_op['find']['ratio_to_hkv']}")
    check(abs(by_op["find"]["hkv_keys_per_s"] - 4.0 * 2**30) < 1e-3, "HKV's find in keys per second (x 2^30)")
    check(abs(by_op["insert_or_assign"]["ratio_to_hkv"] - 2.0) < 1e-9, "insert ratio at load factor 0.75")
    check(by_op["find_or_insert"]["ratio_to_hkv"] is None and by_op["find_or_insert"]["hkv_keys_per_s"] is None,
          "no HKV figure, no ratio")
    for f in failures:
        print("FAIL:", f)
    print("gpu_results_test:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
