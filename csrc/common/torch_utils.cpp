#include "common/torch_utils.h"

namespace gpuprim {

DType to_dtype(at::ScalarType type) {
  switch (type) {
    case at::kBool: return DType::kBool;
    case at::kByte: return DType::kUInt8;
    case at::kChar: return DType::kInt8;
    case at::kShort: return DType::kInt16;
    case at::kInt: return DType::kInt32;
    case at::kLong: return DType::kInt64;
    case at::kHalf: return DType::kFloat16;
    case at::kBFloat16: return DType::kBFloat16;
    case at::kFloat: return DType::kFloat32;
    case at::kDouble: return DType::kFloat64;
    default: TORCH_CHECK_TYPE(false, "gpuprim: unsupported dtype ", type);
  }
}

int64_t wrap_dim(const char* op, const char* arg, int64_t dim, int64_t ndim) {
  const int64_t rank = std::max<int64_t>(ndim, 1);
  GPUPRIM_CHECK_INDEX(dim >= -rank && dim < rank, op, arg,
                    "in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]", dim);
  return dim < 0 ? dim + rank : dim;
}

void check_same_device(const char* op, const at::Tensor& first, const char* arg, const at::Tensor& other) {
  GPUPRIM_CHECK_ARG(other.device() == first.device(), op, arg,
                    std::string("on the same device as the first input (") + first.device().str() + ")",
                    other.device());
}

}  // namespace gpuprim
