#include "collectives/data_check.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "collectives/element_type.hpp"
#include "core/hash.hpp"

namespace embscale::collectives {
namespace {

using comm::ReduceOp;

template <class T> constexpr bool kHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <class T> constexpr bool kFloating = std::is_floating_point_v<T> || kHalfLike<T>;
template <class T> constexpr bool kUnsigned = std::is_unsigned_v<T>;

// Integers a float type represents exactly, and so how many ranks may add [-2, 2] each.
template <class T> constexpr std::int64_t exact_integer_limit() {
  if constexpr (std::is_same_v<T, BFloat16>) return std::int64_t{1} << 8;
  else if constexpr (std::is_same_v<T, Half>) return std::int64_t{1} << 11;
  else if constexpr (std::is_same_v<T, float>) return std::int64_t{1} << 24;
  else if constexpr (std::is_same_v<T, double>) return std::int64_t{1} << 53;
  else return std::numeric_limits<std::int64_t>::max();
}

template <class T> int summing_ranks(int ranks) {
  if constexpr (kFloating<T>) return static_cast<int>(std::min<std::int64_t>(ranks, exact_integer_limit<T>() / 2));
  else return ranks;
}

// An integer value (exact in T by construction, or wrapped for integer types) as T.
template <class T> T from_integer(std::int64_t v) {
  if constexpr (std::is_same_v<T, Half>) return to_half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else return static_cast<T>(static_cast<std::uint64_t>(v));  // modular (C++20)
}

template <class T> double as_double(T v) {
  if constexpr (kHalfLike<T>) return static_cast<double>(to_float(v));
  else return static_cast<double>(v);
}

// The input of element `index` on `rank` for a reduction by `op`, as an integer.
template <class T> std::int64_t reduce_input(ReduceOp op, int rank, std::uint64_t index, int ranks) {
  const auto r = static_cast<std::uint64_t>(rank);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: {
      if (rank >= summing_ranks<T>(ranks)) return 0;
      const auto v = static_cast<std::int64_t>((r * 7 + index * 3) % 5);
      return kUnsigned<T> ? v : v - 2;
    }
    case ReduceOp::kProd:
      if (index % static_cast<std::uint64_t>(ranks) == r) return 2;
      return kUnsigned<T> || (r + index) % 3 != 0 ? 1 : -1;
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      const auto v = static_cast<std::int64_t>((r * 13 + index * 7) % 61);
      return kUnsigned<T> ? v : v - 30;
    }
  }
  return 0;
}

// The reference: reduce over the ranks in 64-bit integers (exact, then wrapped into T).
template <class T> T reduced(ReduceOp op, std::uint64_t index, int ranks) {
  std::int64_t acc = reduce_input<T>(op, 0, index, ranks);
  for (int r = 1; r < ranks; ++r) {
    const std::int64_t v = reduce_input<T>(op, r, index, ranks);
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg: acc += v; break;
      case ReduceOp::kProd: acc *= v; break;
      case ReduceOp::kMax: acc = std::max(acc, v); break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
    }
  }
  const T total = from_integer<T>(acc);
  if (op != ReduceOp::kAvg) return total;
  if constexpr (std::is_same_v<T, Half>) return to_half(to_float(total) / static_cast<float>(ranks));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(to_float(total) / static_cast<float>(ranks));
  else if constexpr (std::is_floating_point_v<T>) return total / static_cast<T>(ranks);
  else if constexpr (kUnsigned<T>) return static_cast<T>(total / static_cast<T>(ranks));
  else return static_cast<T>(static_cast<std::int64_t>(total) / ranks);
}

// Moved data: the low bytes of a hash of (rank, block, index).
template <class T> T moved_value(int rank, int block, std::uint64_t index) {
  const std::uint64_t h = mix64(index * 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(rank) << 40) ^
                                (static_cast<std::uint64_t>(block) << 20) ^ 0x5bd1e995ULL);
  T value;
  std::memcpy(static_cast<void*>(&value), &h, sizeof(T));
  return value;
}

template <class T> bool same_bits(const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

template <class T> std::string describe(const T& v) {
  std::ostringstream out;
  if constexpr (kFloating<T>) out << as_double(v);
  else out << static_cast<std::int64_t>(v);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  out << " (0x" << std::hex << bits << ")";
  return out.str();
}

}  // namespace

void fill_inputs(comm::DataType type, void* buffer, std::size_t count, const InputPattern& pattern, int rank, int ranks,
                 const std::function<InputSlot(std::size_t)>& slot_of) {
  visit_element_type(type, [&]<class T>(std::type_identity<T>) {
    auto* out = static_cast<T*>(buffer);
    for (std::size_t i = 0; i < count; ++i) {
      const InputSlot slot = slot_of(i);
      out[i] = pattern.reduction ? from_integer<T>(reduce_input<T>(pattern.op, rank, slot.index, ranks))
                                 : moved_value<T>(rank, slot.block, slot.index);
    }
  });
}

void fill_garbage(void* buffer, std::size_t bytes) { std::memset(buffer, 0xA5, bytes); }

void check_elements(comm::DataType type, const void* received, std::size_t count, const InputPattern& pattern,
                    int ranks, const std::function<ExpectedElement(std::size_t)>& expected_of, CheckResult& result,
                    std::size_t max_examples) {
  visit_element_type(type, [&]<class T>(std::type_identity<T>) {
    const auto* in = static_cast<const T*>(received);
    for (std::size_t i = 0; i < count; ++i) {
      const ExpectedElement e = expected_of(i);
      T want{};
      switch (e.kind) {
        case ExpectedElement::Kind::kUnchecked: continue;
        case ExpectedElement::Kind::kMoved:
          want = pattern.reduction ? from_integer<T>(reduce_input<T>(pattern.op, e.rank, e.slot.index, ranks))
                                   : moved_value<T>(e.rank, e.slot.block, e.slot.index);
          break;
        case ExpectedElement::Kind::kReduced: want = reduced<T>(pattern.op, e.slot.index, ranks); break;
      }
      if (same_bits(in[i], want)) continue;
      // -0 and +0 are the same result of a reduction.
      if constexpr (kFloating<T>)
        if (e.kind == ExpectedElement::Kind::kReduced && as_double(in[i]) == as_double(want)) continue;
      ++result.wrong;
      if (result.examples.size() < max_examples)
        result.examples.push_back("element " + std::to_string(i) + ": got " + describe(in[i]) + ", expected " +
                                  describe(want));
    }
  });
}

double reduced_value_as_double(comm::DataType type, comm::ReduceOp op, std::uint64_t index, int ranks) {
  return visit_element_type(type,
                            [&]<class T>(std::type_identity<T>) { return as_double(reduced<T>(op, index, ranks)); });
}

}  // namespace embscale::collectives
