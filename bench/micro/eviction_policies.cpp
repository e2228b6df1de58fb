// embscale_eviction_policies: how close the dynamic table's hit rate comes to the top-capacity
// bound on an independent Zipf stream, for every (exponent, score strategy, admission setting)
// asked (the admission filter's target; bench/micro/README.md, "Eviction policies"). A plain CLI,
// not a Google Benchmark: it measures hit rates, not time.
//
//   embscale_eviction_policies [--exponents 0.8,1.05,1.2] [--strategies STEP,LFU,...]
//       [--admission none --admission tiny_lfu:aging_factor=100 ...] [--keys N] [--capacity C]
//       [--bucket-capacity B] [--batch K] [--warmup D] [--measure D] [--intervals I] [--seed S]
//       [--threads T] [--drift] [--json FILE]
//
// Per run it prints the hit rate per access over the measured window, the bound H(C, s) / H(N, s),
// the gap in points (100 x (bound - hit rate)), the bucketed bound (each bucket keeping its own
// most frequent keys: what bucket-local placement alone costs), the hit rate per distinct key,
// not-admitted / refused / evicted keys per distinct key, and the run's seconds; with --drift also
// the first and last interval's hit rate after the key mapping changed. A combination the table
// refuses (FREQUENCY without a filter) is a row saying why. --json FILE writes every row with its
// interval curve. Exit codes: 0 ok, 2 bad input.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "eviction_policy_run.hpp"
#include "kv/score_rules.hpp"
#include "kv/table_options.hpp"

namespace {

using namespace embscale;
using namespace embscale::bench;

kv::ScoreStrategy strategy_named(const std::string& name) {
  for (const auto& rules : kv::kScoreRules)
    if (rules.name == name) return rules.strategy;
  std::string known;
  for (const auto& rules : kv::kScoreRules) known += (known.empty() ? "" : ", ") + std::string(rules.name);
  throw InputError("--strategies: unknown score strategy \"" + name + "\" (expected one of " + known + ")");
}

nlohmann::json setup_json(const StudySetup& s) {
  return {{"keys", s.keys},           {"capacity", s.capacity}, {"bucket_capacity", s.bucket_capacity},
          {"batch", s.batch},         {"warmup", s.warmup},     {"measure", s.measure},
          {"intervals", s.intervals}, {"seed", s.seed},         {"drift", s.drift}};
}

int study(int argc, char** argv) {
  CLI::App app{"Hit rate of the dynamic table on an independent Zipf stream against the top-capacity bound"};
  StudySetup setup;
  std::vector<double> exponents{0.8, 1.05, 1.2};
  std::vector<std::string> strategies;
  std::vector<std::string> admissions{"none", "k_count", "tiny_lfu"};
  std::string json_path;
  app.add_option("--exponents", exponents, "Zipf exponents s")->delimiter(',')->check(CLI::Range(0.0, 10.0));
  app.add_option("--strategies", strategies, "score strategies (default: all)")->delimiter(',');
  app.add_option("--admission", admissions,
                 "admission settings, kind[:field=value,...] (repeat; default none, k_count, tiny_lfu)");
  app.add_option("--keys", setup.keys, "N, distinct keys of the stream")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 32));
  app.add_option("--capacity", setup.capacity, "C, the table's slots")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 34));
  app.add_option("--bucket-capacity", setup.bucket_capacity, "slots per bucket, a power of two in [16, 1024]");
  app.add_option("--batch", setup.batch, "distinct keys per call")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  app.add_option("--warmup", setup.warmup, "accesses (draws) before the measured window");
  app.add_option("--measure", setup.measure, "accesses (draws) in the measured window")->check(CLI::PositiveNumber);
  app.add_option("--intervals", setup.intervals, "parts of the window for the curve over time")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seed", setup.seed, "of the stream and the key mapping");
  app.add_option("--threads", setup.threads, "threads per call (the result does not depend on it)")
      ->check(CLI::Range(1, 256));
  app.add_flag("--drift", setup.drift, "change the key mapping when the measured window begins");
  app.add_option("--json", json_path, "write every row (with its interval curve) to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (setup.bucket_capacity < 16 || setup.bucket_capacity > 1024 ||
      (setup.bucket_capacity & (setup.bucket_capacity - 1)))
    throw InputError("--bucket-capacity: expected a power of two in [16, 1024], got " +
                     std::to_string(setup.bucket_capacity));
  if (setup.capacity < setup.bucket_capacity)
    throw InputError("--capacity: expected at least --bucket-capacity (" + std::to_string(setup.bucket_capacity) + ")");
  if (static_cast<std::int64_t>(setup.batch) > setup.keys)
    throw InputError("--batch: expected at most --keys (" + std::to_string(setup.keys) + ") distinct keys per call");
  if (strategies.empty())
    for (const auto& rules : kv::kScoreRules) strategies.emplace_back(rules.name);
  std::vector<kv::ScoreStrategy> chosen;
  for (const auto& name : strategies) chosen.push_back(strategy_named(name));
  std::vector<AdmissionSetting> settings;
  for (const auto& spec : admissions) settings.push_back(parse_admission_setting(spec));

  std::printf(
      "# N %lld, C %lld, buckets of %lld, calls of %zu distinct keys, warm-up %llu, window %llu accesses, "
      "seed %llu%s\n",
      static_cast<long long>(setup.keys), static_cast<long long>(setup.capacity),
      static_cast<long long>(setup.bucket_capacity), setup.batch, static_cast<unsigned long long>(setup.warmup),
      static_cast<unsigned long long>(setup.measure), static_cast<unsigned long long>(setup.seed),
      setup.drift ? ", the key mapping changes when the window begins" : "");
  std::printf("%-5s %-10s %-44s %7s %7s %7s %7s %8s %8s %8s %8s %6s%s\n", "s", "strategy", "admission", "hit", "bound",
              "gap", "bucketd", "distinct", "not_adm", "refused", "evicted", "sec",
              setup.drift ? "   first    last" : "");
  nlohmann::json rows = nlohmann::json::array();
  for (const double s : exponents) {
    const double bound = top_capacity_bound(setup.capacity, setup.keys, s);
    const double bucketed = bucketed_bound(setup, s);
    for (const auto strategy : chosen)
      for (const auto& setting : settings) {
        const kv::TableOptions probe = study_table_options(setup, strategy, setting.options);
        try {
          kv::check_options(probe);
        } catch (const InputError& e) {  // e.g. FREQUENCY without a filter: a row saying why
          std::printf("%-5.2f %-10s %-44s n/a: %s\n", s, std::string(kv::score_rules(strategy).name).c_str(),
                      setting.spec.c_str(), e.what());
          rows.push_back({{"exponent", s},
                          {"strategy", kv::score_rules(strategy).name},
                          {"admission", setting.spec},
                          {"not_applicable", e.what()}});
          continue;
        }
        const StudyResult r = run_study(setup, s, strategy, setting.options);
        const double gap = 100.0 * (bound - r.hit_rate);
        std::printf("%-5.2f %-10s %-44s %7.4f %7.4f %7.2f %7.4f %8.4f %8.4f %8.4f %8.4f %6.1f", s,
                    std::string(kv::score_rules(strategy).name).c_str(), setting.spec.c_str(), r.hit_rate, bound, gap,
                    bucketed, r.distinct_hit_rate, r.not_admitted, r.refused, r.evicted, r.seconds);
        if (setup.drift) std::printf(" %7.4f %7.4f", r.interval_hit_rates.front(), r.interval_hit_rates.back());
        std::printf("\n");
        std::fflush(stdout);
        rows.push_back({{"exponent", s},
                        {"strategy", kv::score_rules(strategy).name},
                        {"admission", setting.spec},
                        {"hit_rate", r.hit_rate},
                        {"bound", bound},
                        {"gap_points", gap},
                        {"bucketed_bound", bucketed},
                        {"distinct_hit_rate", r.distinct_hit_rate},
                        {"not_admitted_per_key", r.not_admitted},
                        {"refused_per_key", r.refused},
                        {"evicted_per_key", r.evicted},
                        {"accesses", r.accesses},
                        {"calls", r.calls},
                        {"interval_hit_rates", r.interval_hit_rates},
                        {"interval_ends", r.interval_ends},
                        {"seconds", r.seconds}});
      }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << nlohmann::json{{"setup", setup_json(setup)}, {"rows", rows}}.dump(1) << "\n";
    if (!out) throw InputError("--json " + json_path + ": cannot write the file");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return study(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "embscale_eviction_policies: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "embscale_eviction_policies: " << e.what() << "\n";
    return 1;
  }
}
