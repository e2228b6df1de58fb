// PsClient: a trainer's side of the parameter server (Paddle's distributed lookup table): split_ids
// (each distinct id to the server that owns it, ps_messages.hpp: server_of), prefetch (pull only
// the rows this batch needs) and send (push the ids' gradients back). Every step pulls from and
// pushes to every server, empty where the trainer has no ids there, so that the servers can count a
// step's requests (ParameterServer).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/message_channel.hpp"
#include "core/batch.hpp"
#include "ps/one_sided_pulls.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

class PsClient {
 public:
  // `servers`: the servers' ranks in `channel`, in server index order (server_of's numbering).
  // `dense_parameters`: the model's replicated dense parameters the servers hold (0: none).
  // `placement`: how the servers place ids (hashed: dynamic tables; strided: static rows).
  PsClient(comm::MessageChannel& channel, std::vector<int> servers, std::int32_t dim, std::size_t dense_parameters = 0,
           Placement placement = Placement::kHashed);

  // From now on pulls and an evaluation's reads read the rows and the dense slices one-sidedly
  // through `reader` (one_sided_pulls.hpp: strided placement), without a request; pushes and the
  // rest stay messages. `reader` outlives the client.
  void read_one_sided(OneSidedReader& reader);
  // The server index of `key` under the servers' placement.
  int server_of(Key key) const noexcept { return ps::server_of(key, servers(), placement_); }

  // The rows (keys.size() x dim) of the distinct `keys` for `step` (1-based, increasing by one per
  // call): returns when every server has answered, which a server does once the step may read.
  void pull(std::int64_t step, std::span<const Key> keys, std::span<float> rows);
  // The gradients (keys.size() x dim) of the distinct `keys` of `step`, to their servers.
  void push(std::int64_t step, std::span<const Key> keys, std::span<const float> grads);
  // The same with the keys grouped by server: `counts[s]` keys of server s, in server order (what
  // KeyRouter gives when it routes by server_of). `rows` and `grads` are in that order too and are
  // received and sent in place, without a copy. With dense parameters, pull_grouped also receives
  // them (every server's slice, in place into `dense`) and push_grouped sends their gradients.
  void pull_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                    std::span<float> rows, std::span<float> dense = {});
  void push_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                    std::span<const float> grads, std::span<const float> dense_grads = {});
  // An evaluation's reads: the rows of the distinct `keys` (grouped by server as for
  // pull_grouped) and the dense parameters, answered as a pull of `step` is, the tables unchanged
  // (ParameterServer::serve_evaluation).
  void read_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                    std::span<float> rows, std::span<float> dense = {});
  // Tells every server that this trainer's evaluation after `step` has read all it needs.
  void end_reads(std::int64_t step);
  // Tells every server that this trainer sends nothing more.
  void finish(std::int64_t last_step);

  int servers() const noexcept { return static_cast<int>(servers_.size()); }

 private:
  void group(std::span<const Key> keys);  // fills grouped_, counts_ and order_
  void request_rows(RequestKind kind, std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                    std::span<float> rows, std::span<float> dense);
  void tell_every_server(RequestKind kind, std::int64_t step);

  comm::MessageChannel& channel_;
  std::vector<int> servers_;
  std::size_t dim_;
  std::size_t dense_parameters_;
  Placement placement_;
  OneSidedReader* reader_ = nullptr;
  std::vector<std::uint32_t> server_;  // per caller's key: its server
  std::vector<Key> grouped_;           // the caller's keys grouped by server
  std::vector<std::size_t> counts_;    // per server: its keys in grouped_
  std::vector<std::size_t> order_;     // per grouped key: its index in the caller's keys
  std::vector<float> values_;          // rows received / gradients to send, in grouped order
};

}  // namespace embscale::ps
