// A scratch directory that every rank of MPI_COMM_WORLD agrees on (named by rank 0's pid and a
// prefix), created before and removed after the test, for tests whose ranks write one file
// together.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "comm/mpi_communicator.hpp"

namespace embscale::report::testing {

class SharedDirectoryTest : public ::testing::Test {
 protected:
  explicit SharedDirectoryTest(const std::string& prefix) : world(MPI_COMM_WORLD) {
    std::int64_t pid = world.rank() == 0 ? getpid() : 0;
    world.bcast(std::span<std::int64_t>(&pid, 1), 0);
    dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(pid));
    if (world.rank() == 0) std::filesystem::create_directories(dir);
    world.barrier();
  }
  ~SharedDirectoryTest() override {
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove_all(dir);
  }
  std::size_t files_in_dir() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
  }

  comm::MpiCommunicator world;
  std::filesystem::path dir;
};

}  // namespace embscale::report::testing
