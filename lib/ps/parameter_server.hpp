// ParameterServer: one server rank of Paddle's distributed lookup table. It owns the ids that
// hash to it (ps_messages.hpp: server_of) in a dynamic table (a RowStore, in practice the KV
// table: an unseen id is inserted with its initial row on its first pull, capacity limits evict
// by score) and applies the trainers' gradients with the layer's sparse optimizer, whose state
// lives beside each row on the server. serve() answers the trainers' pulls and pushes in whatever
// order they arrive until every trainer is done.
//
// When a pull of step s may read (the staleness rule): every trainer's pushes of the steps up to
// s - 1 - staleness have been applied. A pull that may not read yet waits (its keys received, its
// rows not sent) and is answered, in arrival order, as soon as pushes make it eligible.
//   synchronous: staleness 0, and a step's pushes are held until every trainer has pushed that
//                step, then summed per key (in trainer order) and applied once: the single-process
//                model's update, whatever the number of trainers and servers;
//   asynchronous: each push is applied when it arrives (an optimizer step per trainer's push),
//                and a trainer may run at most `staleness` steps ahead of the slowest one.
// A model with dense layers keeps its dense parameters on the servers too (Paddle's parameter
// server holds both kinds): each server a slice of them (ps_messages.hpp: dense_slice), sent with
// every pull's answer and updated from every push's dense gradients by the same rules (the
// synchronous sum in trainer order, or each push applied as it arrives).
// An evaluation (HugeCTR's, lib/run/evaluation.hpp) reads rows without changing the table: a
// read of step s is answered when a pull of step s would be (the evaluation after step s - 1
// sees that step applied, synchronous), with the store evaluating (a missing id reads the eval
// initializer and is not inserted) and the dense slice; its table counters are left out of the
// training's (take_counters).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "comm/message_channel.hpp"
#include "embedding/key_router.hpp"
#include "embedding/row_store.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "ps/one_sided_pulls.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

// The model's one optimizer step of a flat array of dense parameters with their gradients
// (the run's dense optimizer over this server's slice).
using DenseUpdate = std::function<void(std::span<float> values, std::span<const float> grads, std::int64_t step)>;

struct ServerOptions {
  std::vector<int> trainers;  // the trainers' ranks in the communicator, ascending
  bool synchronous = true;
  std::int64_t staleness = 0;  // asynchronous: steps a trainer may run ahead (synchronous: 0)
  // This server's slice of the dense parameters, initial values (empty: the model has none).
  std::vector<float> dense_values;
  DenseUpdate dense_update;  // set when dense_values is not empty
};

// What one serve() did. Staleness of a served pull of step s: (s - 1) minus the last step every
// trainer's pushes had been applied through when it was answered (0 in synchronous mode).
struct ServeStats {
  std::int64_t pulls = 0, pushes = 0;  // requests answered / applied
  std::int64_t keys_pulled = 0, keys_pushed = 0;
  std::int64_t deferred_pulls = 0;  // pulls that had to wait for pushes
  std::int64_t max_staleness = 0;
  double busy_seconds = 0;    // handling requests (receiving payloads, table reads, updates, answers)
  double idle_seconds = 0;    // waiting for the next request
  double read_seconds = 0;    // of busy_seconds: the shard's reads for pulls
  double update_seconds = 0;  // of busy_seconds: the optimizer's updates of the shard
};

class ParameterServer {
 public:
  // `shard` holds this server's rows (dim values and the optimizer's state); `optimizer` is the
  // layer's. Both outlive the server.
  ParameterServer(comm::MessageChannel& channel, ServerOptions options, embedding::RowStore& shard,
                  const embedding::SparseOptimizer& optimizer);

  // Serves until every trainer is done (PsClient::finish); what this call did.
  ServeStats serve();
  // Serves until every trainer's pushes through `step` have been applied (requests of later steps
  // that arrive meanwhile are served too); what this call did. A run's server calls it once per
  // iteration, so its busy and idle time fall into the iterations of the trainers' steps.
  ServeStats serve_through(std::int64_t step);
  // Serves until every trainer has said its evaluation after `step` read all it needs
  // (PsClient::end_reads); training requests that arrive meanwhile are served too. The run's
  // servers call it after the step an evaluation follows.
  ServeStats serve_evaluation(std::int64_t step);
  // One-sided pulls (one_sided_pulls.hpp): the trainers read the shard's rows and the dense
  // slice from `windows` (the shard a StaticRowStore in windows.rows(), rows of `words_per_row`
  // floats), and the server publishes its clock there after every update, from now on. The
  // dense slice moves into the window. `windows` outlives the server.
  void serve_one_sided(PullWindows& windows, std::int64_t words_per_row);
  // The shard's counters of the training's requests since the last call (an evaluation's reads
  // left out).
  embedding::StoreCounters take_counters();

 private:
  struct Pull {
    int source;
    std::int64_t step;
    std::vector<Key> keys;
    bool evaluation = false;  // an evaluation's read (kRead): the table unchanged
  };
  struct Push {
    std::vector<Key> keys;
    std::vector<float> grads;
    std::vector<float> dense_grads;  // of this server's dense slice (empty without dense layers)
  };
  void handle_next();  // receives one request (blocking) and handles it
  std::size_t trainer_index(int source) const;
  std::int64_t applied_through() const;  // every trainer's pushes applied up to this step
  bool may_read(std::int64_t step) const { return step - 1 - applied_through() <= options_.staleness; }
  void answer(const Pull& pull);
  void read_for_evaluation(std::span<const Key> keys);
  void answer_eligible();
  void on_push(int source, std::int64_t step, Push push);
  void apply(std::int64_t step, std::span<const Key> keys, std::span<const float> grads,
             std::span<const float> dense_grads);

  comm::MessageChannel& channel_;
  ServerOptions options_;
  embedding::RowStore& shard_;
  const embedding::SparseOptimizer& optimizer_;
  std::size_t dim_;
  std::vector<std::int64_t> applied_;   // per trainer: the last step of its pushes applied
  std::vector<std::int64_t> received_;  // per trainer: the last step of its pushes received
  std::vector<bool> finished_;          // per trainer: sent kDone
  std::size_t finished_count_ = 0;
  std::vector<std::int64_t> read_through_;      // per trainer: the step of its last evaluation's kReadsDone
  embedding::StoreCounters training_counters_;  // taken from the shard before an evaluation's reads
  std::deque<Pull> waiting_;                    // pulls not yet eligible, in arrival order
  struct HeldStep {
    std::vector<Push> pushes;  // per trainer
    std::size_t arrived = 0;
  };
  std::map<std::int64_t, HeldStep> held_;  // synchronous: a step's pushes, until every trainer's is there
  embedding::KeyRouter router_;            // synchronous: merges a step's pushes per key
  std::vector<Key> merged_keys_;
  embedding::RoutedKeys merged_;
  std::vector<float> merged_grads_;
  std::vector<float> merged_dense_;
  std::vector<float> rows_;
  ServeStats stats_;
  std::span<float> dense_;          // the dense slice: options_.dense_values, or in windows_
  PullWindows* windows_ = nullptr;  // one-sided pulls: where the clock is published
  std::int64_t words_per_row_ = 0;
};

}  // namespace embscale::ps
