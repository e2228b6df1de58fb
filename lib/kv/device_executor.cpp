#include "kv/device_executor.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kv/host_executor.hpp"

namespace embscale::kv {
namespace {

constexpr std::uint64_t kAlign = 256;

std::uint64_t aligned(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Carves one call's device regions out of a scratch buffer, in order.
// A base of 0 measures: used() is then the bytes the same carving needs.
class Carver {
 public:
  explicit Carver(std::uintptr_t base) : base_(base) {}
  template <class T> T* take(std::uint64_t count) {
    T* at = reinterpret_cast<T*>(base_ + used_);
    used_ += aligned(count * sizeof(T));
    return at;
  }
  std::uint64_t used() const noexcept { return used_; }

 private:
  std::uintptr_t base_;
  std::uint64_t used_ = 0;
};

}  // namespace

DeviceExecutor::DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry)
    : DeviceExecutor(library, geometry, std::nullopt) {}

DeviceExecutor::DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry, void* stream)
    : DeviceExecutor(library, geometry, std::optional<void*>(stream)) {}

DeviceExecutor::DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry,
                               std::optional<void*> lent)
    : library_(library), kernels_(&library_.kernels(device::KernelFamily::kv_table)), geometry_(geometry) {
  if (lent) {
    stream_ = *lent;  // null is the default stream, lent as any other
  } else {
    own_stream_.emplace(library_);
    stream_ = own_stream_->handle();
  }
  std::uint64_t arrays = 0, state = 0, batch = 0;
  check(kernels_->kv_table_layout(&arrays, &state, &batch), "kv_table_layout");
  if (arrays != sizeof(portable::TableArrays) || state != sizeof(portable::TableState) ||
      batch != sizeof(portable::BatchRef))
    throw Error(library_.path() +
                ": its GPU table was built against other structures (TableArrays, TableState, "
                "BatchRef of " +
                std::to_string(arrays) + ", " + std::to_string(state) + ", " + std::to_string(batch) +
                " bytes; this embscale's are " + std::to_string(sizeof(portable::TableArrays)) + ", " +
                std::to_string(sizeof(portable::TableState)) + ", " + std::to_string(sizeof(portable::BatchRef)) +
                "): rebuild both from one source tree");
}

void DeviceExecutor::check(int code, const char* what) const { library_.check(code, what); }

void DeviceExecutor::synchronize() const {
  check(library_.functions().stream_synchronize(stream_), "stream_synchronize");
}

DeviceExecutor::PinnedRows::PinnedRows(const device::DeviceLibrary& library, std::uint64_t bytes) : library_(library) {
  void* pointer = nullptr;
  library_.check(library_.kernels(device::KernelFamily::kv_table).kv_table_host_alloc(bytes, &pointer),
                 "kv_table_host_alloc (hybrid mode's rows in pinned host memory)");
  data_ = static_cast<float*>(pointer);
}

DeviceExecutor::PinnedRows::PinnedRows(PinnedRows&& other) noexcept
    : library_(other.library_), data_(std::exchange(other.data_, nullptr)) {}

DeviceExecutor::PinnedRows& DeviceExecutor::PinnedRows::operator=(PinnedRows&& other) noexcept {
  std::swap(library_, other.library_);
  std::swap(data_, other.data_);
  return *this;
}

DeviceExecutor::PinnedRows::~PinnedRows() {
  if (data_) (void)library_.functions().kv_table_host_free(data_);  // never throws
}

void DeviceExecutor::copy(void* to, const void* from, std::uint64_t bytes) const {
  if (bytes > 0)
    check(library_.functions().copy_async(to, from, static_cast<std::int64_t>(bytes), stream_), "copy_async");
}

void DeviceExecutor::set(void* to, int value, std::uint64_t bytes) const {
  if (bytes > 0)
    check(library_.functions().memset_async(to, value, static_cast<std::int64_t>(bytes), stream_), "memset_async");
}

DeviceExecutor::Arrays DeviceExecutor::allocate(std::uint64_t buckets) const {
  const std::uint64_t slots = buckets * geometry_.bucket_capacity;
  const auto bytes = [](std::uint64_t b) { return static_cast<std::int64_t>(std::max<std::uint64_t>(b, 1)); };
  Arrays a;
  a.keys.emplace(library_, bytes(slots * 8));
  a.scores.emplace(library_, bytes(slots * 8));
  a.digests.emplace(library_, bytes(slots));
  const std::uint64_t near = geometry_.near_slots(buckets);
  a.rows.emplace(library_, bytes(near * geometry_.row_width * sizeof(float)));
  if (near < slots) a.far_rows.emplace(library_, (slots - near) * geometry_.row_width * sizeof(float));
  set(a.keys->data(), 0xFF, slots * 8);  // every slot empty (kEmptyKey is all ones)
  set(a.scores->data(), 0, slots * 8);
  set(a.digests->data(), 0, slots);
  if (geometry_.filter != portable::FilterKind::kNone) {
    a.counters.emplace(library_, bytes(buckets * geometry_.sketch.blocks * portable::kSketchCountersPerBlock));
    a.sightings.emplace(library_, bytes(buckets * 4));
  }
  return a;
}

portable::TableArrays DeviceExecutor::view(const Arrays& a, std::uint64_t buckets) const noexcept {
  portable::TableArrays v{static_cast<std::uint64_t*>(a.keys->data()),
                          static_cast<std::uint64_t*>(a.scores->data()),
                          static_cast<std::uint8_t*>(a.digests->data()),
                          static_cast<float*>(a.rows->data()),
                          buckets,
                          geometry_.bucket_capacity,
                          geometry_.row_width};
  v.far_rows = a.far_rows ? a.far_rows->data() : nullptr;
  v.near_slots = geometry_.near_slots(buckets);
  return v;
}

void DeviceExecutor::resize(std::uint64_t buckets) {
  EMBSCALE_EXPECTS(buckets >= buckets_ && (buckets & (buckets - 1)) == 0, "a table grows by powers of two");
  Arrays grown = allocate(buckets);
  if (buckets_ > 0) {
    const portable::TableArrays from = view(arrays_, buckets_), to = view(grown, buckets);
    check(kernels_->kv_table_rehash(&from, &to, stream_), "kv_table_rehash");
  }
  // The banks grow on the host; the vectors outlive the copies from them (synchronized below).
  std::vector<std::uint8_t> counters;
  std::vector<std::uint32_t> sightings;
  if (geometry_.filter != portable::FilterKind::kNone) {
    const std::uint64_t bank_bytes = geometry_.sketch.blocks * portable::kSketchCountersPerBlock;
    counters.resize(buckets_ * bank_bytes);
    sightings.resize(buckets_);
    if (buckets_ > 0) {
      copy(counters.data(), arrays_.counters->data(), counters.size());
      copy(sightings.data(), arrays_.sightings->data(), sightings.size() * 4);
      synchronize();
    }
    grow_sketch_banks(counters, sightings, geometry_.sketch.blocks, buckets_, buckets);
    copy(grown.counters->data(), counters.data(), counters.size());
    copy(grown.sightings->data(), sightings.data(), sightings.size() * 4);
  }
  synchronize();  // before the old arrays are freed (below) and the host vectors (on return)
  arrays_ = std::move(grown);
  buckets_ = buckets;
}

void DeviceExecutor::clear() {
  const std::uint64_t slots = buckets_ * geometry_.bucket_capacity;
  set(arrays_.keys->data(), 0xFF, slots * 8);
  if (arrays_.counters) {
    set(arrays_.counters->data(), 0, static_cast<std::uint64_t>(arrays_.counters->bytes()));
    set(arrays_.sightings->data(), 0, static_cast<std::uint64_t>(arrays_.sightings->bytes()));
  }
  synchronize();
}

unsigned char* DeviceExecutor::scratch(std::uint64_t bytes) const {
  if (!scratch_ || static_cast<std::uint64_t>(scratch_->bytes()) < bytes) {
    scratch_.reset();
    scratch_.emplace(library_, static_cast<std::int64_t>(bytes + bytes / 4));  // room to grow
  }
  return static_cast<unsigned char*>(scratch_->data());
}

void DeviceExecutor::run(portable::TableState state, const portable::BatchRef& batch, bool grouped) {
  run_batch(state, batch, grouped, false);
}

void DeviceExecutor::run_resident(portable::TableState state, const portable::BatchRef& batch, bool grouped) {
  EMBSCALE_EXPECTS(!batch.evicted_keys, "a resident batch keeps no evicted entries");
  run_batch(state, batch, grouped, true);
}

void DeviceExecutor::run_batch(portable::TableState state, const portable::BatchRef& batch, bool grouped,
                               bool resident) {
  const std::uint64_t n = batch.size;
  if (n == 0) return;
  const std::uint64_t w = geometry_.row_width;
  const std::uint64_t state_size = state.initializer.state_size;
  std::uint64_t group_bytes = 0;
  if (grouped) check(kernels_->kv_table_group_scratch(n, &group_bytes), "kv_table_group_scratch");

  // The call's regions: sizes first (a Carver over no memory), then the same carving for real.
  // A resident batch's arrays are the caller's: only its outcomes, the initializer's state and
  // the grouping take regions here.
  const auto carve = [&](Carver& c, portable::BatchRef& d, float*& initial_state, void*& group_scratch) {
    if (!resident) {
      d.keys = c.take<std::uint64_t>(n);
      d.rows_in = batch.rows_in ? c.take<float>(n * w) : nullptr;
      d.rows_out = batch.rows_out ? c.take<float>(n * w) : nullptr;
      d.scores_in = batch.scores_in ? c.take<std::uint64_t>(n) : nullptr;
      d.scores_out = batch.scores_out ? c.take<std::uint64_t>(n) : nullptr;
      d.accumulate = batch.accumulate ? c.take<std::uint8_t>(n) : nullptr;
    }
    d.outcomes = c.take<std::uint8_t>(n);
    d.evicted_keys = batch.evicted_keys ? c.take<std::uint64_t>(n) : nullptr;
    d.evicted_scores = batch.evicted_keys ? c.take<std::uint64_t>(n) : nullptr;
    d.evicted_rows = batch.evicted_keys ? c.take<float>(n * w) : nullptr;
    initial_state = c.take<float>(state_size);
    if (grouped) {
      d.order = c.take<std::uint32_t>(n);
      d.offsets = c.take<std::uint32_t>(n + 1);
      d.group_count = c.take<std::uint64_t>(1);
      group_scratch = c.take<unsigned char>(group_bytes);
    }
  };
  portable::BatchRef d = batch;
  float* initial_state = nullptr;
  void* group_scratch = nullptr;
  Carver sizing(0);
  carve(sizing, d, initial_state, group_scratch);
  Carver carver(reinterpret_cast<std::uintptr_t>(scratch(sizing.used())));
  carve(carver, d, initial_state, group_scratch);

  if (!resident) {
    copy(const_cast<std::uint64_t*>(d.keys), batch.keys, n * 8);
    if (d.rows_in) copy(const_cast<float*>(d.rows_in), batch.rows_in, n * w * sizeof(float));
    // Found keys' rows and scores are written, the others' left as the caller had them.
    if (d.rows_out) copy(d.rows_out, batch.rows_out, n * w * sizeof(float));
    if (d.scores_out) copy(d.scores_out, batch.scores_out, n * 8);
    if (d.scores_in) copy(const_cast<std::uint64_t*>(d.scores_in), batch.scores_in, n * 8);
    if (d.accumulate) copy(const_cast<std::uint8_t*>(d.accumulate), batch.accumulate, n);
  }
  if (state_size > 0) copy(initial_state, state.initializer.initial_state, state_size * sizeof(float));
  state.initializer.initial_state = initial_state;
  state.arrays = view(arrays_, buckets_);
  state.sketch = geometry_.sketch;
  state.sketch.buckets = buckets_;
  state.sketch.counters = arrays_.counters ? static_cast<std::uint8_t*>(arrays_.counters->data()) : nullptr;
  state.sketch.sightings = arrays_.sightings ? static_cast<std::uint32_t*>(arrays_.sightings->data()) : nullptr;
  if (grouped) {
    check(kernels_->kv_table_group(d.keys, n, buckets_, const_cast<std::uint32_t*>(d.order),
                                   const_cast<std::uint32_t*>(d.offsets), const_cast<std::uint64_t*>(d.group_count),
                                   group_scratch, group_bytes, stream_),
          "kv_table_group");
    d.groups = n;  // a bound: the count is the device's
  }
  check(kernels_->kv_table_run(&state, &d, stream_), "kv_table_run");

  copy(batch.outcomes, d.outcomes, n);
  if (resident) {
    synchronize();  // the outcomes, and the batch's regions free for the next call
    return;
  }
  if (d.rows_out) copy(batch.rows_out, d.rows_out, n * w * sizeof(float));
  if (d.scores_out) copy(batch.scores_out, d.scores_out, n * 8);
  if (d.evicted_keys) {
    copy(batch.evicted_keys, d.evicted_keys, n * 8);
    copy(batch.evicted_scores, d.evicted_scores, n * 8);
    copy(batch.evicted_rows, d.evicted_rows, n * w * sizeof(float));
  }
  synchronize();
}

std::uint64_t DeviceExecutor::export_resident(std::uint64_t first, std::uint64_t end, std::uint64_t* keys,
                                              float* rows) const {
  end = std::min(end, buckets_ * geometry_.bucket_capacity);
  if (end <= first) return 0;
  const std::uint64_t slots = end - first;
  std::uint64_t select_bytes = 0;
  check(kernels_->kv_table_export_scratch(slots, &select_bytes), "kv_table_export_scratch");
  // The scores (which the caller does not keep), the count and the selection's scratch are ours.
  const auto carve = [&](Carver& c, std::uint64_t*& scores, std::uint64_t*& count, void*& select) {
    scores = c.take<std::uint64_t>(slots);
    count = c.take<std::uint64_t>(1);
    select = c.take<unsigned char>(select_bytes);
  };
  std::uint64_t *d_scores = nullptr, *d_count = nullptr;
  void* d_select = nullptr;
  Carver sizing(0);
  carve(sizing, d_scores, d_count, d_select);
  Carver carver(reinterpret_cast<std::uintptr_t>(scratch(sizing.used())));
  carve(carver, d_scores, d_count, d_select);
  const portable::TableArrays a = view(arrays_, buckets_);
  check(kernels_->kv_table_export(&a, first, end, 0, keys, d_scores, rows, d_count, d_select, select_bytes, stream_),
        "kv_table_export");
  std::uint64_t n = 0;
  copy(&n, d_count, sizeof n);
  synchronize();
  return n;
}

void DeviceExecutor::export_entries(std::uint64_t first, std::uint64_t end, std::uint64_t min_score,
                                    std::vector<std::uint64_t>& keys, std::vector<float>& values,
                                    std::vector<std::uint64_t>& scores) const {
  keys.clear();
  values.clear();
  scores.clear();
  end = std::min(end, buckets_ * geometry_.bucket_capacity);
  const std::uint64_t w = geometry_.row_width;
  // Selected on the device, a piece of slots at a time (so that the scratch and the outputs stay
  // bounded whatever the table's size); only the selected entries cross the bus.
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  const std::uint64_t piece = std::min(kPiece, end > first ? end - first : 0);
  if (piece == 0) return;
  std::uint64_t select_bytes = 0;
  check(kernels_->kv_table_export_scratch(piece, &select_bytes), "kv_table_export_scratch");
  std::uint64_t total = 0;
  Carver sizing(0);
  const auto carve = [&](Carver& c, std::uint64_t*& k, std::uint64_t*& sc, float*& rows, std::uint64_t*& count,
                         void*& select) {
    k = c.take<std::uint64_t>(piece);
    sc = c.take<std::uint64_t>(piece);
    rows = c.take<float>(piece * w);
    count = c.take<std::uint64_t>(1);
    select = c.take<unsigned char>(select_bytes);
  };
  std::uint64_t *d_keys = nullptr, *d_scores = nullptr, *d_count = nullptr;
  float* d_rows = nullptr;
  void* d_select = nullptr;
  carve(sizing, d_keys, d_scores, d_rows, d_count, d_select);
  Carver carver(reinterpret_cast<std::uintptr_t>(scratch(sizing.used())));
  carve(carver, d_keys, d_scores, d_rows, d_count, d_select);
  const portable::TableArrays a = view(arrays_, buckets_);
  for (std::uint64_t at = first; at < end; at += piece) {
    const std::uint64_t to = std::min(end, at + piece);
    check(kernels_->kv_table_export(&a, at, to, min_score, d_keys, d_scores, d_rows, d_count, d_select, select_bytes,
                                    stream_),
          "kv_table_export");
    std::uint64_t n = 0;
    copy(&n, d_count, sizeof n);
    synchronize();
    keys.resize(total + n);
    scores.resize(total + n);
    values.resize((total + n) * w);
    copy(keys.data() + total, d_keys, n * 8);
    copy(scores.data() + total, d_scores, n * 8);
    copy(values.data() + total * w, d_rows, n * w * sizeof(float));
    synchronize();
    total += n;
  }
}

}  // namespace embscale::kv
