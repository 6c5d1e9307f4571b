// cub_anchors: times CUB device-wide primitives, the anchors gpuprim's benchmarks compare against.
//
//   cub_anchors <case> <n>     prints one JSON line {"case", "n", "median_ms", "min_ms", "bytes", "gbps", ...}
//   cub_anchors list           prints the case names
//
// n counts 4-byte elements for every case (memcpy_d2d copies n floats). `bytes` is the minimum
// traffic the primitive must cause (input read + output written), so bytes / time is comparable
// to the copy bandwidth. Timing: cudaEvents around each call, L2 flushed before each call by a
// cudaMemsetAsync on a 256 MiB buffer (H200 L2 = 60 MB), 3 warm-up calls, median of 25.
// No torch and no curand: inputs come from a hash of the element index, filled on the device.
#include <cub/cub.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    cudaError_t status_ = (call);                                                               \
    if (status_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "cub_anchors: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorString(status_));                                                \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

[[noreturn]] static void fail(const std::string& message) {
  std::fprintf(stderr, "cub_anchors: %s\n", message.c_str());
  std::exit(1);
}

constexpr int kWarmup = 3;
constexpr int kReps = 25;
constexpr size_t kFlushBytes = size_t(256) << 20;

// ---------------------------------------------------------------- inputs
// splitmix64 finalizer: a cheap, well-mixed hash, so every element is independent of its neighbours.
__host__ __device__ inline uint32_t hash_index(uint64_t index, uint64_t seed) {
  uint64_t z = index + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}

__global__ void fill_uniform_f32(float* out, int64_t n, uint64_t seed) {  // uniform in [0, 1)
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = float(hash_index(i, seed) >> 8) * (1.0f / 16777216.0f);
}

// modulus == 0: the full 32-bit range.
__global__ void fill_u32(uint32_t* out, int64_t n, uint32_t modulus, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = hash_index(i, seed);
    out[i] = modulus ? h % modulus : h;
  }
}

__global__ void fill_constant_u32(uint32_t* out, int64_t n, uint32_t value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

__global__ void fill_iota_u32(uint32_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = uint32_t(i);
}

__global__ void count_descents_u32(const uint32_t* keys, int64_t n, unsigned long long* descents) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i + 1 < n; i += int64_t(gridDim.x) * blockDim.x)
    if (keys[i] > keys[i + 1]) atomicAdd(descents, 1ull);
}

constexpr int kFillGrid = 4096, kFillBlock = 256;

// About half the flags set, independent of the values (a hash with its own seed).
__global__ void fill_flags_half(bool* out, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = (hash_index(i, seed) >> 31) != 0;
}

struct LessThanHalf {
  __host__ __device__ bool operator()(float x) const { return x < 0.5f; }
};

// ---------------------------------------------------------------- device memory and timing
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(bytes, 1))); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T> T* as() const { return static_cast<T*>(ptr); }
};

struct Timing {
  double median_ms, min_ms;
};

// Times launch() kReps times after kWarmup calls, flushing L2 before each so every call reads DRAM.
template <typename Launch>
Timing time_calls(Launch launch) {
  DeviceBuffer flush(kFlushBytes);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kWarmup; ++i) CUDA_CHECK(launch());
  std::vector<float> times_ms(kReps);
  for (int rep = 0; rep < kReps; ++rep) {
    CUDA_CHECK(cudaMemsetAsync(flush.ptr, rep & 0xff, kFlushBytes));
    CUDA_CHECK(cudaEventRecord(start));
    CUDA_CHECK(launch());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&times_ms[rep], start, stop));
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times_ms.begin(), times_ms.end());
  return {times_ms[kReps / 2], times_ms[0]};
}

// CUB's two-phase calling convention: call(nullptr, bytes) asks for the temp size, then the real call.
template <typename CubCall>
Timing time_cub(CubCall call) {
  size_t temp_bytes = 0;
  CUDA_CHECK(call(nullptr, temp_bytes));
  DeviceBuffer temp(temp_bytes);
  return time_calls([&] { return call(temp.ptr, temp_bytes); });
}

// ---------------------------------------------------------------- cases
struct Result {
  Timing timing;
  double bytes;
};

static bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

static void fill_f32(float* out, int64_t n) {
  fill_uniform_f32<<<kFillGrid, kFillBlock>>>(out, n, 1);
  CUDA_CHECK(cudaGetLastError());
}

static void fill_u32_mod(uint32_t* out, int64_t n, uint32_t modulus) {
  fill_u32<<<kFillGrid, kFillBlock>>>(out, n, modulus, 2);
  CUDA_CHECK(cudaGetLastError());
}

static void check_sorted(const uint32_t* keys, int64_t n) {
  DeviceBuffer descents(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemset(descents.ptr, 0, sizeof(unsigned long long)));
  count_descents_u32<<<kFillGrid, kFillBlock>>>(keys, n, descents.as<unsigned long long>());
  CUDA_CHECK(cudaGetLastError());
  unsigned long long host_descents = 0;
  CUDA_CHECK(cudaMemcpy(&host_descents, descents.ptr, sizeof(host_descents), cudaMemcpyDeviceToHost));
  if (host_descents != 0) fail("radix sort output is not sorted");
}

// histogram_even_u32_<bins>[_allsame]: bins over [0, bins), samples uniform in [0, bins) or all equal.
template <typename OffsetT>
Result run_histogram(const std::string& name, int64_t n) {
  std::string rest = name.substr(std::string("histogram_even_u32_").size());
  const bool all_same = rest.size() > 8 && rest.compare(rest.size() - 8, 8, "_allsame") == 0;
  if (all_same) rest.resize(rest.size() - 8);
  const int bins = std::atoi(rest.c_str());
  if (bins < 1 || rest.find_first_not_of("0123456789") != std::string::npos) fail("bad bin count in " + name);

  DeviceBuffer samples(n * sizeof(uint32_t)), counts(bins * sizeof(int));
  if (all_same) {
    fill_constant_u32<<<kFillGrid, kFillBlock>>>(samples.as<uint32_t>(), n, uint32_t(bins / 2));
    CUDA_CHECK(cudaGetLastError());
  } else {
    fill_u32_mod(samples.as<uint32_t>(), n, uint32_t(bins));
  }
  // Level bounds are ints for uint32 samples (CCCL 3.0 wants LevelT comparable to the sample type).
  Timing timing = time_cub([&](void* temp, size_t& temp_bytes) {
    return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, samples.as<uint32_t>(), counts.as<int>(),
                                               bins + 1, 0, bins, OffsetT(n));
  });
  std::vector<int> host_counts(bins);
  CUDA_CHECK(cudaMemcpy(host_counts.data(), counts.ptr, bins * sizeof(int), cudaMemcpyDeviceToHost));
  int64_t total = 0;
  for (int c : host_counts) total += c;
  if (total != n) fail("histogram counts sum to " + std::to_string(total) + ", expected " + std::to_string(n));
  return {timing, 4.0 * n};
}

template <typename OffsetT>
Result run_case(const std::string& name, int64_t n) {
  const OffsetT num_items = OffsetT(n);
  if (name == "scan_exclusive_sum_f32" || name == "scan_exclusive_sum_i32") {
    DeviceBuffer in(n * 4), out(n * 4);
    if (name == "scan_exclusive_sum_f32") {
      fill_f32(in.as<float>(), n);
      return {time_cub([&](void* temp, size_t& temp_bytes) {
                return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in.as<float>(), out.as<float>(), num_items);
              }),
              8.0 * n};
    }
    fill_u32_mod(in.as<uint32_t>(), n, 2001);  // small values; the sum may wrap, which costs nothing
    return {time_cub([&](void* temp, size_t& temp_bytes) {
              return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in.as<int32_t>(), out.as<int32_t>(), num_items);
            }),
            8.0 * n};
  }
  if (starts_with(name, "histogram_even_u32_")) return run_histogram<OffsetT>(name, n);
  if (name == "radix_sort_keys_u32") {
    DeviceBuffer keys_in(n * 4), keys_out(n * 4);
    fill_u32_mod(keys_in.as<uint32_t>(), n, 0);
    Timing timing = time_cub([&](void* temp, size_t& temp_bytes) {
      return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in.as<uint32_t>(), keys_out.as<uint32_t>(),
                                            num_items);
    });
    check_sorted(keys_out.as<uint32_t>(), n);
    return {timing, 8.0 * n};
  }
  if (name == "radix_sort_pairs_u32") {
    DeviceBuffer keys_in(n * 4), keys_out(n * 4), values_in(n * 4), values_out(n * 4);
    fill_u32_mod(keys_in.as<uint32_t>(), n, 0);
    fill_iota_u32<<<kFillGrid, kFillBlock>>>(values_in.as<uint32_t>(), n);
    CUDA_CHECK(cudaGetLastError());
    Timing timing = time_cub([&](void* temp, size_t& temp_bytes) {
      return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in.as<uint32_t>(), keys_out.as<uint32_t>(),
                                             values_in.as<uint32_t>(), values_out.as<uint32_t>(), num_items);
    });
    check_sorted(keys_out.as<uint32_t>(), n);
    return {timing, 16.0 * n};
  }
  if (name == "select_if_f32_half") {
    DeviceBuffer in(n * 4), out(n * 4), num_selected(sizeof(int64_t));
    fill_f32(in.as<float>(), n);
    Timing timing = time_cub([&](void* temp, size_t& temp_bytes) {
      return cub::DeviceSelect::If(temp, temp_bytes, in.as<float>(), out.as<float>(), num_selected.as<int64_t>(),
                                   n, LessThanHalf{});
    });
    int64_t selected = 0;
    CUDA_CHECK(cudaMemcpy(&selected, num_selected.ptr, sizeof(selected), cudaMemcpyDeviceToHost));
    if (selected < 0 || selected > n) fail("select kept " + std::to_string(selected) + " of " + std::to_string(n));
    return {timing, 4.0 * n + 4.0 * double(selected)};  // read all, write the kept half
  }
  if (name == "select_flagged_f32_half") {  // what gpuprim.compact does, minus its zero tail
    DeviceBuffer in(n * 4), flags(n), out(n * 4), num_selected(sizeof(int64_t));
    fill_f32(in.as<float>(), n);
    fill_flags_half<<<kFillGrid, kFillBlock>>>(flags.as<bool>(), n, 3);
    CUDA_CHECK(cudaGetLastError());
    Timing timing = time_cub([&](void* temp, size_t& temp_bytes) {
      return cub::DeviceSelect::Flagged(temp, temp_bytes, in.as<float>(), flags.as<bool>(), out.as<float>(),
                                        num_selected.as<int64_t>(), n);
    });
    int64_t selected = 0;
    CUDA_CHECK(cudaMemcpy(&selected, num_selected.ptr, sizeof(selected), cudaMemcpyDeviceToHost));
    if (selected < 0 || selected > n) fail("select kept " + std::to_string(selected) + " of " + std::to_string(n));
    return {timing, 5.0 * n + 4.0 * double(selected)};  // read values and flags, write the kept half
  }
  if (name == "reduce_sum_f32") {
    DeviceBuffer in(n * 4), out(sizeof(float));
    fill_f32(in.as<float>(), n);
    return {time_cub([&](void* temp, size_t& temp_bytes) {
              return cub::DeviceReduce::Sum(temp, temp_bytes, in.as<float>(), out.as<float>(), num_items);
            }),
            4.0 * n};
  }
  if (name == "memcpy_d2d") {
    DeviceBuffer src(n * 4), dst(n * 4);
    fill_f32(src.as<float>(), n);
    return {time_calls([&] { return cudaMemcpyAsync(dst.ptr, src.ptr, n * 4, cudaMemcpyDeviceToDevice); }),
            8.0 * n};
  }
  fail("unknown case '" + name + "' (run `cub_anchors list`)");
}

static const char* kCaseNames[] = {
    "scan_exclusive_sum_f32", "scan_exclusive_sum_i32", "histogram_even_u32_256",
    "histogram_even_u32_256_allsame", "histogram_even_u32_<bins>[_allsame]", "radix_sort_keys_u32",
    "radix_sort_pairs_u32", "select_if_f32_half", "select_flagged_f32_half", "reduce_sum_f32", "memcpy_d2d"};

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "list") {
    for (const char* name : kCaseNames) std::printf("%s\n", name);
    return 0;
  }
  if (argc != 3) fail("usage: cub_anchors <case> <n>  |  cub_anchors list");
  const std::string name = argv[1];
  char* end = nullptr;
  const long long n = std::strtoll(argv[2], &end, 10);
  if (*end != '\0' || n < 1) fail(std::string("n must be a positive integer, got '") + argv[2] + "'");

  // 32-bit offsets where they suffice, as a CUB user would pass them: CUB picks faster kernels for them.
  const Result result = n <= std::numeric_limits<int>::max() ? run_case<int>(name, n) : run_case<int64_t>(name, n);
  CUDA_CHECK(cudaDeviceSynchronize());

  const double gbps = result.bytes / (result.timing.median_ms * 1e-3) / 1e9;
  std::printf("{\"case\": \"%s\", \"n\": %lld, \"median_ms\": %.6f, \"min_ms\": %.6f, \"bytes\": %.0f, "
              "\"gbps\": %.1f, \"reps\": %d, \"cccl_version\": %d}\n",
              name.c_str(), n, result.timing.median_ms, result.timing.min_ms, result.bytes, gbps, kReps,
              CCCL_VERSION);
  return 0;
}
