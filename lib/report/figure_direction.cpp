#include "report/figure_direction.hpp"

namespace embscale::report {
namespace {

// A figure improves upward when its name is one of these, or ends with one (a series of a phase,
// "<phase>.algbw"; an eviction table's "<layer>.hit_rate"). Everything else improves downward.
struct HigherIsBetter {
  std::string_view name;
  bool suffix;  // true: matches the end of a longer name after a '.' or '_'
};
constexpr HigherIsBetter kHigherIsBetter[] = {
    {"throughput_samples_per_s", false},  // a run's samples per second
    {"throughput_keys_per_s", false},     // a run's key occurrences per second
    {"algbw", true},                      // nccl-tests' algorithm bandwidth of a phase or call
    {"busbw", true},                      // and its bus bandwidth
    {"items_per_second", true},           // Google Benchmark's counters
    {"bytes_per_second", true},
    {"hit_rate", true},  // the eviction study's hit rates
    {"auc", true},       // a model's AUC (eval_auc: the last evaluation's)
};

}  // namespace

bool names_figure(std::string_view figure, std::string_view part) noexcept {
  if (figure == part) return true;
  if (figure.size() <= part.size() || !figure.ends_with(part)) return false;
  const char before = figure[figure.size() - part.size() - 1];
  return before == '.' || before == '_';
}

Better better_direction(std::string_view figure) noexcept {
  if (figure.starts_with("phase:")) return Better::kLower;  // a phase's time, whatever its name
  for (const auto& h : kHigherIsBetter)
    if (figure == h.name || (h.suffix && names_figure(figure, h.name))) return Better::kHigher;
  return Better::kLower;
}

}  // namespace embscale::report
