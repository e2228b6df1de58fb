// Shared by the trace tests: a scratch directory, a minimal byte writer that knows nothing of the
// library (files in the tests are written field by field from the format descriptions), random
// batches, and a check that an InputError names what it must.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("embscale-trace-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Little-endian fields appended one by one.
struct Bytes {
  std::vector<unsigned char> data;
  template <typename T> Bytes& add(T v) {
    unsigned char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    data.insert(data.end(), b, b + sizeof v);
    return *this;
  }
  Bytes& append(const Bytes& other) {
    data.insert(data.end(), other.data.begin(), other.data.end());
    return *this;
  }
  std::size_t size() const { return data.size(); }
  unsigned char sum() const {
    unsigned s = 0;
    for (const unsigned char c : data) s += c;
    return static_cast<unsigned char>(s);
  }
  void write(const std::filesystem::path& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
};

inline std::vector<unsigned char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void write_file(const std::filesystem::path& path, const std::vector<unsigned char>& bytes) {
  Bytes b{bytes};
  b.write(path);
}

// n samples of the shape, nnz per bag in [min_nnz, max_nnz], keys inside the slot key spaces (or
// any int64 below 2^32 when there are none), labels and dense arbitrary floats.
inline Batch random_batch(std::uint64_t seed, const TraceShape& shape, std::int64_t n, int min_nnz, int max_nnz) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.num_samples = n;
  b.num_slots = shape.num_slots;
  b.label_dim = shape.label_dim;
  b.dense_dim = shape.dense_dim;
  const auto offsets = slot_offsets(shape.slot_sizes);
  std::uniform_real_distribution<float> value(-3.f, 3.f);
  for (std::int64_t s = 0; s < n; ++s) {
    for (int l = 0; l < shape.label_dim; ++l) b.labels.push_back(value(rng));
    for (int d = 0; d < shape.dense_dim; ++d) b.dense.push_back(value(rng));
    for (int j = 0; j < shape.num_slots; ++j) {
      const auto nnz = std::uniform_int_distribution<int>(min_nnz, max_nnz)(rng);
      for (int k = 0; k < nnz; ++k) {
        if (offsets.empty()) {
          b.keys.push_back(static_cast<Key>(rng() % (std::uint64_t{1} << 32)));
        } else {
          const auto size = static_cast<std::uint64_t>(shape.slot_sizes[static_cast<std::size_t>(j)]);
          b.keys.push_back(offsets[static_cast<std::size_t>(j)] + static_cast<Key>(rng() % size));
        }
      }
      b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
    }
  }
  return b;
}

// Everything a reader gives back, in pieces of `piece` samples, as one batch.
inline Batch read_all(TraceReader& reader, std::int64_t piece) {
  Batch all;
  all.num_slots = reader.shape().num_slots;
  all.label_dim = reader.shape().label_dim;
  all.dense_dim = reader.shape().dense_dim;
  Batch b;
  std::int64_t expected_first = reader.position();
  all.first_sample = expected_first;
  while (reader.read(piece, b) > 0) {
    EXPECT_EQ(b.first_sample, expected_first);
    validate_batch(b);
    expected_first += b.num_samples;
    for (std::int64_t i = 1; i <= b.num_bags(); ++i)
      all.offsets.push_back(all.offsets.back() + b.offsets[static_cast<std::size_t>(i)] -
                            b.offsets[static_cast<std::size_t>(i) - 1]);
    all.keys.insert(all.keys.end(), b.keys.begin(), b.keys.end());
    all.labels.insert(all.labels.end(), b.labels.begin(), b.labels.end());
    all.dense.insert(all.dense.end(), b.dense.begin(), b.dense.end());
    all.num_samples += b.num_samples;
  }
  return all;
}

inline void expect_same_batch(const Batch& a, const Batch& b) {
  EXPECT_EQ(a.num_samples, b.num_samples);
  EXPECT_EQ(a.num_slots, b.num_slots);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.dense, b.dense);
}

// Runs f, which must throw InputError whose message holds every part; returns the message.
inline std::string expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string message = e.what();
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "no '" << part << "' in: " << message;
    return message;
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

// Opens and reads the whole trace (the error may come at open or while reading).
inline void read_through(const std::filesystem::path& path, TraceFormat format, const TraceReadOptions& options) {
  auto reader = open_trace_reader(path, format, options);
  Batch b;
  while (reader->read(5, b) > 0) {}
}

}  // namespace embscale::trace::testing
