#!/bin/sh
# Build HierarchicalKV's benchmark with nvcc alone and run it; raw stdout of
# every run is appended to OUT (stderr and progress go to this script's stderr).
# scripts/gpu-check --hkv HKV_DIR runs it beside embscale's GPU table.
#
#   sh bench/peers/hkv/run-hkv.sh HKV_DIR OUT
#
# HKV_DIR holds a copy of HierarchicalKV made by hand on the development machine
# (never committed, never fetched by a script): src/include/ and src/benchmark/
# from its repository (README.md beside this script says which files). The
# binaries go to HKV_DIR/bin. hkv_shapes.cu, beside this script, is the
# command-line driver around HKV's own benchmark code.
# Environment (all optional):
#   NVCC          nvcc to use (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   ARCH          90 (-gencode arch=compute_$ARCH,code=sm_$ARCH)
#   MODE          shapes (default): hkv_shapes once per shape and memory mode
#                 stock: HKV's unmodified main() (fixed shapes, no options)
#                 build: build only
#   SHAPES        "DIM:CAPACITY ..." (default "8:134217728 64:67108864")
#   MEMS          "pure hybrid" (default); hybrid HBM for values = HYBRID_HBM_GB,
#                 default half of the values' size in GiB (2 for dim 8 x 2^27,
#                 8 for dim 64 x 2^26)
#   HYBRID_HBM_GB integer GiB, overrides the default above
#   LOAD_FACTORS  "0.5,0.75,1.0" (default)
#   BATCH         keys per timed call, default 1048576
#   APIS          comma list for one table (default: the stock two groups)
#   RUN_TIMEOUT   seconds per run, via timeout(1) (default: none)
#   BUILD         auto (default: rebuild when a source is newer than bin/NAME),
#                 always, or never (use bin/NAME as it is, e.g. built elsewhere
#                 and carried, when the copy did not keep modification times)
set -u

DIR=${1:?usage: run-hkv.sh HKV_DIR OUT}
OUT=${2:?usage: run-hkv.sh HKV_DIR OUT}
MODE=${MODE:-shapes}
ARCH=${ARCH:-90}
SHAPES=${SHAPES:-"8:134217728 64:67108864"}
MEMS=${MEMS:-"pure hybrid"}
LOAD_FACTORS=${LOAD_FACTORS:-0.5,0.75,1.0}
BATCH=${BATCH:-1048576}
if [ -z "${NVCC:-}" ]; then
  if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc; else NVCC=/usr/local/cuda/bin/nvcc; fi
fi

DIR=$(cd "$DIR" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$DIR/bin
mkdir -p "$BIN" || exit 2
FLAGS="-std=c++17 -O3 -gencode arch=compute_${ARCH},code=sm_${ARCH} -I $DIR/src/include -I $DIR/src/benchmark"

log() { echo "build-and-run: $*" >&2; }

# build NAME SOURCE: skip when the binary is newer than every source.
build() {
  exe=$BIN/$1
  src_newer=$(find "$DIR/src" "$2" -newer "$exe" -type f 2>/dev/null | head -n 1)
  if [ -x "$exe" ] && [ "${BUILD:-auto}" = never ]; then
    log "using $exe as it is (BUILD=never)"
    return 0
  fi
  if [ -x "$exe" ] && [ "${BUILD:-auto}" != always ] && [ -z "$src_newer" ]; then
    log "$exe is up to date"
    return 0
  fi
  log "$NVCC $FLAGS $2 -o $exe"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  "$NVCC" $FLAGS "$2" -o "$exe.tmp" || { log "build of $1 failed"; return 1; }
  mv "$exe.tmp" "$exe"
  log "built $1 in $(( $(date +%s) - t0 )) s"
}

run() {
  log "run: $*"
  t0=$(date +%s)
  if [ -n "${RUN_TIMEOUT:-}" ]; then set -- timeout "$RUN_TIMEOUT" "$@"; fi
  # Line-buffer stdout so a crash loses nothing already printed.
  if command -v stdbuf >/dev/null 2>&1; then set -- stdbuf -oL "$@"; fi
  "$@" >>"$OUT"
  rc=$?
  log "rc=$rc after $(( $(date +%s) - t0 )) s"
  return $rc
}

: >"$OUT" || exit 2
status=0
case $MODE in
  build)
    build hkv_shapes "$HERE/hkv_shapes.cu" || exit 1
    build merlin_hashtable_benchmark "$DIR/src/benchmark/merlin_hashtable_benchmark.cc.cu" || exit 1
    ;;
  stock)
    build merlin_hashtable_benchmark "$DIR/src/benchmark/merlin_hashtable_benchmark.cc.cu" || exit 1
    run "$BIN/merlin_hashtable_benchmark" || status=1
    ;;
  shapes)
    build hkv_shapes "$HERE/hkv_shapes.cu" || exit 1
    for shape in $SHAPES; do
      dim=${shape%%:*}
      cap=${shape#*:}
      values_gb=$(( cap * dim * 4 / 1073741824 ))
      for mem in $MEMS; do
        set -- "$BIN/hkv_shapes" --dim "$dim" --capacity "$cap" \
          --load-factors "$LOAD_FACTORS" --batch "$BATCH"
        if [ "$mem" = hybrid ]; then
          hbm=${HYBRID_HBM_GB:-$(( values_gb / 2 ))}
          if [ "$hbm" -lt 1 ] || [ "$hbm" -ge "$values_gb" ]; then
            log "skip hybrid dim=$dim capacity=$cap: HBM $hbm GiB is not in [1, $values_gb)"
            status=1
            continue
          fi
          set -- "$@" --hbm-gb "$hbm"
        fi
        if [ -n "${APIS:-}" ]; then set -- "$@" --apis "$APIS"; fi
        run "$@" || status=1
      done
    done
    ;;
  *)
    log "unknown MODE=$MODE"; exit 2 ;;
esac
exit $status
