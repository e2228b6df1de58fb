#!/usr/bin/env bash
# End-to-end tests of `embscale simulate`: simulate_test.sh EMBSCALE MPIEXEC CASE
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" simulate "$@"

py=/usr/bin/python3

# Every counter a simulation and a run both record, per iteration and rank: identical (the
# simulation counts with the run's own routing). Also checks the simulation's datasets are
# [iterations, ranks] and its root attributes name it.
same_counters() {  # RUN_REPORT SIMULATION_REPORT RANKS
  "$py" - "$1" "$2" "$3" <<'PY' || fail "simulation and run disagree ($1, $2)"
import sys, h5py, numpy as np
run, sim, ranks = h5py.File(sys.argv[1]), h5py.File(sys.argv[2]), int(sys.argv[3])
assert int(sim.attrs["ranks"]) == ranks, sim.attrs["ranks"]
assert b"embscale simulate" in sim.attrs["simulation"], sim.attrs["simulation"]
r, s = run["runs/run0/counters"], sim["runs/run0/counters"]
names = ["keys", "pairs_sent", "pairs_received", "lookups", "unique_keys",
         "exchange_keys.bytes_sent", "exchange_keys.bytes_recv", "bytes_sent", "bytes_recv"]
# Several layers: their counters are "<layer>.<name>" (the simulation's phases name the layers).
layers = {t.rsplit(".", 1)[0] + "." for t in sim["runs/run0/timings"] if "." in t} or {""}
checked = 0
for name in names:
    for key in [k for k in r.keys() if k == name or any(k == p + name for p in layers)]:
        assert key in s, f"the simulation lacks counters/{key}"
        a, b = r[key][()], s[key][()]
        assert a.shape == b.shape, (key, a.shape, b.shape)
        if not np.array_equal(a, b):
            raise SystemExit(f"counters/{key}: run {a.tolist()} simulated {b.tolist()}")
        checked += 1
assert checked >= 5, f"only {checked} counters compared"
for key in sim["runs/run0/timings"]:
    assert sim["runs/run0/timings"][key].shape[1] == ranks
# The /summary figures computed from the counters: the same (bytes_sent alone, not its phase parts).
rs, ss = run["summary"][0], sim["summary"][0]
for figure in ("bytes_sent_per_step", "load_imbalance", "bytes_imbalance"):
    assert np.isclose(rs[figure], ss[figure], rtol=1e-12), (figure, rs[figure], ss[figure])
step = sim["runs/run0/series/step_time"][()]
assert len(step) == run["runs/run0/series/step_time"].shape[0] and (step > 0).all(), step
print(f"{checked} counters identical")
PY
}

# A config of three Zipf tables with one layer of scheme $1 ($2: the layer's type and fields).
write_config() {
  cat >"$work/$1.json" <<JSON
{
  "schema_version": 1,
  "solver": {"batchsize": 600, "max_iter": 3, "warmup_iter": 1, "display": 0, "seed": 5},
  "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
  "layers": [
    {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [30000, 2000, 500],
     "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": [5, 2, 1]},
     "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
     "sparse": [{"top": "data1", "slot_num": 3}]},
    {"name": "emb1", $2, "bottom": "data1", "top": "emb1",
     "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 40000, "embedding_vec_size": 8, "combiner": "sum"}}
  ]
}
JSON
}

case "$case_name" in
  simulate_equals_run)
    # On 1, 2 and 3 ranks every scheme's counters, bytes included, are those of a real run of the
    # same config.
    for scheme in row_wise distributed_slot table_wise localized_slot column_wise data_parallel all2all_dense \
                  hot_replicated; do
      case $scheme in
        all2all_dense) write_config $scheme '"type": "All2AllDenseEmbedding"' ;;
        localized_slot) write_config $scheme '"type": "LocalizedSlotSparseEmbeddingHash"' ;;
        hot_replicated) write_config $scheme '"type": "ShardedEmbedding", "sharding": "hot_replicated", "hot_rows": [200, 20, 3]' ;;
        *) write_config $scheme "\"type\": \"ShardedEmbedding\", \"sharding\": \"$scheme\"" ;;
      esac
      for ranks in 1 2 3; do
        run_on_ranks "$ranks" run -q "$work/$scheme.json" -o "$work/run.h5"
        [ "$rc" -eq 0 ] || fail "run $scheme on $ranks: $(cat "$work/err.txt")"
        "$embscale" simulate "$work/$scheme.json" --ranks "$ranks" --id run0 -o "$work/sim.h5" >"$work/sim.txt" 2>&1 ||
          fail "simulate $scheme --ranks $ranks: $(cat "$work/sim.txt")"
        same_counters "$work/run.h5" "$work/sim.h5" "$ranks" >/dev/null
      done
    done
    # Evaluation (forward only: no gradient travels), and data_parallel reading every occurrence.
    for spec in "row_wise:ShardedEmbedding" "table_wise:ShardedEmbedding" "data_parallel:ShardedEmbedding" \
                "table_row_wise:ShardedEmbedding" "all2all_dense:All2AllDenseEmbedding" \
                "hot_replicated:ShardedEmbedding"; do
      scheme=${spec%%:*} type=${spec#*:}
      hot=""
      [ "$scheme" = hot_replicated ] && hot=', "hot_rows": 50'
      write_config eval_$scheme "\"type\": \"$type\", \"sharding\": \"$scheme\", \"storage\": {\"training\": false}$hot"
      [ "$type" = ShardedEmbedding ] || write_config eval_$scheme "\"type\": \"$type\", \"storage\": {\"training\": false}"
      run_on_ranks 3 run -q "$work/eval_$scheme.json" -o "$work/run.h5"
      [ "$rc" -eq 0 ] || fail "run eval_$scheme: $(cat "$work/err.txt")"
      "$embscale" simulate "$work/eval_$scheme.json" --ranks 3 --id run0 -o "$work/sim.h5" >"$work/sim.txt" 2>&1 ||
        fail "simulate eval_$scheme: $(cat "$work/sim.txt")"
      same_counters "$work/run.h5" "$work/sim.h5" 3 >/dev/null
    done
    write_config dp_every '"type": "ShardedEmbedding", "sharding": "data_parallel", "deduplicate": false'
    run_on_ranks 2 run -q "$work/dp_every.json" -o "$work/run.h5"
    [ "$rc" -eq 0 ] || fail "run data_parallel without deduplication: $(cat "$work/err.txt")"
    "$embscale" simulate "$work/dp_every.json" --ranks 2 --id run0 -o "$work/sim.h5" >/dev/null 2>&1 ||
      fail "simulate data_parallel without deduplication"
    same_counters "$work/run.h5" "$work/sim.h5" 2 >/dev/null
    # table_row_wise, in one node and in nodes of 2 and 1.
    write_config table_row_wise '"type": "ShardedEmbedding", "sharding": "table_row_wise"'
    for spec in "2 0" "4 2" "4 1" "6 3"; do
      set -- $spec
      run_on_ranks "$1" run -q "$work/table_row_wise.json" --set "layers.emb1.ranks_per_node=$2" -o "$work/run.h5"
      [ "$rc" -eq 0 ] || fail "run table_row_wise $spec: $(cat "$work/err.txt")"
      "$embscale" simulate "$work/table_row_wise.json" --ranks "$1" --set "layers.emb1.ranks_per_node=$2" --id run0 \
        -o "$work/sim.h5" >"$work/sim.txt" 2>&1 || fail "simulate table_row_wise $spec: $(cat "$work/sim.txt")"
      same_counters "$work/run.h5" "$work/sim.h5" "$1" >/dev/null
    done
    # Its tables on the nodes table_nodes names (the planner's placement), not the greedy one.
    write_config table_nodes '"type": "ShardedEmbedding", "sharding": "table_row_wise", "ranks_per_node": 2, "table_nodes": [1, 1, 0]'
    run_on_ranks 4 run -q "$work/table_nodes.json" -o "$work/run.h5"
    [ "$rc" -eq 0 ] || fail "run table_row_wise with table_nodes: $(cat "$work/err.txt")"
    "$embscale" simulate "$work/table_nodes.json" --ranks 4 --id run0 -o "$work/sim.h5" >"$work/sim.txt" 2>&1 ||
      fail "simulate table_row_wise with table_nodes: $(cat "$work/sim.txt")"
    same_counters "$work/run.h5" "$work/sim.h5" 4 >/dev/null
    /usr/bin/python3 - "$work/run.h5" <<'PY' || fail "table_nodes [1, 1, 0]: node 1 (ranks 2, 3) does not hold slots 0 and 1"
import h5py, sys
f = h5py.File(sys.argv[1])
run = f["runs"][list(f["runs"])[0]]
lookups = run["counters"]["lookups"][()].sum(axis=0)
# slots 0 and 1 (30,000 and 2,000 keys, 5 and 2 a bag) on node 1, slot 2 (1 a bag) on node 0
assert lookups[2] + lookups[3] > 3 * (lookups[0] + lookups[1]), lookups
PY
    # A trace (the batches a run reads from a file): the same counts.
    "$embscale" trace generate "$work/row_wise.json" -o "$work/t.emb" --iterations 4 >/dev/null 2>&1 || fail "trace generate"
    sed -e 's/"format": "Synthetic"/"format": "Embscale", "source": "t.emb"/' "$work/row_wise.json" >"$work/trace.json"
    run_on_ranks 2 run -q "$work/trace.json" -o "$work/run.h5"
    [ "$rc" -eq 0 ] || fail "run of the trace: $(cat "$work/err.txt")"
    "$embscale" simulate "$work/trace.json" --ranks 2 --id run0 -o "$work/sim.h5" >"$work/sim.txt" 2>&1 ||
      fail "simulate the trace: $(cat "$work/sim.txt")"
    same_counters "$work/run.h5" "$work/sim.h5" 2 >/dev/null
    # Several layers over subsets of the slots, and an "auto" layer planned into three.
    for config in multi_layer_slot_subsets plan_mixed_tables; do
      run_on_ranks 2 run -q "$configs/$config.json" --set solver.max_iter=2 -o "$work/run.h5"
      [ "$rc" -eq 0 ] || fail "run $config: $(cat "$work/err.txt")"
      "$embscale" simulate "$configs/$config.json" --ranks 2 --iterations 2 --id run0 -o "$work/sim.h5" \
        >"$work/sim.txt" 2>&1 || fail "simulate $config: $(cat "$work/sim.txt")"
      same_counters "$work/run.h5" "$work/sim.h5" 2 >/dev/null
    done
    ;;
  simulate_report_compare)
    # A simulation's report is a run report: report prints it, compare pairs it with a run, and an
    # "auto" layer is planned for the simulated count and the plan recorded.
    "$embscale" simulate "$configs/scheme_row_wise.json" --ranks 1024 --iterations 2 -o "$work/sim.h5" \
      >"$work/sim.txt" 2>&1 || fail "simulate 1024: $(cat "$work/sim.txt")"
    grep -q "1024 ranks counted" "$work/sim.txt" || fail "no description: $(cat "$work/sim.txt")"
    "$embscale" report "$work/sim.h5" >"$work/report.txt" 2>&1 || fail "report: $(cat "$work/report.txt")"
    grep -q "row_wise" "$work/report.txt" || fail "report lacks the scheme: $(cat "$work/report.txt")"
    "$embscale" simulate "$configs/scheme_row_wise.json" --ranks 2 --iterations 3 --id run0 -o "$work/sim2.h5" >/dev/null 2>&1 ||
      fail "simulate 2"
    run_on_ranks 2 run -q "$configs/scheme_row_wise.json" --set solver.max_iter=3 -o "$work/run.h5"
    [ "$rc" -eq 0 ] || fail "run: $(cat "$work/err.txt")"
    "$embscale" compare "$work/run.h5" "$work/sim2.h5" >"$work/cmp.txt" 2>&1
    rc=$?
    [ "$rc" -le 1 ] || fail "compare exit $rc: $(cat "$work/cmp.txt")"
    grep -q "step_time" "$work/cmp.txt" || fail "compare printed no step time: $(cat "$work/cmp.txt")"
    grep -q "sim2.h5 is a simulation" "$work/cmp.txt" || fail "compare did not say the report is a simulation"
    "$embscale" simulate "$configs/plan_mixed_tables.json" --ranks 64 --iterations 2 -o "$work/auto.h5" \
      --set planner.memory_per_rank=1073741824 >"$work/auto.txt" 2>&1 || fail "simulate auto: $(cat "$work/auto.txt")"
    "$py" -c "
import sys, h5py, json
f = h5py.File('$work/auto.h5')
plan = json.loads(f['runs/simulation'].attrs['sharding_plan'])
assert plan['ranks'] == 64, plan['ranks']
" || fail "the auto layer's plan is not recorded for 64 ranks"
    ;;
  simulate_written_plan)
    # Seed 001's question end to end: the capacity plan, written elsewhere than its config (its
    # hardware path rebased), then simulated at the count it answered; distributed_slot's counted
    # loads are balanced, as the plan predicts (imbalance 1.00).
    "$embscale" plan "$configs/large/plan_seed001.json" -o "$work/plan.json" >"$work/plan.txt" 2>&1 ||
      fail "plan: $(cat "$work/plan.txt")"
    ranks=$(sed -n 's/^capacity: \([0-9]*\) ranks.*/\1/p' "$work/plan.txt")
    [ "$ranks" = 48 ] || fail "capacity $ranks, expected 48: $(cat "$work/plan.txt")"
    "$embscale" simulate "$work/plan.json" --ranks "$ranks" --iterations 3 -o "$work/sim.h5" >"$work/sim.txt" 2>&1 ||
      fail "simulate the written plan: $(cat "$work/sim.txt")"
    grep -q "8 per node" "$work/sim.txt" || fail "the plan's hardware was not read: $(cat "$work/sim.txt")"
    "$py" - "$work/sim.h5" <<'PY' || fail "the plan's loads and the counted ones disagree"
import sys, h5py
run = h5py.File(sys.argv[1])["runs/simulation"]
counted = run["counters/lookups"][()].mean(axis=0)
assert counted.shape == (48,), counted.shape
assert counted.max() / counted.mean() < 1.05, counted
PY
    ;;
  simulate_links)
    # Link classes: on one node every byte stays inside; with one rank per node every byte
    # crosses; in between the two add up to the same bytes on the wire.
    for per_node in 8 1 4; do
      "$embscale" simulate "$configs/scheme_row_wise.json" --ranks 8 --iterations 2 --ranks-per-node $per_node \
        -o "$work/links$per_node.h5" >/dev/null 2>&1 || fail "simulate --ranks-per-node $per_node"
    done
    "$py" - "$work" <<'PY' || fail "link classes"
import sys, h5py
def counters(n):
    c = h5py.File(f"{sys.argv[1]}/links{n}.h5")["runs/simulation/counters"]
    return {k: c[k][()] for k in ("bytes_sent", "bytes_sent_intra_node", "bytes_sent_inter_node")}
one, each, four = counters(8), counters(1), counters(4)
assert (one["bytes_sent_inter_node"] == 0).all() and (one["bytes_sent_intra_node"] > 0).all()
assert (each["bytes_sent_intra_node"] == 0).all() and (each["bytes_sent_inter_node"] == one["bytes_sent_intra_node"]).all()
wire = one["bytes_sent_intra_node"]
total = four["bytes_sent_intra_node"] + four["bytes_sent_inter_node"]
assert (abs(total - wire) <= 2).all(), (total, wire)
assert (four["bytes_sent_intra_node"] > 0).all() and (four["bytes_sent_inter_node"] > 0).all()
PY
    ;;
  simulate_bad_input)
    "$embscale" simulate "$configs/parameter_server.json" --ranks 4 -o "$work/x.h5" >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [ "$rc" -eq 2 ] || fail "parameter server: exit $rc, expected 2"
    grep -q "layers\[" "$work/err.txt" && grep -q "parameter_server" "$work/err.txt" ||
      fail "parameter server: $(cat "$work/err.txt")"
    "$embscale" simulate "$configs/scheme_table_row_wise.json" --ranks 6 --ranks-per-node 4 -o "$work/x.h5" \
      >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "ranks_per_node" "$work/err.txt" || fail "6 ranks in nodes of 4: exit $rc: $(cat "$work/err.txt")"
    "$embscale" simulate "$configs/scheme_row_wise.json" --ranks 0 -o "$work/x.h5" >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "--ranks" "$work/err.txt" || fail "--ranks 0: exit $rc: $(cat "$work/err.txt")"
    run_on_ranks 2 simulate "$configs/scheme_row_wise.json" --ranks 4 -o "$work/x.h5"
    [ "$rc" -eq 2 ] && grep -q "one process" "$work/err.txt" || fail "on 2 ranks: exit $rc: $(cat "$work/err.txt")"
    for args in "--iterations -2:--iterations" "--id a/b:--id" "--hardware $work/none.json:--hardware"; do
      flag=${args%%:*} expected=${args#*:}
      # shellcheck disable=SC2086  # $flag: a flag and its value
      "$embscale" simulate "$configs/scheme_row_wise.json" --ranks 2 $flag -o "$work/x.h5" >"$work/out.txt" 2>"$work/err.txt"
      rc=$?
      [ "$rc" -eq 2 ] && grep -q -- "$expected" "$work/err.txt" || fail "$flag: exit $rc: $(cat "$work/err.txt")"
    done
    [ ! -e "$work/x.h5" ] || fail "a report was written on bad input"
    ;;
  *) fail "unknown case" ;;
esac
