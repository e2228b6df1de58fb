#include "model/dense_optimizer.hpp"

#include <cmath>

namespace embscale::model {

template <typename T> void DenseOptimizer<T>::apply(ParameterStore<T>& store, std::int64_t step) {
  apply(store.values(ParameterSharing::kReplicated), store.grads(ParameterSharing::kReplicated), replicated_, step);
  apply(store.values(ParameterSharing::kLocal), store.grads(ParameterSharing::kLocal), local_, step);
}

template <typename T>
void DenseOptimizer<T>::apply(std::span<T> w, std::span<const T> g, State& state, std::int64_t step) {
  using config::OptimizerType;
  const auto lr = static_cast<T>(settings_.learning_rate_at(step));
  const std::size_t n = w.size();
  switch (settings_.type) {
    case OptimizerType::kSGD:
      for (std::size_t k = 0; k < n; ++k) w[k] -= lr * g[k];
      return;
    case OptimizerType::kMomentumSGD: {
      state.first.resize(n, T(0));
      const auto f = static_cast<T>(settings_.momentum_factor);
      for (std::size_t k = 0; k < n; ++k) {
        state.first[k] = f * state.first[k] - lr * g[k];
        w[k] += state.first[k];
      }
      return;
    }
    case OptimizerType::kNesterov: {
      state.first.resize(n, T(0));
      const auto mu = static_cast<T>(settings_.momentum_factor);
      for (std::size_t k = 0; k < n; ++k) {
        const T old = state.first[k];
        state.first[k] = mu * old - lr * g[k];
        w[k] += -mu * old + (T(1) + mu) * state.first[k];
      }
      return;
    }
    case OptimizerType::kAdam: {
      state.first.resize(n, T(0));
      state.second.resize(n, T(0));
      const double t = static_cast<double>(step);
      const auto lr_t =
          static_cast<T>(settings_.learning_rate_at(step) * std::sqrt(1.0 - std::pow(settings_.beta2, t)) /
                         (1.0 - std::pow(settings_.beta1, t)));
      const auto b1 = static_cast<T>(settings_.beta1), b2 = static_cast<T>(settings_.beta2);
      const auto eps = static_cast<T>(settings_.epsilon);
      for (std::size_t k = 0; k < n; ++k) {
        state.first[k] = b1 * state.first[k] + (T(1) - b1) * g[k];
        state.second[k] = b2 * state.second[k] + (T(1) - b2) * g[k] * g[k];
        w[k] -= lr_t * state.first[k] / (std::sqrt(state.second[k]) + eps);
      }
      return;
    }
    case OptimizerType::kAdaGrad:
    case OptimizerType::kRowWiseAdaGrad: {
      state.first.resize(n, static_cast<T>(settings_.initial_accu_value));
      const auto eps = static_cast<T>(settings_.epsilon);
      for (std::size_t k = 0; k < n; ++k) {
        state.first[k] += g[k] * g[k];
        w[k] -= lr * g[k] / (std::sqrt(state.first[k]) + eps);
      }
      return;
    }
  }
}

template class DenseOptimizer<float>;
template class DenseOptimizer<double>;

}  // namespace embscale::model
