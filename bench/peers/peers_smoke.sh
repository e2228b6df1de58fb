#!/usr/bin/env bash
# Smoke tests of bench/peers at a small scale (T=32 tables of 1000 rows, D=16, B=32, L=4; not
# timed assertions):
#   peers_smoke.sh embscale BINARY   (ctest peers_bench_smoke) embscale_peers_bench runs every
#       mode on 1 and 2 threads (forward checks its pooled outputs against the rows' sums), writes
#       its batches in FBGEMM's table-major layout (checked against the engine's own batch size and
#       key range), refuses a bad mode (exit 2), and bench/peers/run without a venv says it skipped
#       and exits 0;
#   peers_smoke.sh peers BINARY      (ctest peers_compare_smoke) compare.py with FBGEMM and torch
#       in the venv of scripts/peers-venv: one round, the table printed with its ratios and torch's
#       row-wise AdaGrad as n/a. Exit 77 (skipped) when there is no venv.
set -euo pipefail
mode=${1:?usage: peers_smoke.sh embscale|peers PATH/TO/embscale_peers_bench}
binary=${2:?usage: peers_smoke.sh embscale|peers PATH/TO/embscale_peers_bench}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small=(--set "layers.data.slot_size_array=[$(printf '1000,%.0s' {1..31})1000]"
       --set layers.emb1.sparse_embedding_hparam.embedding_vec_size=16 --set solver.batchsize=32
       --set layers.data.synthetic.nnz_per_slot=4)
fail() { echo "peers_smoke: $*" >&2; exit 1; }

if [ "$mode" = embscale ]; then
  for threads in 1 2; do
    for m in forward sgd rowwise_adagrad; do
      OMP_NUM_THREADS=$threads "$binary" --config "$here/peers.json" "${small[@]}" --mode $m --batches 2 \
        --repetitions 2 >"$work/$m.json" || fail "$m on $threads threads exited $?"
      /usr/bin/python3 - "$work/$m.json" "$m" "$threads" <<'PY' || fail "$m on $threads threads: bad output"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["impl"] == "embscale" and out["mode"] == sys.argv[2] and out["threads"] == int(sys.argv[3]), out
assert len(out["per_batch_s"]) == 2 and all(t > 0 for t in out["per_batch_s"]), out
assert out["keys_per_batch"] == 32 * 32 * 4, out
assert "pool" in out["phases_s"] and ("update" in out["phases_s"]) == (sys.argv[2] != "forward"), out
PY
    done
  done
  # The GPU step on the stand-in device library (tests/device; ctest gives its path), where given:
  # the same output, its phases from the event clock, and the pooled check passing.
  if [ -n "${EMBSCALE_TEST_FAKE_DEVICE:-}" ]; then
    for m in forward sgd rowwise_adagrad; do
      EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE "$binary" --config "$here/peers.json" "${small[@]}" --mode $m \
        --device gpu --batches 2 --repetitions 2 >"$work/gpu-$m.json" || fail "$m on the GPU stand-in exited $?"
      /usr/bin/python3 - "$work/gpu-$m.json" "$m" <<'PY' || fail "$m on the GPU stand-in: bad output"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["impl"] == "embscale" and out["mode"] == sys.argv[2] and out["device"] == "gpu", out
assert len(out["per_batch_s"]) == 2 and all(t > 0 for t in out["per_batch_s"]), out
assert "pool" in out["phases_s"] and ("update" in out["phases_s"]) == (sys.argv[2] != "forward"), out
PY
    done
  fi
  "$binary" --config "$here/peers.json" "${small[@]}" --batches 2 --write-batches "$work/batches.bin" ||
    fail "--write-batches exited $?"
  /usr/bin/python3 - "$work/batches.bin" <<'PY' || fail "the batch file is not in FBGEMM's layout"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"EMBPEER1"
count, B, T, E, D = struct.unpack_from("<5q", data, 8)
assert (count, B, T, E, D) == (2, 32, 32, 1000, 16), (count, B, T, E, D)
at = 48
for _ in range(count):
    (n,) = struct.unpack_from("<q", data, at)
    offsets = struct.unpack_from(f"<{T * B + 1}q", data, at + 8)
    indices = struct.unpack_from(f"<{n}q", data, at + 8 + 8 * (T * B + 1))
    assert offsets == tuple(range(0, 4 * T * B + 1, 4)), "4 keys a bag, every bag in order"
    assert all(0 <= i < E for i in indices), "rows of their own table"
    at += 8 + 8 * (T * B + 1) + 8 * n
assert at == len(data), "nothing after the last batch"
PY
  set +e
  "$binary" --config "$here/peers.json" --mode backward >/dev/null 2>&1
  code=$?
  set -e
  [ "$code" -eq 2 ] || fail "an unknown mode exited $code, expected 2"
  out=$(EMBSCALE_PEERS_VENV="$work/no-venv" "$here/run") || fail "bench/peers/run without a venv exited $?"
  [ "$out" = "skipped: no peers venv at $work/no-venv; run scripts/peers-venv" ] || fail "unexpected skip message: $out"
  echo "peers_smoke embscale: ok"
  exit 0
fi

[ "$mode" = peers ] || fail "unknown mode $mode (expected embscale or peers)"
venv=${EMBSCALE_PEERS_VENV:-$HOME/.cache/embscale/peers-venv}
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.embscale-pins" ]; then
  echo "skipped: no peers venv at $venv; run scripts/peers-venv"
  exit 77
fi
"$venv/bin/python" "$here/compare.py" --binary "$binary" --config "$here/peers.json" "${small[@]}" --threads 1 \
  --distributions zipf --modes forward,rowwise_adagrad --rounds 1 --batches 2 --repetitions 1 \
  >"$work/table.txt" 2>"$work/progress.txt" || { cat "$work/progress.txt" >&2; fail "compare.py exited $?"; }
grep -q "torch 2.14.1" "$work/table.txt" && grep -q "fbgemm_gpu 1.9.0" "$work/table.txt" || fail "versions missing"
grep -Eq "^zipf +1 forward .*[0-9]+\.[0-9]+ \[.*[0-9]+\.[0-9]+ \[.*[0-9]+\.[0-9]+ \[" "$work/table.txt" ||
  fail "no forward row with three times: $(cat "$work/table.txt")"
grep -Eq "^zipf +1 rowwise_adagrad .* n/a " "$work/table.txt" || fail "torch's row-wise AdaGrad is not n/a"
echo "peers_smoke peers: ok"
