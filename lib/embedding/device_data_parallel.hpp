// TorchRec's data-parallel data flow (schemes/data_parallel.cpp) on a GPU, for a layer drawn on a
// device: the same phases over a replica of the whole table in the GPU's memory:
//   route            the batch's (key, bag) pairs and their de-duplication (device_bag_keys.hpp)
//   lookup           the device store's read of the distinct keys
//   pool             each bag summed from +0 in key order, the mean's scale
//   pool_backward    each distinct key's gradient; the whole table's gradient and touch flags
//                    (embedding_rows_scatter)
//   allreduce_grads  both summed over the ranks, in device memory
//   update           the touched rows in row order (embedding_rows_select), the device store's apply
// Each sum in the host's order: with the host's collectives (staged MPI) the device step gives the
// host step's bits (tests/embedding/device_engine_mpi_test.cpp).
#pragma once

#include <memory>
#include <span>

#include "embedding/owned_keys.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

// The scheme over `store` (a device store of every key of the layer, `owned`), recording `phases`
// (data_parallel's own list).
std::unique_ptr<EmbeddingScheme> make_device_data_parallel(const LayerSpec& spec, OwnedKeys owned,
                                                           std::unique_ptr<RowStore> store,
                                                           std::span<const PhaseDefinition> phases);

}  // namespace embscale::embedding
