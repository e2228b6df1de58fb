#!/usr/bin/env bash
# scripts/gpu-runtime: the packages the CLI needs where MPI and HDF5 are missing, and the prefix
# they unpack into. gpu_runtime_test.sh SOURCE_DIR EMBSCALE
#   1. --dry-run lists the packages owning the CLI's libraries (OpenMPI's and HDF5's among them),
#      and never the C/C++ runtimes the machine's own loader provides;
#   2. (where apt can download) the .debs unpacked into a private prefix run the CLI on 2 ranks
#      with only the prefix's MPI and HDF5 on the library path (ldd resolves them there).
set -uo pipefail
source_dir=$1 embscale=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_gpu_runtime.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [gpu_runtime]: $*" >&2; exit 1; }

listed=$("$source_dir/scripts/gpu-runtime" --dry-run "$embscale") || fail "--dry-run failed: $listed"
for package in openmpi-bin libopenmpi3 libhdf5-openmpi-103-1 libpmix2; do
  grep -qw -- "$package" <<<"$listed" || fail "--dry-run does not list $package: $listed"
done
for package in libc6 libstdc++6 libgcc-s1; do
  grep -qw -- "$package" <<<"$listed" && fail "--dry-run lists $package, the machine's own: $listed"
done
"$source_dir/scripts/gpu-runtime" --unpack / --out "$work" >/dev/null 2>&1 && fail "--unpack / was accepted"

if ! "$source_dir/scripts/gpu-runtime" --out "$work/runtime" "$embscale" >"$work/download.txt" 2>&1; then
  echo "SKIP: apt-get download failed here: $(tail -n 2 "$work/download.txt")"
  exit 77
fi
environment=$("$source_dir/scripts/gpu-runtime" --unpack "$work/prefix" --out "$work/runtime") || fail "--unpack failed"
(
  eval "$environment"
  [ "$(command -v mpiexec)" = "$work/prefix/usr/bin/mpiexec" ] || fail "mpiexec is not the prefix's: $(command -v mpiexec)"
  ldd "$embscale" | grep -q "libmpi.so.40 => $work/prefix/" || fail "libmpi is not the prefix's: $(ldd "$embscale" | grep libmpi)"
  ldd "$embscale" | grep -q "libhdf5_openmpi.so.103 => $work/prefix/" || fail "HDF5 is not the prefix's"
  mpiexec -n 2 --oversubscribe "$embscale" run --set solver.max_iter=2 -o "$work/r.h5" >"$work/run.txt" 2>&1 ||
    fail "the CLI on the prefix's MPI: $(tail -n 5 "$work/run.txt")"
  [ -s "$work/r.h5" ] || fail "no report"
) || exit 1
echo "gpu_runtime: ok"
