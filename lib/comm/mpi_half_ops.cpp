// MPI has no 16-bit floating-point types: Half and BFloat16 travel as a 2-byte datatype of ours
// and reduce with commutative user operations that compute each pairwise step in float and round
// back once (to nearest even), as NCCL's kernels do.
//
// Lifetime: the two datatypes and eight operations are created together on first use (after
// MPI_Init; a function-local static, so once even under threads) and freed before MPI_Finalize
// completes: they hang on an attribute of MPI_COMM_SELF, whose attributes MPI_Finalize deletes
// first of all, while the library still works (the MPI standard's "Allowing User Functions at
// Process Termination").
#include <mpi.h>

#include <array>
#include <cstddef>
#include <type_traits>

#include "comm/mpi_communicator.hpp"
#include "comm/mpi_types.hpp"
#include "core/error.hpp"

namespace embscale::comm::detail {
namespace {

template <class T> T from_float(float v) noexcept {
  if constexpr (std::is_same_v<T, Half>) return to_half(v);
  else return to_bfloat16(v);
}

struct Sum {
  float operator()(float a, float b) const noexcept { return a + b; }
};
struct Prod {
  float operator()(float a, float b) const noexcept { return a * b; }
};
struct Max {
  float operator()(float a, float b) const noexcept { return a < b ? b : a; }
};
struct Min {
  float operator()(float a, float b) const noexcept { return b < a ? b : a; }
};

// MPI_User_function: inout[i] = in[i] (op) inout[i] over *len scalars.
template <class T, class F> void combine(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const T*>(in);
  auto* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = from_float<T>(F{}(to_float(a[i]), to_float(b[i])));
}

constexpr std::size_t kOps = 4;  // sum (kAvg too), prod, max, min

struct HalfRegistry {
  std::array<MPI_Datatype, 2> types{MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};  // Half, BFloat16
  std::array<std::array<MPI_Op, kOps>, 2> ops{};
};

template <class T> void create_ops(std::array<MPI_Op, kOps>& ops) {
  check_mpi(MPI_Op_create(&combine<T, Sum>, 1, &ops[0]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&combine<T, Prod>, 1, &ops[1]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&combine<T, Max>, 1, &ops[2]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&combine<T, Min>, 1, &ops[3]), "MPI_Op_create");
}

int free_registry(MPI_Comm, int, void* attribute, void*) {
  auto& r = *static_cast<HalfRegistry*>(attribute);
  for (auto& type : r.types) MPI_Type_free(&type);
  for (auto& ops : r.ops)
    for (auto& op : ops) MPI_Op_free(&op);
  return MPI_SUCCESS;
}

HalfRegistry make_registry() {
  HalfRegistry r;
  for (auto& type : r.types) {
    check_mpi(MPI_Type_contiguous(2, MPI_BYTE, &type), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  }
  create_ops<Half>(r.ops[0]);
  create_ops<BFloat16>(r.ops[1]);
  return r;
}

HalfRegistry& registry() {
  static HalfRegistry r = make_registry();
  static const bool cleanup_registered = [] {
    int keyval = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &free_registry, &keyval, nullptr),
              "MPI_Comm_create_keyval");
    check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, &r), "MPI_Comm_set_attr");
    // Marked for freeing now; MPI frees it once the attribute is gone.
    check_mpi(MPI_Comm_free_keyval(&keyval), "MPI_Comm_free_keyval");
    return true;
  }();
  (void)cleanup_registered;
  return r;
}

std::size_t type_index(DataType type) {
  if (type == DataType::kFloat16) return 0;
  if (type == DataType::kBFloat16) return 1;
  throw Error("half_datatype: not a 16-bit floating-point type");
}

}  // namespace

MPI_Datatype half_datatype(DataType type) { return registry().types[type_index(type)]; }

MPI_Op half_reduce_op(ReduceOp op, DataType type) {
  const auto& ops = registry().ops[type_index(type)];
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return ops[0];
    case ReduceOp::kProd: return ops[1];
    case ReduceOp::kMax: return ops[2];
    case ReduceOp::kMin: return ops[3];
  }
  throw Error("half_reduce_op: unknown ReduceOp");
}

}  // namespace embscale::comm::detail
