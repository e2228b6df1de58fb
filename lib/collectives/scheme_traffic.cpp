#include "collectives/scheme_traffic.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "collectives/step_capture.hpp"
#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::collectives {
namespace {

// "2 allreduce on the layer's communicator, 1 alltoallv on split 2": what a step calls, by
// (collective, communicator) in order of first call, for the refusal's message.
std::string describe_calls(const std::vector<CollectiveCall>& calls) {
  std::vector<std::pair<std::pair<CollectiveOp, int>, int>> seen;
  for (const auto& call : calls) {
    const auto key = std::make_pair(call.op, call.comm);
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
    if (it == seen.end()) seen.push_back({key, 1});
    else ++it->second;
  }
  if (seen.empty()) return "no collective";
  std::string out;
  for (const auto& [key, n] : seen) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + collective_name(key.first) + " on ";
    out +=
        key.second == 0 ? std::string("the layer's communicator") : "split communicator " + std::to_string(key.second);
  }
  return out;
}

}  // namespace

SchemeTraffic scheme_key_exchange(comm::Communicator& world, const config::Config& config, std::int64_t first,
                                  std::int64_t iterations) {
  EMBSCALE_EXPECTS(iterations >= 1, "scheme_key_exchange: at least one iteration");
  EMBSCALE_EXPECTS(!config.embeddings.empty(), "scheme_key_exchange: a config has at least one embedding layer");
  config::Config measured = config;
  measured.embeddings.resize(1);
  SchemeTraffic traffic;
  traffic.layer = measured.embeddings.front().name;
  traffic.scheme = embedding::scheme_of(measured.embeddings.front()).name;

  const std::vector<SchemeStep> steps = capture_scheme_steps(world, std::move(measured), first, iterations);
  traffic.steps.reserve(steps.size());
  for (const SchemeStep& step : steps) {
    const auto it = std::find_if(step.calls.begin(), step.calls.end(), [](const CollectiveCall& call) {
      return call.op == CollectiveOp::kAlltoallv && call.comm == 0;
    });
    if (it == step.calls.end())
      throw InputError("layers[" + traffic.layer + "]: scheme " + traffic.scheme +
                       " exchanges no keys by alltoallv on the layer's communicator, so it has no skewed alltoallv "
                       "to measure; its step calls " +
                       describe_calls(step.calls) +
                       (world.size() == 1 ? " (on one rank a scheme that pools on the owners keeps its keys on the "
                                            "rank: skewed counts need 2 or more ranks)"
                                          : ""));
    traffic.steps.push_back({it->send_counts, it->recv_counts, it->type.row_bytes});
  }
  return traffic;
}

std::size_t send_bytes(const KeyExchangeCounts& counts) noexcept {
  return comm::total_count(counts.send_counts) * counts.row_bytes;
}
std::size_t recv_bytes(const KeyExchangeCounts& counts) noexcept {
  return comm::total_count(counts.recv_counts) * counts.row_bytes;
}

}  // namespace embscale::collectives
