#include "comm/mpi_remote_window.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"

namespace embscale::comm {

namespace {

// Whether every rank of `comm` shares this rank's node (MPI_COMM_TYPE_SHARED). Collective.
bool on_one_node(MPI_Comm comm, int size) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_size = 0;
  check_mpi(MPI_Comm_size(node, &node_size), "MPI_Comm_size");
  MPI_Comm_free(&node);
  int all = node_size == size ? 1 : 0, every = 0;
  check_mpi(MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return every == 1;
}

}  // namespace

MpiRemoteWindow::MpiRemoteWindow(MPI_Comm comm, std::size_t bytes, CommStats& stats, bool shared) : stats_(stats) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const auto own = static_cast<unsigned long long>(bytes);
  std::vector<unsigned long long> sizes(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&own, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, comm),
            "MPI_Allgather");
  sizes_.assign(sizes.begin(), sizes.end());
  void* base = nullptr;
  mapped_.assign(sizes_.size(), nullptr);
  if (shared && on_one_node(comm, size)) {
    MPI_Info info;
    check_mpi(MPI_Info_create(&info), "MPI_Info_create");
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each region on its owner's pages
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, comm, &base, &window_);
    MPI_Info_free(&info);
    check_mpi(rc, "MPI_Win_allocate_shared");
    for (int r = 0; r < size; ++r) {
      MPI_Aint region = 0;
      int unit = 0;
      void* at = nullptr;
      check_mpi(MPI_Win_shared_query(window_, r, &region, &unit, &at), "MPI_Win_shared_query");
      if (region > 0) mapped_[static_cast<std::size_t>(r)] = static_cast<const std::byte*>(at);
    }
  } else {
    check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &base, &window_),
              "MPI_Win_allocate");
  }
  local_ = {static_cast<std::byte*>(base), bytes};
  std::fill(local_.begin(), local_.end(), std::byte{0});
  check_mpi(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  // One shared epoch for the window's life: no rank ever takes an exclusive lock (MODE_NOCHECK).
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
}

MpiRemoteWindow::~MpiRemoteWindow() {
  if (window_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(window_);
  MPI_Win_free(&window_);
}

void MpiRemoteWindow::get(int target, std::size_t offset, void* into, std::size_t bytes) {
  EMBSCALE_EXPECTS(target >= 0 && static_cast<std::size_t>(target) < sizes_.size(), "a get from a rank of the group");
  if (offset > sizes_[static_cast<std::size_t>(target)] || bytes > sizes_[static_cast<std::size_t>(target)] - offset)
    throw Error("remote window: a get of bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                ") from rank " + std::to_string(target) + ", whose region holds " +
                std::to_string(sizes_[static_cast<std::size_t>(target)]));
  pending_bytes_ += bytes;
  if (const std::byte* at = mapped_[static_cast<std::size_t>(target)]) {  // a shared window: a copy
    std::memcpy(into, at + offset, bytes);
    return;
  }
  auto* out = static_cast<std::byte*>(into);
  // MPI counts are ints: a larger get goes in pieces.
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t piece = std::min<std::size_t>(bytes - done, INT_MAX);
    check_mpi(MPI_Get(out + done, static_cast<int>(piece), MPI_BYTE, target, static_cast<MPI_Aint>(offset + done),
                      static_cast<int>(piece), MPI_BYTE, window_),
              "MPI_Get");
    done += piece;
  }
}

void MpiRemoteWindow::flush() {
  check_mpi(MPI_Win_flush_all(window_), "MPI_Win_flush_all");
  stats_.record("get", 0, pending_bytes_);
  pending_bytes_ = 0;
}

void MpiRemoteWindow::publish() { check_mpi(MPI_Win_sync(window_), "MPI_Win_sync"); }

}  // namespace embscale::comm
