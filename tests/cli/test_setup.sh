# What every end-to-end test script of tests/cli shares, sourced right after `set -uo pipefail`:
#   source "$(dirname "$0")/test_setup.sh" SUITE EMBSCALE MPIEXEC CASE
# SUITE names the script's temporary folders; MPIEXEC may be "" for a script without MPI.
#   $embscale, $mpiexec, $case_name   the arguments
#   $work     a fresh temporary folder, removed at exit (kept when KEEP_WORK is set, to look at)
#   $here     this folder; $configs the example configs (bench/configs)
#   fail MSG  prints "FAIL [case]: MSG" and exits 1
#   run_on_ranks RANKS ARGS...  runs $embscale ARGS on RANKS ranks through $mpiexec
#             (oversubscribed): stdout in $work/out.txt, stderr in $work/err.txt, exit code in $rc
suite=$1 embscale=$2 mpiexec=$3 case_name=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
configs=$here/../../bench/configs
work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_${suite}_${case_name}.XXXXXX")
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

run_on_ranks() {
  local ranks=$1; shift
  "$mpiexec" -n "$ranks" --oversubscribe "$embscale" "$@" >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
}
