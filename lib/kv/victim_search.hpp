// Finding the eviction victim of a full bucket: the slot of lowest score, ties broken by the
// smallest key (so the choice does not depend on slot order, which erase and rehash permute).
// This is the inner loop of every insert into a full table, over bucket_capacity scores.
//
// Two passes, so that keys are read only where scores tie: the lowest score first (8 or 4
// lanes per instruction), then the smallest key among the slots holding it (only the chunks
// with a tie load their keys). Under TIMESTAMP or CUSTOMIZED scores ties are rare and the
// second pass touches one chunk of keys; under STEP a batch's keys share a score and it reads
// more. Three implementations chosen once at run time, as the digest matchers are
// (kv/digest_match.hpp): AVX-512F, AVX2 (unsigned compares through a flipped sign bit), and a
// portable loop. All agree exactly (tests/kv/victim_search_test.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace embscale::kv {

// The index in [0, count) of the victim among scores[0, count) and keys[0, count); count >= 1.
// Keys are distinct (a bucket holds each key once) and below 2^64 - 1 (a reserved key).
using VictimSearch = std::uint32_t (*)(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count);

std::uint32_t find_victim_portable(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count);
std::uint32_t find_victim_avx2(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count);
std::uint32_t find_victim_avx512(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count);

// The best implementation this CPU runs, and its name ("avx512", "avx2", "portable").
VictimSearch best_victim_search() noexcept;
std::string victim_search_name(VictimSearch search);

}  // namespace embscale::kv
