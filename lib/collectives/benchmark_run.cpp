#include "collectives/benchmark_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "core/error.hpp"
#include "device/device_resources.hpp"

namespace embscale::collectives {
namespace {

// A page-aligned buffer (large messages start on a page, as MPI's own allocations would).
class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : bytes_(bytes) {
    constexpr std::size_t kAlign = 4096;
    const std::size_t rounded = std::max<std::size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, rounded)));
    if (!data_) throw Error("collectives: cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  }
  std::byte* data() const noexcept { return data_.get(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t bytes_;
};

std::string_view kCombineNames[] = {"rank0", "avg", "min", "max"};

// Each call's time combined over ranks (-a), in place.
void combine_over_ranks(comm::Communicator& comm, std::vector<double>& values, TimeCombine how) {
  const std::span<double> v(values);
  switch (how) {
    case TimeCombine::kRank0: comm.bcast(v, 0); return;
    case TimeCombine::kAvg:
      comm.allreduce(std::span<const double>(values), v, comm::ReduceOp::kSum);
      for (auto& x : values) x /= comm.size();
      return;
    case TimeCombine::kMin: comm.allreduce(std::span<const double>(values), v, comm::ReduceOp::kMin); return;
    case TimeCombine::kMax: comm.allreduce(std::span<const double>(values), v, comm::ReduceOp::kMax); return;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

// A per-rank figure combined over ranks (-a).
double combined(comm::Communicator& comm, double own, TimeCombine how) {
  std::vector<double> value{own};
  combine_over_ranks(comm, value, how);
  return value[0];
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The case's buffers and call arguments on this rank.
struct CaseBuffers {
  CaseBuffers(const CaseSpec& spec, const Layout& layout, int rank, int ranks)
      : send(spec.placement == Placement::kInPlace ? 0 : layout.send_elements * spec.type.bytes),
        recv(layout.recv_elements * spec.type.bytes) {
    const std::size_t offset = spec.bench->in_place_offset(layout, rank, ranks) * spec.type.bytes;
    input = spec.placement == Placement::kInPlace ? recv.data() + offset : send.data();
  }
  Buffer send, recv;
  std::byte* input = nullptr;  // where this rank's inputs go: the send buffer, or inside recv
};

void fill_case_inputs(const CaseSpec& spec, const Layout& layout, std::size_t call, CaseBuffers& buffers, int rank,
                      int ranks) {
  const std::size_t n = spec.bench->input_elements(layout, call, rank, spec.root);
  const InputPattern pattern{spec.bench->traits().reduces, spec.op};
  fill_inputs(spec.type.type, buffers.input, n, pattern, rank, ranks,
              [&](std::size_t i) { return spec.bench->input_slot(layout, call, i, rank, ranks); });
}

// The case's buffers in device memory (--backend nccl), mirroring the host ones.
struct DeviceMirror {
  DeviceMirror(const device::DeviceLibrary& library, const CaseBuffers& host, void* on_stream)
      : send(library, static_cast<std::int64_t>(host.send.bytes())),
        recv(library, static_cast<std::int64_t>(host.recv.bytes())),
        input_offset(host.input - (host.input == host.send.data() ? host.send.data() : host.recv.data())),
        in_recv(host.input != host.send.data()), stream(on_stream) {}
  // The host buffers' contents (inputs and garbage), copied in.
  void upload(const CaseBuffers& host) {
    send.copy_from_host(host.send.data(), static_cast<std::int64_t>(host.send.bytes()), stream);
    recv.copy_from_host(host.recv.data(), static_cast<std::int64_t>(host.recv.bytes()), stream);
  }
  void download_result(CaseBuffers& host) const {
    recv.copy_to_host(host.recv.data(), static_cast<std::int64_t>(host.recv.bytes()), stream);
  }
  void* input() const { return static_cast<std::byte*>(in_recv ? recv.data() : send.data()) + input_offset; }
  device::DeviceBuffer send, recv;
  std::ptrdiff_t input_offset;
  bool in_recv;
  void* stream;
};

// Bytes this rank sends and receives in each timed call, as the Communicator counts them: one
// untimed call of each distinct layout (alltoallv's skewed counts differ by call; the others have
// one) through the Communicator, its counters read around it.
void record_bytes(comm::Communicator& world, const CollectiveBench& bench, const CallArgs& args, CaseResult& out) {
  const std::size_t distinct = std::max<std::size_t>(1, args.layout->per_call.size());
  std::vector<std::int64_t> sent(distinct), received(distinct);
  double unused = 0;
  for (std::size_t k = 0; k < distinct; ++k) {
    const comm::OpStats before = world.stats().total();
    bench.run(Side::kEmbscale, args, k, std::span<double>(&unused, 1));
    const comm::OpStats after = world.stats().total();
    sent[k] = static_cast<std::int64_t>(after.bytes_sent - before.bytes_sent);
    received[k] = static_cast<std::int64_t>(after.bytes_recv - before.bytes_recv);
  }
  out.bytes_sent.resize(out.times.size());
  out.bytes_recv.resize(out.times.size());
  for (std::size_t k = 0; k < out.times.size(); ++k) {
    out.bytes_sent[k] = sent[k % distinct];
    out.bytes_recv[k] = received[k % distinct];
  }
}

// Test hook for the failure path of the data check (tests/cli/collectives_test.sh):
// EMBSCALE_INJECT_WRONG=COLLECTIVE flips a bit of the first element that collective's checked
// call received on the last rank, so the check must find exactly one wrong element per checked
// call and the command must exit 1.
void inject_wrong_element(const CollectiveBench& bench, comm::Communicator& world, void* received,
                          std::size_t elements) {
  static const char* wanted = std::getenv("EMBSCALE_INJECT_WRONG");
  if (!wanted || bench.traits().name != wanted || world.rank() != world.size() - 1 || elements == 0) return;
  *static_cast<unsigned char*>(received) ^= 0x10;
}

}  // namespace

std::string_view time_combine_name(TimeCombine combine) { return kCombineNames[static_cast<int>(combine)]; }

CaseResult run_case(comm::MpiCommunicator& world, MPI_Comm bare, const CaseSpec& spec, const RunSettings& settings,
                    const NcclBackend* nccl) {
  const int rank = world.rank();
  const int ranks = world.size();
  const CollectiveBench& bench = *spec.bench;
  CaseResult out;
  out.layout = bench.layout(spec.requested_bytes / spec.type.bytes, spec.type.bytes, rank, ranks);
  const Layout& layout = out.layout;

  CaseBuffers buffers(spec, layout, rank, ranks);
  fill_garbage(buffers.send.data(), buffers.send.bytes());  // touches every page before timing
  fill_garbage(buffers.recv.data(), buffers.recv.bytes());
  fill_case_inputs(spec, layout, 0, buffers, rank, ranks);

  std::optional<DeviceMirror> device;
  if (nccl) {
    device.emplace(nccl->comm->library(), buffers, nccl->comm->stream());
    device->upload(buffers);
  }

  CallArgs args;
  args.comm = nccl ? static_cast<comm::Communicator*>(nccl->comm) : &world;
  args.bare = bare;
  args.type = spec.type.type;
  args.op = spec.op;
  args.root = spec.root;
  args.placement = spec.placement;
  args.blocking = settings.blocking;
  args.barrier_each_call = settings.barrier_each_call;
  args.layout = &layout;
  args.send = device ? device->input() : buffers.input;
  args.recv = device ? device->recv.data() : buffers.recv.data();
  args.nccl = nccl ? nccl->bare : nullptr;
  // NCCL has every call, type and op.
  out.measured_bare = settings.baseline && (nccl || bench.has_bare_mpi(args));
  const auto run_bare = [&](std::size_t first, std::span<double> times) {
    if (nccl) run_bare_nccl(bench, args, first, times);
    else bench.run(Side::kBareMpi, args, first, times);
  };

  const std::size_t n = settings.iterations;
  std::vector<double> scratch(settings.warmup);
  bench.run(Side::kEmbscale, args, 0, scratch);
  if (out.measured_bare) run_bare(0, scratch);

  out.times.resize(settings.rounds * n);
  if (out.measured_bare) out.bare_times.resize(settings.rounds * n);
  for (std::size_t round = 0; round < settings.rounds; ++round) {
    const bool embscale_first = round % 2 == 0 || !out.measured_bare;
    for (int turn = 0; turn < (out.measured_bare ? 2 : 1); ++turn) {
      const bool embscale = (turn == 0) == embscale_first;
      world.barrier();
      const std::span<double> times = std::span<double>(embscale ? out.times : out.bare_times).subspan(round * n, n);
      // --calibrate: the bare side on both sides, so the "overhead" is the harness's own bias and noise.
      if (embscale && !settings.calibrate) bench.run(Side::kEmbscale, args, round * n, times);
      else run_bare(round * n, times);
    }
  }
  record_bytes(*args.comm, bench, args, out);

  // The check: fresh inputs and a garbage receive buffer per checked call.
  CheckResult check;
  for (std::size_t k = 0; k < settings.checks; ++k) {
    fill_garbage(buffers.recv.data(), buffers.recv.bytes());
    fill_case_inputs(spec, layout, k, buffers, rank, ranks);
    if (device) device->upload(buffers);
    double unused = 0;
    world.barrier();
    bench.run(Side::kEmbscale, args, k, std::span<double>(&unused, 1));
    if (device) {
      device->download_result(buffers);
      nccl->bare->synchronize();
    }
    inject_wrong_element(bench, world, buffers.recv.data(), layout.recv_elements);
    check_elements(
        spec.type.type, buffers.recv.data(), layout.recv_elements, InputPattern{bench.traits().reduces, spec.op}, ranks,
        [&](std::size_t i) { return bench.expected(layout, k, i, rank, ranks, spec.root); }, check);
  }
  out.wrong = static_cast<std::uint64_t>(world.allreduce(static_cast<std::int64_t>(check.wrong), comm::ReduceOp::kSum));
  out.wrong_examples = std::move(check.examples);

  // Over ranks.
  out.time_series = out.times;
  combine_over_ranks(world, out.time_series, settings.combine);
  const double own = mean(out.times);
  out.time_min_s = world.allreduce(own, comm::ReduceOp::kMin);
  out.time_max_s = world.allreduce(own, comm::ReduceOp::kMax);
  out.time_s = combined(world, own, settings.combine);
  out.median_s = combined(world, median(out.times), settings.combine);
  if (out.measured_bare) {
    out.bare_series = out.bare_times;
    combine_over_ranks(world, out.bare_series, settings.combine);
    out.bare_time_s = combined(world, mean(out.bare_times), settings.combine);
    out.bare_median_s = combined(world, median(out.bare_times), settings.combine);
  }
  out.algbw_GBps = out.time_s > 0 ? layout.size_bytes / out.time_s / 1e9 : 0.0;
  out.busbw_GBps = out.algbw_GBps * bench.traits().bus_factor(ranks);

  const auto per_call_mean = [](const std::vector<std::int64_t>& v) {
    return v.empty() ? 0.0
                     : static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0})) /
                           static_cast<double>(v.size());
  };
  const double sent = per_call_mean(out.bytes_sent), received = per_call_mean(out.bytes_recv);
  out.send_bytes_max = world.allreduce(sent, comm::ReduceOp::kMax);
  out.send_bytes_mean = world.allreduce(sent, comm::ReduceOp::kSum) / ranks;
  out.recv_bytes_max = world.allreduce(received, comm::ReduceOp::kMax);
  out.recv_bytes_mean = world.allreduce(received, comm::ReduceOp::kSum) / ranks;
  return out;
}

}  // namespace embscale::collectives
