// PsClient: a trainer's side of the parameter server (seed 001): split_ids (each distinct id to
// the server that owns it, ps_messages.hpp: server_of), prefetch (pull only the rows this batch
// needs) and send (push the ids' gradients back). Every step pulls from and pushes to every
// server, empty where the trainer has no ids there, so that the servers can count a step's
// requests (ParameterServer).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "core/batch.hpp"

namespace embscale::ps {

class PsClient {
 public:
  // `servers`: the servers' ranks in `comm`, in server index order (server_of's numbering).
  PsClient(comm::Communicator& comm, std::vector<int> servers, std::int32_t dim);

  // The rows (keys.size() x dim) of the distinct `keys` for `step` (1-based, increasing by one per
  // call): returns when every server has answered, which a server does once the step may read.
  void pull(std::int64_t step, std::span<const Key> keys, std::span<float> rows);
  // The gradients (keys.size() x dim) of the distinct `keys` of `step`, to their servers.
  void push(std::int64_t step, std::span<const Key> keys, std::span<const float> grads);
  // Tells every server that this trainer sends nothing more.
  void finish(std::int64_t last_step);

  int servers() const noexcept { return static_cast<int>(servers_.size()); }

 private:
  void split(std::span<const Key> keys);  // fills keys_of_ and index_of_ per server

  comm::Communicator& comm_;
  std::vector<int> servers_;
  std::size_t dim_;
  std::vector<std::vector<Key>> keys_of_;              // per server: its share of the keys
  std::vector<std::vector<std::size_t>> index_of_;     // per server: each share key's index in the caller's keys
  std::vector<std::vector<float>> values_of_;          // per server: rows received / gradients to send
};

}  // namespace embscale::ps
