// The data check's expectations against an independent model: each rank's inputs as
// fill_inputs writes them, reduced one rank after another in the element type's own arithmetic
// (wrapping integers; half and bfloat16 through float and back), at rank counts beyond the float
// types' exact range. And the check catches a wrong element, naming where.
#include "collectives/data_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

using comm::ReduceOp;

template <class T> T add(T a, T b) {
  if constexpr (std::is_same_v<T, Half>) return to_half(to_float(a) + to_float(b));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(to_float(a) + to_float(b));
  else return static_cast<T>(a + b);
}
template <class T> T mul(T a, T b) {
  if constexpr (std::is_same_v<T, Half>) return to_half(to_float(a) * to_float(b));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(to_float(a) * to_float(b));
  else return static_cast<T>(a * b);
}
template <class T> double value(T a) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return to_float(a);
  else return static_cast<double>(a);
}
template <class T> T divide(T a, int n) {
  if constexpr (std::is_same_v<T, Half>) return to_half(to_float(a) / static_cast<float>(n));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(to_float(a) / static_cast<float>(n));
  else if constexpr (std::is_floating_point_v<T>) return a / static_cast<T>(n);
  else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(a / static_cast<T>(n));
  else return static_cast<T>(static_cast<std::int64_t>(a) / n);
}

// One rank after another, in T.
template <class T> std::vector<T> sequential_reduction(ReduceOp op, int ranks, std::size_t count) {
  std::vector<T> acc(count), input(count);
  const auto slot = [](std::size_t i) { return InputSlot{0, i}; };
  fill_inputs(comm::data_type_of<T>(), acc.data(), count, {true, op}, 0, ranks, slot);
  for (int r = 1; r < ranks; ++r) {
    fill_inputs(comm::data_type_of<T>(), input.data(), count, {true, op}, r, ranks, slot);
    for (std::size_t i = 0; i < count; ++i) {
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg: acc[i] = add(acc[i], input[i]); break;
        case ReduceOp::kProd: acc[i] = mul(acc[i], input[i]); break;
        case ReduceOp::kMax: acc[i] = value(input[i]) > value(acc[i]) ? input[i] : acc[i]; break;
        case ReduceOp::kMin: acc[i] = value(input[i]) < value(acc[i]) ? input[i] : acc[i]; break;
      }
    }
  }
  if (op == ReduceOp::kAvg)
    for (auto& a : acc) a = divide(a, ranks);
  return acc;
}

TEST(DataCheck, ReductionExpectationsMatchASequentialReductionInTheElementType) {
  constexpr std::size_t kCount = 97;
  for (const auto& type : element_types())
    for (const auto& op : reduce_ops())
      for (const int ranks : {1, 2, 3, 4, 7, 300, 3000}) {
        visit_element_type(type.type, [&]<class T>(std::type_identity<T>) {
          const auto reduced = sequential_reduction<T>(op.op, ranks, kCount);
          CheckResult result;
          check_elements(
              type.type, reduced.data(), kCount, {true, op.op}, ranks,
              [](std::size_t i) {
                return ExpectedElement{ExpectedElement::Kind::kReduced, 0, {0, i}};
              },
              result);
          EXPECT_EQ(result.wrong, 0u) << type.name << " " << op.name << " on " << ranks
                                      << " ranks: " << (result.examples.empty() ? "" : result.examples.front());
        });
      }
}

TEST(DataCheck, ReductionsAreNotTrivial) {
  // The products are +-2 and the sums and extremes vary by element: a check that ignored its
  // input would not pass by accident.
  EXPECT_EQ(std::abs(reduced_value_as_double(comm::DataType::kFloat32, ReduceOp::kProd, 5, 4)), 2.0);
  std::vector<double> sums;
  for (std::uint64_t i = 0; i < 10; ++i)
    sums.push_back(reduced_value_as_double(comm::DataType::kInt32, ReduceOp::kSum, i, 3));
  EXPECT_GT(*std::max_element(sums.begin(), sums.end()), *std::min_element(sums.begin(), sums.end()));
}

TEST(DataCheck, CatchesAWrongElementAndSaysWhere) {
  std::vector<float> moved(40);
  fill_inputs(comm::DataType::kFloat32, moved.data(), moved.size(), {}, 3, 4, [](std::size_t i) {
    return InputSlot{1, i};
  });
  const auto expected = [](std::size_t i) { return ExpectedElement{ExpectedElement::Kind::kMoved, 3, {1, i}}; };
  CheckResult clean;
  check_elements(comm::DataType::kFloat32, moved.data(), moved.size(), {}, 4, expected, clean);
  EXPECT_EQ(clean.wrong, 0u);

  // Another rank's data, and another block's, are wrong.
  std::vector<float> other(40);
  fill_inputs(comm::DataType::kFloat32, other.data(), other.size(), {}, 2, 4, [](std::size_t i) {
    return InputSlot{1, i};
  });
  moved[17] = other[17];
  fill_inputs(comm::DataType::kFloat32, other.data(), other.size(), {}, 3, 4, [](std::size_t i) {
    return InputSlot{0, i};
  });
  moved[30] = other[30];
  CheckResult dirty;
  check_elements(comm::DataType::kFloat32, moved.data(), moved.size(), {}, 4, expected, dirty);
  EXPECT_EQ(dirty.wrong, 2u);
  ASSERT_EQ(dirty.examples.size(), 2u);
  EXPECT_EQ(dirty.examples[0].rfind("element 17: got ", 0), 0u) << dirty.examples[0];
  EXPECT_EQ(dirty.examples[1].rfind("element 30: got ", 0), 0u) << dirty.examples[1];

  // Garbage left where a call never wrote is wrong too; unchecked elements are skipped.
  std::vector<std::int8_t> bytes(10);
  fill_garbage(bytes.data(), bytes.size());
  CheckResult garbage;
  check_elements(
      comm::DataType::kInt8, bytes.data(), bytes.size(), {true, ReduceOp::kSum}, 2,
      [](std::size_t i) {
        return i < 6 ? ExpectedElement{ExpectedElement::Kind::kReduced, 0, {0, i}} : ExpectedElement{};
      },
      garbage);
  std::size_t garbage_wrong = 0;
  for (std::uint64_t i = 0; i < 6; ++i)
    garbage_wrong +=
        reduced_value_as_double(comm::DataType::kInt8, ReduceOp::kSum, i, 2) != static_cast<double>(bytes[0]);
  EXPECT_EQ(garbage.wrong, garbage_wrong);
  EXPECT_GE(garbage.wrong, 5u);
}

}  // namespace
}  // namespace embscale::collectives
