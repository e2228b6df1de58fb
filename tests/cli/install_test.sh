#!/usr/bin/env bash
# `cmake --install` gives a working prefix: install_test.sh BUILD_DIR MPIEXEC
#   bin/embscale runs an installed example config (share/embscale/configs) and draws the report
#   with the installed plot scripts (share/embscale), found beside the binary with no source tree
#   and no EMBSCALE_PLOT_SCRIPT (skipped where /usr/bin/python3 lacks matplotlib, h5py or pandas);
#   lib/libembscale_cuda.so is there when the build has CUDA.
set -uo pipefail
build=$1
mpiexec=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/embscale_install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [install]: $*" >&2; exit 1; }
unset EMBSCALE_PLOT_SCRIPT

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.txt" 2>&1 || fail "cmake --install: $(cat "$work/install.txt")"
for file in bin/embscale share/embscale/plot_report.py share/embscale/plot_collectives.py \
            share/embscale/configs/default.json share/embscale/configs/scheme_row_wise.json; do
  [ -e "$prefix/$file" ] || fail "$file is not installed"
done
if [ -e "$build/kernels/libembscale_cuda.so" ]; then
  [ -e "$prefix/lib/libembscale_cuda.so" ] || fail "the build has CUDA kernels but lib/libembscale_cuda.so is not installed"
fi

# The installed binary, moved away from the build tree's share folder, runs an installed config.
cd "$work"
"$mpiexec" -n 1 "$prefix/bin/embscale" run "$prefix/share/embscale/configs/default.json" -o "$work/run.h5" --quiet \
  >"$work/run.txt" 2>&1 || fail "installed embscale run failed: $(cat "$work/run.txt")"
[ -s "$work/run.h5" ] || fail "no report written"

if ! /usr/bin/python3 -c "import matplotlib, h5py, pandas" 2>/dev/null; then
  echo "PASS [install] (plot skipped: /usr/bin/python3 lacks matplotlib, h5py or pandas)"
  exit 0
fi
"$prefix/bin/embscale" report "$work/run.h5" --plot "$work/plots" >"$work/report.txt" 2>&1 ||
  fail "installed report --plot failed: $(cat "$work/report.txt")"
ls "$work/plots"/*.png >/dev/null 2>&1 || fail "report --plot drew nothing: $(cat "$work/report.txt")"
# Without the share folder the refusal says where the script belongs.
mkdir -p "$work/bare/bin" && cp "$prefix/bin/embscale" "$work/bare/bin/"
"$work/bare/bin/embscale" report "$work/run.h5" --plot "$work/plots2" >"$work/bare.txt" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "a binary without its share folder: exit $code, expected 2: $(cat "$work/bare.txt")"
grep -qF "share/embscale" "$work/bare.txt" || fail "the refusal does not say where the script belongs: $(cat "$work/bare.txt")"
echo "PASS [install]"
