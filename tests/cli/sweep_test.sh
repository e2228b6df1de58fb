#!/usr/bin/env bash
# End-to-end tests of `embscale sweep` and `embscale merge`: sweep_test.sh EMBSCALE MPIEXEC CASE
# Each case exits non-zero with a message naming what went wrong.
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" sweep "$@"
default_config="$configs/default.json"
mkdir -p "$work/out"

# sweep RANKS ARGS...: output in $work/out.txt, stderr in $work/err.txt, exit code in $rc.
sweep() { run_on_ranks "$1" sweep "${@:2}"; }

# A sweep file over the default config: write_sweep NAME GRID_JSON [REPETITIONS]
write_sweep() {
  cat >"$work/$1.json" <<JSON
{"sweep_version": 1, "base": "$default_config", "grid": $2, "repetitions": ${3:-1}}
JSON
  echo "$work/$1.json"
}

# The run ids of a report's /runs, sorted, one per line.
run_ids() { h5ls "$1/runs" | awk '{print $1}' | sort; }

# Checks that REPORT holds exactly the runs p<point>.r<rep> for POINTS x REPS, each once.
expect_every_run_once() {  # REPORT POINTS REPS
  local expected=""
  for ((r = 0; r < $3; r++)); do for ((p = 0; p < $2; p++)); do expected+="p$p.r$r"$'\n'; done; done
  expected=$(printf '%s' "$expected" | sort)
  [ "$(run_ids "$1")" = "$expected" ] || fail "runs of $1: $(run_ids "$1" | tr '\n' ' '), expected $(echo $expected)"
  local rows
  rows=$(h5dump -H -d /summary "$1" | grep -oE 'DATASPACE +SIMPLE \{ \( [0-9]+' | grep -oE '[0-9]+$')
  [ "$rows" = "$(($2 * $3))" ] || fail "/summary has $rows rows, expected $(($2 * $3))"
}

# Waits until MANIFEST lists a finished run; else stops LAUNCHER (a resumable stop) and fails.
wait_for_a_finished_run() {  # MANIFEST LAUNCHER_PID
  for _ in $(seq 600); do
    grep -q '"run_id"' "$1" 2>/dev/null && return
    sleep 0.1
  done
  kill -USR1 "$2"
  fail "no run finished within 60 s"
}

case "$case_name" in
  sweep_grid)
    # 2 x 2 points (one field, and ranks 1 and 2 inside a 2-rank job) x 2 repetitions.
    s=$(write_sweep grid '{"layers.emb1.sparse_embedding_hparam.embedding_vec_size": [8, 16], "ranks": [1, 2], "solver.max_iter": [5]}' 2)
    sweep 2 "$s" -o "$work/out/grid.h5"
    [ "$rc" -eq 0 ] || fail "sweep failed ($rc): $(cat "$work/err.txt")"
    expect_every_run_once "$work/out/grid.h5" 4 2
    grep -q "sweep: run 8/8 p3.r1 on 2 ranks" "$work/out.txt" || fail "no progress line for run 8/8: $(cat "$work/out.txt")"
    grep -q "ETA" "$work/out.txt" || fail "no ETA in the progress lines"
    # Two repetitions a point: their spread under the summary (median, mean, stddev, CV).
    grep -q "^repetitions (runs with equal parameters)" "$work/out.txt" || fail "no spread of the repetitions: $(cat "$work/out.txt")"
    [ "$(grep -cE '^  .*step_time_median_s +2 +[0-9.]+ ms +[0-9.]+ ms +[0-9.]+ ms +[0-9.]+%$' "$work/out.txt")" -eq 4 ] ||
      fail "expected the step time spread of 4 points: $(cat "$work/out.txt")"
    # (listings go to files first: `grep -q` in a pipe would end h5ls early, and pipefail fail it)
    h5ls -r "$work/out/grid.h5" >"$work/h5ls.txt"
    grep -qE "^/runs/p0.r0/timings/lookup[[:space:]]+Dataset \{5, 1\}" "$work/h5ls.txt" ||
      fail "point 0 ran on 1 rank: expected timings [5, 1]"
    grep -qE "^/runs/p1.r1/timings/lookup[[:space:]]+Dataset \{5, 2\}" "$work/h5ls.txt" ||
      fail "point 1 ran on 2 ranks: expected timings [5, 2]"
    h5dump -A -g /runs/p2.r0/metadata "$work/out/grid.h5" >"$work/meta.txt"
    grep -q 'ATTRIBUTE "config_json"' "$work/meta.txt" ||
      fail "run p2.r0 lacks its provenance (metadata/config_json)"
    "$embscale" report "$work/out/grid.h5" >"$work/report.txt" || fail "embscale report failed"
    grep -q "sweep_axes: layers.emb1.sparse_embedding_hparam.embedding_vec_size,ranks,solver.max_iter" "$work/report.txt" ||
      fail "report lacks sweep_axes: $(cat "$work/report.txt")"
    [ "$(grep -c '"run_id"' "$work/out/grid.points/manifest.json")" -eq 8 ] || fail "the manifest does not list 8 runs"
    # The 16-wide point differs from the 8-wide one in its column, and repetitions share it.
    "$embscale" compare "$work/out/grid.h5" "$work/out/grid.h5" >"$work/cmp.txt" || fail "compare of the sweep failed"
    grep -q "geometric mean over 4 paired point(s)" "$work/cmp.txt" || fail "compare should pair 4 points: $(tail -3 "$work/cmp.txt")"
    grep -q "repetitions (2 vs 2)" "$work/cmp.txt" || fail "compare should use the repetitions: $(head -5 "$work/cmp.txt")"
    # 2 runs a side can never reach alpha after Holm over 4 points: compare says so, per point.
    [ "$(grep -c "step_time cannot fail the gate: with repetitions (2 vs 2)" "$work/cmp.txt")" -eq 4 ] ||
      fail "compare should warn that 2 repetitions cannot fail the gate: $(grep warning "$work/cmp.txt")"
    ;;
  sweep_stop_resume)
    # SIGUSR1 (what Slurm sends before a time limit) in the middle: exit 3, finished runs kept
    # byte for byte; --resume runs the rest; the merged report has every run exactly once.
    s=$(write_sweep stop '{"layers.data.synthetic.zipf_alpha": [0.8, 1.0, 1.1, 1.2], "solver.max_iter": [80]}')
    "$mpiexec" -n 2 --oversubscribe "$embscale" sweep "$s" -o "$work/out/s.h5" --quiet >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    manifest="$work/out/s.points/manifest.json"
    wait_for_a_finished_run "$manifest" "$launcher"
    kill -USR1 "$launcher"  # mpiexec forwards SIGUSR1 to every rank
    wait "$launcher"
    rc=$?
    [ "$rc" -eq 3 ] || fail "a stopped sweep exits 3, got $rc: $(cat "$work/err.txt")"
    grep -q "stopped by SIGUSR1" "$work/err.txt" || fail "the stop is not explained: $(cat "$work/err.txt")"
    [ ! -e "$work/out/s.h5" ] || fail "a stopped sweep must not write the merged report"
    done_before=$(grep -c '"run_id"' "$manifest")
    [ "$done_before" -ge 1 ] && [ "$done_before" -lt 4 ] || fail "$done_before runs done before the stop"
    ls -A "$work/out/s.points" | grep -q '\.tmp\.' && fail "temporary files left: $(ls -A "$work/out/s.points")"
    (cd "$work/out/s.points" && md5sum p*.h5 >"$work/before.md5")
    sweep 2 "$s" -o "$work/out/s.h5" --quiet --resume
    [ "$rc" -eq 0 ] || fail "resume failed ($rc): $(cat "$work/err.txt")"
    grep -q "$done_before done before (resumed)" "$work/out.txt" || fail "resume did not skip: $(head -3 "$work/out.txt")"
    (cd "$work/out/s.points" && md5sum -c --quiet "$work/before.md5") || fail "a finished run was rewritten"
    expect_every_run_once "$work/out/s.h5" 4 1
    ;;
  sweep_killed_rank)
    # A rank killed outright (SIGKILL) in the second run: the job ends (the launcher kills the
    # other rank), the first run stays listed, and the second run's temporary file is left in the
    # points directory (nobody lived to remove it). --resume removes it, runs the rest, and
    # leaves no temporary file.
    s=$(write_sweep killed '{"solver.max_iter": [2, 10]}')
    EMBSCALE_FAULT_INJECT=0:5:kill sweep 2 "$s" -o "$work/out/k.h5" --quiet
    [ "$rc" -ne 0 ] || fail "a sweep whose rank was killed must fail"
    points="$work/out/k.points"
    [ "$(grep -c '"run_id"' "$points/manifest.json")" -eq 1 ] || fail "expected p0.r0 done: $(cat "$points/manifest.json")"
    ls -A "$points" | grep -q '^\.p1\.r0\.h5\.tmp\.' || fail "expected the killed run's temporary file: $(ls -A "$points")"
    sweep 2 "$s" -o "$work/out/k.h5" --quiet --resume
    [ "$rc" -eq 0 ] || fail "resume failed ($rc): $(cat "$work/err.txt")"
    grep -q "removed 1 temporary file(s) of abandoned runs" "$work/err.txt" || fail "$(head -3 "$work/err.txt")"
    # --quiet: one line on success.
    [ "$(wc -l <"$work/out.txt")" -eq 1 ] && grep -q "^embscale sweep: 2 points x 1 repetitions = 2 runs on up to 2 ranks, 1 done before (resumed); report: $work/out/k.h5\$" "$work/out.txt" ||
      fail "--quiet printed more or other than one line: $(cat "$work/out.txt")"
    expect_every_run_once "$work/out/k.h5" 2 1
    ls -A "$points" "$work/out" | grep '\.tmp\.' && fail "temporary files left: $(ls -A "$points" "$work/out")"
    ;;
  sweep_sigterm_launcher)
    # SIGTERM to mpiexec itself (OpenMPI 4.1, slurm/STOPPING.md): mpiexec sends the ranks
    # SIGCONT at once, SIGTERM after odls_base_sigkill_timeout seconds and SIGKILL as long again,
    # and exits 1 whatever the ranks do. The ranks stop as for any SIGTERM, then MPI_Finalize
    # waits about 2 s for the aborting launcher; given 4 s, each exits 3 (recorded by a wrapper:
    # mpiexec reports only its own code). The finished run stays, no temporary file is left, and
    # --resume completes the sweep.
    # The second point must still be running when the ranks get SIGTERM (4 s after mpiexec):
    # its length comes from this machine's speed now (~15 s of iterations).
    "$mpiexec" -n 2 --oversubscribe "$embscale" run "$default_config" --set solver.max_iter=20 --set solver.display=5 \
      -o "$work/calibrate.h5" >"$work/calibrate.txt" 2>&1 || fail "calibration run failed: $(cat "$work/calibrate.txt")"
    rm -f "$work/calibrate.h5"
    iterations=$(sed -nE 's/.*step ([0-9.]+) ms.*/\1/p' "$work/calibrate.txt" |
                 awk '{sum += $1; n++} END {if (n == 0) exit 1; it = int(15000 / (sum / n)); print (it < 20 ? 20 : it)}') ||
      fail "no step times in the calibration run: $(cat "$work/calibrate.txt")"
    s=$(write_sweep term "{\"solver.max_iter\": [3, $iterations]}")
    cat >"$work/rank.sh" <<'SH'
#!/bin/bash
# One rank: the command, its exit code recorded. The wrapper ignores SIGTERM to outlive it;
# embscale installs its own handler over the inherited "ignore".
trap '' TERM
"$@"
echo $? >"$RANK_CODES/rank.$OMPI_COMM_WORLD_RANK"
SH
    chmod +x "$work/rank.sh"
    mkdir -p "$work/codes"
    RANK_CODES="$work/codes" OMPI_MCA_odls_base_sigkill_timeout=4 "$mpiexec" -n 2 --oversubscribe "$work/rank.sh" \
      "$embscale" sweep "$s" -o "$work/out/t.h5" --quiet >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    manifest="$work/out/t.points/manifest.json"
    wait_for_a_finished_run "$manifest" "$launcher"
    kill -TERM "$launcher"
    wait "$launcher"
    rc=$?
    [ "$rc" -eq 1 ] || fail "mpiexec exits 1 on SIGTERM (OpenMPI 4.1), got $rc; update slurm/STOPPING.md"
    grep -q "stopped by SIGTERM during run p1.r0" "$work/err.txt" ||
      fail "the ranks did not stop cleanly (p1 over before they got SIGTERM?): $(cat "$work/err.txt")"
    for r in 0 1; do
      [ "$(cat "$work/codes/rank.$r" 2>/dev/null)" = 3 ] || fail "rank $r exited '$(cat "$work/codes/rank.$r" 2>/dev/null)', expected 3"
    done
    [ "$(grep -c '"run_id"' "$manifest")" -eq 1 ] || fail "expected p0.r0 alone done: $(cat "$manifest")"
    ls -A "$work/out/t.points" | grep '\.tmp\.' && fail "temporary files left: $(ls -A "$work/out/t.points")"
    sweep 2 "$s" -o "$work/out/t.h5" --quiet --resume
    [ "$rc" -eq 0 ] || fail "resume failed ($rc): $(cat "$work/err.txt")"
    grep -q "1 done before (resumed)" "$work/out.txt" || fail "resume did not skip: $(head -3 "$work/out.txt")"
    expect_every_run_once "$work/out/t.h5" 2 1
    ;;
  sweep_bad_field)
    s=$(write_sweep bad '{"layers.emb1.sparse_embedding_hparam.embedding_vec_sise": [8]}')
    sweep 2 "$s" -o "$work/out/bad.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF 'bad.json: field "layers.emb1.sparse_embedding_hparam.embedding_vec_sise": the config has no "embedding_vec_sise" in "layers.emb1.sparse_embedding_hparam"; did you mean "embedding_vec_size"?' "$work/err.txt" ||
      fail "message: $(cat "$work/err.txt")"
    s=$(write_sweep bad1 '{"solver.zipf_alpha": [1.1]}')
    sweep 2 "$s" -o "$work/out/bad.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF 'bad1.json: field "solver.zipf_alpha": the config has no "zipf_alpha" in "solver"; did you mean "layers.data.synthetic.zipf_alpha"?' "$work/err.txt" ||
      fail "message: $(cat "$work/err.txt")"
    s=$(write_sweep bad2 '{"layers.emb9.sparse_embedding_hparam.embedding_vec_size": [8]}')
    sweep 2 "$s" -o "$work/out/bad.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF 'the config has no layer named "emb9"' "$work/err.txt" || fail "message: $(cat "$work/err.txt")"
    s=$(write_sweep bad3 '{"ranks": [4]}')
    sweep 2 "$s" -o "$work/out/bad.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF 'bad3.json: point 0 asks for 4 ranks; the job has 2' "$work/err.txt" || fail "message: $(cat "$work/err.txt")"
    # A point whose tables do not fit its ranks' memory is refused before the first point runs.
    s=$(write_sweep bad4 '{"planner": [{"memory_per_rank": 1000000000}, {"memory_per_rank": 1000000}]}')
    sweep 2 "$s" -o "$work/out/bad.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF 'bad4.json: point 1 (planner={"memory_per_rank":1000000}) at 2 ranks: rank 0 of 2 would allocate 48.8 MiB of host memory' "$work/err.txt" ||
      fail "message: $(cat "$work/err.txt")"
    [ -z "$(ls -A "$work/out")" ] || fail "files left behind: $(ls -A "$work/out")"
    ;;
  sweep_manifest_mismatch)
    s=$(write_sweep m '{"solver.max_iter": [3, 4]}')
    sweep 2 "$s" -o "$work/out/m.h5" --quiet
    [ "$rc" -eq 0 ] || fail "sweep failed: $(cat "$work/err.txt")"
    sweep 2 "$s" -o "$work/out/m.h5" --quiet
    [ "$rc" -eq 2 ] && grep -q "holds a sweep already; pass --resume" "$work/err.txt" ||
      fail "a second sweep into the same output must be refused ($rc): $(cat "$work/err.txt")"
    rm "$work/out/m.points/p1.r0.h5"
    sweep 2 "$s" -o "$work/out/m.h5" --quiet --resume
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
    grep -qF "manifest.json: lists run p1.r0 as done, but its report does not match: $work/out/m.points/p1.r0.h5: no such report file" "$work/err.txt" ||
      fail "message: $(cat "$work/err.txt")"
    s=$(write_sweep m '{"solver.max_iter": [3, 5]}')
    sweep 2 "$s" -o "$work/out/m.h5" --quiet --resume
    [ "$rc" -eq 2 ] && grep -q "manifest.json: written for another sweep" "$work/err.txt" ||
      fail "a changed sweep file must be refused ($rc): $(cat "$work/err.txt")"
    ;;
  merge_runs)
    # Separate launches (as a scaling study's srun steps), merged: run ids must be unique.
    sed 's/"max_iter": 100/"max_iter": 4/' "$default_config" >"$work/short.json"
    for n in 1 2; do
      "$mpiexec" -n $n --oversubscribe "$embscale" run "$work/short.json" --id ranks$n -o "$work/out/r$n.h5" --quiet \
        >/dev/null 2>"$work/err.txt" || fail "run on $n ranks failed: $(cat "$work/err.txt")"
    done
    "$embscale" merge "$work/out/r1.h5" "$work/out/r2.h5" -o "$work/out/all.h5" >"$work/out.txt" 2>&1 ||
      fail "merge failed: $(cat "$work/out.txt")"
    [ "$(run_ids "$work/out/all.h5" | tr '\n' ' ')" = "ranks1 ranks2 " ] || fail "runs: $(run_ids "$work/out/all.h5")"
    grep -q "2 runs from 2 files" "$work/out.txt" || fail "$(cat "$work/out.txt")"
    "$embscale" merge "$work/out/r1.h5" "$work/out/r1.h5" -o "$work/out/dup.h5" >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "duplicate ids: exit $code, expected 2"
    grep -qF "r1.h5: run ranks1 is also in $work/out/r1.h5" "$work/out.txt" || fail "$(cat "$work/out.txt")"
    # Two runs launched without --id are both run0: the message says how to name them apart.
    for n in 1 2; do
      "$mpiexec" -n 1 --oversubscribe "$embscale" run "$work/short.json" -o "$work/out/plain$n.h5" --quiet \
        >/dev/null 2>"$work/err.txt" || fail "run $n without --id failed: $(cat "$work/err.txt")"
    done
    "$embscale" merge "$work/out/plain1.h5" "$work/out/plain2.h5" -o "$work/out/dup.h5" >"$work/out.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] || fail "duplicate default ids: exit $code, expected 2"
    grep -qF "plain2.h5: run run0 is also in $work/out/plain1.h5; run ids must be unique across the merged reports: give each run its own id with \`embscale run --id NAME\`" \
      "$work/out.txt" || fail "$(cat "$work/out.txt")"
    [ ! -e "$work/out/dup.h5" ] || fail "a failed merge left its output"
    ;;
  shipped_sweeps)
    # The sweep files in bench/sweeps/ stay valid: every point checked, nothing written.
    for f in "$here"/../../bench/sweeps/*.json; do
      (cd "$work/out" && "$mpiexec" -n 4 --oversubscribe "$embscale" sweep "$f" -o plan.h5 --dry-run) \
        >"$work/out.txt" 2>"$work/err.txt" || fail "$f: $(cat "$work/err.txt")"
      grep -qE "^  point 0 on [0-9]+ ranks: " "$work/out.txt" || fail "$f: no plan printed: $(cat "$work/out.txt")"
    done
    [ -z "$(ls -A "$work/out")" ] || fail "--dry-run wrote files: $(ls -A "$work/out")"
    ;;
  scheme_sweeps)
    # The scheme sweeps of bench/sweeps run on 2 ranks (3 iterations, one repetition): every
    # point once, each scheme in the summary with its bytes and imbalance, and `report` reads it.
    for name in schemes:8; do
      file=${name%%:*}
      sed -e "s|\"base\": \"\.\./|\"base\": \"$here/../../bench/|" -e 's|"grid": {|"grid": {"solver.max_iter": [3], |' \
        -e 's|"repetitions": [0-9]*|"repetitions": 1|' "$here/../../bench/sweeps/$file.json" >"$work/$file.json"
      sweep 2 "$work/$file.json" -o "$work/out/$file.h5" --quiet
      [ "$rc" -eq 0 ] || fail "$file: sweep failed ($rc): $(cat "$work/err.txt")"
      expect_every_run_once "$work/out/$file.h5" "${name##*:}" 1
      "$embscale" report "$work/out/$file.h5" >"$work/report.txt" || fail "$file: embscale report failed"
      for row in scheme bytes_sent_per_step load_imbalance bytes_imbalance step_time_median_s; do
        grep -qE "^$row " "$work/report.txt" || fail "$file: the report has no $row row: $(cat "$work/report.txt")"
      done
    done
    grep -qE "^scheme +all2all_dense +distributed_slot +localized_slot +table_wise +row_wise +column_wise +table_row_wise +data_parallel$" \
      "$work/report.txt" || fail "schemes: $(grep '^scheme' "$work/report.txt")"
    ;;
  run_stop)
    # A signal stops a single run at an iteration boundary: exit 3 on every rank, no report.
    sed 's/"max_iter": 100/"max_iter": 100000/' "$default_config" >"$work/long.json"
    "$mpiexec" -n 2 --oversubscribe "$embscale" run "$work/long.json" -o "$work/out/r.h5" >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    for _ in $(seq 600); do grep -q '^iteration ' "$work/out.txt" && break; sleep 0.1; done
    # SIGTERM to the ranks themselves, as slurmstepd sends it at a time limit (mpiexec would
    # turn a SIGTERM of its own into a kill of the job).
    ranks=$(pgrep -P "$launcher")
    [ -n "$ranks" ] || fail "no rank processes under mpiexec $launcher"
    kill -TERM $ranks
    wait "$launcher"
    rc=$?
    [ "$rc" -eq 3 ] || fail "exit $rc, expected 3: $(cat "$work/err.txt")"
    grep -qE "stopped by SIG(TERM|USR1|INT) before iteration" "$work/err.txt" || fail "$(cat "$work/err.txt")"
    [ -z "$(ls -A "$work/out")" ] || fail "files left behind: $(ls -A "$work/out")"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
