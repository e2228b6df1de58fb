#include "report/collective.hpp"

#include <array>
#include <bit>
#include <exception>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::report {

Digest& Digest::add(std::uint64_t value) {
  std::array<unsigned char, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  state_ = fnv1a64(bytes.data(), bytes.size(), state_);
  return *this;
}

Digest& Digest::add(std::string_view text) {
  add(std::uint64_t{text.size()});
  state_ = fnv1a64(reinterpret_cast<const unsigned char*>(text.data()), text.size(), state_);
  return *this;
}

Digest& Digest::add_value(const SummaryValue& value) {
  add(std::uint64_t{value.index()});
  if (const auto* i = std::get_if<std::int64_t>(&value)) return add(static_cast<std::uint64_t>(*i));
  if (const auto* d = std::get_if<double>(&value)) return add(std::bit_cast<std::uint64_t>(*d));
  return add(std::string_view(std::get<std::string>(value)));
}

bool same_on_all_ranks(comm::Communicator& comm, std::uint64_t digest) {
  // max(d) and max(~d) = ~min(d) in one reduction: equal everywhere iff max(d) == min(d).
  const std::array<std::uint64_t, 2> mine{digest, ~digest};
  std::array<std::uint64_t, 2> all{};
  comm.allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all), comm::ReduceOp::kMax);
  return all[0] == ~all[1];
}

}  // namespace embscale::report
