#!/usr/bin/env bash
# Smoke test of embscale_micro_kv and kv_ratios.py (ctest kv_bench_smoke; not a timed assertion):
# every benchmark of the suite runs once at a small scale (batches of 2^12 keys, tables of 2^14
# slots, --benchmark_min_time=0.002; seconds), each checks its own result, and
#   * every expected name kv_<op>/<implementation>/dim:D/lf:L/threads:T and
#     kv_zipf_<op>/<variant>/dim:D/s:S/threads:T (8 warm-up calls) is in the JSON output, with
#     items_per_second and no error;
#   * kv_ratios.py reads the output (exit 0, the targets section printed) and refuses a
#     malformed file (exit 2, naming the file).
#
#   bench/micro/kv_bench_smoke.sh BUILD/bench/micro/embscale_micro_kv
set -euo pipefail
binary=${1:?usage: kv_bench_smoke.sh PATH/TO/embscale_micro_kv}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$binary" --kv_log2_batch=12 --kv_zipf_warmup_calls=8 --benchmark_min_time=0.002 --benchmark_out="$work/kv.json" \
  --benchmark_out_format=json >"$work/stdout.txt" 2>&1 ||
  { echo "kv_bench_smoke: $binary failed:"; tail -20 "$work/stdout.txt"; exit 1; }

python3 - "$work/kv.json" <<'PY'
import json, sys
runs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
expected = []
for dim in (8, 64):
    for lf in ("0.50", "0.75", "1.00"):
        for op in ("find", "insert_or_assign", "find_or_insert", "insert_and_evict"):
            for impl in ("embscale", "absl", "libcuckoo", "gather_limit"):
                for threads in (1, 2):
                    if impl == "absl" and op != "find" and threads == 2:
                        continue  # absl takes writes on one thread only
                    expected.append(f"kv_{op}/{impl}/dim:{dim}/lf:{lf}/threads:{threads}/real_time")
for dim in (8, 64):
    for threads in (1, 2):
        expected.append(f"kv_insert_steady/embscale/dim:{dim}/lf:1.00/threads:{threads}/real_time")
for s in ("0.80", "1.05", "1.20"):
    for dim in (8, 64):
        for variant in ("tiny_lfu", "frequency"):
            for threads in ((1, 2) if s == "1.05" else (1,)):
                for op in ("find_or_insert", "find"):
                    expected.append(f"kv_zipf_{op}/{variant}/dim:{dim}/s:{s}/threads:{threads}/manual_time")
bad = []
for name in expected:
    b = runs.get(name)
    if b is None:
        bad.append(f"{name}: missing")
    elif b.get("error_occurred"):
        bad.append(f"{name}: {b.get('error_message')}")
    elif not b.get("items_per_second", 0) > 0:
        bad.append(f"{name}: no items_per_second")
for line in bad:
    print("kv_bench_smoke:", line)
print(f"kv_bench_smoke: {len(expected) - len(bad)} of {len(expected)} benchmarks present and checked")
sys.exit(1 if bad else 0)
PY

"$here/kv_ratios.py" "$work/kv.json" >"$work/ratios.txt" ||
  { echo "kv_bench_smoke: kv_ratios.py failed on the output"; cat "$work/ratios.txt"; exit 1; }
grep -q "^targets (KV table)" "$work/ratios.txt" || { echo "kv_bench_smoke: kv_ratios.py printed no targets"; exit 1; }
grep -q "embscale/libcuckoo" "$work/ratios.txt" || { echo "kv_bench_smoke: kv_ratios.py paired nothing"; exit 1; }
grep -q "^Zipf calls, filter against none" "$work/ratios.txt" && grep -q "^find_or_insert  tiny_lfu" "$work/ratios.txt" ||
  { echo "kv_bench_smoke: kv_ratios.py printed no Zipf pairs"; cat "$work/ratios.txt"; exit 1; }

echo '{"benchmarks": [{"name": "kv_find/embscale/dim:8/lf:0.50/threads:1/real_time"}]}' >"$work/bad.json"
set +e
"$here/kv_ratios.py" "$work/bad.json" >"$work/bad.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "bad.json" "$work/bad.txt" && grep -q "kv_find/embscale/dim:8" "$work/bad.txt" ||
  { echo "kv_bench_smoke: kv_ratios.py accepted a malformed file (exit $rc):"; cat "$work/bad.txt"; exit 1; }
echo "kv_bench_smoke: passed"
