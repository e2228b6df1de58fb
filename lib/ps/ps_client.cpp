#include "ps/ps_client.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

PsClient::PsClient(comm::Communicator& comm, std::vector<int> servers, std::int32_t dim)
    : comm_(comm), servers_(std::move(servers)), dim_(static_cast<std::size_t>(dim)), keys_of_(servers_.size()),
      index_of_(servers_.size()), values_of_(servers_.size()) {
  EMBSCALE_EXPECTS(!servers_.empty(), "a trainer needs at least one server");
  EMBSCALE_EXPECTS(dim >= 1, "rows need dim >= 1");
}

void PsClient::split(std::span<const Key> keys) {
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    keys_of_[s].clear();
    index_of_[s].clear();
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto s = static_cast<std::size_t>(server_of(keys[i], servers()));
    keys_of_[s].push_back(keys[i]);
    index_of_[s].push_back(i);
  }
}

void PsClient::pull(std::int64_t step, std::span<const Key> keys, std::span<float> rows) {
  EMBSCALE_EXPECTS(rows.size() == keys.size() * dim_, "rows must hold keys.size() x dim values");
  split(keys);
  // Every answer's receive is posted before any request goes out: a server answering this trainer
  // never waits on it, whatever else the trainer is sending (no cycle of blocking sends).
  std::vector<comm::Request> answers;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    values_of_[s].resize(keys_of_[s].size() * dim_);
    answers.push_back(comm_.irecv(std::span<float>(values_of_[s]), servers_[s], kRowsTag));
  }
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    const Header header{RequestKind::kPull, step, static_cast<std::int64_t>(keys_of_[s].size())};
    comm_.send(std::span<const Header>(&header, 1), servers_[s], kHeaderTag);
    if (!keys_of_[s].empty()) comm_.send(std::span<const Key>(keys_of_[s]), servers_[s], kKeysTag);
  }
  comm::wait_all(answers);
  for (std::size_t s = 0; s < servers_.size(); ++s)
    for (std::size_t j = 0; j < index_of_[s].size(); ++j)
      std::copy_n(values_of_[s].data() + j * dim_, dim_, rows.data() + index_of_[s][j] * dim_);
}

void PsClient::push(std::int64_t step, std::span<const Key> keys, std::span<const float> grads) {
  EMBSCALE_EXPECTS(grads.size() == keys.size() * dim_, "grads must hold keys.size() x dim values");
  split(keys);
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    auto& values = values_of_[s];
    values.resize(keys_of_[s].size() * dim_);
    for (std::size_t j = 0; j < index_of_[s].size(); ++j)
      std::copy_n(grads.data() + index_of_[s][j] * dim_, dim_, values.data() + j * dim_);
    const Header header{RequestKind::kPush, step, static_cast<std::int64_t>(keys_of_[s].size())};
    comm_.send(std::span<const Header>(&header, 1), servers_[s], kHeaderTag);
    if (keys_of_[s].empty()) continue;
    comm_.send(std::span<const Key>(keys_of_[s]), servers_[s], kKeysTag);
    comm_.send(std::span<const float>(values), servers_[s], kGradsTag);
  }
}

void PsClient::finish(std::int64_t last_step) {
  const Header header{RequestKind::kDone, last_step, 0};
  for (const int server : servers_) comm_.send(std::span<const Header>(&header, 1), server, kHeaderTag);
}

}  // namespace embscale::ps
