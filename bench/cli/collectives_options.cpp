#include "bench/cli/collectives_options.hpp"

#include <algorithm>
#include <charconv>

#include "collectives/size_sweep.hpp"
#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::cli {
namespace {

std::int64_t in_range(std::int64_t value, std::int64_t low, std::int64_t high, const char* flag, const char* what) {
  if (value < low || value > high)
    throw InputError(std::string(flag) + ": " + std::to_string(value) + " is not " + what);
  return value;
}

std::uint64_t parse_factor(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw InputError("-f: \"" + text + "\" is not a factor; expected a whole number of at least 2");
  if (value < 2) throw InputError("-f: a factor must be at least 2 (got " + text + ")");
  return value;
}

std::vector<int> parse_roots(const std::string& text, int ranks) {
  std::vector<int> roots;
  if (text == "all") {
    for (int r = 0; r < ranks; ++r) roots.push_back(r);
    return roots;
  }
  int root = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), root);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw InputError("-r: \"" + text + "\" is not a root; expected a rank or all");
  if (root < 0 || root >= ranks)
    throw InputError("-r: root " + text + " is not a rank of this run (ranks 0 to " + std::to_string(ranks - 1) + ")");
  return {root};
}

// --replay's list: "all" (every scheme of the registry, a factory registered under two names
// once) or registry names, in the order given, each once.
std::vector<std::string> parse_replay(const std::string& text) {
  std::vector<std::string> names;
  const auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  const auto registry = embedding::schemes();
  for (const auto& word : collectives::split_list(text)) {
    if (word == "all") {
      for (std::size_t i = 0; i < registry.size(); ++i) {
        bool alias = false;
        for (std::size_t j = 0; j < i; ++j) alias = alias || registry[j].make == registry[i].make;
        if (!alias) add(registry[i].name);
      }
      continue;
    }
    if (embedding::find_scheme(word) == nullptr)
      throw InputError("--replay: \"" + word + "\" is not a scheme; expected all or a comma-separated list of " +
                       embedding::scheme_names_where([](const embedding::SchemeEntry&) { return true; }));
    add(word);
  }
  return names;
}

}  // namespace

CollectivesPlan plan_collectives(const CollectivesOptions& o, int ranks) {
  CollectivesPlan plan;
  if (o.backend != "mpi" && o.backend != "nccl")
    throw InputError("--backend: expected mpi or nccl, got \"" + o.backend + "\"");
  plan.nccl = o.backend == "nccl";
  plan.settings.nccl = plan.nccl;
  if (plan.nccl && o.replay)
    throw InputError("--replay replays the CPU engine's step over MPI; it has no --backend nccl (leave it out)");
  if (o.replay) {
    if (!o.names.empty())
      throw InputError("--replay replays a scheme's training step on its own; leave out the collectives to sweep (" +
                       o.names.front() + ")");
    if (o.scheme) throw InputError("--scheme: --replay names the schemes itself");
    plan.replay_schemes = parse_replay(*o.replay);
  }
  const bool all = o.names.empty() || std::find(o.names.begin(), o.names.end(), "all") != o.names.end();
  for (const auto& entry : collectives::collectives())
    if (all || std::find(o.names.begin(), o.names.end(), entry.name) != o.names.end())
      plan.collectives.push_back(&entry);
  for (const auto& name : o.names)
    if (name != "all") collectives::find_collective(name, "collectives");  // throws naming an unknown one

  collectives::SizeSweep sweep;
  sweep.min_bytes = collectives::parse_size(o.min_bytes, "-b");
  sweep.max_bytes = collectives::parse_size(o.max_bytes, "-e");
  if (!o.factor.empty() && !o.step_bytes.empty())
    throw InputError("-f and -i: give one of them (-f multiplies each size, -i adds to it)");
  if (!o.step_bytes.empty()) {
    sweep.step_bytes = collectives::parse_size(o.step_bytes, "-i");
    if (sweep.step_bytes == 0) throw InputError("-i: the step must be at least 1 byte");
  } else {
    sweep.factor = o.factor.empty() ? 2 : parse_factor(o.factor);
  }
  plan.sizes = collectives::sweep_sizes(sweep);

  plan.types = collectives::parse_element_types(o.type, "-d");
  plan.ops = collectives::parse_reduce_ops(o.op, "--op");
  plan.roots = parse_roots(o.root, ranks);

  auto& s = plan.settings;
  s.iterations = static_cast<std::size_t>(in_range(o.iterations, 1, 1'000'000'000, "-n", "a call count of at least 1"));
  s.warmup = static_cast<std::size_t>(in_range(o.warmup, 0, 1'000'000'000, "-w", "a call count of at least 0"));
  s.checks = static_cast<std::size_t>(in_range(o.checks, 0, 1'000'000, "-c", "a check count of at least 0"));
  s.combine = static_cast<collectives::TimeCombine>(
      in_range(o.average, 0, 3, "-a", "0 (rank 0), 1 (average), 2 (minimum) or 3 (maximum)"));
  s.blocking = in_range(o.blocking, 0, 1, "-z", "0 (non-blocking call and wait) or 1 (blocking call)") == 1;
  s.rounds = static_cast<std::size_t>(in_range(o.rounds, 1, 1'000'000, "--rounds", "a round count of at least 1"));
  s.baseline = !o.no_baseline;
  s.calibrate = o.calibrate;
  s.barrier_each_call = o.barrier;
  if (o.calibrate && o.no_baseline)
    throw InputError("--calibrate times bare MPI against itself; it cannot go with --no-baseline");

  plan.equal_counts = plan.skewed_counts = false;
  for (const auto& word : collectives::split_list(o.counts)) {
    if (word == "equal") plan.equal_counts = true;
    else if (word == "skewed") plan.skewed_counts = true;
    else throw InputError("--counts: \"" + word + "\" is not a kind of counts; expected equal, skewed or equal,skewed");
  }
  const bool alltoallv = std::any_of(plan.collectives.begin(), plan.collectives.end(),
                                     [](const auto* e) { return e->name == "alltoallv"; });
  if (!alltoallv || o.replay) plan.skewed_counts = false;
  if (o.replay) {
    plan.collectives.clear();
    plan.equal_counts = false;
    return plan;
  }
  if (!plan.skewed_counts && (o.config_path || !o.settings.empty() || o.scheme))
    throw InputError(
        "--config, --set and --scheme shape the skewed counts of alltoallv, which this run does not "
        "measure (add alltoallv, and --counts skewed)");
  return plan;
}

}  // namespace embscale::cli
