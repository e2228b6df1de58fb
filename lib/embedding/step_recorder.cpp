#include "embedding/step_recorder.hpp"

#include "core/error.hpp"

namespace embscale::embedding {
namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void spin_for(double seconds) {
  const double until = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < until) {}
}

}  // namespace

StepRecorder::StepRecorder(std::unique_ptr<PhaseClock> clock) : clock_(std::move(clock)) {
  EMBSCALE_EXPECTS(clock_ != nullptr, "a recorder needs a clock");
}

void StepRecorder::begin_step() {
  phases_.clear();
  counters_.clear();
  clock_->start();
}

void StepRecorder::end_step() {
  clock_->durations(seconds_);
  EMBSCALE_EXPECTS(seconds_.size() == phases_.size(), "the clock has one duration per phase lapped");
  for (std::size_t p = 0; p < phases_.size(); ++p) phases_[p].seconds = seconds_[p];
}

std::uint64_t StepRecorder::traffic(bool sent) const {
  std::uint64_t total = 0;
  for (const auto* comm : comms_) {
    const auto t = comm->stats().total();
    total += sent ? t.bytes_sent : t.bytes_recv;
  }
  return total;
}

void StepRecorder::begin_layer(std::string prefix, std::span<const PhaseDefinition> phases,
                               std::vector<const comm::Communicator*> comms) {
  prefix_ = std::move(prefix);
  definitions_ = phases;
  comms_ = std::move(comms);
  sent_mark_ = traffic(true);
  recv_mark_ = traffic(false);
}

void StepRecorder::lap(const char* phase) {
  const PhaseDefinition* definition = find_phase(definitions_, phase);
  EMBSCALE_EXPECTS(definition != nullptr, "every phase a scheme records is one of its PhaseDefinitions");
  if (delay_s_ > 0 && delayed_phase_ == phase) spin_for(delay_s_);
  clock_->mark();
  PhaseRecord record{prefix_ + phase, definition};
  const std::uint64_t sent = traffic(true), recv = traffic(false);
  record.bytes_sent = sent - sent_mark_;
  record.bytes_recv = recv - recv_mark_;
  sent_mark_ = sent;
  recv_mark_ = recv;
  phases_.push_back(std::move(record));
}

void StepRecorder::count(std::string_view name, std::int64_t value) {
  std::string qualified = prefix_ + std::string(name);
  for (auto& [n, v] : counters_)
    if (n == qualified) {
      v += value;
      return;
    }
  counters_.emplace_back(std::move(qualified), value);
}

}  // namespace embscale::embedding
