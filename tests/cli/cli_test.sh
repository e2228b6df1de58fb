#!/usr/bin/env bash
# End-to-end tests of the embscale CLI: cli_test.sh EMBSCALE MPIEXEC CASE
# Each case exits non-zero with a message naming what went wrong.
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" cli "$@"

# Runs `embscale run` on N ranks; output in $work/out.txt, stderr in $work/err.txt, code in $rc.
run_mpi() { run_on_ranks "$1" run "${@:2}"; }

# Expects exit code 2, a message containing $1 on stderr, and no file left in $work/reports.
# On 2 ranks, or on $BAD_INPUT_RANKS. Every rank agrees on bad input found before the run, which
# ends without MPI_Abort (its banner buried the message); $BAD_INPUT_ALONE=1 marks an error one
# rank finds alone, in a step, which must abort the others.
expect_bad_input() {
  local expected=$1; shift
  mkdir -p "$work/reports"
  run_mpi "${BAD_INPUT_RANKS:-2}" "$@"
  [ "$rc" -eq 2 ] || fail "exit code $rc, expected 2; stderr: $(cat "$work/err.txt")"
  grep -qF -- "$expected" "$work/err.txt" || fail "stderr lacks '$expected': $(cat "$work/err.txt")"
  [ "$(grep -c 'embscale: error' "$work/err.txt")" -eq 1 ] || fail "the error should be printed once: $(cat "$work/err.txt")"
  if [ -z "${BAD_INPUT_ALONE:-}" ]; then
    grep -q "MPI_ABORT" "$work/out.txt" "$work/err.txt" && fail "an error every rank agrees on ended in MPI_Abort: $(cat "$work/err.txt")"
  fi
  [ -z "$(ls -A "$work/reports")" ] || fail "files left behind: $(ls -A "$work/reports")"
}

# The value of a report's dataset (h5dump's DATA block), numbers separated by commas, full precision.
dataset_values() {  # dataset_values REPORT DATASET
  h5dump -m '%.17g' -y -w 0 -d "$2" "$1" | sed -n '/DATA {/,/}/p' | sed '1d;$d' | tr -d ' \n'
}

# A config derived from the embedded default by a Python-free sed edit.
variant() {  # variant NAME SED_EXPRESSION
  sed "$2" "$here/../../bench/configs/default.json" >"$work/$1.json"
  echo "$work/$1.json"
}

case "$case_name" in
  default_run_report)
    mkdir -p "$work/reports"
    run_mpi 2 -o "$work/reports/default.h5" --quiet
    [ "$rc" -eq 0 ] || fail "embscale run failed ($rc): $(cat "$work/err.txt")"
    # --quiet: one line on success, what ran and its figures in their units, and the report.
    [ "$(wc -l <"$work/out.txt")" -eq 1 ] || fail "--quiet printed more than one line: $(cat "$work/out.txt")"
    grep -qE "^embscale run: all2all_dense on 2 ranks, 100 iterations: step [0-9.]+ ms \(median\), [0-9.]+ (k |M )?samples/s; report: $work/reports/default.h5\$" \
      "$work/out.txt" || fail "the --quiet line: $(cat "$work/out.txt")"
    [ -f "$work/reports/default.h5" ] || fail "no report file"
    [ "$(ls -A "$work/reports")" = "default.h5" ] || fail "temporary files left: $(ls -A "$work/reports")"
    h5ls -r "$work/reports/default.h5" >"$work/h5ls.txt" || fail "h5ls cannot read the report"
    for path in /summary /runs/run0 /runs/run0/timings/route /runs/run0/timings/exchange_keys \
                /runs/run0/timings/lookup /runs/run0/timings/exchange_vectors /runs/run0/timings/pool \
                /runs/run0/timings/loss /runs/run0/timings/pool_backward /runs/run0/timings/exchange_grads \
                /runs/run0/timings/update /runs/run0/counters/keys /runs/run0/counters/unique_keys \
                /runs/run0/counters/lookups /runs/run0/counters/bytes_sent /runs/run0/counters/bytes_recv \
                /runs/run0/series/loss /runs/run0/series/step_time; do
      grep -qE "^$path[[:space:]]" "$work/h5ls.txt" || fail "report lacks $path; h5ls -r: $(cat "$work/h5ls.txt")"
    done
    grep -qE "^/runs/run0/timings/route[[:space:]]+Dataset \{100, 2\}" "$work/h5ls.txt" ||
      fail "timings are not [iterations=100, ranks=2]: $(grep route "$work/h5ls.txt")"
    h5dump -A -g / "$work/reports/default.h5" >"$work/attrs.txt" 2>/dev/null
    for attr in schema_version report_kind embscale_version git_sha created_utc command_line config_json \
                mpi_library_version ranks hosts machine slurm_job_id; do
      grep -q "ATTRIBUTE \"$attr\"" "$work/attrs.txt" || fail "root attribute $attr missing"
    done
    grep -A10 'ATTRIBUTE "report_kind"' "$work/attrs.txt" | grep -qF '"run"' ||
      fail "report_kind is not \"run\": $(grep -A10 'ATTRIBUTE "report_kind"' "$work/attrs.txt")"
    "$embscale" report "$work/reports/default.h5" >"$work/report.txt" || fail "embscale report failed"
    grep -q "all2all_dense" "$work/report.txt" || fail "embscale report shows no run: $(cat "$work/report.txt")"
    ;;
  default_output_dir)
    (cd "$work" && "$mpiexec" -n 2 --oversubscribe "$embscale" run --quiet >"$work/out.txt" 2>"$work/err.txt") ||
      fail "run without -o failed: $(cat "$work/err.txt")"
    ls "$work"/results/runs/*.h5 >/dev/null 2>&1 || fail "no report under results/runs/"
    ;;
  four_ranks)
    mkdir -p "$work/reports"
    cfg=$(variant short 's/"max_iter": 100/"max_iter": 10/')
    run_mpi 4 "$cfg" -o "$work/reports/four.h5" --quiet
    [ "$rc" -eq 0 ] || fail "4-rank run failed ($rc): $(cat "$work/err.txt")"
    h5ls -r "$work/reports/four.h5" | grep -qE "^/runs/run0/timings/route[[:space:]]+Dataset \{10, 4\}" ||
      fail "timings are not [10, 4]"
    ;;
  progress_lines)
    mkdir -p "$work/reports"
    run_mpi 2 -o "$work/reports/p.h5"
    [ "$rc" -eq 0 ] || fail "run failed"
    [ "$(grep -c '^iteration ' "$work/out.txt")" -eq 5 ] || fail "expected 5 progress lines (display 20 of 100): $(cat "$work/out.txt")"
    grep -q "throughput_samples_per_s" "$work/out.txt" || fail "no summary table on stdout: $(cat "$work/out.txt")"
    grep -q "report: $work/reports/p.h5" "$work/out.txt" || fail "report path not printed"
    ;;
  validate_ok)
    "$embscale" validate "$here/../../bench/configs/default.json" >"$work/out.txt" 2>&1 || fail "validate failed: $(cat "$work/out.txt")"
    grep -q "valid" "$work/out.txt" || fail "validate printed: $(cat "$work/out.txt")"
    ;;
  validate_as_run)
    # validate refuses what run refuses: the checks that hold on any number of ranks always, and
    # with --ranks N those that depend on them, each message naming the file as run's does.
    sed 's/"sharding": "row_wise"/"sharding": "ROW_WISE"/' "$configs/scheme_row_wise.json" >"$work/upper.json"
    expected="$work/upper.json: layers[emb1].sharding: expected one of "
    "$embscale" validate "$work/upper.json" >"$work/out.txt" 2>"$work/err.txt"
    [ $? -eq 2 ] || fail "validate accepted sharding \"ROW_WISE\": $(cat "$work/out.txt")"
    grep -qF "$expected" "$work/err.txt" || fail "validate: $(cat "$work/err.txt")"
    grep -qF 'got "ROW_WISE"; did you mean "row_wise"?' "$work/err.txt" || fail "no suggestion: $(cat "$work/err.txt")"
    expect_bad_input "$expected" "$work/upper.json" -o "$work/reports/r.h5"
    grep -qF 'did you mean "row_wise"?' "$work/err.txt" || fail "run: no suggestion: $(cat "$work/err.txt")"
    # Rows per rank depend on the ranks: not checked without --ranks (and said so), refused with it.
    cfg=$(variant capacity 's/"max_vocabulary_size_per_gpu": 800000/"max_vocabulary_size_per_gpu": 1000/')
    "$embscale" validate "$cfg" >"$work/out.txt" 2>&1 || fail "validate without --ranks: $(cat "$work/out.txt")"
    grep -qF "not checked: what depends on the ranks (give --ranks N)" "$work/out.txt" ||
      fail "validate does not say what it left unchecked: $(cat "$work/out.txt")"
    expected="$cfg: layers[emb1].sparse_embedding_hparam.max_vocabulary_size_per_gpu: expected at least 400000 (the most rows one rank holds of the layer's 800000 over 2 ranks), got 1000"
    "$embscale" validate "$cfg" --ranks 2 >"$work/out.txt" 2>"$work/err.txt"
    [ $? -eq 2 ] || fail "validate --ranks 2 accepted 1000 rows per rank: $(cat "$work/out.txt")"
    grep -qF "$expected" "$work/err.txt" || fail "validate --ranks 2: $(cat "$work/err.txt")"
    expect_bad_input "$expected" "$cfg" -o "$work/reports/r.h5"
    grep -q '^iteration \|embscale run: ' "$work/out.txt" && fail "the run started before its rows were checked: $(cat "$work/out.txt")"
    "$embscale" validate "$cfg" --ranks 800 >"$work/out.txt" 2>&1 || fail "1000 rows fit on 800 ranks: $(cat "$work/out.txt")"
    grep -qF "valid (schema version 1) on 800 ranks" "$work/out.txt" || fail "validate --ranks 800: $(cat "$work/out.txt")"
    sed 's/"embedding_vec_size": [0-9]*/"embedding_vec_size": 1/' "$configs/scheme_column_wise.json" >"$work/narrow.json"
    "$embscale" validate "$work/narrow.json" >/dev/null 2>&1 || fail "one column fits one rank"
    "$embscale" validate "$work/narrow.json" --ranks 2 >"$work/out.txt" 2>"$work/err.txt"
    grep -qF "$work/narrow.json: layers[emb1].sparse_embedding_hparam.embedding_vec_size: column_wise needs at least one column per rank (>= 2), got 1" \
      "$work/err.txt" || fail "validate --ranks 2 of one column: $(cat "$work/err.txt")"
    ;;
  hugectr_embedding_only)
    # HugeCTR's DCN sample as HugeCTR writes it runs whole (its dense layers, its evaluation; its
    # snapshots are named as not written). With what embscale cannot run (fp16 mixed precision)
    # it is refused with that named, unless --embedding-only, which runs the embedding part and
    # says what it skipped (the dense layers and their evaluation too).
    cfg=$here/../../bench/configs/hugectr_dcn_embedding_part.json
    "$embscale" validate "$cfg" >"$work/out.txt" 2>&1 || fail "validate of the DCN sample: $(cat "$work/out.txt")"
    grep -qF "solver.snapshot (HugeCTR's model snapshots; a run here writes none: its checkpoints are solver.checkpoint)" "$work/out.txt" ||
      fail "snapshots not listed as not used: $(cat "$work/out.txt")"
    sed 's/"seed": 20261124/"seed": 20261124, "mixed_precision": 1024/' "$cfg" >"$work/fp16.json"
    names='solver.mixed_precision (fp16 mixed precision)'
    expect_bad_input "embscale runs the embedding part of this config only; not run: $names. Pass --embedding-only" \
      "$work/fp16.json" -o "$work/reports/r.h5"
    "$embscale" validate "$work/fp16.json" >"$work/out.txt" 2>"$work/err.txt"
    [ $? -eq 2 ] || fail "validate accepted a config run only in part"
    grep -qF -- "--embedding-only" "$work/err.txt" || fail "validate: $(cat "$work/err.txt")"
    "$embscale" validate "$work/fp16.json" --embedding-only >"$work/out.txt" 2>&1 ||
      fail "validate --embedding-only: $(cat "$work/out.txt")"
    run_mpi 2 "$work/fp16.json" --embedding-only -o "$work/reports/r.h5" --quiet
    [ "$rc" -eq 0 ] || fail "--embedding-only run failed ($rc): $(cat "$work/err.txt")"
    grep -qF "note: --embedding-only: running the embedding layers; not run: the dense layers (layers[reshape1] to layers[loss], 10 layers), solver.eval_interval (evaluation), $names" "$work/err.txt" ||
      fail "no note of what was skipped: $(cat "$work/err.txt")"
    [ -f "$work/reports/r.h5" ] || fail "no report"
    ;;
  non_finite_loss)
    # A diverging model (the default run with a learning rate of 1e30): the run ends at the first
    # non-finite loss, exit 1, saying so once, with no report; "continue" runs on and reports it.
    mkdir -p "$work/reports"
    run_mpi 2 --set optimizer.sgd_hparam.learning_rate=1e30 --set solver.max_iter=30 -o "$work/reports/nan.h5" --quiet
    [ "$rc" -eq 1 ] || fail "exit $rc, expected 1: $(cat "$work/err.txt")"
    grep -qE "iteration [0-9]+: the loss is -?(nan|inf) on rank [01]: the model diverged" "$work/err.txt" ||
      fail "no message naming the loss: $(cat "$work/err.txt")"
    [ "$(grep -c 'embscale: error' "$work/err.txt")" -eq 1 ] || fail "the error should be printed once: $(cat "$work/err.txt")"
    grep -q "MPI_ABORT" "$work/out.txt" "$work/err.txt" && fail "an agreed stop ended in MPI_Abort: $(cat "$work/err.txt")"
    [ -z "$(ls -A "$work/reports")" ] || fail "files left behind: $(ls -A "$work/reports")"
    run_mpi 2 --set optimizer.sgd_hparam.learning_rate=1e30 --set solver.max_iter=30 \
      --set solver.non_finite_loss=continue -o "$work/reports/on.h5" --quiet
    [ "$rc" -eq 0 ] || fail "continue: exit $rc: $(cat "$work/err.txt")"
    ;;
  trace_too_short)
    # A Norm trace of 3 batches for 5 warm-up + 100 timed iterations: bad input naming the field,
    # the trace (its relative source resolved against the config's directory, not the working
    # one) and the counts, before any report.
    "$embscale" trace generate --iterations 3 --format norm -o "$work/t.norm" --quiet || fail "trace generate failed"
    cfg=$(variant norm 's/"format": "Synthetic"/"format": "Norm", "source": "t.norm"/')
    mkdir -p "$work/elsewhere"
    (cd "$work/elsewhere" && expect_bad_input "solver.max_iter: 5 warm-up + 100 timed iterations of 4096 samples (solver.batchsize) need 105 batches, but the data holds 3 whole batches: lower the batch size or warmup_iter. The data: trace $work/t.norm (norm, 12288 samples" \
      "$cfg" -o "$work/reports/r.h5") || exit 1
    grep -qF "holds 3 whole batches: lower the batch size or warmup_iter" "$work/err.txt" || fail "$(cat "$work/err.txt")"
    ;;
  trace_damaged_found_at_start)
    # A Norm trace of 12 batches, cut 10 bytes before its end (its last sample), for 5 warm-up + 7
    # timed iterations; and its header counting a batch more than it holds, for 5 + 8. Both pass
    # the header checks; the start-up read finds them before the first step (exit 2, printed once,
    # no report). With "trace_check": "headers" the damage is found only when the run reaches it.
    "$embscale" trace generate --iterations 12 --format norm -o "$work/whole.norm" --quiet || fail "trace generate failed"
    size=$(stat -c %s "$work/whole.norm")
    head -c $((size - 10)) "$work/whole.norm" >"$work/cut.norm"
    cp "$work/whole.norm" "$work/more.norm"
    records=$(od -A n -t d8 -j 8 -N 8 "$work/whole.norm" | tr -d ' ')
    /usr/bin/python3 -c "import struct,sys; f=open(sys.argv[1],'r+b'); f.seek(8); f.write(struct.pack('<q', int(sys.argv[2])))" \
      "$work/more.norm" $((records + 4096)) || fail "cannot rewrite the header"
    for damaged in cut more; do
      iterations=7
      [ "$damaged" = more ] && iterations=8
      cfg=$(variant "$damaged" 's/"format": "Synthetic"/"format": "Norm", "source": "'"$damaged"'.norm"/')
      expect_bad_input "$work/$damaged.norm" "$cfg" --set solver.max_iter=$iterations -o "$work/reports/r.h5"
      grep -q '^iteration ' "$work/out.txt" && fail "$damaged: the run started before its samples were read"
    done
    grep -qF "truncated" "$work/err.txt" || fail "the header counting too many: $(cat "$work/err.txt")"
    cfg=$(variant whole 's/"format": "Synthetic"/"format": "Norm", "source": "whole.norm"/')
    run_mpi 2 "$cfg" --set solver.max_iter=7 -o "$work/reports/whole.h5" --quiet
    [ "$rc" -eq 0 ] || fail "the whole trace was refused: $(cat "$work/err.txt")"
    rm -f "$work/reports/whole.h5"
    cfg=$(variant headers 's/"format": "Synthetic"/"format": "Norm", "source": "cut.norm", "trace_check": "headers"/')
    run_mpi 2 "$cfg" --set solver.max_iter=7 --set solver.display=1 -o "$work/reports/r.h5"
    [ "$rc" -ne 0 ] || fail "a cut trace ran to the end"
    grep -q '^iteration ' "$work/out.txt" || fail "trace_check headers still read the samples first: $(cat "$work/err.txt")"
    ;;
  shipped_configs)
    # Every config of bench/configs runs on 2 ranks (or the ranks it names) for 3 iterations and writes a report that
    # `embscale report` reads; those of bench/configs/large (more memory than a CI machine has)
    # validate. The HugeCTR file runs its embedding part. The eviction example evicts, and the
    # scheme examples' reports merge into one (bench/sweeps/README.md).
    for cfg in "$configs"/large/*.json; do
      "$embscale" validate "$cfg" >"$work/out.txt" 2>&1 || fail "$cfg does not validate: $(cat "$work/out.txt")"
    done
    mkdir -p "$work/reports"
    ran=0
    for cfg in "$configs"/*.json; do
      name=$(basename "$cfg" .json)
      extra=()
      [ "$name" = hugectr_dcn_embedding_part ] && extra=(--embedding-only)
      ranks=2  # the parameter-server examples name their 3 ranks (2 trainers, 1 server; ps_test.sh)
      case "$name" in parameter_server | parameter_server_static) ranks=3 ;; esac
      run_mpi "$ranks" "$cfg" "${extra[@]}" --set solver.max_iter=3 --id "$name" -o "$work/reports/$name.h5" --quiet
      [ "$rc" -eq 0 ] || fail "$name: exit $rc: $(cat "$work/err.txt")"
      "$embscale" report "$work/reports/$name.h5" >"$work/report.txt" 2>&1 || fail "$name: embscale report: $(cat "$work/report.txt")"
      grep -qE "^iterations +3$" "$work/report.txt" || fail "$name: the report has no 3 iterations: $(cat "$work/report.txt")"
      ran=$((ran + 1))
    done
    [ "$ran" -ge 14 ] || fail "only $ran configs ran"
    # A multi-layer config's summary gives every layer's dim; a single layer's stays a number.
    "$embscale" report "$work/reports/multi_layer_slot_subsets.h5" >"$work/report.txt" 2>&1
    grep -qE "^embedding_vec_size +emb_wide:64,emb_mid:32,emb_small:8$" "$work/report.txt" ||
      fail "the layers' dims: $(grep embedding_vec_size "$work/report.txt")"
    "$embscale" report "$work/reports/default.h5" >"$work/report.txt" 2>&1
    grep -qE "^embedding_vec_size +32$" "$work/report.txt" || fail "one layer's dim: $(grep embedding_vec_size "$work/report.txt")"
    evictions=$(dataset_values "$work/reports/dynamic_storage_eviction.h5" /runs/dynamic_storage_eviction/counters/evictions)
    [ "$(awk -F, '{for (i = 1; i <= NF; i++) s += $i} END {print (s > 0)}' <<<"$evictions")" = 1 ] ||
      fail "dynamic_storage_eviction evicted nothing: evictions $evictions"
    "$embscale" merge "$work"/reports/scheme_*.h5 -o "$work/schemes.h5" >"$work/out.txt" 2>&1 || fail "merge: $(cat "$work/out.txt")"
    "$embscale" report "$work/schemes.h5" >"$work/report.txt" || fail "report of the merged schemes failed"
    for scheme in all2all_dense distributed_slot localized_slot table_wise row_wise column_wise table_row_wise data_parallel; do
      grep -qE "^scheme .* $scheme( |$)" "$work/report.txt" || fail "the merged report lacks $scheme: $(cat "$work/report.txt")"
    done
    ;;
  hybrid_dense_tower)
    # The hybrid-parallel example (an embedding layer model-parallel, then InnerProduct + ReLU
    # layers data- or feature-parallel) computes the same losses on 1, 2 and 4 ranks and with every
    # partition_dim (SINGA's connections move the data; only float rounding differs), and its
    # report has the dense layers' phases.
    mkdir -p "$work/reports"
    cfg=$configs/hybrid_parallel.json
    common=(--set solver.max_iter=4 --set solver.warmup_iter=1 --set solver.batchsize=512 --quiet)
    run_mpi 1 "$cfg" "${common[@]}" -o "$work/reports/one.h5"
    [ "$rc" -eq 0 ] || fail "1 rank: exit $rc: $(cat "$work/err.txt")"
    expected=$(dataset_values "$work/reports/one.h5" /runs/run0/series/loss)
    for variant in "2 0 1" "2 1 0" "4 1 1" "4 0 0"; do
      read -r ranks fc1 fc2 <<<"$variant"
      run_mpi "$ranks" "$cfg" "${common[@]}" --set layers.fc1.partition_dim="$fc1" --set layers.fc2.partition_dim="$fc2" \
        -o "$work/reports/r.h5"
      [ "$rc" -eq 0 ] || fail "$variant: exit $rc: $(cat "$work/err.txt")"
      got=$(dataset_values "$work/reports/r.h5" /runs/run0/series/loss)
      awk -v a="$got" -v b="$expected" 'BEGIN { n = split(a, x, ","); m = split(b, y, ",");
        if (n != m || n == 0) exit 1
        for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4 * (y[i] < 0 ? -y[i] : y[i])) exit 1 } }' ||
        fail "ranks, partition_dims $variant: losses $got, on 1 rank $expected"
      rm -f "$work/reports/r.h5"
    done
    h5dump -n "$work/reports/one.h5" | grep -q "timings/dense_backward" || fail "no dense phases: $(h5dump -n "$work/reports/one.h5")"
    # Refused by field: a partition_dim other than 0 or 1, an InnerProduct without num_output, a
    # bottom no layer before it names.
    sed 's/"partition_dim": 1/"partition_dim": 2/' "$cfg" >"$work/bad.json"
    rm -rf "$work/reports"; expect_bad_input "layers[fc2].partition_dim" "$work/bad.json"
    sed 's/"fc_param": { "num_output": 16 }/"fc_param": {}/' "$cfg" >"$work/bad.json"
    rm -rf "$work/reports"; expect_bad_input "layers[fc2].fc_param.num_output" "$work/bad.json"
    sed 's/"bottom": "fc2"/"bottom": "fc1x"/' "$cfg" >"$work/bad.json"
    rm -rf "$work/reports"; expect_bad_input 'layers[relu2].bottom: expected a tensor named before this layer' "$work/bad.json"
    ;;
  ctr_evaluation)
    # HugeCTR's evaluation on the planted labels (bench/configs/ctr_planted_small.json): the
    # evaluation table is the same on 1 and 2 ranks (the AUC is over every rank's samples), the
    # model trains to within 0.04 of the planted model's AUC in 60 iterations, "AUC:<t>" ends the
    # run at the evaluation that reaches t (the report holds the iterations run), a two-tier table
    # evaluates as the one-tier table does, and evaluation is refused by field where it cannot run.
    mkdir -p "$work/runs"
    cfg=$configs/ctr_planted_small.json
    for ranks in 1 2; do
      run_mpi "$ranks" "$cfg" --quiet -o "$work/runs/e$ranks.h5"
      [ "$rc" -eq 0 ] || fail "$ranks ranks: exit $rc: $(cat "$work/err.txt")"
    done
    one=$(dataset_values "$work/runs/e1.h5" /runs/run0/evaluation/scores | cut -d'}' -f1)  # the values, not attributes
    two=$(dataset_values "$work/runs/e2.h5" /runs/run0/evaluation/scores | cut -d'}' -f1)
    awk -v a="$one" -v b="$two" 'BEGIN { n = split(a, x, ","); m = split(b, y, ",");
      if (n != m || n != 18) exit 1
      for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4) exit 1 } }' ||
      fail "evaluations on 1 rank $one, on 2 ranks $two"
    # Row 3 (after iteration 60): iteration, auc, auc_ceiling, loss, samples, auc_stderr.
    awk -v a="$one" 'BEGIN { split(a, x, ","); if (x[13] != 60 || x[14] < x[15] - 0.04 || x[15] < 0.9) exit 1
      if (x[18] <= 0 || x[18] > 0.02) exit 1 }' ||
      fail "after 60 iterations the AUC is not within 0.04 of the ceiling: $one"
    # The training batches' AUC, one per iteration, rises as the model learns.
    auc=$(dataset_values "$work/runs/e2.h5" /runs/run0/series/auc | cut -d'}' -f1)
    awk -v a="$auc" 'BEGIN { n = split(a, x, ","); if (n != 60 || x[60] < x[1] + 0.1) exit 1 }' ||
      fail "the batches' AUC series: $auc"
    run_mpi 2 "$cfg" --set 'solver.eval_metrics=["AUC:0.87"]' -o "$work/runs/target.h5"
    [ "$rc" -eq 0 ] || fail "AUC target: exit $rc: $(cat "$work/err.txt")"
    grep -qF "AUC target 0.87 reached after iteration 40" "$work/out.txt" || fail "no early end: $(cat "$work/out.txt")"
    [ "$(dataset_values "$work/runs/target.h5" /runs/run0/series/loss | cut -d'}' -f1 | tr ',' '\n' | wc -l)" -eq 40 ] ||
      fail "the report of a run ended at 40 iterations holds another count"
    # A two-tier table (a fast tier of one bucket, the rest demoted to the slow tier) loses no row:
    # its evaluations, read from both tiers without promoting, are the (static) table's within 1e-4.
    run_mpi 2 "$cfg" -o "$work/runs/tiers.h5" --quiet \
      --set 'layers.emb.storage={"type": "dynamic", "max_capacity": 4096, "bucket_capacity": 128, "caching": true,
             "global_hbm_for_values": 12288}'
    [ "$rc" -eq 0 ] || fail "two tiers: exit $rc: $(cat "$work/err.txt")"
    tiers=$(dataset_values "$work/runs/tiers.h5" /runs/run0/evaluation/scores | cut -d'}' -f1)
    awk -v a="$tiers" -v b="$two" 'BEGIN { n = split(a, x, ","); m = split(b, y, ","); if (n != m || n != 18) exit 1
      for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4) exit 1 } }' ||
      fail "evaluations of the two-tier table $tiers, of the one-tier one $two"
    # Refused by field: no loss layer to score, a trace without eval_source.
    rm -rf "$work/reports"
    expect_bad_input "solver.eval_interval: evaluation scores the loss layer's logits" "$configs/hybrid_parallel.json" \
      --set solver.eval_interval=5 --set solver.eval_batches=1 -o "$work/reports/r.h5"
    "$embscale" trace generate "$cfg" --iterations 2 --format norm -o "$work/t.norm" --quiet || fail "trace generate"
    sed 's|"format": "Synthetic"|"format": "Norm", "source": "'"$work"'/t.norm"|' "$cfg" >"$work/trace.json"
    rm -rf "$work/reports"
    expect_bad_input "layers[data].eval_source: required with solver.eval_interval for a trace" "$work/trace.json" \
      --set solver.max_iter=2 -o "$work/reports/r.h5"
    ;;
  ranks_per_node_not_dividing)
    # table_row_wise's nodes are ranks_per_node consecutive ranks: more than the run has, or a
    # count that does not divide it, is refused before the run.
    expect_bad_input "layers[emb1].ranks_per_node: expected a divisor of the run's 2 ranks (each node holds ranks_per_node of them), got 4" \
      "$configs/scheme_table_row_wise.json" --set layers.emb1.ranks_per_node=4 -o "$work/reports/r.h5"
    BAD_INPUT_RANKS=4 expect_bad_input "layers[emb1].ranks_per_node: expected a divisor of the run's 4 ranks" \
      "$configs/scheme_table_row_wise.json" --set layers.emb1.ranks_per_node=3 -o "$work/reports/r.h5"
    ;;
  column_wise_too_narrow)
    expect_bad_input "layers[emb1].sparse_embedding_hparam.embedding_vec_size: column_wise needs at least one column per rank (>= 2), got 1" \
      "$configs/scheme_column_wise.json" --set layers.emb1.sparse_embedding_hparam.embedding_vec_size=1 -o "$work/reports/r.h5"
    ;;
  static_storage_only)
    # column_wise and data_parallel keep no dynamic table.
    for scheme in column_wise data_parallel; do
      expect_bad_input "layers[emb1].storage.type: $scheme runs on static storage only" "$configs/scheme_$scheme.json" \
        --set 'layers.emb1.storage={"type": "dynamic", "max_capacity": 65536}' -o "$work/reports/r.h5"
    done
    ;;
  eviction_section)
    # An eviction section needs a table that evicts by score: on static storage it is bad input.
    expect_bad_input "eviction: no embedding layer can be measured; layers[emb1]: its storage is static" \
      "$configs/default.json" --set 'eviction={}' -o "$work/reports/r.h5"
    # On the example: its tables under /runs/<id>/eviction/ and its figures in the summary.
    run_mpi 2 "$configs/eviction_study.json" --set solver.max_iter=6 --set solver.warmup_iter=4 \
      --set eviction.sample_every=2 -o "$work/reports/e.h5"
    [ "$rc" -eq 0 ] || fail "eviction example: exit $rc: $(cat "$work/err.txt")"
    for name in hit_rate churn recall by_rank; do
      h5ls "$work/reports/e.h5/runs/run0/eviction/$name" >/dev/null 2>&1 || fail "no table eviction/$name: $(h5ls -r "$work/reports/e.h5")"
    done
    h5dump -a /runs/run0/eviction/hit_rate/columns "$work/reports/e.h5" | grep -qF '"iteration,table,lru,lfu,score_retention,unbucketed,belady"' ||
      fail "hit_rate columns: $(h5dump -a /runs/run0/eviction/hit_rate/columns "$work/reports/e.h5")"
    [ "$(h5dump -d /runs/run0/eviction/hit_rate -H "$work/reports/e.h5" | grep -c '( 10, 7 )')" -eq 1 ] ||
      fail "hit_rate is not 10 iterations x 7 columns: $(h5dump -d /runs/run0/eviction/hit_rate -H "$work/reports/e.h5")"
    for column in hit_rate hit_rate_belady gap_to_lru gap_to_belady retention_recall hot_key_recall; do
      grep -qE "^$column " "$work/out.txt" || fail "summary lacks $column: $(cat "$work/out.txt")"
    done
    ;;
  online_dumps)
    # solver.incremental_dump on the dynamic-table example, 2 ranks: a directory per dump with
    # each rank's file and a manifest, the dumps' table in the report and their figures in the
    # summary, in both modes; the configs it cannot serve are refused before the first step.
    dump='{"interval": 2, "directory": "'"$work"'/dumps", "mode": "blocking"}'
    mkdir -p "$work/reports"
    for mode in blocking background; do
      rm -rf "$work/dumps"
      run_mpi 2 "$configs/dynamic_storage_eviction.json" --set solver.max_iter=6 --set solver.warmup_iter=1 \
        --set solver.batchsize=1024 --set "solver.incremental_dump=${dump/blocking/$mode}" -o "$work/reports/$mode.h5"
      [ "$rc" -eq 0 ] || fail "$mode: exit $rc: $(cat "$work/err.txt")"
      for it in 00000002 00000004 00000006; do
        for file in manifest.json emb1.rank-0-of-2.kv emb1.rank-1-of-2.kv; do
          [ -s "$work/dumps/iteration-$it/$file" ] || fail "$mode: no $file in iteration-$it: $(ls -R "$work/dumps")"
        done
        grep -q "\"mode\": \"$mode\"" "$work/dumps/iteration-$it/manifest.json" || fail "$mode: manifest $it"
      done
      [ -z "$(find "$work/dumps" -name '.*tmp*')" ] || fail "$mode: temporary files left: $(find "$work/dumps")"
      [ "$(h5dump -d /runs/run0/online/dumps -H "$work/reports/$mode.h5" | grep -c '( 3, 7 )')" -eq 1 ] ||
        fail "$mode: online/dumps is not 3 dumps x 7 columns: $(h5ls -r "$work/reports/$mode.h5")"
      for column in dumps dump_stall_s dump_stall_fraction; do
        grep -qE "^$column " "$work/out.txt" || fail "$mode: summary lacks $column: $(cat "$work/out.txt")"
      done
    done
    grep -qE "^dump_overlapped_step_ratio " "$work/out.txt" || fail "background: no overlap figure: $(cat "$work/out.txt")"
    rm -rf "$work/reports"/*
    expect_bad_input "solver.incremental_dump: no embedding layer has a dynamic table" \
      "$configs/default.json" --set "solver.incremental_dump=$dump" -o "$work/reports/r.h5"
    expect_bad_input "solver.incremental_dump.interval: 2 timed iterations between dumps, but the run has solver.max_iter = 1" \
      "$configs/dynamic_storage_eviction.json" --set solver.max_iter=1 --set "solver.incremental_dump=$dump" -o "$work/reports/r.h5"
    : >"$work/blocked"
    expect_bad_input "solver.incremental_dump.directory: cannot create $work/blocked/d" \
      "$configs/dynamic_storage_eviction.json" --set solver.max_iter=2 \
      --set "solver.incremental_dump={\"interval\": 1, \"directory\": \"$work/blocked/d\"}" -o "$work/reports/r.h5"
    /usr/bin/python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c['solver']['incremental_dump']=json.loads(sys.argv[2]); json.dump(c, open(sys.argv[3], 'w'))" \
      "$configs/default.json" "$dump" "$work/static_dumps.json" || fail "cannot write the config"
    "$embscale" validate "$work/static_dumps.json" >"$work/out.txt" 2>&1 && fail "validate accepted dumps of static rows"
    grep -qF "no embedding layer has a dynamic table" "$work/out.txt" || fail "validate: $(cat "$work/out.txt")"
    ;;
  checkpoint_resume)
    # The default run on 2 ranks with solver.checkpoint: SIGUSR1 (what Slurm sends before a time
    # limit) once a few iterations ran saves a checkpoint and exits 3 with no report; run
    # --resume-from runs the rest, and its losses are the uninterrupted run's, bit for bit. A
    # resume with another config or nothing left to run is refused by name.
    mkdir -p "$work/reports"
    common=(--set solver.max_iter=40 --set solver.warmup_iter=2 --set solver.batchsize=1024)
    run_mpi 2 "${common[@]}" -o "$work/reports/whole.h5" --quiet
    [ "$rc" -eq 0 ] || fail "reference run: exit $rc: $(cat "$work/err.txt")"
    ckpt='{"directory": "'"$work"'/ckpt", "interval": 16}'
    EMBSCALE_INJECT_DELAY=loss:0.05 "$mpiexec" -n 2 --oversubscribe "$embscale" run "${common[@]}" \
      --set solver.display=1 --set "solver.checkpoint=$ckpt" -o "$work/reports/part.h5" >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    for _ in $(seq 300); do grep -q '^iteration 5/' "$work/out.txt" 2>/dev/null && break; sleep 0.1; done
    kill -USR1 "$launcher"
    wait "$launcher"
    rc=$?
    [ "$rc" -eq 3 ] || fail "a stopped run exits 3, got $rc: $(cat "$work/err.txt")"
    grep -qE "stopped by SIGUSR1 before iteration [0-9]+; checkpoint saved in $work/ckpt/iteration-000000[0-9][0-9]" \
      "$work/err.txt" || fail "the stop does not name its checkpoint: $(cat "$work/err.txt")"
    [ ! -e "$work/reports/part.h5" ] || fail "a stopped run wrote a report"
    saved=$(ls -d "$work"/ckpt/iteration-* | tail -1)
    at=$((10#${saved##*-}))
    [ "$at" -ge 5 ] && [ "$at" -lt 40 ] || fail "checkpoint at iteration $at"
    for file in manifest.json rank-0-of-2.json rank-1-of-2.json emb1.rank-0-of-2.kv emb1.rank-1-of-2.kv; do
      [ -s "$saved/$file" ] || fail "the checkpoint lacks $file: $(ls "$saved")"
    done
    run_mpi 2 "${common[@]}" --set "solver.checkpoint=$ckpt" --resume-from "$work/ckpt" -o "$work/reports/resumed.h5"
    [ "$rc" -eq 0 ] || fail "resume: exit $rc: $(cat "$work/err.txt")"
    grep -qF "resumed from $saved: timed iterations $((at + 1)) to 40" "$work/out.txt" || fail "$(cat "$work/out.txt")"
    whole=$(dataset_values "$work/reports/whole.h5" /runs/run0/series/loss | cut -d, -f$((at + 1))-)
    resumed=$(dataset_values "$work/reports/resumed.h5" /runs/run0/series/loss)
    [ -n "$whole" ] && [ "$whole" = "$resumed" ] || fail "losses after iteration $at: resumed $resumed, uninterrupted $whole"
    grep -qE "^first_iteration +$at\b" "$work/out.txt" || fail "no first_iteration $at in the summary: $(cat "$work/out.txt")"
    rm -f "$work/reports"/*
    expect_bad_input "the checkpoint was saved by a run whose config has /solver/batchsize = 1024; this config has 2048" \
      --set solver.max_iter=40 --set solver.warmup_iter=2 --set solver.batchsize=2048 --resume-from "$saved" -o "$work/reports/r.h5"
    expect_bad_input "leaves nothing to run" "${common[@]/40/$at}" --resume-from "$saved" -o "$work/reports/r.h5"
    expect_bad_input "$work/none: no such checkpoint" "${common[@]}" --resume-from "$work/none" -o "$work/reports/r.h5"
    # On 1 rank: the default layer's static rows move (each rank saved its own, the one rank takes
    # them all), and the run goes on from the same iteration.
    run_mpi 1 "${common[@]}" --resume-from "$saved" -o "$work/reports/one.h5"
    [ "$rc" -eq 0 ] || fail "resume on 1 rank: exit $rc: $(cat "$work/err.txt")"
    [ "$(dataset_values "$work/reports/one.h5" /runs/run0/series/loss | awk -F, '{print NF}')" -eq $((40 - at)) ] ||
      fail "the resumed run on 1 rank did not run iterations $((at + 1)) to 40"
    ;;
  gpu_refused)
    # "device": "gpu" is refused before the run, with exit 2 and one message, where it cannot run:
    # no GPU library, no GPU (the stand-in library reporting 0, then the real one on a machine
    # without a GPU), more NCCL ranks than GPUs; where it can, a part without a GPU path (fp16 rows
    # in the dynamic table) is named. The stand-in's path comes from ctest ($EMBSCALE_TEST_FAKE_DEVICE).
    [ -n "${EMBSCALE_TEST_FAKE_DEVICE:-}" ] || fail "EMBSCALE_TEST_FAKE_DEVICE is not set (ctest sets it)"
    gpu=(--set solver.device=gpu -o "$work/reports/r.h5")
    EMBSCALE_CUDA_LIBRARY=/nonexistent/libembscale_cuda.so expect_bad_input \
      "layers[emb1].device: \"gpu\" needs embscale's GPU library, which $(hostname) cannot load: " "${gpu[@]}"
    grep -qF "/nonexistent/libembscale_cuda.so" "$work/err.txt" || fail "the place tried is not named: $(cat "$work/err.txt")"
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=0 expect_bad_input \
      "layers[emb1].device: \"gpu\" needs a GPU; $(hostname) has none ($EMBSCALE_TEST_FAKE_DEVICE: no CUDA device: cudaGetDeviceCount: no CUDA-capable device is detected)" \
      "${gpu[@]}"
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=1 expect_bad_input \
      "solver.communicator: 2 ranks run on $(hostname), which has 1 GPU; NCCL takes one rank per GPU" "${gpu[@]}"
    fp16=("$configs/dynamic_storage_eviction.json" --set layers.emb1.storage.embedding_dtype=fp16)
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=1 expect_bad_input \
      "layers[emb1].storage.embedding_dtype: the GPU's dynamic table stores fp32 rows; got fp16" "${fp16[@]}" \
      "${gpu[@]}" --set solver.communicator=mpi
    if [ -n "${EMBSCALE_TEST_CUDA_LIBRARY:-}" ]; then  # built with CUDA: the real library's verdict
      if nvidia-smi -L >/dev/null 2>&1; then
        EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_CUDA_LIBRARY BAD_INPUT_RANKS=1 expect_bad_input \
          "layers[emb1].storage.embedding_dtype: the GPU's dynamic table stores fp32 rows; got fp16" \
          "${fp16[@]}" "${gpu[@]}"
      else
        EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_CUDA_LIBRARY expect_bad_input \
          "layers[emb1].device: \"gpu\" needs a GPU; $(hostname) has none ($EMBSCALE_TEST_CUDA_LIBRARY: no CUDA device: cudaGetDeviceCount: " "${gpu[@]}"
      fi
    fi
    # A sweep refuses its GPU point by number before any point runs.
    printf '{"sweep_version": 1, "base": "%s", "grid": {"solver.device": ["host", "gpu"]}}\n' "$configs/default.json" >"$work/gpu_sweep.json"
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=0 run_on_ranks 2 sweep "$work/gpu_sweep.json" -o "$work/reports/s.h5"
    [ "$rc" -eq 2 ] || fail "sweep: exit $rc, expected 2: $(cat "$work/err.txt")"
    grep -qF "gpu_sweep.json: point 1 (solver.device=\"gpu\") at 2 ranks: layers[emb1].device: \"gpu\" needs a GPU;" "$work/err.txt" ||
      fail "sweep: $(cat "$work/err.txt")"
    [ -z "$(ls -A "$work/reports")" ] || fail "sweep left files: $(ls -A "$work/reports")"
    # validate checks what has a GPU path and leaves the machine to the run.
    cfg=$work/gpu.json
    sed -e 's/"name": "emb1",/"name": "emb1", "device": "gpu",/' \
      -e 's/"type": "dynamic",/"type": "dynamic", "embedding_dtype": "fp16",/' "$configs/dynamic_storage_eviction.json" >"$cfg"
    "$embscale" validate "$cfg" >"$work/out.txt" 2>"$work/err.txt"
    [ $? -eq 2 ] || fail "validate accepted a storage without a GPU path: $(cat "$work/out.txt")"
    grep -qF "$cfg: layers[emb1].storage.embedding_dtype: the GPU's dynamic table stores fp32 rows" "$work/err.txt" ||
      fail "validate: $(cat "$work/err.txt")"
    ;;
  gpu_run_on_stand_in)
    # A GPU run end to end on the stand-in device library (its kernels' definitions on host memory,
    # $EMBSCALE_TEST_FAKE_DEVICE from ctest): NCCL's stand-in on 2 ranks of a host with 2 "GPUs", and
    # MPI staged through host memory on 2 ranks sharing one. Each report carries the GPU attributes
    # and the host run's phases; the staged run makes the host run's MPI calls, so its losses are
    # the host run's to the bit.
    [ -n "${EMBSCALE_TEST_FAKE_DEVICE:-}" ] || fail "EMBSCALE_TEST_FAKE_DEVICE is not set (ctest sets it)"
    mkdir -p "$work/reports"
    short=("$configs/scheme_distributed_slot.json" --set solver.max_iter=6 --set solver.batchsize=512 --quiet)
    run_on_ranks 2 run "${short[@]}" -o "$work/reports/host.h5"
    [ "$rc" -eq 0 ] || fail "host run: exit $rc: $(cat "$work/err.txt")"
    for backend in nccl staged; do
      if [ "$backend" = nccl ]; then count=2; extra=(); label=nccl
      else count=1; extra=(--set solver.communicator=mpi); label="mpi (staged)"; fi
      EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=$count \
        run_on_ranks 2 run "${short[@]}" --set solver.device=gpu "${extra[@]}" -o "$work/reports/$backend.h5"
      [ "$rc" -eq 0 ] || fail "$backend run: exit $rc: $(cat "$work/err.txt")"
      grep -qE "^embscale run: distributed_slot on 2 ranks, 6 iterations: step " "$work/out.txt" ||
        fail "$backend run: $(cat "$work/out.txt")"
      h5dump -A -g / "$work/reports/$backend.h5" >"$work/attrs.txt" 2>/dev/null
      for attr in gpu_model gpu_memory_bytes cuda_version cuda_driver_version nccl_version; do
        grep -q "ATTRIBUTE \"$attr\"" "$work/attrs.txt" || fail "$backend run: no attribute $attr"
      done
      grep -A10 'ATTRIBUTE "comm_backend"' "$work/attrs.txt" | grep -qF "\"$label\"" ||
        fail "$backend run: comm_backend is not $label: $(grep -A10 'ATTRIBUTE "comm_backend"' "$work/attrs.txt")"
      [ "$(h5ls "$work/reports/$backend.h5/runs/run0/timings" | awk '{print $1}')" = \
        "$(h5ls "$work/reports/host.h5/runs/run0/timings" | awk '{print $1}')" ] ||
        fail "$backend run: phases differ from the host run's: $(h5ls "$work/reports/$backend.h5/runs/run0/timings")"
    done
    [ "$(dataset_values "$work/reports/staged.h5" /runs/run0/series/loss)" = \
      "$(dataset_values "$work/reports/host.h5" /runs/run0/series/loss)" ] ||
      fail "the staged GPU run's losses differ from the host run's"
    # The dynamic table on the GPU: the eviction example (LFU, k-count admission) with a table far
    # smaller than the keys runs and counts its evictions.
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=1 \
      run_on_ranks 2 run "$configs/dynamic_storage_eviction.json" --set solver.max_iter=4 --set solver.warmup_iter=1 \
      --set solver.batchsize=1024 --set layers.emb1.storage.max_capacity=1024 --set solver.device=gpu \
      --set solver.communicator=mpi --quiet -o "$work/reports/kv.h5"
    [ "$rc" -eq 0 ] || fail "dynamic table on the GPU: exit $rc: $(cat "$work/err.txt")"
    grep -qE "^embscale run: all2all_dense on 2 ranks, 4 iterations: step " "$work/out.txt" ||
      fail "dynamic table on the GPU: $(cat "$work/out.txt")"
    evicted=$(dataset_values "$work/reports/kv.h5" /runs/run0/counters/evictions | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
    [ "$evicted" -gt 0 ] || fail "dynamic table on the GPU: no eviction counted: $(dataset_values "$work/reports/kv.h5" /runs/run0/counters/evictions)"
    ;;
  slots_out_of_range)
    expect_bad_input "layers[emb1].slots: expected slot indices below the Data layer's slot_num (8), got [6,7,8]" \
      "$configs/scheme_all2all_dense.json" --set 'layers.emb1.slots=[6, 7, 8]' -o "$work/reports/r.h5"
    ;;
  pooled_without_deduplication)
    expect_bad_input "layers[emb1].deduplicate: distributed_slot sends (key, bag) pairs, which cannot be de-duplicated" \
      "$configs/scheme_distributed_slot.json" --set layers.emb1.deduplicate=false -o "$work/reports/r.h5"
    ;;
  dynamic_capacity_error)
    # safe_check_mode ERROR: a batch with more distinct keys on a rank than its table can insert
    # is bad input naming max_capacity, found at the first step, with no report left.
    BAD_INPUT_ALONE=1 expect_bad_input "layers[emb1].storage.max_capacity: too small for one batch's distinct keys on this rank" \
      "$configs/dynamic_storage_eviction.json" --set layers.emb1.storage.safe_check_mode=ERROR -o "$work/reports/r.h5"
    ;;
  foreign_optimizer_fields)
    # Hyper-parameters, a block or an update type of another optimizer than the type: refused.
    expect_bad_input 'optimizer.adam_hparam: the hyper-parameters of "Adam", but the type is "SGD", which reads sgd_hparam' \
      "$configs/scheme_all2all_dense.json" --set 'optimizer.adam_hparam={"learning_rate": 0.001}' -o "$work/reports/r.h5"
    expect_bad_input 'layers[emb_wide].optimizer.adagrad_hparam.beta1: a hyper-parameter of "Adam", not of "RowWiseAdaGrad"' \
      "$configs/multi_layer_slot_subsets.json" --set layers.emb_wide.optimizer.adagrad_hparam.beta1=0.9 -o "$work/reports/r.h5"
    expect_bad_input 'optimizer.update_type: "LazyGlobal" is defined for "Adam" only' \
      "$configs/scheme_all2all_dense.json" --set optimizer.update_type=LazyGlobal -o "$work/reports/r.h5"
    ;;
  trace_norm_run)
    # A Norm trace of 4 batches, read through a HugeCTR file list, drives a 4-iteration run: the
    # report has the trace's 4 iterations, and the losses of a synthetic run of the same batches
    # (no warm-up: warm-up batches are drawn apart from the timed ones); a fifth is refused.
    mkdir -p "$work/runs"  # expect_bad_input wants $work/reports empty
    shape=(--set solver.batchsize=512 --set solver.max_iter=4 --set solver.warmup_iter=0)
    "$embscale" trace generate "$configs/scheme_row_wise.json" "${shape[@]}" --format norm -o "$work/t.norm" --quiet ||
      fail "trace generate failed"
    printf '1\n%s\n' "$work/t.norm" >"$work/files.txt"
    sed 's/"format": "Synthetic"/"format": "Norm", "source": "files.txt"/' "$configs/scheme_row_wise.json" >"$work/trace.json"
    run_mpi 2 "$work/trace.json" "${shape[@]}" -o "$work/runs/trace.h5" --quiet
    [ "$rc" -eq 0 ] || fail "the trace run failed ($rc): $(cat "$work/err.txt")"
    run_mpi 2 "$configs/scheme_row_wise.json" "${shape[@]}" -o "$work/runs/synthetic.h5" --quiet
    [ "$rc" -eq 0 ] || fail "the synthetic run failed ($rc): $(cat "$work/err.txt")"
    "$embscale" report "$work/runs/trace.h5" >"$work/report.txt" || fail "embscale report failed"
    grep -qE "^iterations +4$" "$work/report.txt" || fail "not the trace's 4 iterations: $(cat "$work/report.txt")"
    traced=$(dataset_values "$work/runs/trace.h5" /runs/run0/series/loss)
    generated=$(dataset_values "$work/runs/synthetic.h5" /runs/run0/series/loss)
    [ "$(awk -F, '{print NF}' <<<"$traced")" -eq 4 ] || fail "loss series of the trace run: $traced"
    [ "$traced" = "$generated" ] || fail "losses differ: trace $traced, synthetic $generated"
    expect_bad_input "holds 4 whole batches: set max_iter to at most 4" \
      "$work/trace.json" "${shape[@]}" --set solver.max_iter=5 -o "$work/reports/r.h5"
    ;;
  missing_file)
    expect_bad_input "$work/nope.json: cannot open config file" "$work/nope.json" -o "$work/reports/r.h5"
    ;;
  invalid_json)
    cfg=$(variant broken '3s/$/,,/')
    expect_bad_input "broken.json:3:" "$cfg" -o "$work/reports/r.h5"
    ;;
  wrong_type)
    cfg=$(variant wrongtype 's/"batchsize": 4096/"batchsize": "lots"/')
    expect_bad_input 'solver.batchsize: expected' "$cfg" -o "$work/reports/r.h5"
    ;;
  out_of_range)
    cfg=$(variant range 's/"embedding_vec_size": 32/"embedding_vec_size": 0/')
    expect_bad_input 'layers[emb1].sparse_embedding_hparam.embedding_vec_size: expected' "$cfg" -o "$work/reports/r.h5"
    ;;
  bad_combiner)
    cfg=$(variant combiner 's/"combiner": "sum"/"combiner": "max"/')
    expect_bad_input 'layers[emb1].sparse_embedding_hparam.combiner: expected 0, 1, "sum" or "mean", got "max"' "$cfg" -o "$work/reports/r.h5"
    ;;
  unknown_key)
    cfg=$(variant unknownkey 's/"max_iter": 100/"max_iters": 100/')
    expect_bad_input 'did you mean "max_iter"' "$cfg" -o "$work/reports/r.h5"
    ;;
  unknown_layer_type)
    cfg=$(variant layertype 's/"type": "All2AllDenseEmbedding"/"type": "All2AllDenseEmbeding"/')
    expect_bad_input 'unknown layer type "All2AllDenseEmbeding"' "$cfg" -o "$work/reports/r.h5"
    ;;
  capacity_too_small)
    cfg=$(variant capacity 's/"max_vocabulary_size_per_gpu": 800000/"max_vocabulary_size_per_gpu": 1000/')
    expect_bad_input 'max_vocabulary_size_per_gpu: expected at least 400000' "$cfg" -o "$work/reports/r.h5"
    ;;
  memory_refused_before_allocating)
    # A static table of 10^12 rows of 32 fp32 values (58.2 TiB a rank on 2 ranks): refused
    # before any rank allocates it, naming the estimate, the layer and the limit (exit 2, printed
    # once, no report), by `run` and by `validate --ranks`; without --ranks validate says it did not check.
    cfg=$(variant huge 's/"slot_size_array": \[100000,/"slot_size_array": [1000000000000,/; s/"max_vocabulary_size_per_gpu": 800000/"max_vocabulary_size_per_gpu": 1000000000000/')
    expect_bad_input "rank 0 of 2 would allocate 58.2 TiB of host memory for its tables before the first step, more than the " \
      "$cfg" -o "$work/reports/r.h5"
    grep -qF "a rank may take (this node's " "$work/err.txt" || fail "the limit's source: $(cat "$work/err.txt")"
    grep -qF "the largest is layers[emb1] with 58.2 TiB, static storage: the rows of its slots (the data's slot_size_array) placed by all2all_dense, each 32 values + 0 of the optimizer's state, 4 bytes a value" "$work/err.txt" || fail "the layer: $(cat "$work/err.txt")"
    grep -q '^iteration ' "$work/out.txt" && fail "the run started before its memory was checked"
    "$embscale" validate "$cfg" --ranks 2 >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    [ "$rc" -eq 2 ] || fail "validate --ranks 2: exit $rc, expected 2: $(cat "$work/out.txt" "$work/err.txt")"
    grep -qF "would allocate 58.2 TiB" "$work/err.txt" || fail "validate --ranks: $(cat "$work/err.txt")"
    "$embscale" validate "$cfg" >"$work/out.txt" 2>&1 || fail "validate without --ranks refused: $(cat "$work/out.txt")"
    grep -qF "not checked: what depends on the ranks" "$work/out.txt" || fail "validate hides what it did not check"
    # planner.memory_per_rank is what a rank may take: the default table (400000 rows a rank of 32
    # fp32 values, 48.8 MiB) is refused under 32 MiB and runs under 64 MiB.
    cfg=$(variant small_limit 's/"solver": {/"planner": {"memory_per_rank": 33554432}, "solver": {/')
    expect_bad_input "would allocate 48.8 MiB of host memory for its tables before the first step, more than the 32 MiB a rank may take (planner.memory_per_rank)" \
      "$cfg" -o "$work/reports/r.h5"
    cfg=$(variant enough_limit 's/"solver": {/"planner": {"memory_per_rank": 67108864}, "solver": {/')
    run_mpi 2 "$cfg" --set solver.max_iter=3 -o "$work/reports/ok.h5" --quiet
    [ "$rc" -eq 0 ] || fail "a table within planner.memory_per_rank was refused: $(cat "$work/err.txt")"
    rm -f "$work/reports/ok.h5"
    # A parameter server's shard: 7 x 10^11 rows of 32 values and AdaGrad's 32 on its one server
    # (rank 1 of 2), refused the same way.
    ps=$(sed 's/100000,/100000000000,/g; s/"max_vocabulary_size_per_gpu": 800000/"max_vocabulary_size_per_gpu": 1000000000000/; s/"trainers": 2/"trainers": 1/; s/"transport": "ucx"/"transport": "mpi"/; s/"pulls": "one_sided"/"pulls": "messages"/' \
      "$configs/parameter_server_static.json" >"$work/ps_huge.json" && echo "$work/ps_huge.json")
    expect_bad_input "rank 1 of 2 would allocate 163 TiB of host memory for its tables before the first step" \
      "$ps" -o "$work/reports/r.h5"
    grep -qF "static storage on 1 server: its 700000100000 rows by id % servers, each 32 values + 32 of the optimizer" "$work/err.txt" || fail "the parameter server's shard: $(cat "$work/err.txt")"
    ;;
  unwritable_output)
    mkdir -p "$work/reports"
    expect_bad_input "$work/missing_dir/r.h5: cannot create report" -o "$work/missing_dir/r.h5"
    [ ! -e "$work/missing_dir" ] || fail "the missing directory was created"
    # /proc refuses new files even to root, whom access(2) would tell it may write there: the
    # check creates a file to know, and says so before the run starts.
    expect_bad_input "/proc/out.h5: cannot create report: " -o /proc/out.h5
    grep -q '^iteration ' "$work/out.txt" && fail "the run started before the output was checked"
    # A device is refused, never replaced by the report renamed over it.
    expect_bad_input "/dev/null: cannot create report: it is a character device" -o /dev/null
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    ;;
  unwritable_output_every_command)
    # Every subcommand that writes a file refuses an output that cannot be created, as bad input
    # (exit 2), naming the path and why, before it starts its work.
    cfg=$(variant short 's/"max_iter": 100/"max_iter": 2/')
    run_mpi 1 "$cfg" -o "$work/in.h5" --quiet
    [ "$rc" -eq 0 ] || fail "run failed: $(cat "$work/err.txt")"
    printf '{"sweep_version": 1, "base": "%s", "grid": {"solver.max_iter": [2]}}\n' "$cfg" >"$work/sweep.json"
    "$embscale" trace generate "$cfg" --iterations 1 -o "$work/in.trace" --quiet || fail "trace generate failed"
    expect_refused() {  # expect_refused EXPECTED COMMAND...
      local expected=$1; shift
      "$@" >"$work/out.txt" 2>"$work/err.txt"
      local code=$?
      [ "$code" -eq 2 ] || fail "$*: exit $code, expected 2: $(cat "$work/err.txt")"
      grep -qF -- "$expected" "$work/err.txt" || fail "$*: stderr lacks '$expected': $(cat "$work/err.txt")"
    }
    expect_refused "/proc/s.h5: cannot create report: " \
      "$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$work/sweep.json" -o /proc/s.h5 --quiet
    grep -q 'sweep: run' "$work/out.txt" && fail "the sweep started a run before the output was checked"
    expect_refused "/proc/m.h5: cannot create report: " "$embscale" merge "$work/in.h5" -o /proc/m.h5
    expect_refused "/proc/g.trace: cannot create trace: " "$embscale" trace generate "$cfg" -o /proc/g.trace --quiet
    expect_refused "/proc/c.trace: cannot create trace: " "$embscale" trace convert "$work/in.trace" -o /proc/c.trace
    # A points directory that cannot be made (a file has its name) is bad input too.
    touch "$work/blocked.points"
    expect_refused "$work/blocked.points: cannot create the points directory" \
      "$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$work/sweep.json" -o "$work/blocked.h5" --quiet
    ;;
  rank_failure)
    # A failure on rank 1 alone, mid-run: every rank ends (no hang, the ctest timeout would
    # catch one), rank 1's message is printed, and no report or temporary file is left.
    mkdir -p "$work/reports"
    EMBSCALE_FAULT_INJECT=1:3 run_mpi 2 -o "$work/reports/r.h5" --quiet
    [ "$rc" -ne 0 ] || fail "a failing rank must fail the run"
    grep -qF "embscale: error (rank 1 of 2): injected fault at iteration 3" "$work/err.txt" ||
      fail "rank 1's message missing: $(cat "$work/err.txt")"
    [ -z "$(ls -A "$work/reports")" ] || fail "files left behind: $(ls -A "$work/reports")"
    ;;
  killed_rank)
    # A rank killed outright (SIGKILL: the OOM killer, a crashed node) cannot clean up, and the
    # launcher kills the others while they wait for it in a collective: the report's temporary
    # file stays. The next writer of the same report removes it (its writer is gone), whichever
    # rank was killed, and leaves only the report.
    mkdir -p "$work/reports"
    cfg=$(variant short 's/"max_iter": 100/"max_iter": 8/')
    EMBSCALE_FAULT_INJECT=1:3:kill run_mpi 2 "$cfg" -o "$work/reports/r.h5" --quiet
    [ "$rc" -ne 0 ] || fail "a killed rank must fail the run"
    [ "$(ls -A "$work/reports" | grep -c '^\.r\.h5\.tmp\.')" -eq 1 ] ||
      fail "expected the killed run's one temporary file: $(ls -A "$work/reports")"
    first=$(ls -A "$work/reports")
    EMBSCALE_FAULT_INJECT=0:3:kill run_mpi 2 "$cfg" -o "$work/reports/r.h5" --quiet
    [ "$rc" -ne 0 ] || fail "a killed rank 0 must fail the run"
    [ ! -e "$work/reports/$first" ] || fail "the second run did not remove the first one's orphan $first"
    run_mpi 2 "$cfg" -o "$work/reports/r.h5" --quiet
    [ "$rc" -eq 0 ] || fail "run after the killed ones failed ($rc): $(cat "$work/err.txt")"
    [ "$(ls -A "$work/reports")" = "r.h5" ] || fail "files left beside the report: $(ls -A "$work/reports")"
    EMBSCALE_FAULT_INJECT=1:3:explode run_mpi 2 "$cfg" -o "$work/reports/x.h5" --quiet
    [ "$rc" -eq 2 ] && grep -qF 'EMBSCALE_FAULT_INJECT: expected RANK:ITERATION or RANK:ITERATION:kill, got "1:3:explode"' "$work/err.txt" ||
      fail "a malformed EMBSCALE_FAULT_INJECT must be refused ($rc): $(cat "$work/err.txt")"
    ;;
  compare_self)
    # A report against itself: identical samples, no regression, exit 0; JSON agrees.
    mkdir -p "$work/reports"
    cfg=$(variant short 's/"max_iter": 100/"max_iter": 30/')
    run_mpi 2 "$cfg" -o "$work/reports/a.h5" --quiet
    [ "$rc" -eq 0 ] || fail "run failed: $(cat "$work/err.txt")"
    "$embscale" compare "$work/reports/a.h5" "$work/reports/a.h5" >"$work/cmp.txt" 2>&1 ||
      fail "self-compare exited $?: $(cat "$work/cmp.txt")"
    grep -q "verdict: no significant regression" "$work/cmp.txt" || fail "$(cat "$work/cmp.txt")"
    grep -q "phase:exchange_keys" "$work/cmp.txt" || fail "no phase rows: $(cat "$work/cmp.txt")"
    "$embscale" compare --json "$work/reports/a.h5" "$work/reports/a.h5" >"$work/cmp.json" || fail "--json failed"
    grep -q '"regression": false' "$work/cmp.json" || fail "JSON verdict: $(cat "$work/cmp.json")"
    ;;
  compare_disjoint)
    # Reports with no runs in common (1 rank vs 2 ranks) are bad input: exit 2, named.
    mkdir -p "$work/reports"
    cfg=$(variant short 's/"max_iter": 100/"max_iter": 5/')
    run_mpi 1 "$cfg" -o "$work/reports/one.h5" --quiet
    run_mpi 2 "$cfg" -o "$work/reports/two.h5" --quiet
    "$embscale" compare "$work/reports/one.h5" "$work/reports/two.h5" >"$work/cmp.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "exit $code, expected 2: $(cat "$work/cmp.txt")"
    grep -q "one.h5 vs .*two.h5: the reports have no runs with the same parameters" "$work/cmp.txt" ||
      fail "$(cat "$work/cmp.txt")"
    # The refusal names the parameter that differs, with both values, and the way to pair anyway.
    grep -qF "ranks (base 1, new 2);" "$work/cmp.txt" || fail "the differing field is not named: $(cat "$work/cmp.txt")"
    grep -qF -- "--ignore ranks" "$work/cmp.txt" || fail "no --ignore hint: $(cat "$work/cmp.txt")"
    "$embscale" compare --ignore ranks "$work/reports/one.h5" "$work/reports/two.h5" >"$work/cmp.txt" 2>&1
    code=$?
    [ "$code" -eq 0 ] || [ "$code" -eq 1 ] || fail "--ignore ranks: exit $code: $(cat "$work/cmp.txt")"
    grep -qF "ranks=1->2" "$work/cmp.txt" || fail "--ignore ranks did not pair 1 rank with 2: $(cat "$work/cmp.txt")"
    "$embscale" compare --gate phase "$work/reports/one.h5" "$work/reports/one.h5" >"$work/cmp.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "--gate phase (a typo) exited $code, expected 2"
    grep -qF -- "--gate: expected step, phases" "$work/cmp.txt" || fail "$(cat "$work/cmp.txt")"
    ;;
  help_every_subcommand)
    # Every subcommand `embscale --help` lists, and every one nested under them (trace's), answers
    # --help with exit 0 and ends with its exit codes; the MPI programs say how to launch them.
    listed() { sed -n '/^Subcommands:/,$p' "$1" | awk 'NR > 1 && /^  [a-z]/ {print $1}'; }
    "$embscale" --help >"$work/help.txt" 2>&1 || fail "embscale --help exited $?: $(cat "$work/help.txt")"
    names=$(listed "$work/help.txt")
    for expected in run sweep collectives simulate merge validate report compare trace; do
      grep -qx "$expected" <<<"$names" || fail "embscale --help does not list $expected: $(cat "$work/help.txt")"
    done
    grep -qF "MPI programs (launch with mpiexec -n N or srun -n N): run, sweep, collectives." "$work/help.txt" ||
      fail "the top-level help does not name the MPI programs: $(cat "$work/help.txt")"
    checked=0
    for name in $names; do
      "$embscale" "$name" --help >"$work/sub.txt" 2>&1 || fail "embscale $name --help exited $?: $(cat "$work/sub.txt")"
      for nested in "" $(listed "$work/sub.txt"); do  # "": the subcommand itself; then trace's generate, ...
        # shellcheck disable=SC2086  # $nested: no word, or one
        "$embscale" "$name" $nested --help >"$work/sub.txt" 2>&1 ||
          fail "embscale $name $nested --help exited $?: $(cat "$work/sub.txt")"
        grep -qx "Exit codes:" "$work/sub.txt" && grep -qE "^  0  " "$work/sub.txt" && grep -qE "^  2  bad input" "$work/sub.txt" ||
          fail "embscale $name $nested --help lacks its exit codes: $(cat "$work/sub.txt")"
        checked=$((checked + 1))
      done
    done
    [ "$checked" -ge 12 ] || fail "only $checked commands checked (9 subcommands and trace's 3 expected)"
    "$embscale" run --help >"$work/run.txt" 2>&1
    grep -qF 'An MPI program: launch it as `mpiexec -n N embscale run ...`' "$work/run.txt" &&
      grep -qE '^  3  stopped by SIGTERM/SIGUSR1' "$work/run.txt" && grep -qE '^  1  failure' "$work/run.txt" ||
      fail "run --help: $(cat "$work/run.txt")"
    "$embscale" compare --help >"$work/compare.txt" 2>&1
    grep -qE '^  1  a regression' "$work/compare.txt" && grep -q '^Serial: ' "$work/compare.txt" ||
      fail "compare --help: $(cat "$work/compare.txt")"
    ;;
  no_subcommand)
    # No subcommand, an unknown one, or a group without its own: exit 2 with a message, nothing run.
    "$embscale" >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "no subcommand: exit $code, expected 2"
    grep -q "A subcommand is required" "$work/out.txt" || fail "no subcommand: $(cat "$work/out.txt")"
    "$embscale" reprot results.h5 >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "unknown subcommand: exit $code, expected 2"
    grep -qF 'embscale: unknown subcommand "reprot"; did you mean "report"? (subcommands: run, sweep, collectives, merge, validate, plan, simulate, report, compare, trace; see embscale --help)' \
      "$work/out.txt" || fail "unknown subcommand: $(cat "$work/out.txt")"
    "$embscale" frobnicate >"$work/out.txt" 2>&1  # no subcommand is near: no suggestion
    [ $? -eq 2 ] || fail "unknown subcommand frobnicate: exit not 2"
    grep -qF 'embscale: unknown subcommand "frobnicate" (subcommands: run,' "$work/out.txt" ||
      fail "unknown subcommand frobnicate: $(cat "$work/out.txt")"
    "$embscale" trace >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "trace without its subcommand: exit $code, expected 2"
    grep -q "A subcommand is required" "$work/out.txt" || fail "trace: $(cat "$work/out.txt")"
    "$embscale" --bogus >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "an unknown flag: exit $code, expected 2"
    grep -qF 'embscale: unknown option "--bogus"' "$work/out.txt" || fail "--bogus: $(cat "$work/out.txt")"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
