#!/usr/bin/env bash
# `embscale report --plot` on a real sweep (results/plot_report.py): plot_test.sh EMBSCALE MPIEXEC
# The sweep covers what the plots need: a swept width, ranks 1 and 2 at one global batch (strong
# scaling), repetitions. Checks that each expected PNG is a PNG, and that bad input exits 2.
set -uo pipefail
embscale=$1
mpiexec=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_plot.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [plot]: $*" >&2; exit 1; }

cat >"$work/sweep.json" <<JSON
{"base": "$here/../../bench/configs/default.json",
 "grid": {"layers.emb1.sparse_embedding_hparam.embedding_vec_size": [8, 32], "ranks": [1, 2], "solver.max_iter": [6]},
 "repetitions": 2}
JSON
"$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$work/sweep.json" -o "$work/sweep.h5" --quiet >"$work/out.txt" 2>&1 ||
  fail "sweep failed: $(cat "$work/out.txt")"
"$embscale" report "$work/sweep.h5" --plot "$work/plots" >"$work/report.txt" 2>&1 ||
  fail "report --plot failed: $(cat "$work/report.txt")"
for png in phase_breakdown throughput_vs_layers_emb1_sparse_embedding_hparam_embedding_vec_size scaling_strong \
           imbalance loss step_time; do
  file="$work/plots/$png.png"
  [ -s "$file" ] || fail "$png.png was not written: $(ls "$work/plots")"
  [ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$png.png is not a PNG"
  grep -qF "$file" "$work/report.txt" || fail "$png.png is not named on stdout"
done
[ ! -e "$work/plots/scaling_weak.png" ] || fail "no weak-scaling study in this sweep, yet scaling_weak.png was drawn"

echo "not a report" >"$work/bad.h5"
"$embscale" report "$work/bad.h5" --plot "$work/bad" >"$work/bad.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "a bad report: exit $code, expected 2"
grep -qF "$work/bad.h5: not an HDF5 file" "$work/bad.txt" || fail "$(cat "$work/bad.txt")"
/usr/bin/python3 "$here/../../results/plot_report.py" "$work/bad.h5" "$work/bad" >"$work/bad.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "the script on a bad report: exit $code, expected 2"
grep -qF "$work/bad.h5: not an HDF5 file" "$work/bad.txt" || fail "$(cat "$work/bad.txt")"
echo "PASS [plot]"
