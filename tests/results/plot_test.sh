#!/usr/bin/env bash
# results/plot_report.py on real reports: plot_test.sh EMBSCALE MPIEXEC
# - a sweep (widths 8 and 32 x ranks 1 and 2 at one global batch, 2 repetitions) drawn through
#   `embscale report --plot`: phase breakdown, throughput against both axes, strong scaling, ...
# - two `embscale run --id` reports (1 and 2 ranks, the same batch per rank) joined by
#   `embscale merge`, drawn by the script itself: weak scaling, no sweep_axes attribute; one of
#   them holds a table (added by h5py), which `report` lists, merge keeps and the script draws.
# - a collectives report (built by h5py): busbw and overhead plots, compare and merge of such
#   reports, and their refusal to mix it with run reports.
# - bad input (missing file, not HDF5, no schema_version, schema version 7, an unknown
#   report_kind): exit 2, file named.
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

# A collectives report (results/schema.md "Collectives reports"), built by h5py as `embscale
# collectives` lays it out: report --plot draws bus bandwidth and overhead and none of the run
# plots; compare pairs its runs and gates the step time alone; compare and merge refuse to mix
# it with a run report, naming both files and their kinds; a merge of two keeps the kind.
collectives_report() {  # collectives_report FILE RUN_ID_PREFIX SEED
  "$python" - "$@" <<'PY'
import sys, h5py, numpy as np
path, prefix, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng, ranks, iterations = np.random.default_rng(seed), 2, 20
factor = {"allreduce": 2 * (ranks - 1) / ranks, "alltoallv": (ranks - 1) / ranks, "bcast": 1.0}
# (collective, counts, type, redop, root, placement, element bytes, bare MPI call?)
kinds = [("allreduce", "equal", "float", "sum", -1, "out_of_place", 4, True),
         ("allreduce", "equal", "float", "sum", -1, "in_place", 4, True),
         ("allreduce", "equal", "int32", "max", -1, "out_of_place", 4, True),
         ("alltoallv", "equal", "float", "none", -1, "out_of_place", 4, True),
         ("alltoallv", "skewed", "float", "none", -1, "out_of_place", 4, True),
         ("bcast", "equal", "half", "none", 0, "out_of_place", 2, False)]
rows = []
with h5py.File(path, "w") as f:
    f.attrs["schema_version"] = np.int64(1)
    f.attrs["report_kind"] = np.bytes_("collectives")
    f.attrs["ranks"] = np.int64(ranks)
    f.attrs["hosts"] = np.bytes_("localhost (2 ranks)")
    for collective, counts, dtype, redop, root, placement, width, bare in kinds:
        for size in (1024, 4096, 16384, 65536):
            run_id = f"{prefix}{collective}.{counts}.{dtype}.{redop}.{placement}.{size}"
            seconds = (5e-6 + size / 2e9) * (1.8 if counts == "skewed" else 1.0)
            per_rank = seconds * (1 + 0.02 * rng.random((iterations, ranks)))
            params = {"collective": collective, "counts": counts, "type": dtype, "redop": redop, "root": root,
                      "placement": placement, "blocking": 1, "size_bytes": size, "count": size // width,
                      "ranks": ranks, "iterations": iterations}
            if counts == "skewed":
                params.update(scheme="key % ranks", zipf_alpha=1.05)
            run = f.create_group(f"runs/{run_id}", track_order=True)
            for k, v in params.items():
                run.attrs[k] = np.bytes_(v) if isinstance(v, str) else (np.float64(v) if isinstance(v, float) else np.int64(v))
            run.attrs["phases"] = np.bytes_("collective")
            run.attrs["phase_meanings"] = np.bytes_("collective: one call of the collective through the Communicator")
            run.attrs["samples"] = np.bytes_("raw")
            run["timings/collective"] = per_rank
            sent = np.full((iterations, ranks), size // ranks, dtype=np.int64)
            if counts == "skewed":
                sent[:, 0] *= 3
            run["counters/bytes_sent"] = sent
            run["counters/bytes_recv"] = sent[:, ::-1]
            run["series/step_time"] = per_rank.mean(axis=1)
            mpi = per_rank.mean(axis=1) / 1.03
            if bare:
                run["series/mpi_time"] = mpi
            time_us = per_rank.mean() * 1e6
            mpi_us = mpi.mean() * 1e6 if bare else np.nan
            means = per_rank.mean(axis=0) * 1e6
            send, recv = sent.mean(axis=0).astype(float), sent[:, ::-1].mean(axis=0).astype(float)
            rows.append((run_id, collective, counts, dtype, redop, root, placement, 1, size, size // width, ranks,
                         iterations, params.get("scheme", ""), params.get("zipf_alpha", 0.0), time_us, means.min(),
                         means.max(), size / time_us / 1e3, size / time_us / 1e3 * factor[collective], 0, mpi_us,
                         time_us / mpi_us - 1, send.max(), send.mean(), send.max() / send.mean(), recv.max(),
                         recv.mean(), recv.max() / recv.mean()))
    names = ["run_id", "collective", "counts", "type", "redop", "root", "placement", "blocking", "size_bytes", "count",
             "ranks", "iterations", "scheme", "zipf_alpha", "time_us", "time_min_us", "time_max_us", "algbw_GBps",
             "busbw_GBps", "wrong", "mpi_time_us", "overhead", "send_bytes_max", "send_bytes_mean", "send_imbalance",
             "recv_bytes_max", "recv_bytes_mean", "recv_imbalance"]
    def kind(i):
        values = [r[i] for r in rows]
        if isinstance(values[0], str):
            return f"S{max(1, max(len(v) for v in values))}"
        return "<i8" if isinstance(values[0], int) else "<f8"
    table = np.array([tuple(v.encode() if isinstance(v, str) else v for v in r) for r in rows],
                     dtype=[(n, kind(i)) for i, n in enumerate(names)])
    f["summary"] = table
PY
}
collectives_report "$work/coll.h5" "" 1 || fail "h5py could not write a collectives report"
collectives_report "$work/coll_again.h5" "" 2 || fail "h5py could not write the second collectives report"
collectives_report "$work/coll_other.h5" "b." 3 || fail "h5py could not write the third collectives report"
"$embscale" report "$work/coll.h5" --plot "$work/coll" >"$work/report.txt" 2>&1 ||
  fail "report --plot on a collectives report failed: $(cat "$work/report.txt")"
grep -qx "  report_kind: collectives" "$work/report.txt" || fail "report does not say the kind: $(cat "$work/report.txt")"
expect_pngs "$work/coll" "$work/report.txt" busbw_allreduce busbw_alltoallv busbw_bcast overhead
for name in phase_breakdown step_time imbalance throughput_vs_size_bytes; do
  [ ! -e "$work/coll/$name.png" ] || fail "a collectives report got the run plot $name.png"
done
"$embscale" compare --json "$work/coll.h5" "$work/coll_again.h5" >"$work/cmp.json" 2>"$work/cmp.txt" ||
  fail "compare of two collectives reports exited $?: $(cat "$work/cmp.txt")"
"$python" - "$work/cmp.json" <<'PY' || fail "compare of two collectives reports: $(cat "$work/cmp.json")"
import json, sys
c = json.load(open(sys.argv[1]))
gated = {f["figure"] for f in c["figures"] if f["gated"]}
figures = {f["figure"] for f in c["figures"]}
assert c["matched_runs"] == 24 and c["gated_tests"] == 24, (c["matched_runs"], c["gated_tests"])
assert gated == {"step_time"}, gated
assert figures == {"step_time", "phase:collective", "bytes_sent", "mpi_time"}, figures
assert not c["regression"] and not c.get("warnings"), c.get("warnings")
PY
"$embscale" compare "$work/r1.h5" "$work/coll.h5" >"$work/cmp.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "compare of a run and a collectives report: exit $code, expected 2: $(cat "$work/cmp.txt")"
grep -qF "cannot compare reports of different kinds (root attribute report_kind): $work/r1.h5 is a run report, $work/coll.h5 a collectives report" \
  "$work/cmp.txt" || fail "compare of two kinds: $(cat "$work/cmp.txt")"
"$embscale" merge -o "$work/mixed.h5" "$work/coll.h5" "$work/r2.h5" >"$work/out.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "merge of two kinds: exit $code, expected 2: $(cat "$work/out.txt")"
grep -qF "cannot merge reports of different kinds (root attribute report_kind): $work/coll.h5 is a collectives report, $work/r2.h5 a run report" \
  "$work/out.txt" || fail "merge of two kinds: $(cat "$work/out.txt")"
[ ! -e "$work/mixed.h5" ] || fail "a refused merge left $work/mixed.h5"
"$embscale" merge -o "$work/coll_merged.h5" "$work/coll.h5" "$work/coll_other.h5" >"$work/out.txt" 2>&1 ||
  fail "merge of two collectives reports failed: $(cat "$work/out.txt")"
"$embscale" report "$work/coll_merged.h5" >"$work/report.txt" 2>&1 && grep -qx "  report_kind: collectives" "$work/report.txt" ||
  fail "the merged collectives report lost its kind: $(cat "$work/report.txt")"

# Bad input: the script, and `embscale report --plot` passing its exit 2 on.
echo "not a report" >"$work/text.h5"
"$python" -c "import h5py, sys; h5py.File(sys.argv[1], 'w').attrs['schema_version'] = 7" "$work/v7.h5"
"$python" -c "import h5py, sys; h5py.File(sys.argv[1], 'w').attrs['x'] = 1" "$work/plain.h5"
"$python" -c "import h5py, sys; f = h5py.File(sys.argv[1], 'w'); f.attrs['schema_version'] = 1; f.attrs['report_kind'] = 'future'" \
  "$work/future.h5"
expect_bad "$work/missing.h5" "no such report file"
expect_bad "$work/text.h5" "not an HDF5 file"
expect_bad "$work/plain.h5" "not an embscale report (no root attribute schema_version)"
expect_bad "$work/v7.h5" "report schema version 7, this script reads version 1"
expect_bad "$work/future.h5" "a report of kind 'future' (root attribute report_kind), this script draws run and collectives reports"
"$embscale" report "$work/text.h5" --plot "$work/bad" >"$work/bad.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "report --plot on a bad report: exit $code, expected 2"
grep -qF "$work/text.h5: not an HDF5 file" "$work/bad.txt" || fail "report --plot on a bad report: $(cat "$work/bad.txt")"
echo "PASS [plot]"
