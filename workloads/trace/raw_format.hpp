// HugeCTR's Raw format ("Raw"; HugeCTR's data_readers/data_reader_worker_raw.cpp).
//
// One file of fixed-size records, no header, every field 4 bytes little-endian:
//   int label[label_dim] | int dense[dense_dim] | int category[slot_num]
// One-hot: one key per slot. label_dim, dense_dim and slot_size_array come from the config (the
// file cannot say them), so a Raw file is never detected: the caller names the format.
//
// Keys. category[j] is slot j's local key in [0, slot_size_array[j]): HugeCTR's Raw reader passes
// it through unchanged and its one-hot embeddings add the slot's offset (the prefix sum of
// slot_size_array; LocalizedSlotSparseEmbeddingOneHot's mapping offsets). embscale's Batch holds
// unified keys, so this reader adds offset_j itself, and the writer subtracts it.
//
// float_label_dense false (HugeCTR's default): labels are ints read as float, dense values are ints
// preprocessed to log(dense + 1.f) (float arithmetic, as HugeCTR). true: both are stored as float
// bits and read unchanged. In int mode a dense value below 0 is an InputError (HugeCTR would make
// -inf or NaN of it); the writer stores round(e^d - 1), which gives back the ints of an int-mode
// file exactly (write(read(f)) == f), other dense values to within that rounding.
//
// A file whose size is not a whole number of records is truncated: an InputError at open naming
// the first incomplete sample and its byte offset.
#pragma once

#include <filesystem>
#include <memory>

#include "workloads/trace/trace.hpp"

namespace embscale::trace {

// Needs options.label_dim, options.dense_dim and options.slot_sizes (one per slot).
std::unique_ptr<TraceReader> open_raw_reader(const std::filesystem::path& path, const TraceReadOptions& options);
// Needs shape.slot_sizes; every bag must hold exactly one key.
std::unique_ptr<TraceWriter> open_raw_writer(const std::filesystem::path& path, const TraceShape& shape,
                                             const TraceWriteOptions& options);

}  // namespace embscale::trace
