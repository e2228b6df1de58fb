// TorchRec's table-wise sharding: each table (a slot of the layer) whole on one rank, placed
// largest first onto the least loaded rank; the owner pools whole bags and an alltoallv sends each
// rank its pooled vectors (TorchRec's TwPooledEmbeddingDist).
#include "embedding/pooled_scheme.hpp"

namespace embscale::embedding {

std::unique_ptr<EmbeddingScheme> make_table_wise(const LayerSpec& spec) {
  return make_whole_table_scheme(spec, place_tables(spec, spec.comm->size()));
}

}  // namespace embscale::embedding
