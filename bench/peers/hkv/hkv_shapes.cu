// Command-line driver around HierarchicalKV's own benchmark
// (src/benchmark/merlin_hashtable_benchmark.cc.cu of a hand-made copy of HKV,
// included unchanged below; run-hkv.sh builds it with -I to that copy).
// The stock main() takes no arguments and runs fixed shapes; this file renames
// it with the preprocessor and adds a main() that calls the stock test_main()
// (same fill, warm-up, timing and printing code) for one shape given on the
// command line.  No HKV file is changed.
//
//   hkv_shapes --dim D --capacity C [--hbm-gb G] [--batch B]
//              [--load-factors 0.5,0.75,1.0] [--apis LIST]
//
//   --hbm-gb G : HBM budget for values in GiB (integer, as the stock code).
//                Omitted: all values in HBM (pure HBM mode).  G smaller than
//                the values' size: hybrid mode (the rest in pinned host memory).
//   --apis LIST: comma list of insert_or_assign,find,find_or_insert,assign,
//                find*,find_or_insert*,insert_and_evict,export_batch,
//                export_batch_if,contains (one table for all).  Omitted: the
//                stock two groups (table a, then table b), insert_and_evict
//                left out in hybrid mode as the stock main does (HKV throws).
//
// Output: the stock Markdown format (section line, "* dim = ..." line, one
// table per group: "|    λ | <api> | ... |" then one row per load factor,
// values in units of 2^30 KV/s).
#include <assert.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#include "benchmark_util.cuh"
#include "merlin_hashtable.cuh"

#define main hkv_stock_main
#include "merlin_hashtable_benchmark.cc.cu"
#undef main

namespace {

const char* api_name(API_Select a) {
  switch (a) {
    case API_Select::insert_or_assign: return "insert_or_assign";
    case API_Select::find: return "find";
    case API_Select::find_or_insert: return "find_or_insert";
    case API_Select::assign: return "assign";
    case API_Select::find_ptr: return "find*";
    case API_Select::find_or_insert_ptr: return "find_or_insert*";
    case API_Select::insert_and_evict: return "insert_and_evict";
    case API_Select::export_batch: return "export_batch";
    case API_Select::export_batch_if: return "export_batch_if";
    case API_Select::contains: return "contains";
  }
  return "?";
}

bool parse_api(const std::string& s, API_Select* out) {
  const API_Select all[] = {API_Select::insert_or_assign, API_Select::find,         API_Select::find_or_insert,
                            API_Select::assign,           API_Select::find_ptr,     API_Select::find_or_insert_ptr,
                            API_Select::insert_and_evict, API_Select::export_batch, API_Select::export_batch_if,
                            API_Select::contains};
  for (API_Select a : all) {
    if (s == api_name(a)) {
      *out = a;
      return true;
    }
  }
  if (s == "find_ptr") {
    *out = API_Select::find_ptr;
    return true;
  }
  if (s == "find_or_insert_ptr") {
    *out = API_Select::find_or_insert_ptr;
    return true;
  }
  return false;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Same header layout as the stock print_title_a/b, built from the API list.
void print_title(const std::vector<API_Select>& apis) {
  cout << endl << "|    \u03BB ";
  for (auto a : apis) cout << "| " << api_name(a) << " ";
  cout << "|\n|-----:";
  for (auto a : apis)
    cout << "|" << std::string(std::strlen(api_name(a)) + 2, '-').replace(std::strlen(api_name(a)) + 1, 1, ":");
  cout << "|\n";
}

int usage(const char* argv0) {
  std::cerr << "usage: " << argv0
            << " --dim D --capacity C [--hbm-gb G] [--batch B]"
               " [--load-factors L1,L2,..] [--apis A1,A2,..]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  size_t dim = 0, capacity = 0, batch = 1024 * 1024UL;
  long hbm_gb = -1;
  std::vector<float> load_factors{0.50f, 0.75f, 1.00f};
  std::vector<API_Select> custom_apis;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage(argv[0]);
    std::string v = argv[++i];
    if (a == "--dim") dim = std::stoull(v);
    else if (a == "--capacity") capacity = std::stoull(v);
    else if (a == "--batch") batch = std::stoull(v);
    else if (a == "--hbm-gb") hbm_gb = std::stol(v);
    else if (a == "--load-factors") {
      load_factors.clear();
      for (auto& x : split(v)) load_factors.push_back(std::stof(x));
    } else if (a == "--apis") {
      for (auto& x : split(v)) {
        API_Select s;
        if (!parse_api(x, &s)) {
          std::cerr << "unknown api: " << x << "\n";
          return 2;
        }
        custom_apis.push_back(s);
      }
    } else {
      return usage(argv[0]);
    }
  }
  if (dim == 0 || capacity == 0 || batch == 0 || load_factors.empty()) return usage(argv[0]);

  const size_t value_bytes = capacity * dim * sizeof(float);
  const size_t gib = 1UL << 30;
  const size_t need_gb = (value_bytes + gib - 1) / gib;
  const size_t hbm4values = hbm_gb < 0 ? need_gb : static_cast<size_t>(hbm_gb);
  const bool hybrid = hbm4values * gib < value_bytes;
  if (hbm4values == 0) {
    std::cerr << "--hbm-gb must be at least 1\n";
    return 2;
  }

  std::vector<std::vector<API_Select>> groups;
  if (!custom_apis.empty()) {
    groups.push_back(custom_apis);
  } else {
    std::vector<API_Select> a{API_Select::insert_or_assign, API_Select::find,     API_Select::find_or_insert,
                              API_Select::assign,           API_Select::find_ptr, API_Select::find_or_insert_ptr};
    if (!hybrid) a.push_back(API_Select::insert_and_evict);
    groups.push_back(a);
    groups.push_back({API_Select::export_batch, API_Select::export_batch_if, API_Select::contains});
  }
  if (hybrid) {
    for (auto& g : groups)
      for (auto x : g)
        if (x == API_Select::insert_and_evict) {
          std::cerr << "insert_and_evict is pure-HBM only in HKV\n";
          return 2;
        }
  }

  cudaDeviceProp props;
  CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  cout << endl
       << "## Benchmark" << endl
       << endl
       << "* GPU: 1 x " << props.name << ": " << props.major << "." << props.minor << endl
       << "* Key Type = uint64_t" << endl
       << "* Value Type = float32 * {dim}" << endl
       << "* Key-Values per OP = " << batch << endl
       << "* Evict strategy: LRU" << endl
       << "* ***Throughput Unit: Billion-KV/second***" << endl
       << endl;
  // Exact capacity (the stock line prints Million-KV, truncated).
  cout << "* capacity_kv = " << capacity << endl;

  try {
    test_mode = hybrid ? Test_Mode::hybrid : Test_Mode::pure_hbm;
    cout << (hybrid ? "### On HBM+HMEM hybrid mode: " : "### On pure HBM mode: ") << endl;
    // Same line as the stock print_configuration().
    size_t hmem4values = value_bytes / gib;
    hmem4values = hmem4values < hbm4values ? 0 : (hmem4values - hbm4values);
    cout << "\n* dim = " << dim << ", "
         << "capacity = " << static_cast<int32_t>(capacity / (1024 * 1024)) << " Million-KV, "
         << "HBM = " << hbm4values << " GB, "
         << "HMEM = " << hmem4values << " GB\n";
    for (auto& g : groups) {
      print_title(g);
      test_main(g, dim, capacity, batch, hbm4values, 1.0f, false, load_factors);
    }
    cout << endl;
    CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const nv::merlin::CudaException& e) {
    cerr << e.what() << endl;
    return 1;
  } catch (const std::exception& e) {
    cerr << e.what() << endl;
    return 1;
  }
  return 0;
}
