#include "embedding/device_pooled_exchange.hpp"

#include <string>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "embedding/device_batch.hpp"

namespace embscale::embedding {
namespace {

const LayerSpec& checked(const LayerSpec& spec) {
  if (spec.context.on_host() || spec.device_library == nullptr || spec.device_batch == nullptr)
    throw Error(spec.path + ": the device exchange needs a device layer (its context, library and batch)");
  return spec;
}

}  // namespace

DevicePooledExchange::DevicePooledExchange(const LayerSpec& spec, PooledPlan plan, RowStore& store,
                                           const OwnerRule& owner)
    : spec_(checked(spec)), every_rank_gets_every_key_(plan.every_rank_gets_every_key), store_(store),
      comm_(*spec.comm), ranks_(spec.comm->size()), width_(static_cast<std::size_t>(store.dim())),
      output_(make_pooled_output(spec_, std::move(plan), width_)), positions_(output_->owner_buffer_size() / width_),
      calls_(*spec.device_library, spec.context.stream, positions_), slot_owner_(library()), slot_offset_(library()),
      block_rows_(library()), group_of_dest_(library()), base_(library()), owned_(library()), slot_index_(library()),
      send_pairs_(library()), recv_pairs_(library()), counts_(library()), rows_(library()), owner_buffer_(library()),
      grads_(library()), grad_pooled_(library()), received_(library()) {
  void* stream = calls_.stream();
  EMBSCALE_EXPECTS(!store.execution_context().on_host(), "a device exchange reads a device store");
  owner_ref_ =
      owner.ref(slot_owner_.assign(owner.slot_owner(), stream), slot_offset_.assign(owner.slot_offset(), stream),
                block_rows_.assign(owner.block_rows(), stream));
  const portable::PlacementRef host = output_->placement();
  const auto groups = output_->groups(), slots = static_cast<std::size_t>(host.slots);
  const auto ranks = static_cast<std::size_t>(ranks_);
  placement_ref_ = {host.slots, group_of_dest_.assign(std::span(host.group_of_dest, ranks), stream),
                    base_.assign(std::span(host.base, ranks), stream),
                    owned_.assign(std::span(host.owned, groups), stream),
                    slot_index_.assign(std::span(host.slot_index, groups * slots), stream)};
  calls_.synchronize("uploading the scheme's placement");
}

std::vector<const comm::Communicator*> DevicePooledExchange::communicators() const {
  auto comms = output_->communicators();
  if (&comm_.host_communicator() != &comm_) comms.push_back(&comm_.host_communicator());  // the counts
  return comms;
}

void DevicePooledExchange::forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) {
  EMBSCALE_EXPECTS(batch.num_samples == sample_share_of(spec_.global_batch, comm_.rank(), ranks_).count &&
                       batch.num_slots == spec_.slots(),
                   "a rank's batch is its share of the global batch, with the layer's slots");
  const DeviceBatch& input = *spec_.device_batch;
  const std::uint64_t n = batch.keys.size(), bags = static_cast<std::uint64_t>(batch.num_bags());
  // Each key to every rank (on one rank, the only owner there is): no owner to find.
  const bool to_every_rank = every_rank_gets_every_key_ || ranks_ == 1;
  const std::uint64_t sent = to_every_rank ? n * static_cast<std::uint64_t>(ranks_) : n;
  auto* send = send_pairs_.reserve_for<portable::KeyPosition>(sent);
  auto* counts = counts_.reserve_for<std::uint64_t>(static_cast<std::size_t>(ranks_));
  void* stream = calls_.stream();
  calls_.check(calls_.step().embedding_step_route(&owner_ref_, &placement_ref_, to_every_rank ? 1 : 0, ranks_,
                                                  input.keys(), n, input.offsets(), bags, spec_.slots(), send, counts,
                                                  calls_.scratch_for(n), stream),
               "embedding_step route");
  calls_.read_counts(counts, ranks_, send_counts_, "routing the batch");
  if (comm::total_count(send_counts_) != sent)  // the kernel counts no owner outside [0, ranks)
    throw Error(spec_.path + ": " + std::to_string(sent - comm::total_count(send_counts_)) +
                " of the batch's keys have no owner among the layer's " + std::to_string(ranks_) +
                " ranks (keys outside the layer's slots)");
  recorder.lap("route");

  const portable::KeyPosition* received = send;
  received_pairs_ = sent;
  if (ranks_ > 1) {
    recv_counts_.assign(send_counts_.size(), 0);
    comm_.host_communicator().alltoall(std::span<const std::size_t>(send_counts_), std::span<std::size_t>(recv_counts_),
                                       1);
    received_pairs_ = comm::total_count(recv_counts_);
    auto* recv = recv_pairs_.reserve_for<portable::KeyPosition>(received_pairs_);
    comm_.alltoallv(std::span<const portable::KeyPosition>(send, sent), std::span<const std::size_t>(send_counts_),
                    std::span<portable::KeyPosition>(recv, received_pairs_),
                    std::span<const std::size_t>(recv_counts_));
    received = recv;
  }
  recorder.lap("exchange_keys");

  calls_.deduplicate(&received->key, 2, received_pairs_, received_, "de-duplicating the keys");
  auto* rows = rows_.reserve_for<float>(received_.n * width_);
  store_.read(std::span<const Key>(received_.key_data(), received_.n), std::span<float>(rows, received_.n * width_));
  recorder.lap("lookup");

  const bool in_output = output_->owner_buffer_is_output();
  float* sums = in_output ? pooled.data() : owner_buffer_.reserve_for<float>(positions_ * width_);
  calls_.check(calls_.step().embedding_step_pool(received, received_.inverse_data(), received_pairs_, rows, width_,
                                                 sums, positions_, calls_.scratch_for(received_pairs_), stream),
               "embedding_step pool");
  recorder.lap("pool");
  recorder.count("pairs_sent", static_cast<std::int64_t>(sent));
  recorder.count("pairs_received", static_cast<std::int64_t>(received_pairs_));
  recorder.count("lookups", static_cast<std::int64_t>(received_.n));

  output_->forward(std::span<const float>(in_output ? nullptr : sums, in_output ? 0 : positions_ * width_), pooled,
                   recorder);
  if (spec_.mean())
    calls_.check(calls_.step().embedding_step_scale_bags(input.offsets(), bags, static_cast<std::uint64_t>(spec_.dim()),
                                                         pooled.data(), stream),
                 "embedding_step scale_bags");
  recorder.lap("unpack");
}

void DevicePooledExchange::backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                                    StepRecorder& recorder) {
  const DeviceBatch& input = *spec_.device_batch;
  void* stream = calls_.stream();
  std::span<const float> grad = grad_pooled;
  if (spec_.mean()) {  // divided in a copy: grad_pooled is the caller's
    auto* divided = grad_pooled_.reserve_for<float>(grad_pooled.size());
    calls_.check(library().functions().copy_async(divided, grad_pooled.data(),
                                                  static_cast<std::int64_t>(grad_pooled.size_bytes()), stream),
                 "copying the pooled gradients");
    calls_.check(calls_.step().embedding_step_scale_bags(input.offsets(), static_cast<std::uint64_t>(batch.num_bags()),
                                                         static_cast<std::uint64_t>(spec_.dim()), divided, stream),
                 "embedding_step scale_bags");
    grad = std::span<const float>(divided, grad_pooled.size());
  }
  const auto* received =
      static_cast<const portable::KeyPosition*>(ranks_ > 1 ? recv_pairs_.data() : send_pairs_.data());
  const std::span<float> owner_buffer =
      output_->owner_buffer_is_output()
          ? std::span<float>()  // the gradients are read where they are
          : std::span<float>(owner_buffer_.reserve_for<float>(positions_ * width_), positions_ * width_);
  const std::span<const float> sums_grad = output_->backward(grad, owner_buffer, recorder);
  auto* grads = grads_.reserve_for<float>(received_.n * width_);
  calls_.check(
      calls_.step().embedding_step_unpool(&received->position, 2, received_.by_key_data(), received_.key_begin_data(),
                                          received_.n, sums_grad.data(), width_, 0, grads, stream),
      "embedding_step unpool");
  recorder.lap("pool_backward");
  store_.apply(std::span<const Key>(received_.key_data(), received_.n),
               std::span<const float>(grads, received_.n * width_), *spec_.optimizer, step);
  recorder.lap("update");
}

}  // namespace embscale::embedding
