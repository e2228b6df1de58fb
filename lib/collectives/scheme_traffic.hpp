// The alltoallv counts an embedding exchange really produces, for `embscale collectives`' skewed
// alltoallv: this rank's counts of the key exchange of a scheme's training steps, taken from the
// real engine (step_capture.hpp), so that the skew of the config's workload (Zipf exponent, key
// mapping, slots, batch) and the scheme's routing (de-duplication, owner rule, (key, bag) pairs)
// are exactly those of `embscale run` on the same config and ranks.
//
// The key exchange is the step's first alltoallv on the layer's own communicator:
//   all2all_dense          the distinct keys of this rank's batch, to owner key % ranks (8-byte rows)
//   the pooled schemes     every key occurrence as a (key, bag position) pair, to its owner(s)
//                          (16-byte rows; column_wise sends every pair to every rank)
// A scheme whose step has none (data_parallel: an allreduce of the table's gradient) is refused.
// Every rank runs the same step, so every rank reaches the same verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"

namespace embscale::collectives {

// This rank's side of one step's key exchange, on the layer's communicator (the world's ranks).
struct KeyExchangeCounts {
  std::vector<std::size_t> send_counts;  // rows to each rank
  std::vector<std::size_t> recv_counts;  // rows from each rank
  std::size_t row_bytes = 0;             // bytes of one row
};

struct SchemeTraffic {
  std::string layer;                     // the measured layer's name (the config's first embedding layer)
  std::string scheme;                    // its scheme's report name (embedding::scheme_of)
  std::vector<KeyExchangeCounts> steps;  // one per iteration, in order
};

// Runs the engine of `config`'s first embedding layer alone (the other layers read their own slots
// and do not change its traffic) on `world` for iterations [first, first + iterations) of this
// rank's batches and returns each step's key exchange. `config` is validated; its scheme is the
// layer's (set_layer_scheme in step_capture.hpp overrides it); the batch is resolved for world's
// ranks. Collective over world: every rank passes the same arguments. InputError naming the layer,
// the scheme and what its step sends instead when the step has no alltoallv on the layer's
// communicator; the engine's own InputErrors (a scheme that cannot run the layer) pass through.
// iterations >= 1.
SchemeTraffic scheme_key_exchange(comm::Communicator& world, const config::Config& config, std::int64_t first,
                                  std::int64_t iterations);

// Bytes this rank sends (recv: receives) in one step: the counts times row_bytes.
std::size_t send_bytes(const KeyExchangeCounts& counts) noexcept;
std::size_t recv_bytes(const KeyExchangeCounts& counts) noexcept;

}  // namespace embscale::collectives
