#include "sim/belady_oracle.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/huge_page_allocator.hpp"

namespace embscale::sim {
namespace {

constexpr std::uint32_t kNever = ~std::uint32_t{0};  // a next use that never comes; also "no position"

// Residents in a max-heap on their next use: heap[0] is the farthest, the first to go.
class FarthestFirst {
 public:
  FarthestFirst(std::size_t capacity, std::size_t ids) : position_(ids, kNever) { heap_.reserve(capacity); }

  bool contains(std::uint32_t id) const noexcept { return position_[id] != kNever; }
  std::size_t size() const noexcept { return heap_.size(); }
  std::uint32_t farthest() const noexcept { return heap_[0].next; }

  void push(std::uint32_t id, std::uint32_t next) {
    heap_.push_back({next, id});
    sift_up(heap_.size() - 1, heap_.back());
  }
  // A resident's next use moved later (it was just used): it can only rise.
  void postpone(std::uint32_t id, std::uint32_t next) noexcept { sift_up(position_[id], {next, id}); }
  // The farthest resident leaves; `id` takes its place with `next`.
  void replace_farthest(std::uint32_t id, std::uint32_t next) noexcept {
    position_[heap_[0].id] = kNever;
    sift_down({next, id});
  }

 private:
  struct Entry {
    std::uint32_t next;
    std::uint32_t id;
  };
  void place(std::size_t at, Entry e) noexcept {
    heap_[at] = e;
    position_[e.id] = static_cast<std::uint32_t>(at);
  }
  void sift_up(std::size_t at, Entry e) noexcept {
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (heap_[parent].next >= e.next) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, e);
  }
  void sift_down(Entry e) noexcept {
    std::size_t at = 0;
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].next > heap_[child].next) ++child;
      if (heap_[child].next <= e.next) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, e);
  }

  embscale::HugePageVector<Entry> heap_;
  embscale::HugePageVector<std::uint32_t> position_;  // per id: its heap index, or kNever when not resident
};

}  // namespace

void BeladyOracle::append(std::span<const std::int64_t> call) {
  EMBSCALE_EXPECTS(stream_.size() + call.size() < kNever,
                   "BeladyOracle: at most 2^32 - 2 accesses can be recorded (32-bit times)");
  const std::size_t at = stream_.size();
  stream_.resize(at + call.size());
  index_.find_or_insert_all(call, std::span(stream_).subspan(at));
  call_ends_.push_back(static_cast<std::int64_t>(stream_.size()));
}

std::vector<std::int64_t> BeladyOracle::hits_per_call(std::int64_t capacity) const {
  EMBSCALE_EXPECTS(capacity >= 1, "BeladyOracle: capacity must be at least 1 key");
  const std::size_t n = stream_.size();
  // next[t]: the time of the next access to stream_[t]'s key after t, or kNever.
  std::vector<std::uint32_t> next(n);
  {
    std::vector<std::uint32_t> seen(index_.size(), kNever);
    for (std::size_t t = n; t-- > 0;) {
      next[t] = seen[stream_[t]];
      seen[stream_[t]] = static_cast<std::uint32_t>(t);
    }
  }
  const auto slots = static_cast<std::size_t>(std::min<std::int64_t>(capacity, index_.size()));
  FarthestFirst residents(slots, index_.size());
  std::vector<std::int64_t> hits(call_ends_.size(), 0);
  std::size_t t = 0;
  for (std::size_t c = 0; c < call_ends_.size(); ++c) {
    std::int64_t call_hits = 0;
    for (const auto end = static_cast<std::size_t>(call_ends_[c]); t < end; ++t) {
      const std::uint32_t id = stream_[t];
      if (residents.contains(id)) {
        ++call_hits;
        residents.postpone(id, next[t]);
      } else if (next[t] == kNever) {
        // Never used again: keeping it cannot earn a hit (bypass, full or not).
      } else if (residents.size() < slots) {
        residents.push(id, next[t]);
      } else if (next[t] < residents.farthest()) {
        residents.replace_farthest(id, next[t]);
      }  // else bypass: the newcomer is the farthest
    }
    hits[c] = call_hits;
  }
  return hits;
}

}  // namespace embscale::sim
