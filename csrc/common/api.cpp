// The C++ API (include/gpuprim/gpuprim.h): typed dispatcher handles, looked up once.
#include <ATen/core/dispatch/Dispatcher.h>

#include "include/gpuprim/gpuprim.h"

namespace gpuprim {

template <typename Signature>
static c10::TypedOperatorHandle<Signature> find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

at::Tensor cumsum(const at::Tensor& x, int64_t dim, bool exclusive, bool reverse) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, bool, bool)>("gpuprim::cumsum");
  return op.call(x, dim, exclusive, reverse);
}

std::tuple<at::Tensor, at::Tensor> bincount(const at::Tensor& x, int64_t num_bins,
                                            const std::optional<at::Tensor>& weights,
                                            std::optional<bool> deterministic) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, const std::optional<at::Tensor>&,
                                                 std::optional<bool>)>("gpuprim::bincount");
  return op.call(x, num_bins, weights, deterministic);
}

std::tuple<at::Tensor, at::Tensor> histogram(const at::Tensor& x, int64_t bins, double lo, double hi,
                                             const std::optional<at::Tensor>& weights,
                                             std::optional<bool> deterministic) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, double, double,
                                                 const std::optional<at::Tensor>&, std::optional<bool>)>(
          "gpuprim::histogram");
  return op.call(x, bins, lo, hi, weights, deterministic);
}

at::Tensor segment_reduce(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce, int64_t dim) {
  static const auto op =
      find_op<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, int64_t)>("gpuprim::segment_reduce");
  return op.call(src, offsets, reduce, dim);
}

at::Tensor segment_reduce_backward(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                   const at::Tensor& out, c10::string_view reduce, int64_t dim) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            c10::string_view, int64_t)>("gpuprim::segment_reduce_backward");
  return op.call(grad, src, offsets, out, reduce, dim);
}

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& x, int64_t dim, bool descending) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, bool)>("gpuprim::sort");
  return op.call(x, dim, descending);
}

at::Tensor sum(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                            std::optional<at::ScalarType>)>("gpuprim::sum");
  return op.call(x, dim, keepdim, dtype);
}

at::Tensor mean(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                            std::optional<at::ScalarType>)>("gpuprim::mean");
  return op.call(x, dim, keepdim, dtype);
}

std::tuple<at::Tensor, at::Tensor> compact(const at::Tensor& x, const at::Tensor& mask) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&)>("gpuprim::compact");
  return op.call(x, mask);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode(const at::Tensor& x) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&)>("gpuprim::run_length_encode");
  return op.call(x);
}

at::Tensor index_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const at::Scalar& alpha, std::optional<bool> deterministic) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                            const at::Scalar&, std::optional<bool>)>("gpuprim::index_add");
  return op.call(input, dim, index, source, alpha, deterministic);
}

at::Tensor scatter_reduce(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                            c10::string_view, bool, std::optional<bool>)>("gpuprim::scatter_reduce");
  return op.call(input, dim, index, src, reduce, include_self, deterministic);
}

void index_add_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                const at::Scalar& alpha, std::optional<bool> deterministic) {
  static const auto op = find_op<void(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                      const at::Scalar&, std::optional<bool>)>("gpuprim::index_add_");
  op.call(input, dim, index, source, alpha, deterministic);
}

void scatter_reduce_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                     c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  static const auto op = find_op<void(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                      c10::string_view, bool, std::optional<bool>)>("gpuprim::scatter_reduce_");
  op.call(input, dim, index, src, reduce, include_self, deterministic);
}

at::Tensor scatter_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                       std::optional<bool> deterministic) {
  return scatter_reduce(input, dim, index, src, "sum", /*include_self=*/true, deterministic);
}

}  // namespace gpuprim
