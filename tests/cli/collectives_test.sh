#!/usr/bin/env bash
# End-to-end tests of `embscale collectives`: collectives_test.sh EMBSCALE MPIEXEC CASE
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" collectives "$@"

# Runs `embscale collectives` on N ranks; stdout in $work/out.txt, stderr in $work/err.txt, code in $rc.
run_collectives() { run_on_ranks "$1" collectives "${@:2}"; }

# Expects exit code 2, stderr naming $1 (once), and no file in $work/reports.
expect_bad_flag() {
  local expected=$1; shift
  rm -rf "$work/reports"
  mkdir -p "$work/reports"
  run_collectives 2 "$@" -o "$work/reports/r.h5"
  [ "$rc" -eq 2 ] || fail "$*: exit code $rc, expected 2; stderr: $(cat "$work/err.txt")"
  grep -qF -- "$expected" "$work/err.txt" || fail "$*: stderr lacks '$expected': $(cat "$work/err.txt")"
  [ "$(grep -c 'embscale: error' "$work/err.txt")" -le 1 ] || fail "$*: the error should be printed once: $(cat "$work/err.txt")"
  [ -z "$(ls -A "$work/reports")" ] || fail "$*: files left behind: $(ls -A "$work/reports")"
}

case "$case_name" in
  collectives_sweep)
    # Two collectives over 1-8 KiB on 2 ranks, alltoallv with equal and skewed counts.
    run_collectives 2 allreduce alltoallv -b 1K -e 8K -n 3 -w 1 --set solver.max_iter=3 -o "$work/r.h5"
    [ "$rc" -eq 0 ] || fail "exit code $rc: $(cat "$work/err.txt")"
    for header in "allreduce on 2 ranks" "alltoallv on 2 ranks" "alltoallv (skewed counts) on 2 ranks"; do
      grep -qF "$header" "$work/out.txt" || fail "no table '$header': $(cat "$work/out.txt")"
    done
    # nccl-tests' columns: size, count, type, redop, root, then time algbw busbw #wrong per placement.
    grep -qE "^ +4096 +1024 +float +sum +-1 " "$work/out.txt" || fail "no 4 KiB allreduce line: $(cat "$work/out.txt")"
    grep -qF "report: $work/r.h5" "$work/out.txt" || fail "report path not printed"
    h5dump -a /report_kind "$work/r.h5" | grep -q '"collectives"' || fail "report_kind is not collectives"
    h5ls "$work/r.h5/runs" >"$work/runs.txt"
    for run in allreduce-float-sum-out_of_place-1024 allreduce-float-sum-in_place-8192 \
               alltoallv-float-out_of_place-4096; do
      grep -q "^$run " "$work/runs.txt" || fail "no run $run: $(cat "$work/runs.txt")"
    done
    grep -q "^alltoallv_skewed-float-out_of_place-" "$work/runs.txt" || fail "no skewed alltoallv run: $(cat "$work/runs.txt")"
    h5ls -r "$work/r.h5/runs/allreduce-float-sum-out_of_place-1024" >"$work/run.txt"
    for d in "timings/collective" "counters/bytes_sent" "series/step_time" "series/mpi_time"; do
      grep -q "^/$d " "$work/run.txt" || fail "no $d in the run: $(cat "$work/run.txt")"
    done
    "$embscale" report "$work/r.h5" >"$work/report.txt" || fail "embscale report failed"
    grep -q "busbw_GBps" "$work/report.txt" || fail "report does not show busbw_GBps"
    "$embscale" compare "$work/r.h5" "$work/r.h5" >"$work/compare.txt" 2>&1 || fail "compare of a report with itself: $(cat "$work/compare.txt")"
    # OSU's timing (--barrier): said in the table and recorded with each run.
    run_collectives 2 bcast -b 1K -e 1K -n 3 -w 1 --barrier -o "$work/b.h5"
    [ "$rc" -eq 0 ] || fail "--barrier: exit code $rc: $(cat "$work/err.txt")"
    grep -qF "a barrier after each call (OSU)" "$work/out.txt" || fail "--barrier not in the table header: $(cat "$work/out.txt")"
    h5dump -a /runs/bcast-float-root0-in_place-1024/barrier_each_call "$work/b.h5" | grep -qE "\(0\): 1$" ||
      fail "barrier_each_call is not 1 in the run"
    ;;
  collectives_every_type)
    # Every collective, type and op on 1 and 4 ranks at sizes that are no multiple of the rank
    # count: the data check passes everywhere (exit 0).
    for ranks in 1 4; do
      run_collectives "$ranks" -d all --op all -r all -b 100 -e 300 -i 200 -n 1 -w 0 --rounds 1 --set solver.max_iter=2 \
        -o "$work/r$ranks.h5"
      [ "$rc" -eq 0 ] || fail "$ranks ranks: exit code $rc: $(tail -n 20 "$work/err.txt")"
      grep -qE "^ +300 +300 +int8 +prod +-1 " "$work/out.txt" || fail "$ranks ranks: no 300-byte int8 prod allreduce line"
    done
    ;;
  collectives_backend_nccl)
    # --backend nccl on the stand-in device library (its NCCL: real ranks over shared memory; its
    # "device" memory: host memory; EMBSCALE_FAKE_DEVICE_COUNT GPUs): every collective, type and op
    # through the NcclCommunicator on 1, 2 and 4 ranks, each checked, beside bare NCCL; the report
    # records the backend and the GPU. The stand-in's path comes from ctest ($EMBSCALE_TEST_FAKE_DEVICE).
    [ -n "${EMBSCALE_TEST_FAKE_DEVICE:-}" ] || fail "EMBSCALE_TEST_FAKE_DEVICE is not set (ctest sets it)"
    # Strict: every buffer handed to NCCL must be the stand-in's device memory (as NCCL faults on host memory).
    export EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE EMBSCALE_FAKE_DEVICE_COUNT=4 EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1
    for ranks in 1 2 4; do
      run_collectives "$ranks" --backend nccl -d all --op all -r all -b 100 -e 300 -i 200 -n 1 -w 0 --rounds 1 \
        --set solver.max_iter=2 -o "$work/n$ranks.h5"
      [ "$rc" -eq 0 ] || fail "$ranks ranks: exit code $rc: $(tail -n 20 "$work/err.txt")"
      grep -qF "allreduce over NCCL (device buffers) on $ranks ranks" "$work/out.txt" || fail "$ranks ranks: no NCCL table"
      grep -qE "^ +300 +300 +int8 +prod +-1 " "$work/out.txt" || fail "$ranks ranks: no 300-byte int8 prod allreduce line"
    done
    h5dump -a /comm_backend "$work/n2.h5" | grep -qF '"nccl"' || fail "comm_backend is not nccl"
    h5dump -a /gpu_model "$work/n2.h5" | grep -qF '"embscale fake device 0"' || fail "no gpu_model"
    h5dump -a /nccl_version "$work/n2.h5" | grep -qF '"2.10.99"' || fail "no nccl_version"
    /usr/bin/python3 -c "import h5py, math, sys
s = h5py.File(sys.argv[1])['summary'][()]
assert len(s) > 0 and all(int(r['wrong']) == 0 and not math.isnan(r['mpi_time_us']) for r in s), 'a wrong element or no bare NCCL time'" \
      "$work/n2.h5" || fail "the summary of the NCCL run"
    # The MPI backend stays the default and says so.
    run_collectives 1 allreduce -b 1K -e 1K -n 1 -w 0 -o "$work/m.h5"
    h5dump -a /comm_backend "$work/m.h5" | grep -qF '"mpi"' || fail "comm_backend is not mpi by default"
    # A wrong element is found on device buffers too (copied out for the check).
    EMBSCALE_INJECT_WRONG=allgather run_collectives 2 --backend nccl allgather -b 1K -e 1K -n 1 -w 0 -c 1 -o "$work/w.h5"
    [ "$rc" -eq 1 ] || fail "inject: exit code $rc, expected 1: $(cat "$work/err.txt")"
    # Refused before anything runs: more ranks than GPUs, no GPU, no NCCL in the library, --replay.
    EMBSCALE_FAKE_DEVICE_COUNT=1 expect_bad_flag "--backend nccl: 2 ranks run on $(hostname), which has 1 GPU; NCCL takes one rank per GPU" --backend nccl
    EMBSCALE_FAKE_DEVICE_COUNT=0 expect_bad_flag "--backend nccl needs a GPU; $(hostname) has none" --backend nccl
    EMBSCALE_CUDA_LIBRARY=$EMBSCALE_TEST_FAKE_DEVICE_LACKING_NCCL expect_bad_flag "--backend nccl: rank 0 cannot use NCCL: " --backend nccl
    expect_bad_flag "--replay replays the CPU engine's step over MPI; it has no --backend nccl" --backend nccl --replay all
    expect_bad_flag "--backend: expected mpi or nccl, got \"gloo\"" --backend gloo
    ;;
  collectives_wrong_element)
    # A wrong element (EMBSCALE_INJECT_WRONG flips a bit of the last rank's first received
    # element in each checked call): stderr says how many and where, the report keeps them, exit 1.
    EMBSCALE_INJECT_WRONG=allgather run_collectives 2 allreduce allgather -b 1K -e 2K -n 2 -w 0 -c 2 \
      -o "$work/r.h5"
    [ "$rc" -eq 1 ] || fail "exit code $rc, expected 1: $(cat "$work/err.txt")"
    grep -qE "rank 1, allgather-float-out_of_place-1024: element 0: got .*, expected " "$work/err.txt" ||
      fail "no located wrong element: $(cat "$work/err.txt")"
    grep -qF "allgather-float-out_of_place-1024: 2 wrong elements over all ranks" "$work/err.txt" ||
      fail "no count of wrong elements: $(cat "$work/err.txt")"
    grep -qF "the data check found 8 wrong elements" "$work/err.txt" || fail "no total: $(cat "$work/err.txt")"
    [ -f "$work/r.h5" ] || fail "the report was not kept"
    /usr/bin/python3 -c "import h5py, sys
s = h5py.File(sys.argv[1])['summary'][()]
wrong = {r['run_id'].decode(): int(r['wrong']) for r in s}
assert all(v == (2 if k.startswith('allgather') else 0) for k, v in wrong.items()), wrong" "$work/r.h5" ||
      fail "the report's wrong column is not 2 for allgather and 0 for allreduce"
    ;;
  collectives_replay)
    # Every scheme's training step replayed on 2 ranks: the check passes (exit 0), a table per
    # scheme ends with its step, the line perf-check reads is there, the report holds a run per
    # call and one per step with the case columns plus paired_overhead.
    run_collectives 2 --replay all -n 2 -w 1 --rounds 1 --set solver.max_iter=1 -o "$work/r.h5"
    [ "$rc" -eq 0 ] || fail "exit code $rc: $(cat "$work/err.txt")"
    for scheme in all2all_dense distributed_slot localized_slot table_wise row_wise column_wise table_row_wise \
                  data_parallel; do
      grep -qF "# replay of $scheme's step (layer " "$work/out.txt" || fail "no replay table of $scheme: $(cat "$work/out.txt")"
      grep -qE "^# replay $scheme: step ratio embscale / bare MPI \(medians\): [0-9.]+$" "$work/out.txt" ||
        fail "no step ratio of $scheme: $(cat "$work/out.txt")"
    done
    grep -q "distributed_sparse" "$work/out.txt" && fail "distributed_sparse (distributed_slot's factory) replayed twice"
    grep -qE "^ +step +[0-9]+ " "$work/out.txt" || fail "no step line: $(cat "$work/out.txt")"
    h5ls "$work/r.h5/runs" >"$work/runs.txt"
    for run in replay_all2all_dense-0-alltoall replay_all2all_dense-step replay_data_parallel-step; do
      grep -q "^$run " "$work/runs.txt" || fail "no run $run: $(cat "$work/runs.txt")"
    done
    /usr/bin/python3 -c "import h5py, math, sys
s = h5py.File(sys.argv[1])['summary'][()]
rows = {r['run_id'].decode(): r for r in s}
step = rows['replay_all2all_dense-step']
assert step['counts'] == b'replay' and step['collective'] == b'step', step
assert step['time_median_us'] > 0 and step['mpi_time_median_us'] > 0 and not math.isnan(step['paired_overhead']), step
assert all(int(r['wrong']) == 0 for r in s)" "$work/r.h5" || fail "the summary rows of the replay are wrong"
    "$embscale" compare "$work/r.h5" "$work/r.h5" >"$work/compare.txt" 2>&1 || fail "compare of a replay report with itself: $(cat "$work/compare.txt")"
    # Calibration: bare MPI on both sides, said in the table.
    run_collectives 2 --replay all2all_dense -n 2 -w 0 --rounds 1 --calibrate -o "$work/c.h5"
    [ "$rc" -eq 0 ] || fail "--calibrate: exit code $rc: $(cat "$work/err.txt")"
    grep -qF "[calibration: bare MPI on both sides]" "$work/out.txt" || fail "--calibrate not in the table: $(cat "$work/out.txt")"
    ;;
  collectives_bad_flags)
    expect_bad_flag '-e: "2T" is beyond the largest size, 2^40 bytes' -e 2T
    expect_bad_flag '-b: "-5" is negative' --minbytes=-5
    expect_bad_flag '-b: "abc" is not a size' -b abc
    expect_bad_flag '-i: "1.5K" is not a size' -i 1.5K
    expect_bad_flag '-b: the smallest size (2M) is above -e' -b 2M -e 1M
    expect_bad_flag '-d: unknown data type "float7"' -d float7
    expect_bad_flag '--op: unknown reduction op "mean"' --op mean
    expect_bad_flag '-f: a factor must be at least 2 (got 1)' -f 1
    expect_bad_flag '-f: "x2" is not a factor' -f x2
    expect_bad_flag '-f and -i: give one of them' -f 2 -i 1K
    expect_bad_flag '-r: root 9 is not a rank of this run' -r 9
    expect_bad_flag 'collectives: unknown collective "allreducee"' allreducee
    expect_bad_flag '--counts: "uneven" is not a kind of counts' --counts uneven
    expect_bad_flag '-n: 0 is not a call count of at least 1' -n 0
    expect_bad_flag '-a: 4 is not 0 (rank 0)' -a 4
    expect_bad_flag '--calibrate times bare MPI against itself' --calibrate --no-baseline
    expect_bad_flag '--scheme: ' alltoallv --scheme nonesuch
    expect_bad_flag 'data_parallel' alltoallv --scheme data_parallel
    expect_bad_flag '--replay: "nonesuch" is not a scheme; expected all or a comma-separated list of all2all_dense' \
      --replay nonesuch
    expect_bad_flag "--replay replays a scheme's training step on its own; leave out the collectives to sweep (allreduce)" \
      allreduce --replay all
    expect_bad_flag '--scheme: --replay names the schemes itself' --replay row_wise --scheme row_wise
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
