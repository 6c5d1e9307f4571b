// Uses gpuprim from C++: forward ops through the dispatcher, autograd included.
#include <gpuprim/gpuprim.h>
#include <torch/torch.h>

#include <iostream>

int main() {
  const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  std::cout << "gpuprim C++ example on " << device << "\n";

  // cumsum with autograd: d/dx sum(cumsum(x)) = [n, n-1, ..., 1].
  auto x = torch::randn({6}, torch::dtype(torch::kFloat64).device(device).requires_grad(true));
  auto y = gpuprim::cumsum(x);
  y.sum().backward();
  const auto expected_grad = torch::arange(6, 0, -1, torch::dtype(torch::kFloat64).device(device));
  const bool grad_ok = torch::allclose(x.grad(), expected_grad);
  const bool forward_ok = torch::allclose(y, torch::cumsum(x, 0));

  // bincount: values outside [0, num_bins) are dropped and counted.
  auto values = torch::tensor({0, 2, 2, 5, -1, 1}, torch::dtype(torch::kInt64).device(device));
  auto [counts, overflow] = gpuprim::bincount(values, 3);
  const bool counts_ok = torch::equal(counts.cpu(), torch::tensor({1, 1, 2}, torch::kInt64)) &&
                         overflow.item<int64_t>() == 2;

  std::cout << "cumsum forward " << (forward_ok ? "ok" : "WRONG") << ", backward " << (grad_ok ? "ok" : "WRONG")
            << ", bincount " << (counts_ok ? "ok" : "WRONG") << " (counts " << counts.cpu().reshape({1, -1})
            << ", overflow " << overflow.item<int64_t>() << ")\n";
  return forward_ok && grad_ok && counts_ok ? 0 : 1;
}
