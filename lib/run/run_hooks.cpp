#include "run/run_hooks.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace embscale::run {

void InjectedFault::strike_if_due(int this_rank, std::int64_t it) const {
  if (rank != this_rank || iteration != it) return;
  if (kill) std::raise(SIGKILL);
  throw Error("injected fault at iteration " + std::to_string(it) + " (EMBSCALE_FAULT_INJECT)");
}

InjectedFault injected_fault() {
  InjectedFault fault;
  if (const char* spec = std::getenv("EMBSCALE_FAULT_INJECT")) {
    long long rank = -1, iteration = -1;
    int end = 0;
    const bool parsed = std::sscanf(spec, "%lld:%lld%n", &rank, &iteration, &end) == 2;
    const std::string action = parsed ? spec + end : "";
    if (!parsed || (action != "" && action != ":kill"))
      throw InputError(std::string("EMBSCALE_FAULT_INJECT: expected RANK:ITERATION or RANK:ITERATION:kill, got \"") +
                       spec + "\"");
    fault = {static_cast<int>(rank), iteration, action == ":kill"};
  }
  return fault;
}

InjectedDelay injected_delay() {
  InjectedDelay delay;
  if (const char* spec = std::getenv("EMBSCALE_INJECT_DELAY")) {
    const std::string text = spec;
    const auto colon = text.rfind(':');
    char* end = nullptr;
    const double seconds = colon == std::string::npos ? -1.0 : std::strtod(text.c_str() + colon + 1, &end);
    if (colon == std::string::npos || colon == 0 || end == text.c_str() + colon + 1 || *end != '\0' ||
        !(seconds >= 0 && seconds <= 10))
      throw InputError("EMBSCALE_INJECT_DELAY: expected PHASE:SECONDS (a phase name, 0 to 10 seconds), got \"" + text +
                       "\"");
    delay = {text.substr(0, colon), seconds};
  }
  return delay;
}

void require_phase(const embedding::StepRecorder& recorder, const std::string& phase) {
  std::string names;
  for (const auto& p : recorder.phases()) {
    if (p.definition->name == phase) return;
    names += (names.empty() ? "" : ", ") + std::string(p.definition->name);
  }
  throw InputError("EMBSCALE_INJECT_DELAY: this run has no phase \"" + phase + "\" (its phases: " + names + ")");
}

void print_progress(std::ostream& out, const std::string& prefix, std::int64_t done, std::int64_t total, double step_s,
                    double loss, std::int64_t batch, double elapsed_s) {
  char line[256];
  const double eta = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  std::snprintf(line, sizeof line, "%siteration %lld/%lld  step %.3f ms  %.3g samples/s  loss %.6g  ETA %.1f s",
                prefix.c_str(), static_cast<long long>(done), static_cast<long long>(total), step_s * 1e3,
                static_cast<double>(batch) / step_s, loss, eta);
  out << line << std::endl;
}

}  // namespace embscale::run
