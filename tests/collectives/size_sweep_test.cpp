// nccl-tests' size flags: parsing, the sweep, and every refusal naming its flag.
#include "collectives/size_sweep.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace embscale::collectives {
namespace {

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(SizeSweep, ParsesBytesAndBinarySuffixes) {
  EXPECT_EQ(parse_size("0", "-b"), 0u);
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("1K", "-b"), 1024u);
  EXPECT_EQ(parse_size("3k", "-b"), 3072u);
  EXPECT_EQ(parse_size("64M", "-e"), 64u << 20);
  EXPECT_EQ(parse_size("2G", "-e"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_size("1T", "-e"), kMaxSweepBytes);
}

TEST(SizeSweep, RefusesWhatIsNotASizeNamingTheFlag) {
  EXPECT_NE(refusal([] { parse_size("-5", "-b"); }).find("-b: \"-5\" is negative"), std::string::npos);
  EXPECT_NE(refusal([] { parse_size("abc", "-e"); }).find("-e: \"abc\" is not a size"), std::string::npos);
  EXPECT_NE(refusal([] { parse_size("12Q", "-e"); }).find("-e: \"12Q\" is not a size"), std::string::npos);
  EXPECT_NE(refusal([] { parse_size("", "-i"); }).find("-i: \"\" is not a size"), std::string::npos);
  EXPECT_NE(refusal([] { parse_size("2T", "-e"); }).find("-e: \"2T\" is beyond the largest size, 2^40"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_size("1099511627777", "-e"); }).find("beyond"), std::string::npos);
  EXPECT_NE(refusal([] { parse_size("99999999999999999999999", "-e"); }).find("beyond"), std::string::npos);
}

TEST(SizeSweep, MultipliesOrAddsUpToTheLargestSize) {
  EXPECT_EQ(sweep_sizes({1024, 8192, 2, 0}), (std::vector<std::uint64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(sweep_sizes({1000, 9000, 3, 0}), (std::vector<std::uint64_t>{1000, 3000, 9000}));
  EXPECT_EQ(sweep_sizes({100, 350, 0, 100}), (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(sweep_sizes({0, 4, 2, 0}), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(sweep_sizes({64, 64, 2, 0}), (std::vector<std::uint64_t>{64}));
  EXPECT_EQ(sweep_sizes({kMaxSweepBytes, kMaxSweepBytes, 2, 0}), (std::vector<std::uint64_t>{kMaxSweepBytes}));
}

TEST(SizeSweep, RefusesAnInvertedOrEndlessSweep) {
  EXPECT_NE(refusal([] {
              sweep_sizes({2048, 1024, 2, 0});
            }).find("-b: the smallest size (2K) is above -e"),
            std::string::npos);
  EXPECT_NE(refusal([] { sweep_sizes({1, 8, 1, 0}); }).find("-f:"), std::string::npos);
  EXPECT_NE(refusal([] { sweep_sizes({1, 8, 0, 0}); }).find("-i:"), std::string::npos);
}

TEST(SizeSweep, FormatsSizesExactly) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(2048), "2K");
  EXPECT_EQ(format_size(64u << 20), "64M");
  EXPECT_EQ(format_size(kMaxSweepBytes), "1T");
}

}  // namespace
}  // namespace embscale::collectives
