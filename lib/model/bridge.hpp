// Bridge (SINGA's BridgeSrcLayer / BridgeDstLayer): two connected layers on different ranks.
// Forward the source rank sends its blob to the destination rank; backward the destination sends
// the blob's gradient back. Point-to-point over the Communicator: only the two ranks call.
#pragma once

#include <span>
#include <vector>

#include "comm/communicator.hpp"

namespace embscale::model {

// On `src_rank`: sends `blob` and returns it; on `dst_rank`: returns the blob received (`values`
// values); elsewhere: not to be called. src_rank == dst_rank: the blob itself, nothing sent.
std::vector<float> bridge_forward(comm::Communicator& comm, int src_rank, int dst_rank, std::span<const float> blob,
                                  std::size_t values);
// The reverse: on `dst_rank` sends `grad`; on `src_rank` returns the gradient received.
std::vector<float> bridge_backward(comm::Communicator& comm, int src_rank, int dst_rank, std::span<const float> grad,
                                   std::size_t values);

}  // namespace embscale::model
