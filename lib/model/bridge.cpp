#include "model/bridge.hpp"

#include "core/error.hpp"

namespace embscale::model {
namespace {

constexpr int kBridgeTag = 7101;

// `from` sends `data` to `to`, which receives `values` values; each returns what it holds after.
std::vector<float> move(comm::Communicator& comm, int from, int to, std::span<const float> data, std::size_t values) {
  const int me = comm.rank();
  EMBSCALE_EXPECTS(me == from || me == to, "only the bridge's two ranks call it");
  if (from == to || me == from) {
    EMBSCALE_EXPECTS(data.size() == values, "the bridged blob has the agreed size");
    if (from != to) comm.send(data, to, kBridgeTag);
    return {data.begin(), data.end()};
  }
  std::vector<float> out(values);
  comm.recv(std::span<float>(out), from, kBridgeTag);
  return out;
}

}  // namespace

std::vector<float> bridge_forward(comm::Communicator& comm, int src_rank, int dst_rank, std::span<const float> blob,
                                  std::size_t values) {
  return move(comm, src_rank, dst_rank, blob, values);
}

std::vector<float> bridge_backward(comm::Communicator& comm, int src_rank, int dst_rank, std::span<const float> grad,
                                   std::size_t values) {
  return move(comm, dst_rank, src_rank, grad, values);
}

}  // namespace embscale::model
