// Small collective helpers of lib/report: agreeing across ranks before a collective HDF5 call
// (where a disagreement would otherwise hang or corrupt the file), and moving rank 0's strings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/failure.hpp"
#include "report/summary.hpp"

namespace embscale::report {

// FNV-1a over a canonical serialization of what is added (each item prefixed by its length or
// kind, so that ("ab","c") and ("a","bc") differ). For agreement checks, not for security.
class Digest {
 public:
  Digest& add(std::string_view text);
  Digest& add(std::uint64_t value);
  Digest& add_value(const SummaryValue& value);
  std::uint64_t value() const noexcept { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

// Collective: true on every rank when `digest` is the same on all ranks (one allreduce).
bool same_on_all_ranks(comm::Communicator& comm, std::uint64_t digest);

// Moving rank 0's strings and agreeing on failures live in lib/comm (broadcast_strings in
// communicator.hpp, all_or_none in failure.hpp).

}  // namespace embscale::report
