// gpuprim::masked_select's device-independent part: broadcasting x against mask as torch.masked_select does.
#include "ops/compact/masked_select/masked_select.h"

#include <algorithm>

#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {

std::pair<at::Tensor, at::Tensor> masked_select_broadcast(const at::Tensor& x, const at::Tensor& mask) {
  const char* op = "masked_select";
  if (x.sizes() == mask.sizes()) {
    compact_check(x, mask, op);
    return {x, mask};
  }
  bool broadcastable = true;
  for (int64_t i = 1; i <= std::max(x.dim(), mask.dim()); ++i) {
    const int64_t a = i <= x.dim() ? x.size(-i) : 1;
    const int64_t b = i <= mask.dim() ? mask.size(-i) : 1;
    broadcastable = broadcastable && (a == b || a == 1 || b == 1);
  }
  GPUPRIM_CHECK_ARG(broadcastable, op, "mask", c10::str("broadcastable with x's shape ", x.sizes()), mask.sizes());
  const std::vector<at::Tensor> both = at::broadcast_tensors({x, mask});
  compact_check(both[0], both[1], op);
  return {both[0], both[1]};
}

}  // namespace gpuprim
