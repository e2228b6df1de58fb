#include "collectives/skewed_traffic.hpp"

#include <numeric>

#include "collectives/scheme_traffic.hpp"
#include "core/error.hpp"

namespace embscale::collectives {

SkewedTraffic capture_skewed_traffic(comm::MpiCommunicator& world, const config::Config& config,
                                     std::size_t iterations) {
  SchemeTraffic exchange = scheme_key_exchange(world, config, 0, static_cast<std::int64_t>(iterations));
  double rows = 0;
  for (const auto& step : exchange.steps)
    rows += static_cast<double>(std::accumulate(step.send_counts.begin(), step.send_counts.end(), std::size_t{0}));
  SkewedTraffic traffic;
  traffic.scheme = exchange.scheme;
  traffic.calls = std::move(exchange.steps);
  const double calls = static_cast<double>(world.size()) * static_cast<double>(traffic.calls.size());
  traffic.mean_rows_per_rank = world.allreduce(rows, comm::ReduceOp::kSum) / calls;
  if (traffic.mean_rows_per_rank <= 0)
    throw InputError("layers[" + exchange.layer + "]: scheme " + traffic.scheme +
                     " sends no keys in these iterations, so there are no skewed counts to measure");
  return traffic;
}

}  // namespace embscale::collectives
