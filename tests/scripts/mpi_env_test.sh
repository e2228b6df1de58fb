#!/usr/bin/env bash
# `source scripts/mpi-env` (README "Quick start") puts the built embscale on PATH and sets what
# OpenMPI needs as root; sourcing it twice adds the folder once.
#   mpi_env_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
root=$1
export EMBSCALE_BUILD_DIR=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
env -i HOME="$HOME" PATH=/usr/bin:/bin EMBSCALE_BUILD_DIR="$EMBSCALE_BUILD_DIR" bash -c '
  source "$0/scripts/mpi-env" && source "$0/scripts/mpi-env" &&
  echo "$(command -v embscale)|$OMPI_ALLOW_RUN_AS_ROOT|$(tr ":" "\n" <<<"$PATH" | grep -c "/bench/cli$")"' "$root" >"${TMPDIR:-/tmp}/mpi_env_test.$$" ||
  fail "sourcing scripts/mpi-env failed"
IFS='|' read -r found root_ok entries <"${TMPDIR:-/tmp}/mpi_env_test.$$"
rm -f "${TMPDIR:-/tmp}/mpi_env_test.$$"
[ "$found" = "$EMBSCALE_BUILD_DIR/bench/cli/embscale" ] || fail "embscale on PATH is '$found', expected $EMBSCALE_BUILD_DIR/bench/cli/embscale"
[ "$root_ok" = 1 ] || fail "OMPI_ALLOW_RUN_AS_ROOT is not set"
[ "$entries" = 1 ] || fail "the build folder is on PATH $entries times after sourcing twice"
echo "PASS: scripts/mpi-env puts $found on PATH"
