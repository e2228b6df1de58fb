// SOK's all2all dense data flow (schemes/all2all_dense.cpp) on a GPU, for a layer drawn on a
// device: the same phases, the same scheme (a key on rank key % ranks, rows travel to the
// requesters, which pool), each phase a call of lib/device's embedding_step family or of the
// device store:
//   route            the batch's (key, bag) pairs, their de-duplication (unique), the distinct
//                    keys grouped by owner (group); the owners' counts to the host
//   exchange_keys    counts over the host communicator, keys over the layer's
//   lookup           the owner de-duplicates what it received, reads those rows, and lays them
//                    out in received order (permute)
//   exchange_vectors the rows back
//   pool             the rows back in de-duplicated order (permute), each bag summed in key order
//                    from +0, the mean's scale
// Backward mirrors it; each sum is taken in the host's order, from +0, so the device step gives
// the host step's bits with the host's collectives (tests/embedding/device_engine_mpi_test.cpp).
// De-duplication is always on (the engine refuses deduplicate false on the GPU).
#pragma once

#include <memory>
#include <span>

#include "embedding/scheme.hpp"

namespace embscale::embedding {

// The scheme over `store` (a device store of the keys this rank owns), recording `phases`
// (all2all_dense's own list).
std::unique_ptr<EmbeddingScheme> make_device_all2all_dense(const LayerSpec& spec, std::unique_ptr<RowStore> store,
                                                           std::span<const PhaseDefinition> phases);

}  // namespace embscale::embedding
