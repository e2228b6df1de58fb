// Where two partitionings meet (SINGA's hybrid parallelism): the data movement between
// a layer whose output blob is partitioned one way and a layer that reads it partitioned another,
// over the ranks of a Communicator, forward (the blob) and backward (its gradient).
//
// A blob is rows x cols values (rows: samples, cols: features), row-major. partition_dim 0 (data):
// rank r holds rows sample_share_of(rows, r, P), every column; partition_dim 1 (feature): every
// row, columns sample_share_of(cols, r, P). A rank's part is row-major [its rows x its columns].
//
// SINGA's table of connections between partitionings, and what moves here:
//   src | dst | connection | action           | forward                         | backward
//    0  |  0  | OneToOne   | direct           | nothing                          | nothing
//    1  |  1  | OneToOne   | direct           | nothing                          | nothing
//    0  |  0  | OneToAll   | direct           | nothing                          | nothing
//    1  |  0  | OneToOne   | Slice -> Concate | alltoallv: column part -> row part | the reverse alltoallv
//    0  |  1  | OneToOne   | Slice -> Concate | alltoallv: row part -> column part | the reverse alltoallv
//    1  |  0  | OneToAll   | Slice -> Concate | as 1 -> 0 OneToOne               | as 1 -> 0 OneToOne
//    0  |  1  | OneToAll   | Split -> Concate | allgatherv: every rank the whole blob | reduce-scatter of gradients
//    1  |  1  | OneToAll   | Split -> Concate | allgatherv: every rank the whole blob | reduce-scatter of gradients
// OneToOne: element (i, j) of dst's input is element (i, j) of src's output (ReLU, a copy);
// OneToAll: each output of dst reads every feature of its rows (an inner product), so a dst
// partitioned on features needs the whole blob (Split: a copy per rank; its gradient is the sum of
// the copies' gradients). Bridge (bridge.hpp) moves a blob between two ranks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"

namespace embscale::model {

enum class PartitionDim { kData = 0, kFeature = 1 };
enum class Connection { kOneToOne, kOneToAll };
enum class ConnectionAction { kDirect, kSliceConcate, kSplitConcate };

struct BlobShape {
  std::int64_t rows = 0, cols = 0;
};

// SINGA's rule: dst partitioned on features and OneToAll -> Split -> Concate; else the same
// partitioning -> direct; else Slice -> Concate.
ConnectionAction connection_action(PartitionDim src, PartitionDim dst, Connection connection) noexcept;

// The rows x cols a rank's part of `shape` partitioned on `dim` holds (Split's whole blob: shape).
BlobShape part_shape(BlobShape shape, PartitionDim dim, int rank, int ranks) noexcept;

// Forward: this rank's part of src's output (partitioned on `src`) -> this rank's input of dst:
// its part on `dst`, or the whole blob for Split -> Concate. Collective over `comm`. T: float or
// double.
template <typename T>
std::vector<T> connect_forward(comm::Communicator& comm, BlobShape shape, PartitionDim src, PartitionDim dst,
                               Connection connection, std::span<const T> src_part);

// Backward: the gradient of this rank's dst input (its shape as connect_forward's result) -> the
// gradient of this rank's part of src's output. Collective over `comm`.
template <typename T>
std::vector<T> connect_backward(comm::Communicator& comm, BlobShape shape, PartitionDim src, PartitionDim dst,
                                Connection connection, std::span<const T> dst_input_grad);

}  // namespace embscale::model
