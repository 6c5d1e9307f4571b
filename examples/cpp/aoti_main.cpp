// Runs AOTInductor packages of models that use gpuprim ops, from C++ without Python, and checks their outputs.
// examples/export_aoti.py writes <name>.pt2 (the compiled model) and <name>.io.pt (inputs and the eager
// outputs, for two input sizes) into one folder:   gpuprim_aoti <folder> [name ...]
// The packages call gpuprim's ops through the dispatcher by name, so libgpuprim.so must be loaded: linking
// gpuprim::gpuprim does that (its CMake package keeps the library in the link).
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<at::Tensor> tensor_list(const c10::Dict<c10::IValue, c10::IValue>& io, const std::string& key) {
  std::vector<at::Tensor> tensors;
  for (const auto& value : io.at(key).toListRef()) {
    tensors.push_back(value.toTensor());
  }
  return tensors;
}

c10::Dict<c10::IValue, c10::IValue> read_io(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw std::runtime_error("cannot open " + path.string());
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return torch::pickle_load(bytes).toGenericDict();
}

// Same tolerance as examples/export_aoti.py's Python checks; integer outputs must be equal.
bool same(const at::Tensor& got, const at::Tensor& want) {
  const auto cpu = got.cpu();
  if (cpu.sizes() != want.sizes() || cpu.scalar_type() != want.scalar_type()) {
    return false;
  }
  return cpu.is_floating_point() ? torch::allclose(cpu, want, 1e-4, 1e-5) : torch::equal(cpu, want);
}

bool run_model(const std::filesystem::path& folder, const std::string& name) {
  torch::inductor::AOTIModelPackageLoader loader((folder / (name + ".pt2")).string());
  const bool on_cuda = loader.get_metadata()["AOTI_DEVICE_KEY"] == "cuda";
  const auto io = read_io(folder / (name + ".io.pt"));
  bool ok = true;
  for (const std::string prefix : {"", "other_"}) {
    auto inputs = tensor_list(io, prefix + "inputs");
    if (on_cuda) {
      for (auto& input : inputs) {
        input = input.cuda();
      }
    }
    const auto outputs = loader.run(inputs);
    const auto expected = tensor_list(io, prefix + "outputs");
    bool match = outputs.size() == expected.size();
    for (size_t i = 0; match && i < outputs.size(); ++i) {
      match = same(outputs[i], expected[i]);
    }
    std::cout << name << " (" << (on_cuda ? "cuda" : "cpu") << ", batch " << inputs[0].size(0)
              << "): " << (match ? "matches eager" : "DIFFERS from eager") << "\n";
    ok = ok && match;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " <folder of .pt2 packages from examples/export_aoti.py> [name ...]\n";
    return 2;
  }
  const std::filesystem::path folder = argv[1];
  std::vector<std::string> names(argv + 2, argv + argc);
  if (names.empty()) {
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().extension() == ".pt2") {
        names.push_back(entry.path().stem().string());
      }
    }
    std::sort(names.begin(), names.end());
  }
  if (names.empty()) {
    std::cerr << "no .pt2 package in " << folder << "\n";
    return 2;
  }
  bool ok = true;
  for (const auto& name : names) {
    ok = run_model(folder, name) && ok;
  }
  std::cout << (ok ? "all AOTInductor packages match eager" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
