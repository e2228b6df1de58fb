#!/usr/bin/env bash
# results/plot_report.py on real reports: plot_test.sh EMBSCALE MPIEXEC
# - a sweep (widths 8 and 32 x ranks 1 and 2 at one global batch, 2 repetitions) drawn through
#   `embscale report --plot`: phase breakdown, throughput against both axes, strong scaling, ...
# - two `embscale run --id` reports (1 and 2 ranks, the same batch per rank) joined by
#   `embscale merge`, drawn by the script itself: weak scaling, no sweep_axes attribute; one of
#   them holds a table (added by h5py), which `report` lists, merge keeps and the script draws.
# - bad input (missing file, not HDF5, no schema_version, schema version 7): exit 2, file named.
# Each expected PNG must be a PNG, non-empty and named on stdout. Exit 77 (skip) without merge.
set -uo pipefail
embscale=$1
mpiexec=$2
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../results/plot_report.py"
config="$here/../../bench/configs/default.json"
python=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_plot.XXXXXX")
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [plot]: $*" >&2; exit 1; }

"$embscale" merge --help >/dev/null 2>&1 || { echo "SKIP [plot]: this embscale has no merge"; exit 77; }

# expect_pngs DIR STDOUT NAME...: each DIR/NAME.png is a non-empty PNG named in STDOUT.
expect_pngs() {
  local dir=$1 out=$2; shift 2
  for name in "$@"; do
    local file="$dir/$name.png"
    [ -s "$file" ] || fail "$name.png was not written (there: $(ls "$dir" | tr '\n' ' '))"
    [ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$name.png is not a PNG"
    grep -qF "$file" "$out" || fail "$name.png is not named on stdout: $(cat "$out")"
  done
}

# expect_bad FILE MESSAGE: the script exits 2 on FILE, naming it with MESSAGE.
expect_bad() {
  "$python" "$script" "$1" "$work/bad" >"$work/bad.txt" 2>&1
  local code=$?
  [ "$code" -eq 2 ] || fail "$1: exit $code, expected 2: $(cat "$work/bad.txt")"
  grep -qF "$1: $2" "$work/bad.txt" || fail "$1: expected '$1: $2', got: $(cat "$work/bad.txt")"
}

# The sweep, through `embscale report --plot`.
cat >"$work/sweep.json" <<JSON
{"sweep_version": 1, "base": "$config",
 "grid": {"layers.emb1.sparse_embedding_hparam.embedding_vec_size": [8, 32], "ranks": [1, 2], "solver.max_iter": [6]},
 "repetitions": 2}
JSON
"$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$work/sweep.json" -o "$work/sweep.h5" --quiet >"$work/out.txt" 2>&1 ||
  fail "sweep failed: $(cat "$work/out.txt")"
"$embscale" report "$work/sweep.h5" --plot "$work/sweep" >"$work/report.txt" 2>&1 ||
  fail "report --plot failed: $(cat "$work/report.txt")"
expect_pngs "$work/sweep" "$work/report.txt" phase_breakdown imbalance loss step_time scaling_strong \
  throughput_vs_layers_emb1_sparse_embedding_hparam_embedding_vec_size throughput_vs_ranks
[ ! -e "$work/sweep/scaling_weak.png" ] || fail "no weak-scaling study in the sweep, yet scaling_weak.png was drawn"

# Two runs and a merge: 512 samples per rank at 1 and 2 ranks.
for ranks in 1 2; do
  "$mpiexec" -n "$ranks" --oversubscribe "$embscale" run "$config" --id "r$ranks" --quiet -o "$work/r$ranks.h5" \
    --set solver.max_iter=6 solver.batchsize=$((512 * ranks)) >"$work/out.txt" 2>&1 ||
    fail "run on $ranks ranks failed: $(cat "$work/out.txt")"
done
# A table (results/schema.md "Tables") added to r1 by h5py as another tool would: `report` lists
# it, merge keeps it (h5py reads it back from the merged file), the script draws it.
"$python" - "$work/r1.h5" <<'PY' || fail "h5py could not add a table to r1.h5"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    d = f.create_dataset("runs/r1/eviction/hit_rate", data=np.array([[1, .5, .6], [2, .7, .8], [3, .75, .9], [4, .8, .9]]))
    d.attrs["columns"] = "step,table,lru"
    d.attrs["meaning"] = "hit rate per step"
PY
"$embscale" report "$work/r1.h5" >"$work/report.txt" 2>&1 || fail "report r1.h5 failed: $(cat "$work/report.txt")"
grep -qx "  table eviction/hit_rate: 4 x 3" "$work/report.txt" || fail "report does not list the table: $(cat "$work/report.txt")"
"$embscale" merge -o "$work/merged.h5" "$work/r1.h5" "$work/r2.h5" >"$work/out.txt" 2>&1 ||
  fail "merge failed: $(cat "$work/out.txt")"
"$embscale" report "$work/merged.h5" >"$work/report.txt" 2>&1 || fail "report merged.h5 failed: $(cat "$work/report.txt")"
grep -qx "  table eviction/hit_rate: 4 x 3 in 1 of 2 runs" "$work/report.txt" ||
  fail "report does not list the merged table: $(cat "$work/report.txt")"
"$python" - "$work/r1.h5" "$work/merged.h5" <<'PY' || fail "the merged table differs from the input's"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["runs/r1/eviction/hit_rate"] for p in sys.argv[1:])
assert b.dtype == np.float64 and (a[()] == b[()]).all() and dict(a.attrs) == dict(b.attrs), (b[()], dict(b.attrs))
PY
"$python" "$script" "$work/merged.h5" "$work/merged" >"$work/plot.txt" 2>&1 || fail "plotting the merge failed: $(cat "$work/plot.txt")"
expect_pngs "$work/merged" "$work/plot.txt" phase_breakdown imbalance loss step_time scaling_weak throughput_vs_ranks \
  eviction_r1
[ ! -e "$work/merged/eviction_r2.png" ] || fail "r2 has no table, yet eviction_r2.png was drawn"
[ ! -e "$work/merged/scaling_strong.png" ] || fail "no strong-scaling study in the merge, yet scaling_strong.png was drawn"
[ ! -e "$work/merged/throughput_vs_batchsize.png" ] || fail "batchsize follows ranks in the merge: drawn twice"

# Bad input: the script, and `embscale report --plot` passing its exit 2 on.
echo "not a report" >"$work/text.h5"
"$python" -c "import h5py, sys; h5py.File(sys.argv[1], 'w').attrs['schema_version'] = 7" "$work/v7.h5"
"$python" -c "import h5py, sys; h5py.File(sys.argv[1], 'w').attrs['x'] = 1" "$work/plain.h5"
expect_bad "$work/missing.h5" "no such report file"
expect_bad "$work/text.h5" "not an HDF5 file"
expect_bad "$work/plain.h5" "not an embscale report (no root attribute schema_version)"
expect_bad "$work/v7.h5" "report schema version 7, this script reads version 1"
"$embscale" report "$work/text.h5" --plot "$work/bad" >"$work/bad.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "report --plot on a bad report: exit $code, expected 2"
grep -qF "$work/text.h5: not an HDF5 file" "$work/bad.txt" || fail "report --plot on a bad report: $(cat "$work/bad.txt")"
echo "PASS [plot]"
