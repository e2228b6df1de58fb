#!/usr/bin/env bash
# Configs in the forms of HugeCTR's published samples (tests/cli/hugectr_forms/README.md) run their
# embedding part, and run whole (dense layers, evaluation), on data of their shape:
# hugectr_forms_test.sh EMBSCALE MPIEXEC CASE
#   hugectr_norm_forms  wdl, dcn, dcn_localized_embedding, deepfm and criteo over Norm file lists
#                       without slot_size_array (HugeCTR's hash tables: dynamic storage), and what
#                       such data cannot run (static storage, row blocks) refused by name
#   hugectr_dlrm_raw    dlrm: Raw one-hot data, LocalizedSlotSparseEmbeddingOneHot, SGD's schedule
set -uo pipefail
source "$(dirname "$0")/test_setup.sh" hugectr_forms "$@"
forms=$here/hugectr_forms

# synthetic_shape NAME SLOT_SIZES NNZ DENSE_DIM: a generator config of that shape (256 samples a batch).
synthetic_shape() {
  cat >"$work/$1.json" <<JSON
{"solver": {"batchsize": 256, "max_iter": 4, "warmup_iter": 0, "seed": 20261128},
 "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.1}},
 "layers": [
  {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": $2,
   "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": $3},
   "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": $4},
   "sparse": [{"top": "data1", "slot_num": $(tr -cd ',' <<<"$2" | wc -c | awk '{print $1 + 1}')}]},
  {"name": "emb1", "type": "All2AllDenseEmbedding", "bottom": "data1", "top": "emb1",
   "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 100000, "embedding_vec_size": 4, "combiner": "sum"}}]}
JSON
  echo "$work/$1.json"
}

# norm_data FOLDER SHAPE_CONFIG: 4 batches as a Norm file and HugeCTR's file lists (train, test).
norm_data() {
  mkdir -p "$work/$1"
  "$embscale" trace generate "$2" --format norm --checksum --out-key-type I32 -o "$work/$1/part0.data" --quiet ||
    fail "trace generate ($2) failed"
  printf '1\n%s\n' "$work/$1/part0.data" >"$work/$1/file_list.txt"
  cp "$work/$1/file_list.txt" "$work/$1/file_list_test.txt"
}

# run_form NAME: the form's config (copied beside its data) validates and runs its embedding part on
# 2 ranks; the run names what it did not run and what it accepted and does not use.
run_form() {
  cp "$forms/$1.json" "$work/$1.json"
  "$embscale" validate "$work/$1.json" --embedding-only --ranks 2 >"$work/validate.txt" 2>&1 ||
    fail "$1: validate: $(cat "$work/validate.txt")"
  run_on_ranks 2 run "$work/$1.json" --embedding-only -o "$work/$1.h5" --quiet
  [ "$rc" -eq 0 ] || fail "$1: run --embedding-only failed ($rc): $(cat "$work/err.txt")"
  grep -q "^embscale run: .* on 2 ranks, 3 iterations: step " "$work/out.txt" || fail "$1: $(cat "$work/out.txt")"
  grep -qF "note: --embedding-only: running the embedding layers; not run: " "$work/err.txt" ||
    fail "$1: no note of what was not run: $(cat "$work/err.txt")"
  grep -qF "note: accepted and not used: solver.gpu (" "$work/err.txt" ||
    fail "$1: solver.gpu is not listed as not used: $(cat "$work/err.txt")"
  grep -qF "accepted and not used: solver.gpu (" "$work/validate.txt" ||
    fail "$1: validate does not list what is not used: $(cat "$work/validate.txt")"
  cp "$work/err.txt" "$work/$1.err"
}

# run_whole NAME: the form runs whole (its dense layers, and an evaluation of one batch of its
# eval_source after iteration 2, scored by AUC), on 2 ranks.
run_whole() {
  run_on_ranks 2 run "$work/$1.json" --set solver.eval_interval=2 --set solver.max_eval_batches=1 -o "$work/$1_whole.h5"
  [ "$rc" -eq 0 ] || fail "$1: the whole run failed ($rc): $(cat "$work/err.txt")"
  grep -qE "^evaluation after iteration 2: AUC [0-9.]+ \+- [0-9.]+, loss [0-9.]+, 256 samples" "$work/out.txt" ||
    fail "$1: no evaluation: $(cat "$work/out.txt")"
  h5dump -n "$work/$1_whole.h5" >"$work/names.txt"  # whole: grep -q would cut the pipe (pipefail)
  grep -q "timings/dense_forward" "$work/names.txt" || fail "$1: no dense phases: $(cat "$work/names.txt")"
}

case "$case_name" in
  hugectr_norm_forms)
    norm_data data "$(synthetic_shape wide_deep '[2000, 900, 800, 700, 600, 500, 400, 300, 200, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 9, 8, 7, 6, 5, 4, 3, 2]' 2 13)"
    norm_data data_one_slot "$(synthetic_shape one_slot '[30000]' 8 0)"
    for form in wdl dcn dcn_localized_embedding deepfm criteo; do
      run_form "$form"
      run_whole "$form"
    done
    # HugeCTR's hash tables: dynamic storage of max_vocabulary_size_per_gpu rows per rank.
    h5dump -a /runs/run0/scheme "$work/dcn_localized_embedding.h5" | grep -qF '"localized_slot"' ||
      fail "dcn_localized_embedding did not run localized_slot"
    grep -qF "layers[sparse_embedding1].plan_file (HugeCTR's all2all plan" "$work/dcn_localized_embedding.err" ||
      fail "plan_file is not listed as not used: $(cat "$work/dcn_localized_embedding.err")"
    grep -qF "layers[data].sparse[0].type (the embedding layer's type places the slots)" "$work/dcn.err" ||
      fail "sparse[].type is not listed as not used: $(cat "$work/dcn.err")"
    # What such data cannot run, refused by name: static rows and row blocks need key spaces.
    sed 's/"combiner": 0 }/"combiner": 0 }, "storage": { "type": "static" }/' "$forms/dcn.json" >"$work/static.json"
    "$embscale" validate "$work/static.json" --embedding-only >"$work/out.txt" 2>&1 && fail "static storage accepted"
    grep -qF "$work/static.json: layers[sparse_embedding1].storage: static storage holds each slot's key space, which layers[data] does not give: add its slot_size_array" \
      "$work/out.txt" || fail "static storage: $(cat "$work/out.txt")"
    sed 's/"DistributedSlotSparseEmbeddingHash",/"ShardedEmbedding", "sharding": "row_wise",/' "$forms/dcn.json" >"$work/rows.json"
    "$embscale" validate "$work/rows.json" --embedding-only >"$work/out.txt" 2>&1 && fail "row_wise accepted"
    grep -qF "$work/rows.json: layers[sparse_embedding1]: row_wise splits each slot's key space in row blocks, which layers[data] does not give" \
      "$work/out.txt" || fail "row_wise: $(cat "$work/out.txt")"
    ;;
  hugectr_dlrm_raw)
    sizes='[300, 20, 1000, 500, 40, 20, 600, 90, 3, 700, 900, 800, 300, 20, 800, 600, 10, 500, 200, 4, 800, 15, 12, 500, 100, 30]'
    shape=$(synthetic_shape raw_shape "$sizes" 1 13)
    mkdir -p "$work/data_raw"
    "$embscale" trace generate "$shape" --format raw -o "$work/data_raw/train_data.bin" --quiet || fail "trace generate raw"
    "$embscale" trace generate "$shape" --format raw -o "$work/data_raw/test_data.bin" --set solver.max_iter=2 --quiet ||
      fail "trace generate raw (test)"
    run_form dlrm
    h5dump -a /runs/run0/scheme "$work/dlrm.h5" | grep -qF '"localized_slot"' || fail "dlrm did not run localized_slot"
    # Its learning-rate schedule is read (the rows train under it), not listed as not used.
    grep -qF "optimizer.sgd_hparam." "$work/err.txt" && fail "the schedule is listed as not used: $(cat "$work/err.txt")"
    # One-hot rows are the slots' key spaces: a slot size that disagrees with the Data layer's is refused.
    sed '0,/"slot_size_array": \[300,/! s/"slot_size_array": \[300,/"slot_size_array": [301,/' "$forms/dlrm.json" >"$work/sizes.json"
    "$embscale" validate "$work/sizes.json" --embedding-only >"$work/out.txt" 2>&1 && fail "disagreeing sizes accepted"
    grep -qF "layers[sparse_embedding1].sparse_embedding_hparam.slot_size_array: expected the sizes of its slots in layers[data].slot_size_array (slot 0: 300)" \
      "$work/out.txt" || fail "disagreeing sizes: $(cat "$work/out.txt")"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
