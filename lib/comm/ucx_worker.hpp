// Private to lib/comm (ucp.h stays out of the public headers): a UCX channel's context, worker and
// endpoints, and the waiting helpers the channel and its windows share.
#pragma once

#include <ucp/api/ucp.h>

#include <vector>

namespace embscale::comm::detail {

struct UcpWorker {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<ucp_ep_h> endpoints;  // per rank of the group; null for this rank

  UcpWorker() = default;
  UcpWorker(const UcpWorker&) = delete;
  UcpWorker& operator=(const UcpWorker&) = delete;
  ~UcpWorker();
};

// One round of progress; when nothing progressed, the core goes to another process (as OpenMPI
// with mpi_yield_when_idle): a rank waiting for a peer that shares its core lets the peer run.
void progress(ucp_worker_h worker);
// Waits for a UCP operation: nullptr is done at once, an error pointer failed (an Error naming
// `what`), anything else is a request to progress the worker for and then free.
void wait_for(ucp_worker_h worker, ucs_status_ptr_t pending, const char* what);
// A UCP call's status as an Error naming the call.
void check(ucs_status_t status, const char* call);

}  // namespace embscale::comm::detail
