#!/usr/bin/env bash
# A full disk under `embscale run`'s report: disk_full_test.sh EMBSCALE MPIEXEC CASE
# The report goes to a small tmpfs this script mounts (root only: where mount is refused the case
# prints SKIP and exits 77, which ctest counts as skipped).
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" disk_full "$@"

small=$work/small
mkdir -p "$small"
# 256 KiB: less than the default run's report of 2,000 iterations, more than one of 3.
disk=256k
[ "$case_name" = disk_filled_during_run ] && disk=1m  # room for a report of 400 iterations
if ! mount -t tmpfs -o "size=$disk" tmpfs "$small" 2>"$work/mount.txt"; then
  echo "SKIP [$case_name]: cannot mount a small tmpfs here (needs root): $(cat "$work/mount.txt")"
  exit 77
fi
trap 'umount "$small" 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

case "$case_name" in
  disk_full_refused_before_run)
    # The default run with 2,000 iterations needs more than the 256 KiB disk: refused before the
    # first step (exit 2, no progress line), the free and the needed bytes named once, nothing left.
    run_on_ranks 2 run --set solver.max_iter=2000 --set solver.display=10 -o "$small/r.h5"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2: $(cat "$work/err.txt")"
    grep -qE "$small/r.h5: the filesystem holding it has [0-9]+ bytes free; the report needs about [0-9]+" "$work/err.txt" ||
      fail "no message naming the space: $(cat "$work/err.txt")"
    [ "$(grep -c 'embscale: error' "$work/err.txt")" -eq 1 ] || fail "the error should be printed once: $(cat "$work/err.txt")"
    grep -q "iteration " "$work/out.txt" && fail "the run started: $(cat "$work/out.txt")"
    [ -z "$(ls -A "$small")" ] || fail "files left behind: $(ls -A "$small")"
    ;;
  disk_filled_during_run)
    # Another process fills the disk while the run runs (after its first progress line): the
    # room the run claimed before its first step is still there, so the report is written whole.
    timeout 120 "$mpiexec" -n 2 --oversubscribe "$embscale" run --set solver.max_iter=400 --set solver.display=20 \
      -o "$small/r.h5" >"$work/out.txt" 2>"$work/err.txt" &
    pid=$!
    for _ in $(seq 600); do grep -q "iteration " "$work/out.txt" 2>/dev/null && break; sleep 0.1; done
    dd if=/dev/zero of="$small/filler" bs=4k 2>/dev/null
    [ "$(df --output=avail "$small" | tail -1 | tr -d ' ')" -lt 8 ] || fail "the filler left room: $(df "$small")"
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || fail "exit $rc (124: hung): $(cat "$work/err.txt")"
    "$embscale" report "$small/r.h5" >"$work/report.txt" 2>&1 || fail "the report does not read: $(cat "$work/report.txt")"
    grep -qE "^iterations +400$" "$work/report.txt" || fail "not 400 iterations: $(cat "$work/report.txt")"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_name]"
