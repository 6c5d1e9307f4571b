// Bad input data found on the device (ATen-free). A kernel that reads indices, offsets or ids checks each
// value as part of that read, skips a bad one (never touching memory out of bounds) and records the violation
// in its device's InputErrorRecord, which lives in host-mapped pinned memory: the host reads it without a sync
// at the next gpuprim call on that device and raises (common/input_errors.h). Also included by host-only
// files, for the codes and the record's layout.
#pragma once
#include <cstdint>

namespace gpuprim {

// The op the user called (scatter_add, not the scatter_reduce kernel it runs): the launcher is told it by the
// glue. Names in common/input_errors.cpp; the codes never leave the process, so the order may change.
enum class InputOp : int32_t {
  kNone,
  kIndexAdd,
  kIndexAddInPlace,
  kScatterAdd,
  kScatterAddInPlace,
  kScatterReduce,
  kScatterReduceInPlace,
  kEmbeddingBag,
  kEmbeddingBagBackward,
  kSegmentReduce,
  kSegmentReduceBackward,
  kBincount,
  kHistogram,
  kMoeRouteMetadata,
  kMoePermute,
  kMoeUnpermute,
  kMoeUnpermuteBackward,
  kTopkBackward,
  kHashMapInsert,
  kSpmm,
  kSpmmBackward,
  kCsrTranspose,
  kBfs,
  kCount
};

// The argument that held the bad value, named as in the op's public signature.
enum class InputArg : int32_t {
  kIndex, kIndices, kOffsets, kX, kExpertIds, kTokenIds, kSlots, kKeys, kCrow, kCol, kSources, kCount
};

// The rule the value broke; the record's `bound` (and `dimension`) complete it.
enum class InputRule : int32_t {
  kOutOfRange,     // value outside [0, bound), bound = the size of `dimension` of the tensor it indexes
  kOutOfIdRange,   // value outside [0, bound) for an id that indexes no tensor dimension (expert ids)
  kNegative,       // value < 0 where larger values are counted, not errors (bincount's overflow)
  kDecreasing,     // value < bound, the entry just before it: offsets must be non-decreasing
  kNonZeroStart,   // the first offset is not 0
  kPastEnd,        // value > bound, the length the offsets index
  kNotAtEnd,       // the last offset is not bound, the length the offsets must cover
  kTableFull,      // a new key found no free slot: bound = the hash table's capacity
  kCount
};

constexpr unsigned long long kNoInputErrorPosition = ~0ull;

// One per device, zero-initialized except `lowest` (kNoInputErrorPosition). Kernels write it, the host reads
// and clears it (common/input_errors.cpp). It holds, of the violations recorded since the host last cleared
// it, the one at the lowest position (ties: the first to arrive); positions of different arguments or calls
// are compared as they are, so after several bad calls it names one of them.
struct InputErrorRecord {
  unsigned long long lowest;  // lowest position claimed so far; lowered by atomicMin
  unsigned int lock;          // writers' spin lock: taken only by a writer that lowered `lowest`
  unsigned int sequence;      // 0: nothing recorded; odd: being written; even: the fields below are complete
  int32_t op, argument, rule;  // InputOp, InputArg, InputRule
  int32_t dimension;           // kOutOfRange: the dimension of the indexed tensor
  int32_t flattened;           // 1: position counts in the argument flattened row-major
  int32_t unused;
  int64_t position, value, bound;
};

// What a kernel checks one argument against, fixed for a launch: built by the launcher from the glue's
// InputErrorScope (common/cuda_workspace.h) and passed to the kernel by value. record == nullptr: nothing
// is recorded (bad values are still skipped).
struct InputCheck {
  InputErrorRecord* record;
  InputOp op;
  InputArg argument;
  InputRule rule;
  int32_t dimension;
  int64_t bound;
  bool flattened;
};

#if defined(__CUDACC__)
namespace input_error_detail {

// The cold path, out of line so that the calling kernel's registers and code stay as they were. The lanes
// that arrive together first agree on their lowest position: one lane per warp goes on to host memory.
template <int kUnused = 0>
__device__ __noinline__ void record(InputErrorRecord* record, InputOp op, InputArg argument, int64_t position,
                                    int64_t value, InputRule rule, int64_t bound, int dimension, bool flattened) {
  if (record == nullptr) return;
  const unsigned long long pos = static_cast<unsigned long long>(position);
  const unsigned mask = __activemask();
#if __CUDA_ARCH__ >= 800
  const unsigned high = __reduce_min_sync(mask, static_cast<unsigned>(pos >> 32));
  const unsigned low = __reduce_min_sync(mask, static_cast<unsigned>(pos >> 32) == high ? static_cast<unsigned>(pos)
                                                                                       : 0xFFFFFFFFu);
  const unsigned long long warp_lowest = (static_cast<unsigned long long>(high) << 32) | low;
#else
  unsigned long long warp_lowest = pos;
  for (unsigned m = mask; m != 0; m &= m - 1) {
    const unsigned long long other = __shfl_sync(mask, pos, __ffs(m) - 1);
    warp_lowest = other < warp_lowest ? other : warp_lowest;
  }
#endif
  unsigned lanes_below;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lanes_below));
  if ((__ballot_sync(mask, pos == warp_lowest) & lanes_below) != 0 || pos != warp_lowest) return;

  volatile InputErrorRecord* shared = record;
  if (pos >= shared->lowest) return;                             // a lower one is recorded: a read, no atomic
  if (atomicMin(&record->lowest, pos) <= pos) return;            // another writer got a lower (or equal) one
  while (atomicCAS(&record->lock, 0u, 1u) != 0u) __nanosleep(64);  // only writers that lowered `lowest`
  if (shared->lowest == pos) {  // still the lowest: write as a seqlock, the host copies only an even sequence
    const unsigned writing = shared->sequence | 1u;
    shared->sequence = writing;
    __threadfence_system();
    shared->op = static_cast<int32_t>(op);
    shared->argument = static_cast<int32_t>(argument);
    shared->rule = static_cast<int32_t>(rule);
    shared->dimension = dimension;
    shared->flattened = flattened ? 1 : 0;
    shared->position = position;
    shared->value = value;
    shared->bound = bound;
    __threadfence_system();
    shared->sequence = writing + 1u == 0u ? 2u : writing + 1u;
  }
  __threadfence_system();
  atomicExch(&record->lock, 0u);
}

}  // namespace input_error_detail

// Records that `value`, at `position` of `argument` (flattened row-major if `flattened`), breaks `rule`:
// call it where the kernel finds the value bad and skips it. Costs nothing where no value is bad; where many
// are, one lane per warp reads host memory and only writers that lower the recorded position write it.
__device__ __forceinline__ void record_input_error(InputErrorRecord* record, InputOp op, InputArg argument,
                                                   int64_t position, int64_t value, InputRule rule, int64_t bound,
                                                   int dimension = 0, bool flattened = false) {
  input_error_detail::record<>(record, op, argument, position, value, rule, bound, dimension, flattened);
}

__device__ __forceinline__ void record_input_error(const InputCheck& check, int64_t position, int64_t value) {
  input_error_detail::record<>(check.record, check.op, check.argument, position, value, check.rule, check.bound,
                               check.dimension, check.flattened);
}

// For rules whose bound varies along the argument (kDecreasing: the entry before).
__device__ __forceinline__ void record_input_error(const InputCheck& check, int64_t position, int64_t value,
                                                   int64_t bound) {
  input_error_detail::record<>(check.record, check.op, check.argument, position, value, check.rule, bound,
                               check.dimension, check.flattened);
}
#endif  // __CUDACC__

}  // namespace gpuprim
