// TieredRowStore: a layer's rows in the KV table's two-tier modes (dynamicemb's
// `caching` and `global_hbm_for_values`), with a file-backed slow tier standing in for host memory
// behind a GPU's:
//   caching  kv::CachingTable: a fast table of global_hbm_for_values bytes of rows in front of a
//            slow one holding the rest (evictions demoted, misses promoted);
//   hybrid   kv::HybridTable: global_hbm_for_values bytes of rows in memory, the other keys (by
//            hash) in the slow tier, each key in one tier for life.
// Reads are find_or_insert calls as for KvRowStore. An update writes the optimizer's rows back
// with insert_or_assign, which the tiered tables count as a touch (LFU counts it, STEP advances):
// they have no score-preserving assign. Global updates that move untouched rows are refused
// (make_tiered_row_store): the tiers cannot be swept in place.
#pragma once

#include <memory>
#include <string>

#include "embedding/row_store.hpp"
#include "kv/table_options.hpp"

namespace embscale::embedding {

struct TierOptions {
  bool caching = false;         // caching (true) or hybrid (false)
  std::int64_t fast_bytes = 0;  // global_hbm_for_values: bytes of rows in the fast tier
  std::string slow_directory;   // where the slow tier's rows file is made
};

// `field`: the config path of the storage block, for messages. `context`: a host context (the
// tiered tables are host tables; another is refused).
std::unique_ptr<RowStore> make_tiered_row_store(const kv::TableOptions& options, const TierOptions& tiers,
                                                const std::string& field, const ExecutionContext& context = {});

}  // namespace embscale::embedding
