// HostKvTable<Key>: KvTable<Key> on the host over HostTable, the CPU table
// (kv/keyed_kv_table.hpp: the adapter it shares with the GPU table's logic on the host).
#pragma once

#include "kv/keyed_kv_table.hpp"
