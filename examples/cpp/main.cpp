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

  // unique (sized: no sync) and the hash map.
  auto ids = torch::tensor({7, 3, 7, -2}, torch::dtype(torch::kInt64).device(device));
  auto [distinct, inverse, id_counts, num_unique] = gpuprim::unique(ids, true, true, 4, -1);
  const bool unique_ok = torch::equal(distinct.cpu(), torch::tensor({-2, 3, 7, -1}, torch::kInt64)) &&
                         torch::equal(inverse.cpu(), torch::tensor({2, 1, 2, 0}, torch::kInt64)) &&
                         num_unique.item<int64_t>() == 3;
  auto map = gpuprim::HashMap::build(ids, torch::arange(4, torch::dtype(torch::kInt64).device(device)), 0.5);
  auto found = map.find(torch::tensor({7, 5, -2}, torch::dtype(torch::kInt64).device(device)), -1);
  const bool map_ok = torch::equal(found.cpu(), torch::tensor({0, -1, 3}, torch::kInt64)) &&
                      map.size().item<int64_t>() == 3;
  std::cout << "unique " << (unique_ok ? "ok" : "WRONG") << ", hash map " << (map_ok ? "ok" : "WRONG") << "\n";
  return forward_ok && grad_ok && counts_ok && unique_ok && map_ok ? 0 : 1;
}
