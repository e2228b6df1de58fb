// `embscale collectives`: its flags as given (nccl-tests' names where nccl-tests has them) and the
// validated plan they make. Validation names the flag and what was expected; every rank validates
// the same arguments, so a refusal is agreed (exit 2, no report).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/benchmark_run.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::cli {

struct CollectivesOptions {
  std::vector<std::string> names;          // positional; empty or "all": every registered collective
  std::string min_bytes = "1K";            // -b
  std::string max_bytes = "64M";           // -e
  std::string factor;                      // -f (default 2 unless -i is given)
  std::string step_bytes;                  // -i
  std::int64_t iterations = 20;            // -n
  std::int64_t warmup = 5;                 // -w
  std::int64_t checks = 1;                 // -c
  std::int64_t average = 1;                // -a
  std::int64_t blocking = 1;               // -z
  std::string type = "float";              // -d
  std::string op = "sum";                  // --op (nccl-tests' -o)
  std::string root = "0";                  // -r: a rank or "all"
  std::int64_t rounds = 2;                 // --rounds
  bool no_baseline = false;                // --no-baseline
  bool calibrate = false;                  // --calibrate
  bool barrier = false;                    // --barrier
  std::string counts = "equal,skewed";     // --counts (alltoallv)
  std::optional<std::string> config_path;  // --config (skewed counts)
  std::vector<std::string> settings;       // --set
  std::optional<std::string> scheme;       // --scheme
  std::optional<std::string> replay;       // --replay: schemes whose step to replay
  std::optional<std::string> output_path;  // -o
  std::string backend = "mpi";             // --backend: "mpi" (host buffers) or "nccl" (one GPU per rank)
  std::string command_line;
};

struct CollectivesPlan {
  std::vector<const collectives::CollectiveEntry*> collectives;
  std::vector<std::uint64_t> sizes;
  std::vector<collectives::ElementType> types;
  std::vector<comm::ReduceOp> ops;
  std::vector<int> roots;  // of the rooted collectives
  collectives::RunSettings settings;
  bool equal_counts = true;   // alltoallv with equal counts
  bool skewed_counts = true;  // alltoallv with a scheme's counts
  // --replay: the schemes whose training step is replayed (registry names, each factory once),
  // instead of the collectives' size sweep.
  std::vector<std::string> replay_schemes;
  bool nccl = false;  // --backend nccl
};

// Throws InputError naming the flag. `ranks`: the run's rank count (a root must be one of them).
CollectivesPlan plan_collectives(const CollectivesOptions& options, int ranks);

}  // namespace embscale::cli
