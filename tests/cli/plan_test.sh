#!/usr/bin/env bash
# End-to-end tests of `embscale plan` and of "sharding": "auto" in `run` and `sweep`:
# plan_test.sh EMBSCALE MPIEXEC CASE
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" plan "$@"

# A config of two Zipf tables (the hotter and larger first) with one layer of sharding $1 and the
# planner section $2.
write_config() {
  cat >"$work/$3" <<JSON
{
  "schema_version": 1,
  "solver": {"batchsize": 512, "max_iter": 4, "warmup_iter": 1, "display": 0, "seed": 11},
  "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
  "planner": {$2},
  "layers": [
    {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [30000, 2000],
     "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.2, "nnz_per_slot": [6, 1]},
     "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
     "sparse": [{"top": "data1", "slot_num": 2}]},
    {"name": "emb1", "type": "ShardedEmbedding", "sharding": "$1", "bottom": "data1", "top": "emb1",
     "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 40000, "embedding_vec_size": 8, "combiner": "sum"}}
  ]
}
JSON
}

run2() { "$mpiexec" -n 2 --oversubscribe "$embscale" run -q "$@" >"$work/run.txt" 2>&1 || fail "run $*: $(cat "$work/run.txt")"; }
# The same without -q: the lines before the run (the plan's) and the summary.
run2_verbose() { "$mpiexec" -n 2 --oversubscribe "$embscale" run "$@" >"$work/run.txt" 2>&1 || fail "run $*: $(cat "$work/run.txt")"; }

# What a run computed: its loss per iteration and every rank's counters (not its times).
results_of() {
  for d in series/loss counters/lookups counters/pairs_received counters/keys; do
    h5dump -d "/runs/run0/$d" "$1" | sed -n '/DATA {/,/}/p'
  done
}

# Expects `embscale plan` to exit 2 with stderr naming each of the remaining arguments.
expect_refused() {
  local args=$1; shift
  # shellcheck disable=SC2086
  "$embscale" plan $args >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "plan $args: exit code $rc, expected 2: $(cat "$work/err.txt")"
  for expected in "$@"; do
    grep -qF -- "$expected" "$work/err.txt" || fail "plan $args: stderr lacks '$expected': $(cat "$work/err.txt")"
  done
}

case "$case_name" in
  plan_runs_as_typed_by_hand)
    # The written plan runs unchanged and computes what the same plan typed by hand computes, and
    # what `run` of the "auto" config computes. Two choices with one answer each: key % ranks
    # (row blocks would put the Zipf head on rank 0), and whole tables on ranks 0 and 1 (the
    # busier table first).
    for choice in distributed_slot table_wise; do
      if [ "$choice" = distributed_slot ]; then
        write_config auto '"schemes": ["row_wise", "distributed_slot"]' auto.json
        write_config distributed_slot '' by_hand.json
      else
        write_config auto '"schemes": ["table_wise"]' auto.json
        write_config table_wise '' by_hand.json
        sed -i 's/"sharding": "table_wise",/"sharding": "table_wise", "table_ranks": [0, 1],/' "$work/by_hand.json"
      fi
      "$embscale" plan "$work/auto.json" --ranks 2 -o "$work/plan.json" >"$work/out.txt" 2>&1 ||
        fail "plan: $(cat "$work/out.txt")"
      grep -qF "emb1: $choice, slots 0,1" "$work/out.txt" || fail "plan is not $choice: $(cat "$work/out.txt")"
      grep -qF "plan written to $work/plan.json" "$work/out.txt" || fail "no output line: $(cat "$work/out.txt")"
      grep -qF "\"sharding\": \"$choice\"" "$work/plan.json" || fail "written plan: $(cat "$work/plan.json")"
      run2 "$work/plan.json" -o "$work/planned.h5"
      run2 "$work/by_hand.json" -o "$work/by_hand.h5"
      run2 "$work/auto.json" -o "$work/auto.h5"
      results_of "$work/by_hand.h5" >"$work/by_hand.txt"
      [ -s "$work/by_hand.txt" ] || fail "no results read"
      results_of "$work/planned.h5" | cmp -s - "$work/by_hand.txt" || fail "$choice: the written plan computes otherwise"
      results_of "$work/auto.h5" | cmp -s - "$work/by_hand.txt" || fail "$choice: run of auto computes otherwise"
    done
    # table_ranks places the tables: swapped owners swap the ranks' lookups.
    sed -i 's/"table_ranks": \[0, 1\]/"table_ranks": [1, 0]/' "$work/by_hand.json"
    run2 "$work/by_hand.json" -o "$work/swapped.h5"
    /usr/bin/python3 - "$work/planned.h5" "$work/swapped.h5" <<'PY' || fail "table_ranks [1, 0] did not swap the owners"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["runs/run0/counters/lookups"][()] for p in sys.argv[1:])
assert a[:, 0].sum() > 0 and a[:, 1].sum() > 0 and not np.array_equal(a, b), (a, b)
assert np.array_equal(a[:, ::-1], b), (a, b)
PY
    ;;
  run_records_the_plan)
    # `run` of an "auto" layer records the plan (attribute sharding_plan, table plan/loads: a
    # row per layer and rank), and its predicted per-rank lookups agree with the measured ones.
    write_config auto '' auto.json
    run2_verbose "$work/auto.json" -o "$work/auto.h5"
    grep -qF "sharding plan (skew_aware)" "$work/run.txt" || fail "no plan line: $(cat "$work/run.txt")"
    h5dump -a /runs/run0/sharding_plan "$work/auto.h5" | grep -qF '\"policy\": \"skew_aware\"' ||
      h5dump -a /runs/run0/sharding_plan "$work/auto.h5" | grep -qF 'skew_aware' || fail "no sharding_plan attribute"
    h5dump -A -d /runs/run0/plan/loads "$work/auto.h5" | grep -qF "layer,rank,pairs,lookups" || fail "no plan/loads table"
    # Predicted against measured per rank (one planned layer; 4 steps of 512 samples: within 10 %).
    /usr/bin/python3 - "$work/auto.h5" <<'PY' || fail "predicted lookups disagree with the measured ones"
import json, sys, h5py, numpy as np
run = h5py.File(sys.argv[1], "r")["runs/run0"]
plan = json.loads(run.attrs["sharding_plan"])
assert len(plan["layers"]) == 1, plan["layers"]
loads = run["plan/loads"][()]
measured = run["counters/lookups"][()].mean(axis=0)
assert np.allclose(loads[:, 3], measured, rtol=0.1), (loads[:, 3], measured)
PY
    write_config auto_skew_blind '' blind.json
    run2_verbose "$work/blind.json" -o "$work/blind.h5"
    grep -qF "sharding plan (skew_blind)" "$work/run.txt" || fail "no skew-blind plan line: $(cat "$work/run.txt")"
    # A sweep over auto, the skew-blind plan and a fixed scheme merges into one report.
    cat >"$work/sweep.json" <<JSON
{"sweep_version": 1, "base": "auto.json", "grid": {"layers.emb1.sharding": ["auto", "auto_skew_blind", "row_wise"]}}
JSON
    "$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$work/sweep.json" -o "$work/sweep.h5" -q >"$work/sweep.txt" 2>&1 ||
      fail "sweep: $(cat "$work/sweep.txt")"
    for p in p0.r0 p1.r0 p2.r0; do
      h5dump -a "/runs/$p/sharding_plan" "$work/sweep.h5" >/dev/null 2>&1 || fail "sweep run $p has no plan"
    done
    ;;
  plan_bad_input)
    write_config auto '' auto.json
    expect_refused "$work/auto.json --ranks 2 --memory-per-rank 100K -o $work/p.json" \
      "no sharding plan fits 2 ranks" "more than" "slot 0 (30000 rows"
    [ ! -e "$work/p.json" ] || fail "a refused plan wrote a file"
    write_config row_wise '' fixed.json
    expect_refused "$work/fixed.json --ranks 2" "no layer to plan" "--all-layers"
    expect_refused "$work/auto.json --ranks 2 --set planner.schemes=[\"all2all_dense\"]" "planner.schemes[0]"
    expect_refused "$work/auto.json --ranks 2 -o $work/missing/dir/p.json" "is not a directory"
    # A device is refused (the plan would be renamed over it), not replaced, and not offered as
    # something to run.
    expect_refused "$work/auto.json --ranks 2 -o /dev/null" "/dev/null: cannot write the plan: it is a character device"
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    grep -q "run it with" "$work/out.txt" "$work/err.txt" && fail "a refused plan suggested running it"
    # --json: stdout is one JSON document; where the plan went is said on stderr.
    "$embscale" plan "$work/auto.json" --ranks 2 --json -o "$work/j.json" >"$work/out.txt" 2>"$work/err.txt" ||
      fail "--json: $(cat "$work/err.txt")"
    /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/out.txt" ||
      fail "--json: stdout is not one JSON document: $(cat "$work/out.txt")"
    grep -qF "plan written to $work/j.json" "$work/err.txt" || fail "--json: stderr lacks where the plan went"
    # A quick plan says nothing of its progress; --progress 0 says every step on stderr, leaving
    # stdout as it was.
    grep -q "^plan: " "$work/err.txt" && fail "a quick plan printed progress: $(cat "$work/err.txt")"
    "$embscale" plan "$work/auto.json" --ranks 2 --json --progress 0 -o "$work/j.json" >"$work/out2.txt" 2>"$work/err.txt" ||
      fail "--progress 0: $(cat "$work/err.txt")"
    grep -qE "^plan: starting plan 1 of [0-9]+, round 1 of moves: predicted step [0-9.]+ ms.* \([0-9.]+ s\)$" "$work/err.txt" ||
      fail "--progress 0: $(cat "$work/err.txt")"
    cmp -s "$work/out.txt" "$work/out2.txt" || fail "--progress changed stdout"
    expect_refused "$work/auto.json --ranks 8192" "solver.batchsize: expected at least one sample per rank (>= 8192)"
    "$embscale" plan "$work/fixed.json" --ranks 2 --all-layers -o "$work/all.json" >"$work/out.txt" 2>&1 ||
      fail "--all-layers: $(cat "$work/out.txt")"
    # run refuses an auto layer that no plan fits, before anything runs.
    write_config auto '"memory_per_rank": 1000' tiny.json
    "$mpiexec" -n 2 --oversubscribe "$embscale" run "$work/tiny.json" -o "$work/r.h5" >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [ "$rc" -eq 2 ] || fail "run of an unplannable config: exit $rc: $(cat "$work/err.txt")"
    grep -qF "no sharding plan fits 2 ranks" "$work/err.txt" || fail "run's message: $(cat "$work/err.txt")"
    [ ! -e "$work/r.h5" ] || fail "a refused run wrote a report"
    ;;
  plan_capacity)
    # Without --ranks: the fewest ranks whose plan fits the budget, every count tried in the
    # table, the plan written for that count, and run as written.
    write_config auto '"memory_per_rank": 300000' cap.json
    (cd "$work" && "$embscale" plan cap.json >"$work/out.txt" 2>&1) || fail "plan without --ranks: $(cat "$work/out.txt")"
    ranks=$(sed -n 's/^capacity: \([0-9]*\) ranks, the fewest that meet the targets.*/\1/p' "$work/out.txt")
    [ -n "$ranks" ] || fail "no capacity line: $(cat "$work/out.txt")"
    grep -qE "^ +1 +- +- +rejected: planner: no sharding plan fits 1 ranks" "$work/out.txt" ||
      fail "1 rank is not listed as rejected: $(cat "$work/out.txt")"
    grep -qE "^ +$ranks +[0-9.]+ +[0-9.]+ +meets the targets" "$work/out.txt" || fail "the answer's row: $(cat "$work/out.txt")"
    grep -qF "sharding plan for $ranks ranks" "$work/out.txt" || fail "the plan is not for $ranks ranks"
    [ -s "$work/cap.plan$ranks.json" ] || fail "no $work/cap.plan$ranks.json: $(ls "$work")"
    if [ "$ranks" -le 4 ]; then
      "$mpiexec" -n "$ranks" --oversubscribe "$embscale" run -q "$work/cap.plan$ranks.json" -o "$work/c.h5" \
        >"$work/run.txt" 2>&1 || fail "run of the capacity plan: $(cat "$work/run.txt")"
    fi
    # --json carries the candidates; stdout stays one document (progress goes to stderr).
    "$embscale" plan "$work/cap.json" --json -o "$work/cj.json" >"$work/out.txt" 2>"$work/err.txt" ||
      fail "--json: $(cat "$work/err.txt")"
    /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["capacity"]["ranks"] == int(sys.argv[2]), d["capacity"]' \
      "$work/out.txt" "$ranks" || fail "--json capacity: $(cat "$work/out.txt")"
    # Bad input: no budget; targets no count up to the limit meets.
    write_config auto '' nobudget.json
    expect_refused "$work/nobudget.json -o $work/x.json" "planner.memory_per_rank: capacity planning"
    expect_refused "$work/cap.json --memory-per-rank 1000 --max-ranks 2 -o $work/x.json" \
      "no rank count up to planner.max_ranks (2) meets the targets" "2 ranks: planner: no sharding plan fits"
    expect_refused "$work/cap.json --target-step-seconds 1e-9 --max-ranks 8 -o $work/x.json" \
      "above planner.target_step_seconds"
    [ ! -e "$work/x.json" ] || fail "a refused capacity plan wrote a file"
    ;;
  plan_hardware)
    # Every shipped hardware description plans; the development VM's gives the planner's own
    # defaults on 2 ranks (the same prediction); with a description, capacity planning needs no
    # budget and counts nodes.
    write_config auto '' auto.json
    for description in "$configs"/../hardware/*.json; do
      "$embscale" plan "$work/auto.json" --ranks 16 --hardware "$description" -o "$work/h.json" >"$work/out.txt" 2>&1 ||
        fail "plan --hardware $description: $(cat "$work/out.txt")"
      grep -qF "hardware: $(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$description")" \
        "$work/out.txt" || fail "the plan does not name $description: $(cat "$work/out.txt")"
    done
    "$embscale" plan "$work/auto.json" --ranks 2 -o "$work/d.json" >"$work/default.txt" 2>&1 || fail "plan: $(cat "$work/default.txt")"
    "$embscale" plan "$work/auto.json" --ranks 2 --hardware "$configs/../hardware/dev_vm.json" -o "$work/v.json" \
      >"$work/vm.txt" 2>&1 || fail "plan on dev_vm: $(cat "$work/vm.txt")"
    [ "$(grep -o 'predicted step [0-9.]* ms' "$work/default.txt")" = "$(grep -o 'predicted step [0-9.]* ms' "$work/vm.txt")" ] ||
      fail "dev_vm.json does not reproduce the defaults: $(head -2 "$work/default.txt") / $(head -2 "$work/vm.txt")"
    "$embscale" plan "$work/auto.json" --hardware "$configs/../hardware/h100_8gpu_nvlink4_ib400.json" \
      --memory-per-rank 300K -o "$work/c.json" >"$work/out.txt" 2>&1 || fail "capacity on H100: $(cat "$work/out.txt")"
    grep -qE "^capacity: [0-9]+ ranks \([0-9]+ nodes of 8\), the fewest" "$work/out.txt" || fail "no nodes: $(cat "$work/out.txt")"
    printf '{"hardware_version": 1, "name": "x"}\n' >"$work/bad_hw.json"
    expect_refused "$work/auto.json --ranks 2 --hardware $work/bad_hw.json -o $work/x.json" "$work/bad_hw.json: device"
    ;;
  plan_measured_loads)
    # Slots without an analytic model (multi-hot companions; a trace) are planned from loads
    # measured on the data's own batches, and say so.
    write_config auto '' auto.json
    sed -i 's/"nnz_per_slot": \[6, 1\]}/"nnz_per_slot": [6, 1], "multi_hot": {"companions": "uniform"}}/' "$work/auto.json"
    "$embscale" plan "$work/auto.json" --ranks 2 -o "$work/p.json" >"$work/out.txt" 2>&1 || fail "plan: $(cat "$work/out.txt")"
    grep -qF "batches of the data (no analytic model): slots 0,1 (multi-hot companions" "$work/out.txt" ||
      fail "no measured-loads line: $(cat "$work/out.txt")"
    "$embscale" trace generate "$work/auto.json" -o "$work/t.emb" --iterations 8 >"$work/out.txt" 2>&1 ||
      fail "trace generate: $(cat "$work/out.txt")"
    sed -e 's/"format": "Synthetic"/"format": "Embscale", "source": "t.emb"/' "$work/auto.json" >"$work/trace.json"
    "$embscale" plan "$work/trace.json" --ranks 2 -o "$work/pt.json" >"$work/out.txt" 2>&1 || fail "plan of a trace: $(cat "$work/out.txt")"
    grep -qF "(a trace (\"Embscale\") has no generator's parameters to predict from)" "$work/out.txt" ||
      fail "no measured-loads line for the trace: $(cat "$work/out.txt")"
    run2 "$work/trace.json" -o "$work/t.h5"
    ;;
  plan_tiers)
    # A two-tier layer (caching, STEP scores, 32,768 rows of fast tier per rank): the plan's
    # predicted fast-tier hit rate against the rate the run on 2 ranks measures (its
    # fast_tier_misses counter over iterations 60-200, once the fast tier is full), within 1 point;
    # the same layer hybrid (a quarter of the keys in the fast tier by hash), over the whole run
    # (its fast tier's first sights included); then a hit-rate target it cannot reach is refused
    # by name.
    cat >"$work/tiers.json" <<JSON
{
  "schema_version": 1,
  "solver": {"batchsize": 4096, "max_iter": 200, "warmup_iter": 0, "display": 0, "seed": 7},
  "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
  "planner": {"schemes": ["distributed_slot"]},
  "layers": [
    {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [400000, 200000],
     "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": [4, 2]},
     "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
     "sparse": [{"top": "data1", "slot_num": 2}]},
    {"name": "emb1", "type": "ShardedEmbedding", "sharding": "auto", "bottom": "data1", "top": "emb1",
     "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 32, "combiner": "sum"},
     "storage": {"type": "dynamic", "max_capacity": 1048576, "caching": true, "score_strategy": "STEP",
                 "global_hbm_for_values": 4194304}}
  ]
}
JSON
    "$embscale" plan "$work/tiers.json" --ranks 2 -o "$work/planned.json" >"$work/out.txt" 2>&1 || fail "plan: $(cat "$work/out.txt")"
    grep -qF "fast tier: recency model, 32768 rows per rank" "$work/out.txt" || fail "no fast tier: $(cat "$work/out.txt")"
    "$embscale" plan "$work/tiers.json" --ranks 2 --json -o "$work/planned.json" >"$work/plan.json" 2>"$work/err.txt" ||
      fail "plan --json: $(cat "$work/err.txt")"
    run2 "$work/planned.json" -o "$work/tiers.h5"
    # predicted_vs_measured PLAN_JSON REPORT FIRST_ITERATION
    predicted_vs_measured() {
      /usr/bin/python3 - "$@" <<'PY' || fail "predicted and measured hit rates differ ($*)"
import json, sys
import h5py
plan = json.load(open(sys.argv[1]))
first = int(sys.argv[3])
predicted = [rank["fast_tier"]["hit_rate"] for rank in plan["layers"][0]["ranks"]]
counters = h5py.File(sys.argv[2], "r")["runs/run0/counters"]
misses = counters["fast_tier_misses"][first:].sum(axis=0)
lookups = (counters["hits"][first:] + counters["misses"][first:]).sum(axis=0)
measured = 1 - misses / lookups
print("fast-tier hit rate per rank: predicted", predicted, "measured", list(measured))
sys.exit(0 if all(abs(p - m) < 0.01 for p, m in zip(predicted, measured)) else 1)
PY
    }
    predicted_vs_measured "$work/plan.json" "$work/tiers.h5" 60
    sed -i 's/"caching": true, //; s/"global_hbm_for_values": 4194304/"global_hbm_for_values": 33554432/' "$work/tiers.json"
    "$embscale" plan "$work/tiers.json" --ranks 2 --json -o "$work/hybrid.json" >"$work/plan.json" 2>"$work/err.txt" ||
      fail "plan --json (hybrid): $(cat "$work/err.txt")"
    grep -q '"model": *"hash_share"' "$work/plan.json" || fail "not the hash share: $(cat "$work/plan.json")"
    run2 "$work/hybrid.json" -o "$work/hybrid.h5"
    predicted_vs_measured "$work/plan.json" "$work/hybrid.h5" 0
    expect_refused "$work/tiers.json --ranks 2 --set planner.target_hit_rate=0.9 -o $work/x.json" \
      "layers[emb1].storage.global_hbm_for_values" "below planner.target_hit_rate 0.9"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
