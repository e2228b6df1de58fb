// embscale_ps_bench: the parameter server's pull and push (lib/ps) beside the bare point-to-point
// of the same messages, in one run.
//
//   mpiexec -n W embscale_ps_bench [--servers 1] [--keys 4096] [--dim 128] [--vocabulary 262144]
//       [--steps 20] [--warmup 3] [--rounds 3] [--staleness S] [--transport mpi|ucx] [--json FILE]
//
// Roles: ranks 0 .. T-1 train, the last `servers` ranks serve (T = W - servers >= 1).
// Work: each trainer step draws `keys` distinct ids uniformly from [0, vocabulary) (seeded by rank
// and step: the same ids on both sides), pulls their rows (dim floats each) and pushes as many
// gradients. The servers' tables hold every id before timing (ids grow on first pull, and that
// insertion is not what is measured here).
//   ps:   PsClient against ParameterServer: the KV table (find_or_insert on pull, SGD on push),
//         asynchronous with `staleness` (default: steps, so that no trainer waits for another:
//         the bare side has no such wait either), its messages over `transport` (the MPI or the
//         UCX MessageChannel);
//   bare: the same messages (header, ids; rows back; header, ids, gradients), split by the same
//         hash, answered in arrival order by a loop of receives and sends with no table behind,
//         over a channel of the same transport of their own (MPI: MPI_Send / MPI_Recv on a
//         duplicate communicator, the server's any-source receive a probe then a receive; UCX:
//         UCP tag sends and receives): what moving those bytes costs on this machine.
// Timing: per trainer step, the pull (request to last answer) and the push (until its sends
// return); a step's time is the slowest trainer's. Per round and side: the median over timed
// steps. Rounds alternate which side runs first. Servers report their busy share and the time in
// their table (ServeStats: reads for pulls, the optimizer's updates). A push returns when its sends
// do and the server applies it while the next pull waits; so a step is the bare step, the busiest
// server's table work and, what is left, the protocol's own cost (splitting, copies, the serve
// loop's probes and bookkeeping), with one trainer exactly, with several where servers overlap.
// Output: a table on rank 0 (per phase: ps and bare medians, ratio, rows/s and GB/s of ps) and,
// with --json, every round's figures. Exit codes: 0 ok, 1 failure, 2 bad input.
#include <mpi.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <unordered_set>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "ps/parameter_server.hpp"
#include "ps/ps_client.hpp"
#include "ps/ps_messages.hpp"

namespace {

using namespace embscale;

struct Options {
  int servers = 1;
  std::int64_t keys = 4096, dim = 128, vocabulary = 262144, steps = 20, warmup = 3, rounds = 3, staleness = -1;
  std::string json;
  std::string transport = "mpi";
};

struct StepTimes {  // per timed step: the slowest trainer's seconds
  std::vector<double> pull, push;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The distinct ids of trainer `rank`'s step `step`.
std::vector<Key> ids_of(const Options& o, int rank, std::int64_t step) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(rank) * 1000003u + static_cast<std::uint64_t>(step));
  std::unordered_set<Key> seen;
  std::vector<Key> ids;
  while (static_cast<std::int64_t>(ids.size()) < o.keys) {
    const auto id = static_cast<Key>(rng() % static_cast<std::uint64_t>(o.vocabulary));
    if (seen.insert(id).second) ids.push_back(id);
  }
  return ids;
}

// Each trainer step's times, gathered as the slowest trainer's (a MAX over the world; servers give 0).
StepTimes slowest(comm::Communicator& world, const std::vector<double>& pull, const std::vector<double>& push,
                  std::int64_t steps) {
  std::vector<double> mine(static_cast<std::size_t>(2 * steps), 0.0), most(mine.size());
  std::copy(pull.begin(), pull.end(), mine.begin());
  std::copy(push.begin(), push.end(), mine.begin() + steps);
  world.allreduce(std::span<const double>(mine), std::span<double>(most), comm::ReduceOp::kMax);
  return {{most.begin(), most.begin() + steps}, {most.begin() + steps, most.end()}};
}

// One side's trainer loop: warmup + steps steps of pull(step) then push(step); the timed steps' seconds.
template <class Pull, class Push>
std::pair<std::vector<double>, std::vector<double>> train(const Options& o, int rank, const Pull& pull,
                                                          const Push& push) {
  std::vector<double> pulls, pushes;
  std::vector<float> rows(static_cast<std::size_t>(o.keys * o.dim)), grads(rows.size(), 1e-3f);
  // Drawn before the loop: the steps follow each other with no untimed work between them, so a
  // server still applying the last push delays the next pull on both sides alike.
  std::vector<std::vector<Key>> all_ids;
  for (std::int64_t s = 1; s <= o.warmup + o.steps; ++s) all_ids.push_back(ids_of(o, rank, s));
  for (std::int64_t s = 1; s <= o.warmup + o.steps; ++s) {
    const auto& ids = all_ids[static_cast<std::size_t>(s - 1)];
    Stopwatch watch;
    pull(s, ids, rows);
    const double p = watch.lap();
    push(s, ids, grads);
    const double q = watch.lap();
    if (s > o.warmup) {
      pulls.push_back(p);
      pushes.push_back(q);
    }
  }
  return {pulls, pushes};
}

constexpr int kBareTag = 7201;  // + 0 header, 1 ids, 2 rows, 3 gradients

// A step's ids split by server with the hash PsClient uses (`ids_of`), and room for their values.
void split_by_server(std::span<const Key> ids, std::size_t servers, std::vector<std::vector<Key>>& ids_of,
                     std::vector<std::vector<float>>& values_of) {
  ids_of.assign(servers, {});
  for (const Key id : ids) ids_of[static_cast<std::size_t>(ps::server_of(id, static_cast<int>(servers)))].push_back(id);
  values_of.resize(servers);
}

// The bare side's server: answers pulls from a buffer and receives pushes, in arrival order,
// until every trainer is done; no table behind.
void bare_serve(comm::MessageChannel& channel, const Options& o, int trainers) {
  std::vector<Key> ids(static_cast<std::size_t>(o.keys));
  std::vector<float> rows(static_cast<std::size_t>(o.keys * o.dim), 0.5f);
  int done = 0;
  while (done < trainers) {
    ps::Header h;
    const comm::MessageInfo from = channel.recv_any(std::span<ps::Header>(&h, 1), comm::kAnySource, kBareTag);
    const auto n = static_cast<std::size_t>(h.keys);
    if (h.kind == ps::RequestKind::kDone) {
      ++done;
      continue;
    }
    if (n) channel.recv(std::span<Key>(ids).first(n), from.source, kBareTag + 1);
    const auto values = std::span<float>(rows).first(n * static_cast<std::size_t>(o.dim));
    if (h.kind == ps::RequestKind::kPull) channel.send(std::span<const float>(values), from.source, kBareTag + 2);
    else if (n) channel.recv(values, from.source, kBareTag + 3);
  }
}

// The bare side's trainer: a step's messages, split by the same hash as PsClient.
struct BareClient {
  comm::MessageChannel& channel;
  const Options& o;
  std::vector<int> servers;
  std::vector<std::vector<Key>> ids_of;
  std::vector<std::vector<float>> values_of;

  void split(std::span<const Key> ids) { split_by_server(ids, servers.size(), ids_of, values_of); }
  void pull(std::int64_t step, std::span<const Key> ids) {
    split(ids);
    std::vector<comm::Request> answers;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      values_of[s].resize(ids_of[s].size() * static_cast<std::size_t>(o.dim));
      answers.push_back(channel.irecv(std::span<float>(values_of[s]), servers[s], kBareTag + 2));
    }
    for (std::size_t s = 0; s < servers.size(); ++s)
      send(s, {ps::RequestKind::kPull, step, static_cast<std::int64_t>(ids_of[s].size())});
    comm::wait_all(answers);
  }
  void push(std::int64_t step, std::span<const Key> ids) {
    split(ids);
    for (std::size_t s = 0; s < servers.size(); ++s) {
      send(s, {ps::RequestKind::kPush, step, static_cast<std::int64_t>(ids_of[s].size())});
      values_of[s].assign(ids_of[s].size() * static_cast<std::size_t>(o.dim), 1e-3f);
      if (!ids_of[s].empty()) channel.send(std::span<const float>(values_of[s]), servers[s], kBareTag + 3);
    }
  }
  void send(std::size_t s, ps::Header h) {
    channel.send(std::span<const ps::Header>(&h, 1), servers[s], kBareTag);
    if (h.keys) channel.send(std::span<const Key>(ids_of[s]), servers[s], kBareTag + 1);
  }
  void finish() {
    const ps::Header done;  // kDone
    for (const int server : servers) channel.send(std::span<const ps::Header>(&done, 1), server, kBareTag);
  }
};

int run(int argc, char** argv) {
  CLI::App app{"the parameter server's pull and push beside the bare point-to-point of the same messages"};
  Options o;
  app.add_option("--servers", o.servers, "server ranks (the last ones)")->check(CLI::PositiveNumber);
  app.add_option("--keys", o.keys, "distinct ids per trainer step")->check(CLI::PositiveNumber);
  app.add_option("--dim", o.dim, "values per row")->check(CLI::PositiveNumber);
  app.add_option("--vocabulary", o.vocabulary, "ids are drawn from [0, vocabulary)")->check(CLI::PositiveNumber);
  app.add_option("--steps", o.steps, "timed steps per round and side")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--rounds", o.rounds, "rounds (the first side alternates)")->check(CLI::PositiveNumber);
  app.add_option("--staleness", o.staleness, "the servers' bound (default: steps + warmup, none in effect)");
  app.add_option("--transport", o.transport, "the parameter server's messages (and the bare side's) over mpi or ucx")
      ->check(CLI::IsMember({"mpi", "ucx"}));
  app.add_option("--json", o.json, "write every round's figures here (rank 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = comm::open_message_channel(  // the parameter server's messages
      world, o.transport == "ucx" ? comm::ChannelTransport::kUcx : comm::ChannelTransport::kMpi);
  // The bare side's messages, over a channel of the same transport of their own.
  const auto bare_channel = comm::open_message_channel(
      world, o.transport == "ucx" ? comm::ChannelTransport::kUcx : comm::ChannelTransport::kMpi);
  const int W = world.size(), rank = world.rank(), T = W - o.servers;
  if (T < 1)
    throw InputError("--servers " + std::to_string(o.servers) + ": leaves no trainer on " + std::to_string(W) +
                     " ranks");
  if (o.keys > o.vocabulary)
    throw InputError("--keys: at most --vocabulary (" + std::to_string(o.vocabulary) + ") distinct ids");
  if (o.staleness < 0) o.staleness = o.steps + o.warmup;
  std::vector<int> servers, trainers;
  for (int r = 0; r < W; ++r) (r < T ? trainers : servers).push_back(r);
  const bool serving = rank >= T;

  // A server's shard, holding all of its ids before timing.
  config::Optimizer sgd;
  sgd.learning_rate = 0.01;
  const auto optimizer = embedding::make_sparse_optimizer(sgd, static_cast<std::int32_t>(o.dim));
  std::unique_ptr<embedding::KvRowStore> shard;
  if (serving) {
    kv::TableOptions t;
    t.dim = o.dim;
    t.training = true;
    t.max_capacity = t.init_capacity = std::max<std::int64_t>(1024, 2 * o.vocabulary / o.servers);
    t.bucket_capacity = 128;
    t.num_embeddings = o.vocabulary;
    shard = std::make_unique<embedding::KvRowStore>(t, "ps_bench");
    std::vector<Key> mine;
    for (Key id = 0; id < o.vocabulary; ++id)
      if (ps::server_of(id, o.servers) == rank - T) mine.push_back(id);
    std::vector<float> rows(mine.size() * static_cast<std::size_t>(o.dim));
    shard->read(mine, rows);
  }

  nlohmann::json rounds = nlohmann::json::array();
  std::vector<double> ps_pull, ps_push, bare_pull, bare_push, busy_share, table_time;
  for (std::int64_t round = 0; round < o.rounds; ++round) {
    nlohmann::json figures;
    const bool ps_first = round % 2 == 0;
    for (const bool ps_side : {ps_first, !ps_first}) {
      world.barrier();
      std::vector<double> pulls, pushes;
      double busy = 0, table_per_step = 0;
      if (ps_side) {
        if (serving) {
          ps::ParameterServer server(*channel, {trainers, false, o.staleness, {}, {}}, *shard, *optimizer);
          const ps::ServeStats stats = server.serve();
          busy = stats.busy_seconds / std::max(1e-12, stats.busy_seconds + stats.idle_seconds);
          table_per_step = (stats.read_seconds + stats.update_seconds) / static_cast<double>(o.warmup + o.steps);
        } else {
          ps::PsClient client(*channel, servers, static_cast<std::int32_t>(o.dim));
          std::tie(pulls, pushes) = train(
              o, rank,
              [&](std::int64_t s, std::span<const Key> ids, std::span<float> rows) { client.pull(s, ids, rows); },
              [&](std::int64_t s, std::span<const Key> ids, std::span<const float> g) { client.push(s, ids, g); });
          client.finish(o.warmup + o.steps);
        }
      } else if (serving) {
        bare_serve(*bare_channel, o, T);
      } else {
        BareClient client{*bare_channel, o, servers, {}, {}};
        std::tie(pulls, pushes) = train(
            o, rank, [&](std::int64_t s, std::span<const Key> ids, std::span<float>) { client.pull(s, ids); },
            [&](std::int64_t s, std::span<const Key> ids, std::span<const float>) { client.push(s, ids); });
        client.finish();
      }
      pulls.resize(static_cast<std::size_t>(o.steps), 0.0);
      pushes.resize(static_cast<std::size_t>(o.steps), 0.0);
      const StepTimes times = slowest(world, pulls, pushes, o.steps);
      double most_busy = 0, most_table = 0;
      world.allreduce(std::span<const double>(&busy, 1), std::span<double>(&most_busy, 1), comm::ReduceOp::kMax);
      world.allreduce(std::span<const double>(&table_per_step, 1), std::span<double>(&most_table, 1),
                      comm::ReduceOp::kMax);
      const std::string side = ps_side ? "ps" : "bare";
      figures[side] = {{"pull_s", median(times.pull)}, {"push_s", median(times.push)}};
      (ps_side ? ps_pull : bare_pull).push_back(median(times.pull));
      (ps_side ? ps_push : bare_push).push_back(median(times.push));
      if (ps_side) {
        figures[side]["server_busy_share_max"] = most_busy;
        figures[side]["server_table_s_per_step_max"] = most_table;
        busy_share.push_back(most_busy);
        table_time.push_back(most_table);
      }
    }
    rounds.push_back(figures);
  }

  if (rank == 0) {
    const double rows_per_step = static_cast<double>(T * o.keys);
    const double pull_bytes = rows_per_step * static_cast<double>(sizeof(Key) + sizeof(float) * o.dim);
    std::printf(
        "parameter server on %d ranks: %d trainers, %d servers, its messages (and the bare side's) over %s; "
        "%lld ids of dim %lld per trainer step, vocabulary %lld; %lld rounds x %lld steps; ms per step: median over "
        "rounds of the slowest trainer's median\n",
        W, T, o.servers, channel->transport_details().c_str(), static_cast<long long>(o.keys),
        static_cast<long long>(o.dim), static_cast<long long>(o.vocabulary), static_cast<long long>(o.rounds),
        static_cast<long long>(o.steps));
    std::printf("%-6s %10s %10s %8s %14s %10s\n", "phase", "ps", "bare", "ps/bare", "ps rows/s", "ps GB/s");
    for (const auto& [name, ps_side, bare_side] :
         {std::tuple<const char*, std::vector<double>&, std::vector<double>&>{"pull", ps_pull, bare_pull},
          std::tuple<const char*, std::vector<double>&, std::vector<double>&>{"push", ps_push, bare_push}}) {
      const double p = median(ps_side), b = median(bare_side);
      std::printf("%-6s %10.3f %10.3f %8.2f %14.3g %10.2f\n", name, p * 1e3, b * 1e3, p / b, rows_per_step / p,
                  pull_bytes / p / 1e9);
    }
    std::printf("servers' busy share (the busiest server, median over rounds): %.2f\n", median(busy_share));
    // A step waits for the busiest server's table work (its reads for the pull, and the update
    // of the last push, which the next pull queues behind); what is left of the ps step beyond
    // the bare step and that work is the protocol's own cost (splitting, copies, the serve loop).
    const double bare = median(bare_pull) + median(bare_push), table = median(table_time);
    const double rest = median(ps_pull) + median(ps_push) - bare - table;
    std::printf(
        "step: ps %.3f ms, bare %.3f ms, the busiest server's table work (reads, updates) %.3f ms; "
        "ps - bare - table: %.3f ms (%.0f %% of the bare step)\n",
        (median(ps_pull) + median(ps_push)) * 1e3, bare * 1e3, table * 1e3, rest * 1e3, 100.0 * rest / bare);
    if (!o.json.empty()) {
      std::ofstream out(o.json);
      out << nlohmann::json{{"ranks", W},
                            {"trainers", T},
                            {"servers", o.servers},
                            {"transport", o.transport},
                            {"keys", o.keys},
                            {"dim", o.dim},
                            {"vocabulary", o.vocabulary},
                            {"steps", o.steps},
                            {"rounds", rounds}}
                 .dump(2)
          << "\n";
      if (!out) throw InputError("--json " + o.json + ": cannot write");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    code = run(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "embscale_ps_bench: " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "embscale_ps_bench: " << e.what() << "\n";
    code = 1;
  }
  if (code != 0) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  return code;
}
