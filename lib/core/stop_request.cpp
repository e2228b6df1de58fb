#include "core/stop_request.hpp"

#include <csignal>
#include <cstring>

namespace embscale {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int signal) { g_stop_signal = signal; }

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a system call the signal interrupts (a write of the report, a poll inside MPI)
  // resumes instead of failing with EINTR; the flag is looked at by the loop, not by the call.
  action.sa_flags = SA_RESTART;
  for (const int signal : {SIGTERM, SIGUSR1}) sigaction(signal, &action, nullptr);
}

int stop_signal() noexcept { return g_stop_signal; }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGINT: return "SIGINT";
    default: return "signal " + std::to_string(signal);
  }
}

void set_stop_signal_for_testing(int signal) noexcept { g_stop_signal = signal; }

}  // namespace embscale
