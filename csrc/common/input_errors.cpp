// Bad input data: the messages, and the per-device records kernels write (prim/util/input_error.cuh).
// Built in every configuration; without CUDA (GPUPRIM_CPU_ONLY) there are no records and
// gpuprim::check_errors does nothing.
#include "common/input_errors.h"

#include <c10/util/Exception.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <mutex>

#ifndef GPUPRIM_CPU_ONLY
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#endif

namespace gpuprim {

const char* input_op_name(InputOp op) {
  switch (op) {
    case InputOp::kIndexAdd: return "index_add";
    case InputOp::kIndexAddInPlace: return "index_add_";
    case InputOp::kScatterAdd: return "scatter_add";
    case InputOp::kScatterAddInPlace: return "scatter_add_";
    case InputOp::kScatterReduce: return "scatter_reduce";
    case InputOp::kScatterReduceInPlace: return "scatter_reduce_";
    case InputOp::kEmbeddingBag: return "embedding_bag";
    case InputOp::kEmbeddingBagBackward: return "embedding_bag (backward)";
    case InputOp::kSegmentReduce: return "segment_reduce";
    case InputOp::kSegmentReduceBackward: return "segment_reduce (backward)";
    case InputOp::kBincount: return "bincount";
    case InputOp::kHistogram: return "histogram";
    case InputOp::kMoeRouteMetadata: return "moe_route_metadata";
    case InputOp::kMoePermute: return "moe_permute";
    case InputOp::kMoeUnpermute: return "moe_unpermute";
    case InputOp::kMoeUnpermuteBackward: return "moe_unpermute (backward)";
    case InputOp::kTopkBackward: return "topk (backward)";
    case InputOp::kHashMapInsert: return "HashMap.insert";
    case InputOp::kSpmm: return "spmm";
    case InputOp::kSpmmBackward: return "spmm (backward)";
    case InputOp::kCsrTranspose: return "csr_transpose";
    case InputOp::kBfs: return "bfs";
    case InputOp::kNone: case InputOp::kCount: break;
  }
  return "<an op>";
}

const char* input_arg_name(InputArg argument) {
  switch (argument) {
    case InputArg::kIndex: return "index";
    case InputArg::kIndices: return "indices";
    case InputArg::kOffsets: return "offsets";
    case InputArg::kX: return "x";
    case InputArg::kExpertIds: return "expert_ids";
    case InputArg::kTokenIds: return "token_ids";
    case InputArg::kSlots: return "slots";
    case InputArg::kKeys: return "keys";
    case InputArg::kCrow: return "crow";
    case InputArg::kCol: return "col";
    case InputArg::kSources: return "sources";
    case InputArg::kCount: break;
  }
  return "<an argument>";
}

std::string describe_input_error(InputArg argument, InputRule rule, int64_t position, int64_t value, int64_t bound,
                                 int dimension, bool flattened) {
  const std::string name = input_arg_name(argument);
  const std::string at = c10::str(name, flattened ? ".flatten()[" : "[", position, "] = ", value, " ");
  switch (rule) {
    case InputRule::kOutOfRange:
      return c10::str(at, "is out of range for dimension ", dimension, " of size ", bound);
    case InputRule::kOutOfIdRange: return c10::str(at, "is out of range [0, ", bound, ")");
    case InputRule::kNegative: return c10::str(at, "is negative");
    case InputRule::kDecreasing:
      return c10::str(at, "is less than ", name, "[", position - 1, "] = ", bound, " (", name,
                      " must be non-decreasing)");
    case InputRule::kNonZeroStart: return c10::str(at, "must be 0");
    case InputRule::kPastEnd: return c10::str(at, "is past the end: greater than ", bound, ", the length it indexes");
    case InputRule::kNotAtEnd: return c10::str(at, "must be ", bound, ", the length it must cover");
    case InputRule::kTableFull:
      return c10::str(at, "does not fit: the hash map's table (capacity ", bound,
                      ") is full; build it with a larger capacity or a lower load_factor");
    case InputRule::kCount: break;
  }
  return c10::str(at, "is invalid");
}

void raise_input_error(InputOp op, InputArg argument, InputRule rule, int64_t position, int64_t value, int64_t bound,
                       int dimension, bool flattened) {
  const std::string what = describe_input_error(argument, rule, position, value, bound, dimension, flattened);
  const bool range = rule == InputRule::kOutOfRange || rule == InputRule::kOutOfIdRange;
  TORCH_CHECK_INDEX(!range, "gpuprim.", input_op_name(op), ": ", what);
  TORCH_CHECK_VALUE(false, "gpuprim.", input_op_name(op), ": ", what);
}

#ifdef GPUPRIM_CPU_ONLY

InputErrorRecord* input_error_record(c10::DeviceIndex) { return nullptr; }
void check_input_errors(c10::DeviceIndex) {}
void check_all_input_errors() {}

#else

namespace {

// A record, allocated once per device and kept for the life of the process (kernels captured in CUDA graphs
// keep its address; freeing pinned memory would also sync).
struct DeviceRecord {
  std::atomic<InputErrorRecord*> host{nullptr};  // published after `device`
  InputErrorRecord* device = nullptr;
  std::mutex mutex;  // one reader-and-clearer at a time
};

constexpr int kMaxDevices = 64;
std::array<DeviceRecord, kMaxDevices> records;
std::mutex allocation_mutex;

DeviceRecord& slot(c10::DeviceIndex device) {
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "gpuprim: CUDA device index ", static_cast<int>(device),
              " is outside the ", kMaxDevices, " devices gpuprim keeps input-error records for");
  return records[device];
}

template <typename T>
T load(const T* field) {
  return __atomic_load_n(field, __ATOMIC_ACQUIRE);
}

// A consistent copy of what kernels wrote (the sequence was even and unchanged around the copy); false if
// nothing is recorded, or a kernel is writing it right now (it is reported at a later check).
bool read_record(const InputErrorRecord* record, InputErrorRecord& copy) {
  const unsigned sequence = load(&record->sequence);
  if (sequence == 0 || (sequence & 1u) != 0) return false;
  copy.op = load(&record->op);
  copy.argument = load(&record->argument);
  copy.rule = load(&record->rule);
  copy.dimension = load(&record->dimension);
  copy.flattened = load(&record->flattened);
  copy.position = load(&record->position);
  copy.value = load(&record->value);
  copy.bound = load(&record->bound);
  return load(&record->sequence) == sequence;
}

void clear_record(InputErrorRecord* record) {
  __atomic_store_n(&record->sequence, 0u, __ATOMIC_RELEASE);
  __atomic_store_n(&record->lowest, kNoInputErrorPosition, __ATOMIC_RELEASE);
  __atomic_store_n(&record->lock, 0u, __ATOMIC_RELEASE);
}

void report(c10::DeviceIndex device, DeviceRecord& slot) {
  InputErrorRecord* record = slot.host.load(std::memory_order_acquire);
  if (record == nullptr || load(&record->sequence) == 0) return;  // the fast path: one read of host memory
  InputErrorRecord copy{};
  {
    const std::lock_guard<std::mutex> lock(slot.mutex);
    if (!read_record(record, copy)) return;
    clear_record(record);
  }
  const std::string what =
      describe_input_error(static_cast<InputArg>(copy.argument), static_cast<InputRule>(copy.rule), copy.position,
                           copy.value, copy.bound, copy.dimension, copy.flattened != 0);
  TORCH_CHECK_INDEX(false, "gpuprim.", input_op_name(static_cast<InputOp>(copy.op)), ": ", what,
                    " (detected on cuda:", static_cast<int>(device),
                    " after the call returned; the result of that call is incomplete)");
}

}  // namespace

InputErrorRecord* input_error_record(c10::DeviceIndex device) {
  DeviceRecord& s = slot(device);
  if (s.host.load(std::memory_order_acquire) != nullptr) return s.device;
  const std::lock_guard<std::mutex> lock(allocation_mutex);
  if (s.host.load(std::memory_order_acquire) != nullptr) return s.device;
  const c10::cuda::CUDAGuard guard(device);
  // Relaxed capture mode for this thread: the first call may come during a CUDA graph capture, where the
  // default mode forbids an allocation (which is not stream work, so the capture is unaffected).
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  C10_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  void* host = nullptr;
  void* mapped = nullptr;
  cudaError_t err = cudaHostAlloc(&host, sizeof(InputErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable);
  if (err == cudaSuccess) err = cudaHostGetDevicePointer(&mapped, host, 0);
  cudaThreadExchangeStreamCaptureMode(&mode);
  C10_CUDA_CHECK(err);
  auto* record = static_cast<InputErrorRecord*>(host);
  *record = InputErrorRecord{};
  record->lowest = kNoInputErrorPosition;
  s.device = static_cast<InputErrorRecord*>(mapped);
  s.host.store(record, std::memory_order_release);
  return s.device;
}

void check_input_errors(c10::DeviceIndex device) { report(device, slot(device)); }

void check_all_input_errors() {
  for (int d = 0; d < kMaxDevices; ++d) {
    if (records[d].host.load(std::memory_order_acquire) == nullptr) continue;
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(d));
    c10::cuda::device_synchronize();
  }
  for (int d = 0; d < kMaxDevices; ++d) report(static_cast<c10::DeviceIndex>(d), records[d]);
}

#endif  // GPUPRIM_CPU_ONLY

TORCH_LIBRARY_IMPL(gpuprim, CompositeExplicitAutograd, m) { m.impl("check_errors", &check_all_input_errors); }

}  // namespace gpuprim
