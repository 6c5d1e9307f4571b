// Kernels of gpuprim::unique. Sort path: prim's stable radix sort of the codec's keys (radix_sort::sort_rows)
// with positions, the run heads, prim's scan of the heads (each element's rank), and one pass writing values,
// inverse and the run starts that give counts. Hash path (int32 / int64, exact form only, few distinct values):
// prim's hash set counts the distinct values into an L2-sized table, the one sync of the exact form reads how
// many, and only those are sorted; it gives up (back to the sort path) past half the table. Either way the
// result is a function of x alone (the hash path sorts distinct keys, so arrival order never shows; counts are
// integer sums): the same bits on both paths, run to run, on any GPU and on the CPU. 1-byte elements take
// neither: a histogram of their 256 keys gives the values and counts, and a table of ranks the inverse.
#include <cstring>
#include <type_traits>

#include "ops/hash/unique/unique_launch.h"
#include "prim/device/hash_table/hash_table.h"
#include "prim/device/hash_table/tuning_hash_table.h"
#include "prim/device/histogram/histogram.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/scan/scan.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace {

// A head starts a new distinct value: the key changes, or is a NaN's (each NaN is distinct, as in torch.unique).
template <typename Bits>
__global__ void heads_kernel(const Bits* __restrict__ sorted, int64_t n, KeyCodec<Bits> codec,
                             uint8_t* __restrict__ heads) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const Bits key = codec.encode(sorted[j]);
    const bool nan = codec.kind == KeyKind::kFloat && key == Bits(~Bits(0));
    heads[j] = (j == 0 || nan || key != codec.encode(sorted[j - 1])) ? 1 : 0;
  }
}

// ranks[j] = 1 + the rank of sorted[j]'s value. Values past capacity are dropped (never written out of bounds).
template <typename Bits>
__global__ void scatter_kernel(const Bits* __restrict__ sorted, const int64_t* __restrict__ order,
                               const uint8_t* __restrict__ heads, const int64_t* __restrict__ ranks, int64_t n,
                               int64_t capacity, Bits* __restrict__ values, int64_t* __restrict__ inverse,
                               int64_t* __restrict__ starts, int64_t* __restrict__ num_unique) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const int64_t r = ranks[j] - 1;
    if (inverse != nullptr) inverse[order[j]] = r;
    if (heads[j]) {
      if (r < capacity) values[r] = sorted[j];  // the lowest position's bits (stable sort)
      if (r <= capacity) starts[r] = j;
    }
    if (j == n - 1) *num_unique = r + 1;
  }
}

template <typename Bits>
__global__ void finish_kernel(int64_t n, int64_t capacity, Bits fill, const int64_t* __restrict__ starts,
                              const int64_t* __restrict__ num_unique, Bits* __restrict__ values,
                              int64_t* __restrict__ counts) {
  const int64_t num = *num_unique;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < capacity; r += stride) {
    if (r >= num) {
      values[r] = fill;
      if (counts != nullptr) counts[r] = 0;
    } else if (counts != nullptr) {
      counts[r] = (r + 1 < num ? starts[r + 1] : n) - starts[r];
    }
  }
}

template <typename T>
void unique_sorted(const T* x, int64_t n, int64_t capacity, uint64_t fill_bits, void* values, int64_t* inverse,
                   int64_t* counts, int64_t* num_unique, Workspace& workspace, cudaStream_t stream) {
  using Bits = KeyBits<T>;
  const KeyCodec<Bits> codec = key_codec<T>(false);
  auto* out = static_cast<Bits*>(values);
  auto* starts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(capacity + 1)));
  if (n == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_unique, 0, sizeof(int64_t), stream));
  } else {
    auto* sorted = static_cast<Bits*>(workspace.allocate(sizeof(Bits) * size_t(n)));
    auto* order = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(n)));
    auto* heads = static_cast<uint8_t*>(workspace.allocate(size_t(n)));
    auto* ranks = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(n)));
    radix_sort::sort_rows(reinterpret_cast<const Bits*>(x), codec, 1, n, sorted, order, workspace, stream);
    heads_kernel<Bits><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(sorted, n, codec, heads);
    GPUPRIM_LAUNCH_CHECK();
    scan::scan_launch<uint8_t, int64_t, int64_t>(heads, ranks, scan::Shape{1, n, 1}, /*exclusive=*/false,
                                                 /*reverse=*/false, workspace, stream);
    scatter_kernel<Bits><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(
        sorted, order, heads, ranks, n, capacity, out, inverse, starts, num_unique);
    GPUPRIM_LAUNCH_CHECK();
  }
  if (capacity > 0) {
    Bits fill;
    memcpy(&fill, &fill_bits, sizeof(Bits));
    finish_kernel<Bits><<<grid_for(capacity, kBlockThreads), kBlockThreads, 0, stream>>>(n, capacity, fill, starts,
                                                                                         num_unique, out, counts);
    GPUPRIM_LAUNCH_CHECK();
  }
}

template <typename Key>
__global__ void fill_kernel(Key* __restrict__ values, int64_t begin, int64_t end, Key fill) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = begin + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < end; r += stride) values[r] = fill;
}

// 1-byte elements (bool, uint8, int8) have at most 256 distinct keys: a histogram of the keys replaces the sort,
// one read of x and no workspace that grows with n. Keys in codec order are values in torch's order.
constexpr int kByteKeys = 256;

template <typename Bits>
struct ByteKeyBins {
  KeyCodec<Bits> codec;
  int64_t num_bins;
  __device__ __forceinline__ int64_t operator()(Bits v) const { return static_cast<int64_t>(codec.encode(v)); }
};

// Thread c holds key c: its rank is the number of present keys below it (ballots, then the warps' totals).
template <typename Bits>
__global__ void __launch_bounds__(kByteKeys)
    byte_keys_kernel(const unsigned long long* __restrict__ key_counts, KeyCodec<Bits> codec, int64_t capacity,
                     Bits fill, Bits* __restrict__ values, int64_t* __restrict__ counts,
                     int64_t* __restrict__ rank_of_key, int64_t* __restrict__ num_unique) {
  __shared__ int warp_present[kByteKeys / kWarpSize];
  const int key = threadIdx.x, lane = key % kWarpSize, warp = key / kWarpSize;
  const unsigned long long count = key_counts[key];
  const unsigned present = __ballot_sync(kFullMask, count > 0);
  if (lane == 0) warp_present[warp] = __popc(present);
  __syncthreads();
  int rank = __popc(present & ((1u << lane) - 1u)), num = 0;
  for (int w = 0; w < kByteKeys / kWarpSize; ++w) {
    rank += w < warp ? warp_present[w] : 0;
    num += warp_present[w];
  }
  if (count > 0) {
    if (rank_of_key != nullptr) rank_of_key[key] = rank;
    if (rank < capacity) {
      values[rank] = codec.decode(Bits(key));
      if (counts != nullptr) counts[rank] = static_cast<int64_t>(count);
    }
  }
  if (key >= num && key < capacity) {  // the ranks past the distinct keys, up to kByteKeys
    values[key] = fill;
    if (counts != nullptr) counts[key] = 0;
  }
  if (key == 0) *num_unique = num;
}

template <typename Bits>
__global__ void byte_inverse_kernel(const Bits* __restrict__ x, int64_t n, KeyCodec<Bits> codec,
                                    const int64_t* __restrict__ rank_of_key, int64_t* __restrict__ inverse) {
  __shared__ int64_t rank[kByteKeys];
  for (int key = threadIdx.x; key < kByteKeys; key += blockDim.x) rank[key] = rank_of_key[key];
  __syncthreads();
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    inverse[i] = rank[codec.encode(x[i])];
  }
}

template <typename T>
void unique_bytes(const T* x, int64_t n, int64_t capacity, uint64_t fill_bits, void* values, int64_t* inverse,
                  int64_t* counts, int64_t* num_unique, Workspace& workspace, cudaStream_t stream) {
  using Bits = KeyBits<T>;
  static_assert(sizeof(Bits) == 1, "256 keys");
  const KeyCodec<Bits> codec = key_codec<T>(false);
  Bits fill;
  memcpy(&fill, &fill_bits, sizeof(Bits));
  auto* out = static_cast<Bits*>(values);
  auto* key_counts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * kByteKeys));
  auto* dropped = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t)));  // none: every key has its bin
  auto* rank_of_key = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * kByteKeys));
  histogram::launch(reinterpret_cast<const Bits*>(x), n, ByteKeyBins<Bits>{codec, kByteKeys}, nullptr,
                    DType::kInt64, key_counts, dropped, /*deterministic=*/false, workspace, stream);  // exact
  byte_keys_kernel<Bits><<<1, kByteKeys, 0, stream>>>(reinterpret_cast<const unsigned long long*>(key_counts),
                                                       codec, capacity, fill, out, counts,
                                                       inverse != nullptr ? rank_of_key : nullptr, num_unique);
  GPUPRIM_LAUNCH_CHECK();
  if (capacity > kByteKeys) {
    fill_kernel<Bits><<<grid_for(capacity - kByteKeys, kBlockThreads), kBlockThreads, 0, stream>>>(
        out, kByteKeys, capacity, fill);
    GPUPRIM_LAUNCH_CHECK();
    if (counts != nullptr) {
      GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts + kByteKeys, 0, sizeof(int64_t) * size_t(capacity - kByteKeys),
                                         stream));
    }
  }
  if (inverse != nullptr && n > 0) {
    byte_inverse_kernel<Bits><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(
        reinterpret_cast<const Bits*>(x), n, codec, rank_of_key, inverse);
    GPUPRIM_LAUNCH_CHECK();
  }
}

// Below this many elements the sort path beats the hash path's set insert, collect and sync (measured at 2^20
// elements with 2^10 to 2^20 distinct values, docs/experiments/unique.md).
constexpr int64_t kHashPathMinItems = int64_t(1) << 22;

// rank_of_slot[slot of the r-th distinct key] = r, and values[r] = that key; the key kEmpty (the type's minimum,
// so rank 0 when stored) lives beside the slots, at slot `slots`. Ranks are int32 (k <= slots + 1 < 2^31) so
// the table the element passes gather from takes half the L2.
template <typename Key>
__global__ void rank_kernel(const Key* __restrict__ sorted_keys, const uint32_t* __restrict__ sorted_slots,
                            int64_t k, int64_t empty_stored, int64_t slots, int64_t capacity,
                            int32_t* __restrict__ rank_of_slot, Key* __restrict__ values) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < k; r += stride) {
    const bool empty_key = r < empty_stored;
    const int64_t slot = empty_key ? slots : int64_t(sorted_slots[r - empty_stored]);
    rank_of_slot[slot] = int32_t(r);
    if (r < capacity) values[r] = empty_key ? hash_table::kEmpty<Key> : sorted_keys[r - empty_stored];
  }
}

// The hash path's bins for prim's histogram: an element's slot (the set insert's slot_of) to its value's rank.
struct SlotRankBins {
  int64_t num_bins;
  const int32_t* rank_of_slot;
  __device__ __forceinline__ int64_t operator()(uint32_t slot) const { return rank_of_slot[slot]; }
};

// inverse[i] = the rank of x[i]'s value. kCount: also counts[rank] += 1 with the global atomics prim's histogram
// would use for that many bins, so the counts cost no second pass over the elements.
template <bool kCount>
__global__ void inverse_kernel(const uint32_t* __restrict__ slot_of, const int32_t* __restrict__ rank_of_slot,
                               int64_t n, int64_t* __restrict__ inverse, unsigned long long* __restrict__ counts) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int32_t rank = rank_of_slot[slot_of[i]];
    inverse[i] = rank;
    if constexpr (kCount) atomicAdd(&counts[rank], 1ull);
  }
}

// The hash path (the exact form only: the entries past k are left unwritten); false (having written nothing)
// when x has too many distinct values for it. Syncs once.
template <typename Key>
bool unique_hashed(const Key* x, int64_t n, int64_t capacity, Key* values, int64_t* inverse, int64_t* counts,
                   int64_t* num_unique, Workspace& workspace, cudaStream_t stream) {
  constexpr int64_t kSlots = hash_table::Tuning::kDistinctSlots;
  auto* table = static_cast<Key*>(workspace.allocate(sizeof(Key) * size_t(kSlots)));
  auto* state = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * hash_table::kSetStateWords));
  auto* slot_of = static_cast<uint32_t*>(workspace.allocate(sizeof(uint32_t) * size_t(n)));
  hash_table::clear_set(table, kSlots, state, stream);
  hash_table::insert_set(table, kSlots, state, x, n, kSlots / 2, slot_of, stream);
  int64_t host_state[hash_table::kSetStateWords];
  GPUPRIM_CUDA_CHECK(cudaMemcpyAsync(host_state, state, sizeof(host_state), cudaMemcpyDeviceToHost, stream));
  GPUPRIM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the exact form's one sync
  if (host_state[hash_table::kStateGaveUp] != 0) return false;
  const int64_t k = host_state[hash_table::kStateSize];
  const int64_t empty_stored = host_state[hash_table::kStateEmptyKeyStored];
  const int64_t others = k - empty_stored;

  auto* keys = static_cast<Key*>(workspace.allocate(sizeof(Key) * size_t(2 * others + 1)));
  auto* slots = static_cast<uint32_t*>(workspace.allocate(sizeof(uint32_t) * size_t(2 * others + 1)));
  auto* collected = static_cast<unsigned long long*>(workspace.allocate(sizeof(unsigned long long)));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(collected, 0, sizeof(unsigned long long), stream));
  hash_table::collect(table, kSlots, keys, slots, collected, stream);
  if (others > 0) {
    // Distinct keys: their sorted order does not depend on the order collect appended them in.
    radix_sort::sort_pairs_direct<Key, uint32_t>(keys, keys + others, slots, slots + others, others,
                                                 int(sizeof(Key) * 8), workspace, stream);
  }
  auto* rank_of_slot = static_cast<int32_t*>(workspace.allocate(sizeof(int32_t) * size_t(kSlots + 1)));
  if (k > 0) {
    rank_kernel<Key><<<grid_for(k, kBlockThreads), kBlockThreads, 0, stream>>>(
        keys + others, slots + others, k, empty_stored, kSlots, capacity, rank_of_slot, values);
    GPUPRIM_LAUNCH_CHECK();
  }
  // Integer counts: exact whichever kernel adds them.
  if (inverse != nullptr && counts != nullptr && histogram::counts_in_global_memory(k)) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts, 0, sizeof(int64_t) * size_t(k), stream));
    inverse_kernel<true><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(
        slot_of, rank_of_slot, n, inverse, reinterpret_cast<unsigned long long*>(counts));
    GPUPRIM_LAUNCH_CHECK();
  } else {
    if (inverse != nullptr) {
      inverse_kernel<false><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(slot_of, rank_of_slot, n,
                                                                                      inverse, nullptr);
      GPUPRIM_LAUNCH_CHECK();
    }
    if (counts != nullptr) {  // prim's histogram over the slots: half the inverse's bytes, no rank pass needed
      auto* dropped = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t)));
      histogram::launch(slot_of, n, SlotRankBins{k, rank_of_slot}, nullptr, DType::kInt64, counts, dropped,
                        /*deterministic=*/false, workspace, stream);
    }
  }
  GPUPRIM_CUDA_CHECK(cudaMemcpyAsync(num_unique, state + hash_table::kStateSize, sizeof(int64_t),
                                     cudaMemcpyDeviceToDevice, stream));
  return true;
}

}  // namespace

void unique_cuda_launch(const void* x, DType type, int64_t n, int64_t capacity, bool exact, uint64_t fill_bits,
                        void* values, int64_t* inverse, int64_t* counts, int64_t* num_unique, Workspace& workspace,
                        cudaStream_t stream) {
  dispatch<AllTypes>("unique", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      // The sized form never syncs, and only the sort path's work does not depend on the distinct count.
      if (exact && n >= kHashPathMinItems && capacity >= n &&
          unique_hashed<T>(static_cast<const T*>(x), n, capacity, static_cast<T*>(values), inverse, counts,
                           num_unique, workspace, stream)) {
        return;
      }
    }
    if constexpr (sizeof(T) == 1) {
      unique_bytes<T>(static_cast<const T*>(x), n, capacity, fill_bits, values, inverse, counts, num_unique,
                      workspace, stream);
    } else {
      unique_sorted<T>(static_cast<const T*>(x), n, capacity, fill_bits, values, inverse, counts, num_unique,
                       workspace, stream);
    }
  });
}

}  // namespace gpuprim
