// The data check of `embscale collectives` (nccl-tests' -c): inputs built so that every element of
// every result is exactly predictable, and a count of the elements that differ.
//
// * Moved data (allgather, bcast, alltoall, alltoallv, sendrecv, and the copies a reduction makes)
//   is a hash of (sending rank, block, index): a wrong source rank, block or offset shows as a
//   wrong bit pattern, compared bit for bit.
// * Reduced data is small integers, exact in every type whatever the order of the reduction:
//   - sum, avg: values in [-2, 2] ([0, 4] unsigned). Float types are exact while partial sums stay
//     below 2^(mantissa bits); so only the first 2^(mantissa bits)/2 ranks contribute, the rest add
//     0 (bfloat16: 128 ranks, half: 1024, float and double: all). Integer types wrap, and the
//     reference wraps the same way (two's complement, as C++20 defines the conversion).
//   - prod: one rank per element contributes 2, the others +1 or -1 (unsigned: 1): the result is
//     +-2 at any rank count, and a missing or doubled rank flips the sign or the 2.
//   - max, min: values in [-30, 30] ([0, 60] unsigned), spread over ranks by element.
//   - avg: the wrapped or exact sum divided by the rank count in the element type (integers
//     truncated toward zero; half and bfloat16 divided in float and rounded back).
// The reference (reduced_value) is computed by a loop over the ranks in 64-bit integers or double,
// independently of the Communicator's reduction order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace embscale::collectives {

// Where one input element sits: the block (the receiving rank for alltoall and alltoallv, 0
// otherwise) and its index in that block (reductions: its index in the whole input).
struct InputSlot {
  int block = 0;
  std::uint64_t index = 0;
};

// What one element of a receive buffer must hold after a call.
struct ExpectedElement {
  enum class Kind { kUnchecked, kMoved, kReduced };
  Kind kind = Kind::kUnchecked;
  int rank = 0;    // kMoved: the rank whose input it is
  InputSlot slot;  // kMoved: the slot in that rank's input; kReduced: slot.index in every rank's input
};

// How inputs are valued: moved data (hashes) or the inputs of a reduction by `op`.
struct InputPattern {
  bool reduction = false;
  comm::ReduceOp op = comm::ReduceOp::kSum;
};

// Fills `count` elements of `type` at `buffer` with this rank's inputs; slot_of(i) says where
// element i sits.
void fill_inputs(comm::DataType type, void* buffer, std::size_t count, const InputPattern& pattern, int rank, int ranks,
                 const std::function<InputSlot(std::size_t)>& slot_of);

// Fills `bytes` bytes with a recognisable garbage pattern (so that an element a call never wrote
// is caught).
void fill_garbage(void* buffer, std::size_t bytes);

struct CheckResult {
  std::uint64_t wrong = 0;
  std::vector<std::string> examples;  // the first few wrong elements on this rank, described
};

// Compares `count` elements of `type` at `received` with what expected_of(i) says they must be;
// adds the differences to `result` (at most `max_examples` described).
void check_elements(comm::DataType type, const void* received, std::size_t count, const InputPattern& pattern,
                    int ranks, const std::function<ExpectedElement(std::size_t)>& expected_of, CheckResult& result,
                    std::size_t max_examples = 4);

// The exact result of reducing element `index` over `ranks` ranks, as a double (for messages and
// tests); and as the element type's bits, little-endian in the low bytes.
double reduced_value_as_double(comm::DataType type, comm::ReduceOp op, std::uint64_t index, int ranks);

}  // namespace embscale::collectives
