#include "core/batch.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace embscale {
namespace {

Batch two_samples_two_slots() {
  Batch b;
  b.num_samples = 2;
  b.num_slots = 2;
  b.label_dim = 1;
  b.offsets = {0, 1, 3, 3, 4};
  b.keys = {10, 20, 21, 11};
  b.labels = {1.0f, 0.0f};
  return b;
}

TEST(Batch, BagsFollowSampleMajorCsr) {
  const Batch b = two_samples_two_slots();
  EXPECT_NO_THROW(validate_batch(b));
  EXPECT_EQ(b.num_bags(), 4);
  EXPECT_EQ(b.bag(1).size(), 2u);
  EXPECT_EQ(b.bag(1)[1], 21);
  EXPECT_TRUE(b.bag(2).empty());
}

TEST(Batch, ValidationRejectsBrokenCsr) {
  Batch b = two_samples_two_slots();
  b.offsets[2] = 0;  // decreasing
  EXPECT_THROW(validate_batch(b), Error);
  b = two_samples_two_slots();
  b.keys.pop_back();
  EXPECT_THROW(validate_batch(b), Error);
  b = two_samples_two_slots();
  b.labels.clear();
  EXPECT_THROW(validate_batch(b), Error);
}

}  // namespace
}  // namespace embscale
