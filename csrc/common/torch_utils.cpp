#include "common/torch_utils.h"

#include <cstring>

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

at::Tensor scalar_of_dtype(const char* op, const char* arg, const c10::Scalar& value, at::ScalarType type,
                           const char* type_source) {
  at::Tensor out = at::empty({}, at::TensorOptions().dtype(type));
  try {
    out.fill_(value);  // torch's checked conversion
  } catch (const std::exception&) {  // not c10::Error: catching that did not catch it here
    GPUPRIM_CHECK_ARG(false, op, arg, c10::str("representable in ", type_source, " ", type), value);
  }
  return out;
}

uint64_t scalar_bits(const char* op, const char* arg, const c10::Scalar& value, at::ScalarType type,
                     const char* type_source) {
  const at::Tensor t = scalar_of_dtype(op, arg, value, type, type_source);
  uint64_t bits = 0;
  std::memcpy(&bits, t.const_data_ptr(), t.element_size());
  return bits;
}

void check_same_device(const char* op, const at::Tensor& first, const char* arg, const at::Tensor& other) {
  GPUPRIM_CHECK_ARG(other.device() == first.device(), op, arg,
                    std::string("on the same device as the first input (") + first.device().str() + ")",
                    other.device());
}

}  // namespace gpuprim
