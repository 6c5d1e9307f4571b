// The order torch.sort and torch.topk define, for the CPU kernels: NaN above every number (whatever
// its sign bit), -0.0 equal to +0.0 (neither is less, so stable algorithms keep their input order).
#pragma once
#include <cmath>
#include <type_traits>

namespace gpuprim {

template <typename T>
bool torch_order_less(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return a < b;
  } else {
    const double x = static_cast<double>(a), y = static_cast<double>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  }
}

}  // namespace gpuprim
