// The stop request: SIGTERM and SIGUSR1 are recorded, not fatal, once the handlers are installed.
#include <gtest/gtest.h>

#include <csignal>

#include "core/stop_request.hpp"

namespace embscale {
namespace {

TEST(StopRequest, SignalsAreRecordedAndTheProcessGoesOn) {
  install_stop_signal_handlers();
  set_stop_signal_for_testing(0);
  EXPECT_FALSE(stop_requested());
  ASSERT_EQ(std::raise(SIGUSR1), 0);
  EXPECT_EQ(stop_signal(), SIGUSR1);
  EXPECT_TRUE(stop_requested());
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(stop_signal(), SIGTERM);  // the latest signal
  set_stop_signal_for_testing(0);
  EXPECT_FALSE(stop_requested());
}

TEST(StopRequest, NamesAndExitCode) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(signal_name(40), "signal 40");
  EXPECT_EQ(StopRequested("x").exit_code(), kExitStopped);
  EXPECT_NE(kExitStopped, kExitFailure);
  EXPECT_NE(kExitStopped, kExitBadInput);
}

}  // namespace
}  // namespace embscale
