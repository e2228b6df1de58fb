#include "model/connections.hpp"

#include <algorithm>

#include "core/batch_source.hpp"
#include "core/error.hpp"

namespace embscale::model {
namespace {

struct Range {
  std::size_t first = 0, count = 0;
};
Range share(std::int64_t n, int rank, int ranks) {
  const SampleShare s = sample_share_of(n, rank, ranks);
  return {static_cast<std::size_t>(s.first), static_cast<std::size_t>(s.count)};
}

// A rows x cols block, row-major, as one block per rank of that rank's columns ([p][rows x cols_p]),
// and back. The column partitioning's layout on the wire.
template <typename T>
std::vector<T> pack_column_blocks(std::span<const T> rows_major, std::size_t rows, BlobShape shape, int ranks) {
  const auto cols = static_cast<std::size_t>(shape.cols);
  std::vector<T> blocks;
  blocks.reserve(rows_major.size());
  for (int p = 0; p < ranks; ++p) {
    const Range c = share(shape.cols, p, ranks);
    for (std::size_t i = 0; i < rows; ++i)
      blocks.insert(blocks.end(), rows_major.begin() + static_cast<std::ptrdiff_t>(i * cols + c.first),
                    rows_major.begin() + static_cast<std::ptrdiff_t>(i * cols + c.first + c.count));
  }
  return blocks;
}
template <typename T>
std::vector<T> unpack_column_blocks(std::span<const T> blocks, std::size_t rows, BlobShape shape, int ranks) {
  const auto cols = static_cast<std::size_t>(shape.cols);
  std::vector<T> out(rows * cols);
  std::size_t at = 0;
  for (int p = 0; p < ranks; ++p) {
    const Range c = share(shape.cols, p, ranks);
    for (std::size_t i = 0; i < rows; ++i, at += c.count)
      std::copy_n(blocks.data() + at, c.count, out.data() + i * cols + c.first);
  }
  return out;
}

// [my rows x all cols] -> [all rows x my cols]: rank p gets my rows' columns of p's share.
template <typename T>
std::vector<T> rows_to_columns(comm::Communicator& comm, BlobShape shape, std::span<const T> part) {
  const int P = comm.size(), me = comm.rank();
  const Range mine = share(shape.rows, me, P), my_cols = share(shape.cols, me, P);
  const std::vector<T> send = pack_column_blocks<T>(part, mine.count, shape, P);
  std::vector<std::size_t> send_counts(static_cast<std::size_t>(P)), recv_counts(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    send_counts[static_cast<std::size_t>(p)] = mine.count * share(shape.cols, p, P).count;
    recv_counts[static_cast<std::size_t>(p)] = share(shape.rows, p, P).count * my_cols.count;
  }
  // Rank q's block is its rows x my columns, and q's rows follow q - 1's: the blocks in rank order
  // are [all rows x my cols] as they land.
  std::vector<T> out(static_cast<std::size_t>(shape.rows) * my_cols.count);
  comm.alltoallv(std::span<const T>(send), std::span<const std::size_t>(send_counts), std::span<T>(out),
                 std::span<const std::size_t>(recv_counts));
  return out;
}

// [all rows x my cols] -> [my rows x all cols]: rank p gets p's rows of my columns (a contiguous
// block of my part); the blocks received, one per rank's columns, are interleaved into rows.
template <typename T>
std::vector<T> columns_to_rows(comm::Communicator& comm, BlobShape shape, std::span<const T> part) {
  const int P = comm.size(), me = comm.rank();
  const auto cols = static_cast<std::size_t>(shape.cols);
  const Range mine = share(shape.rows, me, P), my_cols = share(shape.cols, me, P);
  std::vector<std::size_t> send_counts(static_cast<std::size_t>(P)), recv_counts(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    send_counts[static_cast<std::size_t>(p)] = share(shape.rows, p, P).count * my_cols.count;
    recv_counts[static_cast<std::size_t>(p)] = mine.count * share(shape.cols, p, P).count;
  }
  std::vector<T> blocks(mine.count * cols);
  comm.alltoallv(part, std::span<const std::size_t>(send_counts), std::span<T>(blocks),
                 std::span<const std::size_t>(recv_counts));
  return unpack_column_blocks<T>(blocks, mine.count, shape, P);
}

// Values in each rank's part of `shape` partitioned on `dim`.
std::vector<std::size_t> part_values(BlobShape shape, PartitionDim dim, int ranks) {
  std::vector<std::size_t> counts;
  for (int p = 0; p < ranks; ++p) {
    const BlobShape s = part_shape(shape, dim, p, ranks);
    counts.push_back(static_cast<std::size_t>(s.rows * s.cols));
  }
  return counts;
}

// Every rank's part -> the whole blob on every rank.
template <typename T>
std::vector<T> gather_whole(comm::Communicator& comm, BlobShape shape, PartitionDim dim, std::span<const T> part) {
  const int P = comm.size();
  const auto rows = static_cast<std::size_t>(shape.rows), cols = static_cast<std::size_t>(shape.cols);
  const std::vector<std::size_t> counts = part_values(shape, dim, P);
  std::vector<T> out(rows * cols);
  if (dim == PartitionDim::kData) {  // the parts in rank order are the rows in order
    comm.allgatherv(part, std::span<T>(out), std::span<const std::size_t>(counts));
    return out;
  }
  std::vector<T> blocks(out.size());
  comm.allgatherv(part, std::span<T>(blocks), std::span<const std::size_t>(counts));
  return unpack_column_blocks<T>(blocks, rows, shape, P);
}

// The gradients of every rank's copy of the whole blob -> the sum, this rank's part of it.
template <typename T>
std::vector<T> reduce_to_part(comm::Communicator& comm, BlobShape shape, PartitionDim dim, std::span<const T> whole) {
  const int P = comm.size(), me = comm.rank();
  const auto rows = static_cast<std::size_t>(shape.rows);
  const std::vector<std::size_t> counts = part_values(shape, dim, P);
  std::vector<T> out(counts[static_cast<std::size_t>(me)]);
  if (dim == PartitionDim::kData) {
    comm.reduce_scatter(whole, std::span<T>(out), std::span<const std::size_t>(counts), comm::ReduceOp::kSum);
    return out;
  }
  const std::vector<T> blocks = pack_column_blocks<T>(whole, rows, shape, P);
  comm.reduce_scatter(std::span<const T>(blocks), std::span<T>(out), std::span<const std::size_t>(counts),
                      comm::ReduceOp::kSum);
  return out;
}

template <typename T> void expect_size(std::span<const T> values, BlobShape shape, const char* what) {
  if (values.size() != static_cast<std::size_t>(shape.rows * shape.cols))
    throw Error(std::string("hybrid connection: ") + what + " holds " + std::to_string(values.size()) +
                " values, expected " + std::to_string(shape.rows) + " x " + std::to_string(shape.cols));
}

}  // namespace

ConnectionAction connection_action(PartitionDim src, PartitionDim dst, Connection connection) noexcept {
  if (dst == PartitionDim::kFeature && connection == Connection::kOneToAll) return ConnectionAction::kSplitConcate;
  return src == dst ? ConnectionAction::kDirect : ConnectionAction::kSliceConcate;
}

BlobShape part_shape(BlobShape shape, PartitionDim dim, int rank, int ranks) noexcept {
  if (dim == PartitionDim::kData) return {sample_share_of(shape.rows, rank, ranks).count, shape.cols};
  return {shape.rows, sample_share_of(shape.cols, rank, ranks).count};
}

template <typename T>
std::vector<T> connect_forward(comm::Communicator& comm, BlobShape shape, PartitionDim src, PartitionDim dst,
                               Connection connection, std::span<const T> src_part) {
  expect_size(src_part, part_shape(shape, src, comm.rank(), comm.size()), "the source part");
  switch (connection_action(src, dst, connection)) {
    case ConnectionAction::kDirect: return {src_part.begin(), src_part.end()};
    case ConnectionAction::kSliceConcate:
      return src == PartitionDim::kData ? rows_to_columns(comm, shape, src_part)
                                        : columns_to_rows(comm, shape, src_part);
    case ConnectionAction::kSplitConcate: return gather_whole(comm, shape, src, src_part);
  }
  return {};
}

template <typename T>
std::vector<T> connect_backward(comm::Communicator& comm, BlobShape shape, PartitionDim src, PartitionDim dst,
                                Connection connection, std::span<const T> dst_input_grad) {
  const ConnectionAction action = connection_action(src, dst, connection);
  expect_size(dst_input_grad,
              action == ConnectionAction::kSplitConcate ? shape : part_shape(shape, dst, comm.rank(), comm.size()),
              "the gradient of the destination's input");
  switch (action) {
    case ConnectionAction::kDirect: return {dst_input_grad.begin(), dst_input_grad.end()};
    case ConnectionAction::kSliceConcate:  // the forward's movement reversed
      return src == PartitionDim::kData ? columns_to_rows(comm, shape, dst_input_grad)
                                        : rows_to_columns(comm, shape, dst_input_grad);
    case ConnectionAction::kSplitConcate: return reduce_to_part(comm, shape, src, dst_input_grad);
  }
  return {};
}

template std::vector<float> connect_forward(comm::Communicator&, BlobShape, PartitionDim, PartitionDim, Connection,
                                            std::span<const float>);
template std::vector<double> connect_forward(comm::Communicator&, BlobShape, PartitionDim, PartitionDim, Connection,
                                             std::span<const double>);
template std::vector<float> connect_backward(comm::Communicator&, BlobShape, PartitionDim, PartitionDim, Connection,
                                             std::span<const float>);
template std::vector<double> connect_backward(comm::Communicator&, BlobShape, PartitionDim, PartitionDim, Connection,
                                              std::span<const double>);

}  // namespace embscale::model
