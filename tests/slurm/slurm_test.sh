#!/usr/bin/env bash
# Tests of the sbatch templates on the one-host cluster of scripts/slurm-cluster:
#   slurm_test.sh EMBSCALE SLURM_DIR CASE
# CASE: start | stop | single_run
set -uo pipefail
embscale=$1
slurm_dir=$2
case_name=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
export SLURM_CONF=$slurm_dir/slurm.conf

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

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
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
