#include "model/dense_op.hpp"

#include "core/error.hpp"

namespace embscale::model {

std::string SampleShape::describe() const {
  if (three_d) return "[batch, " + std::to_string(rows) + ", " + std::to_string(width) + "]";
  return "[batch" + (rows == 1 ? std::string() : " x " + std::to_string(rows)) + ", " + std::to_string(width) + "]";
}

template <typename T>
ParameterHandle ParameterStore<T>::declare(std::size_t count, ParameterSharing sharing, bool regularized) {
  EMBSCALE_EXPECTS(!allocated_, "parameters are declared before the store is allocated");
  Buffer& b = buffer(sharing);
  const ParameterHandle handle{sharing, b.declared, count};
  b.declared += count;
  if (regularized) regularized_.push_back(handle);
  return handle;
}

template <typename T> void ParameterStore<T>::allocate() {
  EMBSCALE_EXPECTS(!allocated_, "a parameter store is allocated once");
  for (Buffer* b : {&replicated_, &local_}) {
    b->values.assign(b->declared, T(0));
    b->grads.assign(b->declared, T(0));
  }
  allocated_ = true;
}

template class ParameterStore<float>;
template class ParameterStore<double>;

}  // namespace embscale::model
