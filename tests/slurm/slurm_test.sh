#!/usr/bin/env bash
# Tests of the sbatch templates on the one-host cluster of scripts/slurm-cluster:
#   slurm_test.sh EMBSCALE SLURM_DIR CASE
# CASE: start | stop | single_run | scaling_study | requeue_sweep | requeue_run | collectives
set -uo pipefail
embscale=$1
slurm_dir=$2
case_name=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
export SLURM_CONF=$slurm_dir/slurm.conf

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

# Waits up to 120 s for a line of FILE matching the extended regex PATTERN; else cancels JOB and fails.
wait_for_line() {  # JOB FILE PATTERN WHAT
  for _ in $(seq 1200); do
    grep -qE "$3" "$2" 2>/dev/null && return
    sleep 0.1
  done
  scancel "$1"
  fail "no $4 within 120 s: $(cat "$2" 2>/dev/null; squeue 2>&1)"
}

# SIGUSR1 to JOB's batch shell (what --signal=B:USR1@120 does before a time limit), then waits
# up to 4 minutes for the job to end: it must have COMPLETED after at least one requeue. OUT: the
# job's output, shown when it did not.
preempt_until_completed() {  # JOB OUT
  scancel --batch --signal=USR1 "$1" || fail "scancel --signal failed"
  local state="" restarts
  for _ in $(seq 240); do
    state=$(scontrol show job -o "$1" | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
    sleep 1
  done
  [ "$state" = COMPLETED ] || { scancel "$1"; fail "job $1 ended $state: $(cat "$2")"; }
  restarts=$(scontrol show job -o "$1" | grep -oE 'Restarts=[0-9]+' | cut -d= -f2)
  [ "${restarts:-0}" -ge 1 ] || fail "the job was not requeued (Restarts=$restarts): $(cat "$2")"
}

case $case_name in
  start)
    "$root/scripts/slurm-cluster" stop "$slurm_dir" >/dev/null 2>&1
    "$root/scripts/slurm-cluster" start "$slurm_dir" || fail "cannot start the cluster"
    ;;
  stop)
    "$root/scripts/slurm-cluster" stop "$slurm_dir" || fail "cannot stop the cluster"
    ;;
  single_run)
    work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_slurm_single.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    sed 's/"max_iter": 100/"max_iter": 10/' "$root/bench/configs/default.json" >"$work/short.json"
    cd "$work" || fail "no work directory"
    # --wait: sbatch returns when the job ends, with the job's exit code.
    # A job that cannot start would wait forever: give up after 4 minutes and say why.
    timeout 240 sbatch --wait --quiet --time=5 --export=ALL,EMBSCALE="$embscale",EMBSCALE_RESULTS="$work/reports" \
      "$root/slurm/run.sbatch" "$work/short.json" >"$work/sbatch.txt" 2>&1 ||
      fail "job failed: $(cat "$work/sbatch.txt" "$work"/embscale-run-*.out 2>/dev/null; squeue -o '%i %T %r' 2>&1)"
    out=$(ls "$work"/embscale-run-*.out 2>/dev/null | head -n 1)
    [ -n "$out" ] || fail "no job output file embscale-run-<job id>.out"
    job=${out##*embscale-run-}
    job=${job%.out}
    report="$work/reports/run-$job.h5"
    [ -f "$report" ] || fail "no report $report; job output: $(cat "$out")"
    grep -q "report: $report" "$out" || fail "job output does not name the report: $(cat "$out")"
    "$embscale" report "$report" >"$work/report.txt" || fail "embscale report failed"
    grep -q "slurm_job_id: $job" "$work/report.txt" || fail "report lacks slurm_job_id $job: $(cat "$work/report.txt")"
    grep -q "ranks: 2" "$work/report.txt" || fail "expected 2 ranks: $(cat "$work/report.txt")"
    h5ls -r "$report" | grep -qE "^/runs/run0/timings/lookup[[:space:]]+Dataset \{10, 2\}" ||
      fail "timings are not [10 iterations, 2 ranks]"
    ;;
  collectives)
    # The collectives sweep on every rank of a 2-task allocation: a report of kind "collectives"
    # with a run per collective and size, and the job's output table.
    work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_slurm_collectives.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    cd "$work" || fail "no work directory"
    timeout 240 sbatch --wait --quiet --time=5 --ntasks=2 \
      --export=ALL,EMBSCALE="$embscale",EMBSCALE_RESULTS="$work/reports" \
      "$root/slurm/collectives.sbatch" allreduce alltoallv -b 1K -e 4K -n 3 -w 1 --set solver.max_iter=3 \
      >"$work/sbatch.txt" 2>&1 ||
      fail "job failed: $(cat "$work/sbatch.txt" "$work"/embscale-collectives-*.out 2>/dev/null)"
    out=$(ls "$work"/embscale-collectives-*.out | head -n 1)
    job=${out##*embscale-collectives-}
    job=${job%.out}
    report="$work/reports/collectives-$job.h5"
    [ -f "$report" ] || fail "no report $report; job output: $(cat "$out")"
    grep -q "allreduce on 2 ranks" "$out" || fail "no allreduce table on 2 ranks: $(cat "$out")"
    grep -q "alltoallv (skewed counts) on 2 ranks" "$out" || fail "no skewed alltoallv table: $(cat "$out")"
    h5dump -a /report_kind "$report" | grep -q '"collectives"' || fail "report_kind is not collectives"
    h5ls "$report/runs" | grep -q "allreduce-float-sum-in_place-4096" || fail "no 4 KiB in-place allreduce run"
    ;;
  scaling_study)
    # Weak scaling at 1 and 2 ranks as srun steps of one job, merged into one report.
    work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_slurm_scaling.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    sed 's/"max_iter": 100/"max_iter": 10/' "$root/bench/configs/default.json" >"$work/short.json"
    cd "$work" || fail "no work directory"
    timeout 240 sbatch --wait --quiet --time=5 --ntasks=2 \
      --export=ALL,EMBSCALE="$embscale",EMBSCALE_RESULTS="$work/reports",EMBSCALE_WEAK_BATCH_PER_RANK=1024 \
      "$root/slurm/scaling.sbatch" "$work/short.json" >"$work/sbatch.txt" 2>&1 ||
      fail "job failed: $(cat "$work/sbatch.txt" "$work"/embscale-scaling-*.out 2>/dev/null)"
    out=$(ls "$work"/embscale-scaling-*.out | head -n 1)
    job=${out##*embscale-scaling-}
    job=${job%.out}
    report="$work/reports/scaling-$job.h5"
    [ -f "$report" ] || fail "no report $report; job output: $(cat "$out")"
    h5ls -r "$report" >"$work/h5ls.txt"
    grep -qE "^/runs/ranks1/timings/lookup[[:space:]]+Dataset \{10, 1\}" "$work/h5ls.txt" || fail "no 1-rank run: $(cat "$work/h5ls.txt")"
    grep -qE "^/runs/ranks2/timings/lookup[[:space:]]+Dataset \{10, 2\}" "$work/h5ls.txt" || fail "no 2-rank run"
    for n in 1 2; do  # weak scaling: 1024 samples per rank
      h5dump -a "/runs/ranks$n/batchsize" "$report" >"$work/batch.txt"
      grep -qE "\(0\): $((1024 * n))\$" "$work/batch.txt" ||
        fail "expected batchsize $((1024 * n)) at $n ranks: $(cat "$work/batch.txt")"
    done
    h5dump -A -g /runs/ranks2/metadata "$report" >"$work/meta.txt"
    grep -qF "\"$job\"" "$work/meta.txt" || fail "the step report lacks slurm_job_id $job"
    ;;
  requeue_sweep)
    # SIGUSR1 to the batch shell in the middle of a sweep (what --signal=B:USR1@120 does before a
    # time limit): the ranks stop, the job requeues itself, starts again, resumes, and the final
    # report has every run exactly once.
    work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_slurm_requeue.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    cat >"$work/sweep.json" <<JSON
{"base": "$root/bench/configs/default.json",
 "grid": {"layers.data.synthetic.zipf_alpha": [0.8, 1.0, 1.1, 1.2], "solver.max_iter": [100]}}
JSON
    cd "$work" || fail "no work directory"
    job=$(sbatch --parsable --time=10 --export=ALL,EMBSCALE="$embscale",EMBSCALE_RESULTS="$work/reports" \
          "$root/slurm/sweep.sbatch" "$work/sweep.json" "$work/reports/sweep.h5") || fail "sbatch failed: $job"
    out="$work/embscale-sweep-$job.out"
    wait_for_line "$job" "$work/reports/sweep.points/manifest.json" '"run_id"' "finished run"
    preempt_until_completed "$job" "$out"
    grep -q "stopped by SIGUSR1" "$out" || fail "the ranks did not report the stop: $(cat "$out")"
    grep -q "requeueing job $job" "$out" || fail "the script did not requeue: $(cat "$out")"
    grep -qE "[1-3] done before \(resumed\)" "$out" || fail "the second start did not resume: $(cat "$out")"
    h5ls "$work/reports/sweep.h5/runs" | awk '{print $1}' >"$work/runs.txt" || fail "no merged report: $(cat "$out")"
    [ "$(sort "$work/runs.txt" | tr '\n' ' ')" = "p0.r0 p1.r0 p2.r0 p3.r0 " ] ||
      fail "runs in the report: $(tr '\n' ' ' <"$work/runs.txt")"
    h5dump -H -d /summary "$work/reports/sweep.h5" | grep -qE 'DATASPACE +SIMPLE \{ \( 4 \)' ||
      fail "/summary must have 4 rows"
    ;;
  requeue_run)
    # SIGUSR1 to the batch shell in the middle of a run (what --signal=B:USR1@120 does before a
    # time limit): the ranks save a checkpoint and stop, the job requeues itself, starts again,
    # resumes from the checkpoint, and its report starts at the checkpoint's iteration.
    work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_slurm_resumable.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    sed 's/"max_iter": 100/"max_iter": 60/; s/"display": [0-9]*/"display": 1/' "$root/bench/configs/default.json" \
      >"$work/long.json"
    cd "$work" || fail "no work directory"
    # Each step 50 ms longer (CPU work in its loss phase; the losses do not change), so that the
    # signal lands in the middle.
    job=$(sbatch --parsable --time=10 \
          --export=ALL,EMBSCALE="$embscale",EMBSCALE_RESULTS="$work/reports",EMBSCALE_INJECT_DELAY=loss:0.05 \
          "$root/slurm/resumable_run.sbatch" "$work/long.json") || fail "sbatch failed: $job"
    out="$work/embscale-resumable-$job.out"
    wait_for_line "$job" "$out" '^iteration 5/' "iteration"
    preempt_until_completed "$job" "$out"
    grep -qE "stopped by SIGUSR1 before iteration [0-9]+; checkpoint saved in" "$out" ||
      fail "the ranks did not save a checkpoint at the stop: $(cat "$out")"
    grep -q "requeueing job $job" "$out" || fail "the script did not requeue: $(cat "$out")"
    grep -q "^resumed from $work/reports/run-$job.checkpoints/iteration-" "$out" ||
      fail "the second start did not resume: $(cat "$out")"
    h5dump -a /runs/run0/first_iteration "$work/reports/run-$job.h5" | grep -qE '\(0\): [1-9][0-9]*' ||
      fail "the report does not start at the checkpoint: $(h5dump -A -g /runs/run0 "$work/reports/run-$job.h5" 2>&1 | head -40)"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
