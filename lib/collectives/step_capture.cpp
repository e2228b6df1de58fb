#include "collectives/step_capture.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <span>
#include <string>

#include "core/batch_source.hpp"
#include "embedding/engine.hpp"
#include "embedding/step_recorder.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::collectives {
namespace {

// What the capturing communicators of one engine share: the splits made so far and, while
// `recording`, the current step's calls.
struct CaptureLog {
  SchemeStep step;
  bool recording = false;
};

// A Communicator that hands every operation on to `inner` and writes the step's collectives into
// the log. Splits are capturing communicators too, numbered in the order they are made.
class CapturingCommunicator final : public comm::Communicator {
 public:
  CapturingCommunicator(comm::Communicator& inner, int id, CaptureLog& log) : inner_(inner), id_(id), log_(log) {}
  CapturingCommunicator(std::unique_ptr<comm::Communicator> owned, int id, CaptureLog& log)
      : owned_(std::move(owned)), inner_(*owned_), id_(id), log_(log) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::unique_ptr<comm::Communicator> split(int color, int key) const override {
    log_.step.splits.push_back({id_, false, color, key});
    return std::make_unique<CapturingCommunicator>(inner_.split(color, key), static_cast<int>(log_.step.splits.size()),
                                                   log_);
  }
  std::unique_ptr<comm::Communicator> split_by_host() const override {
    log_.step.splits.push_back({id_, true, 0, 0});
    return std::make_unique<CapturingCommunicator>(inner_.split_by_host(), static_cast<int>(log_.step.splits.size()),
                                                   log_);
  }
  comm::NativeHandle native_handle() const override { return inner_.native_handle(); }
  void barrier() override {
    refuse_while_recording("barrier");
    inner_.barrier();
  }

 protected:
  void do_allreduce(const void* send, void* recv, std::size_t count, comm::RowType type, comm::ReduceOp op,
                    comm::Request* request) override {
    auto call = make(CollectiveOp::kAllreduce, type, request);
    call.reduce = op;
    call.count = count;
    call.in_place = send == recv;
    pass_on(std::move(call), send, recv);
  }
  void do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts, comm::RowType type,
                         comm::ReduceOp op, comm::Request* request) override {
    auto call = make(CollectiveOp::kReduceScatter, type, request);
    call.reduce = op;
    call.recv_counts.assign(recv_counts.begin(), recv_counts.end());
    pass_on(std::move(call), send, recv);
  }
  void do_allgatherv(const void* send, std::size_t send_count, void* recv, std::span<const std::size_t> recv_counts,
                     comm::RowType type, comm::Request* request) override {
    auto call = make(CollectiveOp::kAllgatherv, type, request);
    call.count = send_count;
    call.recv_counts.assign(recv_counts.begin(), recv_counts.end());
    pass_on(std::move(call), send, recv);
  }
  void do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                    std::span<const std::size_t> recv_counts, comm::RowType type, comm::Request* request) override {
    auto call = make(CollectiveOp::kAlltoallv, type, request);
    call.send_counts.assign(send_counts.begin(), send_counts.end());
    call.recv_counts.assign(recv_counts.begin(), recv_counts.end());
    pass_on(std::move(call), send, recv);
  }
  void do_alltoall(const void* send, void* recv, std::size_t count, comm::RowType type,
                   comm::Request* request) override {
    auto call = make(CollectiveOp::kAlltoall, type, request);
    call.count = count;
    pass_on(std::move(call), send, recv);
  }
  // Not part of any scheme's step (nor of building one): refused, naming the operation.
  void do_bcast(void*, std::size_t, comm::RowType, int, comm::Request*) override { refuse("bcast"); }
  void do_gatherv(const void*, std::size_t, void*, std::span<const std::size_t>, comm::RowType, int,
                  comm::Request*) override {
    refuse("gatherv");
  }
  void do_send(const void*, std::size_t, comm::RowType, int, int, comm::Request*) override { refuse("send"); }
  void do_recv(void*, std::size_t, comm::RowType, int, int, comm::Request*) override { refuse("recv"); }
  void do_allgather(const void*, void*, std::size_t, comm::RowType, comm::Request*) override { refuse("allgather"); }
  void do_reduce(const void*, void*, std::size_t, comm::RowType, comm::ReduceOp, int, comm::Request*) override {
    refuse("reduce");
  }
  void do_reduce_scatter_block(const void*, void*, std::size_t, comm::RowType, comm::ReduceOp,
                               comm::Request*) override {
    refuse("reduce_scatter_block");
  }
  void do_sendrecv(const void*, std::size_t, int, int, void*, std::size_t, int, int, comm::RowType,
                   comm::Request*) override {
    refuse("sendrecv");
  }

 private:
  CollectiveCall make(CollectiveOp op, comm::RowType type, const comm::Request* request) const {
    if (request)
      throw Error(std::string("scheme step capture: non-blocking ") + collective_name(op) +
                  " is not captured (the replay times blocking calls); extend lib/collectives/step_capture");
    CollectiveCall call;
    call.op = op;
    call.comm = id_;
    call.rank = inner_.rank();
    call.ranks = inner_.size();
    call.type = type;
    return call;
  }
  void pass_on(CollectiveCall call, const void* send, void* recv) {
    invoke(call, inner_, send, recv);
    if (log_.recording) log_.step.calls.push_back(std::move(call));
  }
  void refuse_while_recording(const char* op) const {
    if (log_.recording)
      throw Error(std::string("scheme step capture: a step called ") + op + ", which the capture does not record");
  }
  [[noreturn]] static void refuse(const char* op) {
    throw Error(std::string("scheme step capture: ") + op +
                " is not forwarded (no scheme uses it); extend lib/collectives/step_capture");
  }

  std::unique_ptr<comm::Communicator> owned_;  // a split's communicator; null for the root
  comm::Communicator& inner_;
  int id_;
  CaptureLog& log_;
};

}  // namespace

const char* collective_name(CollectiveOp op) noexcept {
  switch (op) {
    case CollectiveOp::kAlltoall: return "alltoall";
    case CollectiveOp::kAlltoallv: return "alltoallv";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllgatherv: return "allgatherv";
    case CollectiveOp::kAllreduce: return "allreduce";
  }
  return "?";
}

std::size_t CollectiveCall::send_rows() const noexcept {
  switch (op) {
    case CollectiveOp::kAlltoall: return count * static_cast<std::size_t>(ranks);
    case CollectiveOp::kAlltoallv: return comm::total_count(send_counts);
    case CollectiveOp::kReduceScatter: return comm::total_count(recv_counts);
    case CollectiveOp::kAllgatherv: return count;
    case CollectiveOp::kAllreduce: return count;
  }
  return 0;
}

std::size_t CollectiveCall::recv_rows() const noexcept {
  switch (op) {
    case CollectiveOp::kAlltoall: return count * static_cast<std::size_t>(ranks);
    case CollectiveOp::kAlltoallv: return comm::total_count(recv_counts);
    case CollectiveOp::kReduceScatter: return recv_counts[static_cast<std::size_t>(rank)];
    case CollectiveOp::kAllgatherv: return comm::total_count(recv_counts);
    case CollectiveOp::kAllreduce: return count;
  }
  return 0;
}

void set_layer_scheme(config::EmbeddingLayer& layer, const std::string& name) {
  const embedding::SchemeEntry* entry = embedding::find_scheme(name);
  if (!entry) {
    std::string names;
    for (const auto& e : embedding::schemes()) names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw InputError("scheme \"" + name + "\": expected one of " + names);
  }
  layer.type = entry->config_type;
  layer.sharding = layer.type == embedding::kShardedEmbedding ? entry->name : "";
  if (!entry->places_ranks_in_nodes) layer.ranks_per_node = 0;
}

config::Config scheme_config(const embedding::SchemeEntry& scheme, int ranks) {
  config::Config config = config::default_config();
  config::resolve_batch_for_ranks(config, ranks);
  EMBSCALE_EXPECTS(config.embeddings.size() == 1, "the default config has one embedding layer");
  auto& layer = config.embeddings.front();
  set_layer_scheme(layer, scheme.name);
  if (scheme.places_ranks_in_nodes) layer.ranks_per_node = std::max(1, ranks / 2);  // two nodes where it can
  return config;
}

std::vector<SchemeStep> capture_scheme_steps(comm::Communicator& world, config::Config config, std::int64_t first,
                                             std::int64_t iterations) {
  EMBSCALE_EXPECTS(iterations >= 0, "capture_scheme_steps: a negative number of iterations");
  config::resolve_batch_for_ranks(config, world.size());
  CaptureLog log;
  CapturingCommunicator root(world, 0, log);
  const auto source = workloads::make_batch_source(config);
  // A trace serves the config's run (make_batch_source checked warm-up + max_iter against it),
  // not necessarily more: a range outside it is the caller's input error, not a failed read.
  if (source->iterations_available(config.solver.batchsize) != BatchSource::kUnbounded &&
      (first < -config.solver.warmup_iter || first + iterations > config.solver.max_iter))
    throw InputError("solver.max_iter: iterations [" + std::to_string(first) + ", " +
                     std::to_string(first + iterations) + ") of " + source->describe() +
                     " asked, the config's run covers [" + std::to_string(-config.solver.warmup_iter) + ", " +
                     std::to_string(config.solver.max_iter) + ")");
  embedding::EmbeddingEngine engine(root, config, source->slot_sizes());
  embedding::StepRecorder recorder;
  std::vector<SchemeStep> steps;
  steps.reserve(static_cast<std::size_t>(iterations));
  for (std::int64_t i = first; i < first + iterations; ++i) {
    const Batch batch = source->next_batch(i, world.rank(), world.size());
    log.step.calls.clear();
    log.recording = true;
    engine.step(batch, recorder);
    log.recording = false;
    steps.push_back(log.step);
  }
  return steps;
}

SchemeStep capture_scheme_step(comm::Communicator& world, const config::Config& config) {
  return std::move(capture_scheme_steps(world, config, 0, 1).front());
}

void invoke(const CollectiveCall& call, comm::Communicator& comm, const void* send, void* recv) {
  with_element_type(call.type.type, [&]<class T>(std::type_identity<T>) {
    const std::size_t row = elements_per_row(call.type);
    const std::span<const T> in(static_cast<const T*>(send), call.send_rows() * row);
    const std::span<T> out(static_cast<T*>(recv), call.recv_rows() * row);
    switch (call.op) {
      case CollectiveOp::kAlltoall: comm.alltoall(in, out, call.count, row); return;
      case CollectiveOp::kAlltoallv:
        comm.alltoallv(in, std::span<const std::size_t>(call.send_counts), out,
                       std::span<const std::size_t>(call.recv_counts), row);
        return;
      case CollectiveOp::kReduceScatter:
        comm.reduce_scatter(in, out, std::span<const std::size_t>(call.recv_counts), call.reduce, row);
        return;
      case CollectiveOp::kAllgatherv:
        comm.allgatherv(in, out, std::span<const std::size_t>(call.recv_counts), row);
        return;
      case CollectiveOp::kAllreduce: comm.allreduce(in, out, call.reduce); return;  // scalars: count * row values
    }
  });
}

}  // namespace embscale::collectives
