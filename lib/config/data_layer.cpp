// The Data layer: HugeCTR's keys (format, source, check, num_samples, float_label_dense,
// slot_size_array, label, dense, sparse) plus embscale's "synthetic" block. The format says where
// samples come from: generated ("Synthetic") or a trace ("Norm", "Raw", "Embscale").
#include <algorithm>
#include <limits>

#include "config/hugectr_names.hpp"
#include "config/sections.hpp"

namespace embscale::config {
namespace {

// Generous caps: they keep per-batch sizes (samples x slots x nnz, samples x dims) far from
// overflow while exceeding any real model.
constexpr std::int64_t kMaxLabelDim = std::int64_t{1} << 16;
constexpr std::int64_t kMaxDenseDim = std::int64_t{1} << 20;
constexpr std::int64_t kMaxSlots = std::numeric_limits<std::int32_t>::max();

// HugeCTR's default format is Norm; "Synthetic" and "Embscale" are embscale's.
void parse_format(const ObjectReader& r, DataLayer& d) {
  const auto format = r.optional("format");
  const std::string name = format ? format->string() : "Norm";
  if (name == hugectr::kParquetFormat)
    format->fail_with(
        "the HugeCTR format \"Parquet\" is not readable in this build (no C++ Parquet reader); convert "
        "the data with scripts/parquet-to-embscale.py and read it as \"Embscale\" or \"Norm\"");
  const auto& formats = hugectr::runnable_data_formats();
  if (std::find(formats.begin(), formats.end(), name) == formats.end())
    format->fail(quoted_list(formats), did_you_mean(name, formats));
  for (const auto f : {DataFormat::kSynthetic, DataFormat::kNorm, DataFormat::kRaw, DataFormat::kEmbscale})
    if (to_string(f) == name) d.format = f;
}

// The trace formats' keys. Synthetic data accepts them unused (a HugeCTR file switched to
// "Synthetic" keeps its source), so one config can switch between recorded and generated data.
void parse_trace_keys(const ObjectReader& r, DataLayer& d) {
  const bool trace = d.format != DataFormat::kSynthetic;
  if (trace) {
    const std::string what = d.format == DataFormat::kNorm
                                 ? "the Norm file list, or one Norm data file (\"format\" is \"Norm\"" +
                                       std::string(r.has("format") ? ")" : " when absent, as in HugeCTR)")
                                 : "the " + to_string(d.format) + " trace file";
    d.source = r.required("source", what + "; a relative path is relative to the config file's directory").name();
    if (const auto eval = r.optional("eval_source")) d.eval_source = eval->name();
  } else if (const auto source = r.optional("source")) {
    source->string();
  }
  if (const auto check = r.optional("check")) {
    const bool sum = check->one_of({"Sum", "None"}) == "Sum";
    if (d.format == DataFormat::kNorm) d.check_sum = sum;  // Raw and Embscale: unused, as HugeCTR does for Raw
  }
  if (const auto count = r.optional("num_samples")) {
    const std::int64_t n = count->integer(IntRange::at_least(0));
    // HugeCTR reads num_samples of a Raw file and ignores it for Norm (its headers count the samples).
    if (d.format == DataFormat::kRaw || d.format == DataFormat::kEmbscale) d.num_samples = n;
  }
  if (const auto floats = r.optional("float_label_dense")) d.float_label_dense = floats->boolean();
  if (const auto check = r.optional("trace_check")) {
    const bool samples = check->one_of({"samples", "headers"}) == "samples";
    if (!trace) check->fail_with("the Synthetic format reads no trace to check; remove \"trace_check\"");
    d.check_samples_at_start = samples;
  }
}

// Keys are unified-encoded (slot j's keys follow slot j-1's), so the sum must fit a signed key.
// A Norm file may leave it out, as HugeCTR's hash embeddings over Norm data do: its keys are
// whatever the file holds (config.hpp, DataLayer::key_spaces_known).
void parse_slot_sizes(const ObjectReader& r, DataLayer& d) {
  if (d.format == DataFormat::kNorm && !r.has("slot_size_array")) return;
  std::int64_t total = 0;
  for (const auto& size : r.required("slot_size_array", "a non-empty array of integers >= 1")
                              .array(1, "a non-empty array of integers >= 1")) {
    const std::int64_t n = size.integer(IntRange::at_least(1));
    if (n > std::numeric_limits<std::int64_t>::max() - total)
      size.fail("a size that keeps the total vocabulary below 2^63 (the slots before it hold " + std::to_string(total) +
                " keys)");
    total += n;
    d.slot_size_array.push_back(n);
  }
}

// label / dense: {"top": ..., "<kind>_dim": ...}; the block is optional, its top is not.
std::int32_t parse_input_block(const ObjectReader& r, const std::string& key, const std::string& dim_key,
                               std::int64_t fallback, IntRange range, std::vector<TensorName>& tops) {
  const auto block = r.optional(key);
  if (!block) return static_cast<std::int32_t>(fallback);
  const auto input = block->object();
  input.only_keys({"top", dim_key});
  tops.push_back({input.name("top"), input.path_of("top")});
  return static_cast<std::int32_t>(input.integer_or(dim_key, fallback, range));  // range fits int32
}

void parse_sparse_input(const ObjectReader& r, DataLayer& d, std::vector<TensorName>& tops) {
  constexpr auto expected = "an array of sparse inputs, each {\"top\", \"slot_num\", ...}";
  const auto sparse = r.required("sparse", expected);
  const auto inputs = sparse.array(1, expected);
  // Each input takes the next slot_num slots (HugeCTR: the inputs' slot_num sum to the slots).
  d.slot_num = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto in = inputs[k].object();
    in.only_keys(hugectr::with_unused_keys({"top", "slot_num", "max_feature_num_per_sample", "max_nnz"},
                                           hugectr::UnusedIn::kSparseInput));
    hugectr::check_unused_keys(in, hugectr::UnusedIn::kSparseInput);
    DataLayer::SparseInput sparse_input;
    sparse_input.top = in.name("top");
    tops.push_back({sparse_input.top, in.path_of("top")});
    const auto slot_num = in.required("slot_num", "an integer >= 1");
    sparse_input.first_slot = d.slot_num;
    sparse_input.slot_num = static_cast<std::int32_t>(slot_num.integer(IntRange::between(1, kMaxSlots)));
    const auto total = static_cast<std::int64_t>(d.slot_num) + sparse_input.slot_num;
    const auto slots = static_cast<std::int64_t>(d.slot_size_array.size());
    if (!d.key_spaces_known()) {  // no slot_size_array to agree with: the inputs say how many slots
      if (total > kMaxSlots) slot_num.fail("an integer that keeps the slots below 2^31");
      d.slot_num = static_cast<std::int32_t>(total);
      d.sparse_inputs.push_back(sparse_input);
      continue;
    }
    if (inputs.size() == 1 && total != slots)
      slot_num.fail("the number of entries of " + r.path_of("slot_size_array") + " (" + std::to_string(slots) + ")");
    if (total > slots || (k + 1 == inputs.size() && total != slots))
      slot_num.fail("an integer that makes the sparse inputs' slot_num sum to the " + std::to_string(slots) +
                    " entries of " + r.path_of("slot_size_array") + " (the inputs before it take " +
                    std::to_string(d.slot_num) + ")");
    d.slot_num = static_cast<std::int32_t>(total);
    d.sparse_inputs.push_back(sparse_input);
  }
  d.sparse_top = d.sparse_inputs.front().top;
  const auto input = inputs.front().object();  // HugeCTR's capacity limits are per input: the first's

  // HugeCTR's capacity limits: a synthetic bag of slot j holds at most its nnz_per_slot keys; a
  // trace's bags are checked against max_nnz as they are read.
  const bool synthetic = d.format == DataFormat::kSynthetic;
  std::int64_t max_nnz = 0;
  std::int64_t max_per_sample = 0;
  for (const auto& slot : d.synthetic.slots) {
    max_nnz = std::max(max_nnz, slot.nnz);
    max_per_sample += slot.nnz;
  }
  if (const auto declared = input.optional("max_nnz")) {
    d.max_nnz = declared->integer(IntRange::at_least(1));
    if (synthetic && d.max_nnz < max_nnz)
      declared->fail("an integer >= " + std::to_string(max_nnz) + " (synthetic bags hold up to nnz_per_slot keys)");
  }
  if (const auto max_features = input.optional("max_feature_num_per_sample"))
    if (max_features->integer(IntRange::at_least(1)) < max_per_sample && synthetic)
      max_features->fail("an integer >= " + std::to_string(max_per_sample) +
                         " (the sum of the slots' nnz_per_slot: a synthetic sample holds up to that many keys)");
}

}  // namespace

DataLayer parse_data_layer(const ObjectReader& r, const std::string& name, std::vector<TensorName>& tops) {
  r.only_keys([] {
    std::vector<std::string> keys = {
        "name",      "type",  "format", "source", "check",      "num_samples", "float_label_dense", "slot_size_array",
        "synthetic", "label", "dense",  "sparse", "trace_check"};
    return hugectr::with_unused_keys(keys, hugectr::UnusedIn::kData);
  }());
  DataLayer d;
  d.name = name;
  parse_format(r, d);
  parse_trace_keys(r, d);
  parse_slot_sizes(r, d);
  parse_synthetic(r, d.slot_size_array, d.synthetic);
  d.label_dim = parse_input_block(r, "label", "label_dim", 1, IntRange::between(1, kMaxLabelDim), tops);
  if (r.has("label")) d.label_top = tops.back().name;
  d.dense_dim = parse_input_block(r, "dense", "dense_dim", 0, IntRange::between(0, kMaxDenseDim), tops);
  if (r.has("dense")) d.dense_top = tops.back().name;
  parse_sparse_input(r, d, tops);  // after synthetic: checks max_nnz against the slots' nnz
  hugectr::check_unused_keys(r, hugectr::UnusedIn::kData);
  return d;
}

}  // namespace embscale::config
