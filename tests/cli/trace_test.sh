#!/usr/bin/env bash
# End-to-end tests of `embscale trace`: trace_test.sh EMBSCALE CASE
# Each case exits non-zero with a message naming what went wrong.
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" trace "$1" "" "$2"

# Runs embscale with the arguments; stdout in $work/out.txt, stderr in $work/err.txt, code in $rc.
run() {
  "$embscale" "$@" >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
}

# Expects exit code 2 and a message containing $1 on stderr.
expect_bad_input() {
  local expected=$1; shift
  run "$@"
  [ "$rc" -eq 2 ] || fail "exit code $rc, expected 2; stderr: $(cat "$work/err.txt")"
  grep -qF -- "$expected" "$work/err.txt" || fail "stderr lacks '$expected': $(cat "$work/err.txt")"
}

# A one-hot variant of the default (Raw holds one key per slot), 3 iterations of 512 samples.
one_hot_config() {
  sed -e 's/"nnz_per_slot": 4/"nnz_per_slot": 1/' -e 's/"batchsize": 4096/"batchsize": 512/' \
      "$configs/default.json" >"$work/one_hot.json"
  echo "$work/one_hot.json"
}

case "$case_name" in
  trace_generate_stats)
    # Every synthetic feature at once; the trace holds iterations x batch samples, deterministically.
    run trace generate "$configs/workload_features.json" --iterations 4 -o "$work/a.emb"
    [ "$rc" -eq 0 ] || fail "generate failed ($rc): $(cat "$work/err.txt")"
    grep -q "wrote 8192 samples" "$work/out.txt" || fail "$(cat "$work/out.txt")"
    grep -q "slot 2: mixture of 90% hotspot" "$work/out.txt" || fail "no per-slot description: $(cat "$work/out.txt")"
    run trace generate "$configs/workload_features.json" --iterations 4 -o "$work/b.emb" --quiet
    cmp -s "$work/a.emb" "$work/b.emb" || fail "two generations of one config differ"
    [ "$(ls -A "$work")" = "$(printf 'a.emb\nb.emb\nerr.txt\nout.txt')" ] || fail "stray files: $(ls -A "$work")"
    run trace stats "$work/a.emb" --json
    [ "$rc" -eq 0 ] || fail "stats failed ($rc): $(cat "$work/err.txt")"
    python3 - "$work/out.txt" <<'PY' || fail "stats JSON: $(head -c 2000 "$work/out.txt")"
import json, sys
stats = json.load(open(sys.argv[1]))
total = stats["total"]
assert total["records"] == 8192, total["records"]
assert total["accesses"] == 8192 * (4 + 8 + 3 + 1), total["accesses"]
assert len(stats["slots"]) == 4
assert stats["slots"][1]["bag_nnz_min"] == 8 and stats["slots"][1]["bag_nnz_max"] == 8
assert "reuse" in stats
PY
    run trace stats "$work/a.emb"
    grep -q "reuse distances" "$work/out.txt" || fail "no reuse table: $(cat "$work/out.txt")"
    ;;
  trace_convert_roundtrip)
    # embscale -> Norm (checksum mode, 32-bit keys) -> embscale: the statistics agree exactly.
    run trace generate --iterations 2 -o "$work/a.emb" --quiet
    [ "$rc" -eq 0 ] || fail "generate failed: $(cat "$work/err.txt")"
    run trace convert "$work/a.emb" -o "$work/a.norm" --to norm --checksum --out-key-type I32
    [ "$rc" -eq 0 ] || fail "convert to norm failed: $(cat "$work/err.txt")"
    printf '1\n%s\n' "$work/a.norm" >"$work/list.txt"
    run trace convert "$work/list.txt" --key-type I32 --config "$configs/default.json" -o "$work/b.emb"
    [ "$rc" -eq 0 ] || fail "convert from the Norm file list failed: $(cat "$work/err.txt")"
    "$embscale" trace stats "$work/a.emb" --json >"$work/a.json" || fail "stats a"
    "$embscale" trace stats "$work/b.emb" --json >"$work/b.json" || fail "stats b"
    cmp -s "$work/a.json" "$work/b.json" || fail "statistics differ after a round trip through Norm"
    ;;
  trace_raw)
    # Raw: one-hot, no header: the format and the shape must be given (here by the config).
    cfg=$(one_hot_config)
    run trace generate "$cfg" --iterations 3 --format raw -o "$work/a.raw" --quiet
    [ "$rc" -eq 0 ] || fail "generate raw failed: $(cat "$work/err.txt")"
    run trace stats "$work/a.raw" --format raw --config "$cfg" --json --no-reuse
    [ "$rc" -eq 0 ] || fail "stats raw failed: $(cat "$work/err.txt")"
    grep -q '"records": 1536' "$work/out.txt" || fail "$(head -c 1000 "$work/out.txt")"
    expect_bad_input "--format raw" trace stats "$work/a.raw"
    ;;
  trace_norm_key_width)
    # A Norm file as HugeCTR writes it by default (I32 keys) reads without --key-type: the width is
    # detected and said on stderr; a wrong --key-type fails naming the right one.
    run trace generate --iterations 2 -o "$work/a.emb" --quiet
    [ "$rc" -eq 0 ] || fail "generate failed: $(cat "$work/err.txt")"
    for width in I32 I64; do
      run trace convert "$work/a.emb" -o "$work/$width.norm" --to norm --out-key-type "$width"
      [ "$rc" -eq 0 ] || fail "convert to $width Norm failed: $(cat "$work/err.txt")"
      run trace stats "$work/$width.norm" --json --no-reuse
      [ "$rc" -eq 0 ] || fail "stats of a $width Norm file without --key-type: exit $rc: $(cat "$work/err.txt")"
      grep -q '"records": 8192' "$work/out.txt" || fail "$(head -c 1000 "$work/out.txt")"
      grep -qF "note: Norm keys read as $width, detected" "$work/err.txt" || fail "no note of the width: $(cat "$work/err.txt")"
    done
    expect_bad_input "reads consistently with I32 keys, not the I64 it was read with: set the key type to I32 (\`--key-type I32\`" \
      trace stats "$work/I32.norm" --key-type I64
    expect_bad_input "--key-type: expected \"I32\" or \"I64\"" trace stats "$work/I32.norm" --key-type U8
    ;;
  trace_bad_input)
    run trace generate --iterations 1 -o "$work/a.emb" --quiet
    [ "$rc" -eq 0 ] || fail "generate failed: $(cat "$work/err.txt")"
    head -c 3000 "$work/a.emb" >"$work/cut.emb"
    expect_bad_input "$work/cut.emb" trace stats "$work/cut.emb"
    grep -qE "offset|byte" "$work/err.txt" || fail "no byte offset in: $(cat "$work/err.txt")"
    printf 'PAR1xxxx' >"$work/x.parquet"
    expect_bad_input "parquet-to-embscale.py" trace stats "$work/x.parquet"
    expect_bad_input "parquet-to-embscale.py" trace stats "$work/a.emb" --format parquet
    printf '2\n%s\n%s\n' "$work/a.emb" "$work/missing.data" >"$work/list.txt"
    expect_bad_input "missing.data" trace stats "$work/list.txt"
    # A Norm file list whose first line is not a count is reported as such (text is no Norm data
    # file); without --format text is not guessed at.
    printf 'data files\n%s\n' "$work/a.emb" >"$work/words.txt"
    expect_bad_input "$work/words.txt:1: expected the number of data files (an integer in [1, 2^31]), got \"data files\"" \
      trace stats "$work/words.txt" --format norm
    expect_bad_input "cannot tell the trace format" trace stats "$work/words.txt"
    expect_bad_input "$work/nodir/" trace generate --iterations 1 -o "$work/nodir/t.emb"
    [ ! -e "$work/nodir" ] || fail "a directory was created"
    run trace convert "$work/a.emb" -o "$work/out.raw" --to raw
    [ "$rc" -eq 2 ] || fail "a multi-hot trace written as Raw: exit $rc"
    grep -q "one-hot" "$work/err.txt" || fail "$(cat "$work/err.txt")"
    [ ! -e "$work/out.raw" ] || fail "a refused conversion left its output"
    if ls -A "$work" | grep -q '\.tmp'; then fail "temporary files left: $(ls -A "$work")"; fi
    ;;
  *)
    fail "unknown case"
    ;;
esac
