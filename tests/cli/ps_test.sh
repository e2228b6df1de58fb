#!/usr/bin/env bash
# End-to-end tests of parameter-server runs (lib/ps: "sharding": "parameter_server" and the
# "parameter_server" section) through `embscale run`: ps_test.sh EMBSCALE MPIEXEC CASE
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" ps "$@"
mkdir -p "$work/reports" "$work/bad"

run_mpi() {  # run_mpi RANKS ARGS...: sets rc; stdout in out.txt, stderr in err.txt
  local ranks=$1; shift
  timeout 120 "$mpiexec" -n "$ranks" --oversubscribe "$embscale" run -q "$@" >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
}
run_ok() { run_mpi "$@"; [ "$rc" -eq 0 ] || fail "run on $1 ranks: exit $rc: $(cat "$work/err.txt")"; }

# Expects exit code 2 on RANKS ranks, the message EXPECTED once on stderr, and no report.
expect_bad_input() {  # expect_bad_input RANKS EXPECTED ARGS...
  local ranks=$1 expected=$2; shift 2
  run_mpi "$ranks" "$@" -o "$work/bad/bad.h5"
  [ "$rc" -eq 2 ] || fail "exit code $rc, expected 2; stderr: $(cat "$work/err.txt")"
  grep -qF -- "$expected" "$work/err.txt" || fail "stderr lacks '$expected': $(cat "$work/err.txt")"
  [ "$(grep -c 'embscale: error' "$work/err.txt")" -eq 1 ] || fail "the error should be printed once: $(cat "$work/err.txt")"
  [ -z "$(ls -A "$work/bad")" ] || fail "files left behind: $(ls -A "$work/bad")"
}

dataset_values() {  # dataset_values REPORT DATASET: comma-separated, full precision
  h5dump -m '%.17g' -y -w 0 -d "$2" "$1" | sed -n '/DATA {/,/}/p' | sed '1d;$d' | tr -d ' \n'
}

# Fails unless two comma-separated series have the same length and agree within a relative 1e-9
# (or TOLERANCE).
expect_same_series() {  # expect_same_series WHAT A B [TOLERANCE]
  awk -v what="$1" -v a="$2" -v b="$3" -v tol="${4:-1e-9}" 'BEGIN {
    n = split(a, x, ","); m = split(b, y, ",");
    if (n != m || n == 0) { print what ": " n " values against " m; exit 1 }
    for (i = 1; i <= n; i++) {
      d = x[i] - y[i]; if (d < 0) d = -d; s = y[i] < 0 ? -y[i] : y[i];
      if (d > tol * (s > 1 ? s : 1)) { print what ": value " i " is " x[i] ", expected " y[i]; exit 1 }
    }
  }' || fail "$1 differ: $2 against $3"
}

# A small synchronous config: three Zipf tables in one dynamic layer far above its keys (nothing
# evicted, so results do not depend on how the keys spread over tables), AdaGrad.
# write_config FILE SHARDING SECTION [STORAGE]: STORAGE the layer's storage block (default: a
# dynamic table far above the keys).
dynamic_storage='{"type": "dynamic", "max_capacity": 16384, "bucket_capacity": 128}'
write_config() {
  cat >"$1" <<JSON
{
  "schema_version": 1,
  "solver": {"batchsize": 96, "max_iter": 6, "warmup_iter": 2, "display": 0, "seed": 7},
  "optimizer": {"type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.1, "initial_accu_value": 0.1}},
  "layers": [
    {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [400, 3000, 90],
     "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": [3, 2, 1]},
     "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
     "sparse": [{"top": "data1", "slot_num": 3}]},
    {"name": "emb1", "type": "ShardedEmbedding", "sharding": "$2", "bottom": "data1", "top": "emb1",
     "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 4000, "embedding_vec_size": 8, "combiner": "mean"},
     "storage": ${4:-$dynamic_storage}}
  ]$3
}
JSON
}

# Synchronous runs on 1 + 1, 2 + 2 and 3 + 1 ranks, the parameter_server section given EXTRA
# fields, have the engine's all2all losses at every iteration; reports in $work/reports/NAME-T-S.h5.
expect_engine_losses() {  # expect_engine_losses NAME EXTRA [STORAGE]
  local name=$1 extra=$2 storage=${3:-$dynamic_storage} expected trainers servers roles
  write_config "$work/a2a.json" all2all_dense "" "$storage"
  run_ok 2 "$work/a2a.json" -o "$work/reports/a2a.h5"
  expected=$(dataset_values "$work/reports/a2a.h5" /runs/run0/series/loss)
  for roles in "1 1" "2 2" "3 1"; do
    read -r trainers servers <<<"$roles"
    write_config "$work/ps.json" parameter_server \
      ", \"parameter_server\": {\"trainers\": $trainers, \"servers\": $servers$extra}" "$storage"
    run_ok $((trainers + servers)) "$work/ps.json" -o "$work/reports/$name-$trainers-$servers.h5"
    expect_same_series "$name: loss on $trainers + $servers" \
      "$(dataset_values "$work/reports/$name-$trainers-$servers.h5" /runs/run0/series/loss)" "$expected"
  done
}


case "$case_name" in
  ps_example_ranks)
    # The shipped example says it needs 3 ranks (2 trainers + 1 server) and refuses 2 and 4 by
    # saying so; on 3 it reports both roles' phases and its roles as parameters.
    for n in 2 4; do
      expect_bad_input "$n" "parameter_server: this config runs 2 trainers and 1 server, 3 ranks (mpiexec -n 3); this run has $n" \
        "$configs/parameter_server.json" --set solver.max_iter=2
    done
    run_ok 3 "$configs/parameter_server.json" --set solver.max_iter=3 --set solver.warmup_iter=1 -o "$work/reports/ps.h5"
    "$embscale" report "$work/reports/ps.h5" >"$work/report.txt" 2>&1 || fail "report: $(cat "$work/report.txt")"
    for line in "scheme +parameter_server" "trainers +2" "servers +1" "ps_mode +synchronous"; do
      grep -qE "^$line\$" "$work/report.txt" || fail "the report lacks '$line': $(cat "$work/report.txt")"
    done
    # Phases are [iterations x ranks]: trainers (ranks 0, 1) pull and never serve, the server
    # (rank 2) serves and never pulls.
    pull=$(dataset_values "$work/reports/ps.h5" /runs/run0/timings/pull)
    idle=$(dataset_values "$work/reports/ps.h5" /runs/run0/timings/server_read)
    awk -v p="$pull" -v s="$idle" 'BEGIN { n = split(p, x, ","); split(s, y, ",");
      if (n != 9) exit 1
      for (i = 1; i <= n; i++) { r = (i - 1) % 3; if ((r < 2) != (x[i] > 0) || (r == 2) != (y[i] > 0)) exit 1 } }' ||
      fail "phases do not follow the roles: pull $pull, server_read $idle"
    ;;
  ps_equals_engine)
    # Synchronous training on the servers computes what the engine's all2all scheme computes on
    # the same batches (each tested against the single-process reference): the same loss at
    # every iteration, on 1 + 1, 2 + 2 and 3 + 1 ranks.
    expect_engine_losses ps ""
    ;;
  ps_save_load)
    # Shards saved by 2 servers load into 1, 2 and 3 servers with the same rows: the loaded runs
    # compute the same losses, and not those of a fresh table.
    write_config "$work/save.json" parameter_server \
      ", \"parameter_server\": {\"servers\": 2, \"save_directory\": \"saved\"}"
    run_ok 3 "$work/save.json" -o "$work/reports/save.h5"
    ls "$work/saved" >"$work/files.txt"
    [ "$(tr '\n' ' ' <"$work/files.txt")" = "shard-0-of-2.kv shard-1-of-2.kv " ] || fail "saved files: $(cat "$work/files.txt")"
    [ -z "$(find "$work/saved" -name '*.tmp*')" ] || fail "temporary files left: $(ls -a "$work/saved")"
    write_config "$work/fresh.json" parameter_server ", \"parameter_server\": {\"servers\": 1}"
    run_ok 2 "$work/fresh.json" -o "$work/reports/fresh.h5"
    fresh=$(dataset_values "$work/reports/fresh.h5" /runs/run0/series/loss)
    previous=""
    for servers in 2 1 3; do
      write_config "$work/load.json" parameter_server \
        ", \"parameter_server\": {\"servers\": $servers, \"load_directory\": \"saved\"}"
      run_ok $((servers + 1)) "$work/load.json" -o "$work/reports/load-$servers.h5"
      loss=$(dataset_values "$work/reports/load-$servers.h5" /runs/run0/series/loss)
      [ "$loss" != "$fresh" ] || fail "loading into $servers servers changed nothing: $loss"
      [ -z "$previous" ] || expect_same_series "loss after loading into $servers servers" "$loss" "$previous"
      previous=$loss
    done
    # A directory without shards is refused by name.
    mkdir -p "$work/empty"
    write_config "$work/none.json" parameter_server \
      ", \"parameter_server\": {\"servers\": 1, \"load_directory\": \"empty\"}"
    expect_bad_input 2 "$work/empty: no saved parameter-server shards" "$work/none.json"
    ;;
  ps_tiered_shards)
    # Servers on the two-tier tables (caching: a fast tier of two buckets in front of the whole
    # table; hybrid: keys placed by hash) save their shards (both tiers' entries) and the shards
    # load into a one-tier table and into the other tiered kind with the same rows: the loaded
    # runs compute the same losses.
    tier() {  # tier FILE SECTION STORAGE_EXTRA
      write_config "$1" parameter_server "$2"
      sed -i "s/\"bucket_capacity\": 128}/\"bucket_capacity\": 128$3}/" "$1"
    }
    caching=', "global_hbm_for_values": 16384, "caching": true'
    hybrid=', "global_hbm_for_values": 16384'
    tier "$work/save.json" ', "parameter_server": {"servers": 1, "save_directory": "saved"}' "$caching"
    grep -qF '"caching": true' "$work/save.json" || fail "the config edit did not take: $(cat "$work/save.json")"
    run_ok 2 "$work/save.json" -o "$work/reports/save.h5"
    previous=""
    for variant in "1:" "2:$hybrid" "2:$caching"; do
      servers=${variant%%:*}
      tier "$work/load.json" ", \"parameter_server\": {\"servers\": $servers, \"load_directory\": \"saved\"}" "${variant#*:}"
      run_ok $((servers + 1)) "$work/load.json" -o "$work/reports/load.h5"
      loss=$(dataset_values "$work/reports/load.h5" /runs/run0/series/loss)
      [ -z "$previous" ] || expect_same_series "loss after loading into $variant" "$loss" "$previous"
      previous=$loss
    done
    saved=$(dataset_values "$work/reports/save.h5" /runs/run0/series/loss)
    [ "$previous" != "$saved" ] || fail "the loaded runs computed what the fresh one did: $saved"
    ;;
  ps_server_failure)
    # A server that fails ends the job with its message on every rank; a server killed by a signal
    # ends the job rather than leaving the trainers waiting for rows. No report either way. The
    # same with one-sided pulls (parameter_server_static.json: the trainers poll the server's
    # clock in its memory, which a dead server never moves).
    for cfg in parameter_server.json parameter_server_static.json; do
      EMBSCALE_FAULT_INJECT=2:1 run_mpi 3 "$configs/$cfg" --set solver.max_iter=4 -o "$work/reports/f.h5"
      [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$cfg: a failing server: exit $rc"
      grep -qF "embscale: error (rank 2 of 3): injected fault at iteration 1" "$work/err.txt" ||
        fail "$cfg: the server's message is missing: $(cat "$work/err.txt")"
      [ -z "$(ls -A "$work/reports")" ] || fail "$cfg: files left behind: $(ls -A "$work/reports")"
      # Killed: only the report's temporary file stays (cli_test.sh killed_rank: the next writer
      # removes it), never a report.
      EMBSCALE_FAULT_INJECT=2:1:kill run_mpi 3 "$configs/$cfg" --set solver.max_iter=4 -o "$work/reports/k.h5"
      [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$cfg: a killed server: exit $rc (124: the trainers hung)"
      [ ! -e "$work/reports/k.h5" ] || fail "$cfg: a killed run wrote its report"
      rm -f "$work/reports/"*
    done
    ;;
  ps_dense_model)
    # A CTR model on the servers (bench/configs/ctr_parameter_server.json: planted labels, dense
    # layers, an evaluation): synchronous, it computes what the engine computes on one rank, the
    # same loss at every iteration and the same evaluations (within 1e-6: the trainers' shares of
    # a sum add in another order), on 2 + 1 and 2 + 2 ranks (the dense parameters in one slice,
    # and in two); asynchronous, it trains and evaluates too. A
    # feature-parallel layer and an AUC target are refused by name.
    cfg=$configs/ctr_parameter_server.json
    short=(--set solver.max_iter=20 --set solver.eval_interval=10)
    run_ok 1 "$cfg" "${short[@]}" --set layers.emb1.sharding=table_wise -o "$work/reports/engine.h5"
    loss=$(dataset_values "$work/reports/engine.h5" /runs/run0/series/loss)
    scores=$(dataset_values "$work/reports/engine.h5" /runs/run0/evaluation/scores)
    for servers in 1 2; do
      run_ok $((2 + servers)) "$cfg" "${short[@]}" --set parameter_server.servers=$servers -o "$work/reports/ps$servers.h5"
      expect_same_series "loss on 2 + $servers" "$(dataset_values "$work/reports/ps$servers.h5" /runs/run0/series/loss)" \
        "$loss" 1e-6
      expect_same_series "evaluations on 2 + $servers" \
        "$(dataset_values "$work/reports/ps$servers.h5" /runs/run0/evaluation/scores)" "$scores" 1e-6
    done
    run_ok 3 "$cfg" "${short[@]}" --set parameter_server.mode=asynchronous --set parameter_server.staleness=2 \
      -o "$work/reports/async.h5"
    awk -v s="$(dataset_values "$work/reports/async.h5" /runs/run0/evaluation/scores)" \
      'BEGIN { split(s, x, ","); exit !(x[7] == 20 && x[8] > 0.7) }' || fail "asynchronous evaluation: $(cat "$work/out.txt")"
    expect_bad_input 3 "layers[fc1].partition_dim: the parameter servers hold the dense parameters whole" "$cfg" \
      --set layers.fc1.partition_dim=1
    expect_bad_input 3 "solver.eval_metrics: \"AUC:<t>\" ends training when reached" "$cfg" \
      --set 'solver.eval_metrics=["AUC:0.9"]'
    ;;
  ps_ucx_transport)
    # The protocol over UCX ("transport": "ucx") trains what it trains over MPI: synchronous, the
    # engine's losses on 1 + 1, 2 + 2 and 3 + 1 ranks; the report names the transport and the
    # lanes UCP selected. A transport that is not one, and a UCX that cannot start (UCX_TLS naming
    # no transport), are refused by name (exit 2).
    expect_engine_losses ucx ', "transport": "ucx"'
    "$embscale" report "$work/reports/ucx-1-1.h5" | grep -qE "^transport +ucx$" || fail "the report lacks the transport"
    h5dump -a /runs/run0/transport_details "$work/reports/ucx-1-1.h5" | grep -q '"ucx: lane\[' ||
      fail "no UCP lanes recorded: $(h5dump -a /runs/run0/transport_details "$work/reports/ucx-1-1.h5")"
    expect_bad_input 2 "parameter_server.transport: expected \"mpi\" or \"ucx\"" "$work/ps.json" \
      --set parameter_server.transport=verbs --set parameter_server.trainers=1 --set parameter_server.servers=1
    UCX_TLS=no_such_transport expect_bad_input 2 "parameter_server.transport \"ucx\": UCX could not start on rank 0: ucp_init" \
      "$work/ps.json" --set parameter_server.trainers=1 --set parameter_server.servers=1
    ;;
  ps_one_sided)
    # Static storage on the servers (id % servers), pulls as messages or read one-sidedly over
    # either transport: synchronous, the engine's losses (on static storage too) on 1 + 1, 2 + 2
    # and 3 + 1 ranks; the report says the storage and the pulls; asynchronous one-sided reads
    # are never staler than the bound (the trainers' staleness counter). One-sided pulls on a
    # dynamic table, and saving a static shard, are refused by field (exit 2).
    static='{"type": "static"}'
    expect_engine_losses static_messages "" "$static"
    expect_engine_losses one_sided_mpi ', "pulls": "one_sided"' "$static"
    expect_engine_losses one_sided_ucx ', "transport": "ucx", "pulls": "one_sided"' "$static"
    "$embscale" report "$work/reports/one_sided_ucx-2-2.h5" >"$work/report.txt" 2>&1 || fail "report: $(cat "$work/report.txt")"
    for line in "storage +static" "pulls +one_sided" "transport +ucx"; do
      grep -qE "^$line\$" "$work/report.txt" || fail "the report lacks '$line': $(cat "$work/report.txt")"
    done
    write_config "$work/async.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"mode\": \"asynchronous\", \"staleness\": 1, \"pulls\": \"one_sided\", \"transport\": \"ucx\"}" "$static"
    run_ok 3 "$work/async.json" --set solver.max_iter=20 -o "$work/reports/async.h5"
    staleness=$(dataset_values "$work/reports/async.h5" /runs/run0/counters/staleness)
    awk -v s="$staleness" 'BEGIN { n = split(s, x, ","); for (i = 1; i <= n; i++) if (x[i] > 1) exit 1; exit n == 0 }' ||
      fail "staleness beyond the bound of 1: $staleness"
    write_config "$work/dynamic.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"pulls\": \"one_sided\"}"
    expect_bad_input 2 "parameter_server.pulls: \"one_sided\" reads rows at addresses a trainer computes" "$work/dynamic.json"
    write_config "$work/save.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"save_directory\": \"saved\"}" "$static"
    expect_bad_input 2 "parameter_server.save_directory: the servers save and load their shards as KV-table files" "$work/save.json"
    ;;
  ps_asynchronous)
    # Asynchronous with a bound of 1: the servers never serve a pull staler than 1 (the staleness
    # counter, per iteration and rank), and the run says its mode.
    write_config "$work/async.json" parameter_server \
      ", \"parameter_server\": {\"servers\": 1, \"mode\": \"asynchronous\", \"staleness\": 1}"
    run_ok 3 "$work/async.json" --set solver.max_iter=20 -o "$work/reports/async.h5"
    staleness=$(dataset_values "$work/reports/async.h5" /runs/run0/counters/staleness)
    awk -v s="$staleness" 'BEGIN { n = split(s, x, ","); for (i = 1; i <= n; i++) if (x[i] > 1) exit 1; exit n == 0 }' ||
      fail "staleness beyond the bound of 1: $staleness"
    "$embscale" report "$work/reports/async.h5" | grep -qE "^ps_mode +asynchronous$" || fail "the report lacks the mode"
    ;;
  ps_non_finite_loss)
    # A diverging model (a learning rate of 1e30) ends a parameter-server run at the boundary after
    # its loss turns non-finite, synchronous and asynchronous: exit 1, said once, no report.
    for mode in '"synchronous"' '"asynchronous", "staleness": 2'; do
      write_config "$work/nan.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"mode\": $mode}"
      mkdir -p "$work/reports"
      run_mpi 3 "$work/nan.json" --set optimizer.adagrad_hparam.learning_rate=1e30 --set solver.max_iter=20 \
        -o "$work/reports/nan.h5"
      [ "$rc" -eq 1 ] || fail "$mode: exit $rc, expected 1: $(cat "$work/err.txt")"
      grep -qE "iteration [0-9]+: the loss is -?(nan|inf) on rank [01]: the model diverged" "$work/err.txt" ||
        fail "$mode: no message naming the loss: $(cat "$work/err.txt")"
      [ "$(grep -c 'embscale: error' "$work/err.txt")" -eq 1 ] || fail "$mode: printed more than once: $(cat "$work/err.txt")"
      [ -z "$(ls -A "$work/reports")" ] || fail "$mode: files left behind: $(ls -A "$work/reports")"
    done
    ;;
  ps_bad_config)
    # Each misuse is refused naming its field.
    write_config "$work/c.json" parameter_server ""
    expect_bad_input 2 "layers[emb1].sharding: \"parameter_server\" needs the top-level \"parameter_server\" section" "$work/c.json"
    write_config "$work/c.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"staleness\": 2}"
    expect_bad_input 2 "parameter_server.staleness: a synchronous server applies each step's pushes" "$work/c.json"
    write_config "$work/c.json" parameter_server ", \"parameter_server\": {\"servers\": 2}"
    expect_bad_input 2 "parameter_server.servers: 2 servers leave no trainer among 2 ranks; a run needs at least 3" "$work/c.json"
    write_config "$work/c.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"mode\": \"eventually\"}"
    expect_bad_input 2 "parameter_server.mode: expected" "$work/c.json"
    write_config "$work/c.json" parameter_server ", \"parameter_server\": {\"servers\": 1, \"pulls\": \"one_sided\"}" \
      '{"type": "static", "embedding_dtype": "fp16"}'
    expect_bad_input 2 "layers[emb1].storage.embedding_dtype: one-sided pulls read fp32 rows" "$work/c.json"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
