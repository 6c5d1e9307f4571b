// The row sort: a stable sort of each row of a contiguous [rows, n] array of keys (radix_sort.cuh's sort_rows),
// gpuprim::sort's kernels and the final order of topk's large k. Elements become the codec's keys, sorted with
// their positions as payload, then decoded back into values (zeros and NaNs are read from the input instead,
// so their exact bits survive). Paths, chosen in sort_rows_indexed():
//   rows of <= 2048 elements: one thread block per row, in registers and shared memory (tiles of
//   512, 1024 or 2048 elements);
//   one longer row of int32 or fp32: the onesweep sort (onesweep.cuh, 68 bytes an element);
//   other longer rows: CUB's device radix sort of (key, 32-bit position); int64 keys ascending go
//   to CUB as they are, read from x and written to values (no encode or decode);
//   few long rows, or long rows of 64-bit keys: one device radix sort per row;
//   other rows: (row, key) packed into one 32- or 64-bit key, one device radix sort;
//   64-bit keys left over: sort by key, then stably by row (two device radix sorts).
// Bytes per element through CUB, e.g. one fp16 row: encode reads 2 and writes 6, CUB moves (2 + 4) * 2 per
// pass (2 passes), decode reads 6 and writes 2 + 8. One int32 or fp32 row is 80 / 96 bytes this way (positions
// written, CUB's 64, positions widened or decoded): the onesweep sort moves 68 (its first pass makes the
// positions, its last writes the outputs).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "prim/device/radix_sort/onesweep.h"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/radix_sort/tuning_radix_sort.h"
#include "prim/util/cub.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace radix_sort {
namespace {

// Rows up to kBlockTile elements are sorted by one thread block each (in registers and shared
// memory); very short rows among many go to the composite-key radix sort instead, which does not
// spend a whole block's sort on a handful of elements.
constexpr int kSmallTileThreads = Tuning::kSmallTileThreads, kSmallTileItems = Tuning::kSmallTileItems;
constexpr int kMediumTileThreads = Tuning::kMediumTileThreads, kMediumTileItems = Tuning::kMediumTileItems;
constexpr int kBlockTileThreads = Tuning::kBlockTileThreads, kBlockTileItems = Tuning::kBlockTileItems;
constexpr int64_t kBlockTile = kBlockTileThreads * kBlockTileItems;

// Blocks for an elementwise pass over `items` (kBlockThreads a block): a few waves, then grid-stride.
unsigned elementwise_grid(int64_t items) {
  const DeviceInfo& info = current_device_info();
  const int64_t resident = int64_t(info.sm_count) * std::max(1, info.max_threads_per_sm / kBlockThreads);
  return grid_for(items, kBlockThreads, Tuning::kElementwiseWaves * resident);
}

// The bits of the row numbers of `rows` (>= 2) rows: [0, rows).
int row_bits_of(int64_t rows) { return bits_to_hold(uint64_t(rows - 1)); }

// keys[i] = (row of i) << key_bits | encode(x[i]) when kWithRow, else encode(x[i]);
// positions[i] = i's position within its row of n.
template <typename Bits, typename Key, typename Index, bool kWithRow>
__global__ void encode_kernel(const Bits* __restrict__ x, int64_t total, int64_t n, KeyCodec<Bits> codec,
                              Key* __restrict__ keys, Index* __restrict__ positions) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const Key key = static_cast<Key>(codec.encode(x[i]));
    if constexpr (kWithRow) {
      static_assert(sizeof(Key) > sizeof(Bits), "the row goes above the element's bits");
      // 32-bit division whenever the flat index fits (Index is 32-bit only then): it is cheaper.
      const int64_t row = sizeof(Index) == 4 ? int64_t(uint32_t(i) / uint32_t(n)) : i / n;
      keys[i] = (static_cast<Key>(row) << (sizeof(Bits) * 8)) | key;
      positions[i] = static_cast<Index>(i - row * n);
    } else {
      keys[i] = key;
      positions[i] = static_cast<Index>(n == total ? i : i % n);
    }
  }
}

// values[i] = decode(low bits of keys[i]) (or, for zeros and NaNs, whose keys lose the sign or
// payload, the input element itself); indices[i] = positions[i] widened to int64.
template <typename Bits, typename Key, typename Index>
__global__ void decode_kernel(const Key* __restrict__ keys, const Index* __restrict__ positions,
                              const Bits* __restrict__ x, int64_t total, int64_t n, KeyCodec<Bits> codec,
                              Bits* __restrict__ values, int64_t* __restrict__ indices) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const Bits key = static_cast<Bits>(keys[i]);  // the element's key: the low bits
    const int64_t position = static_cast<int64_t>(positions[i]);
    values[i] = codec.decodes_exactly(key) ? codec.decode(key) : x[i - i % n + position];
    indices[i] = position;
  }
}

// Direct path: positions[i] = i (n <= INT32_MAX).
__global__ void iota_kernel(int64_t n, uint32_t* __restrict__ positions) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    positions[i] = static_cast<uint32_t>(i);
  }
}

// Direct path: indices[i] = positions[i] widened to int64.
__global__ void widen_kernel(const uint32_t* __restrict__ positions, int64_t n, int64_t* __restrict__ indices) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    indices[i] = static_cast<int64_t>(positions[i]);
  }
}

// Two-pass path, second pass: row_keys[i] = the row of the element at flat index flat[i].
template <typename Index>
__global__ void row_of_kernel(const Index* __restrict__ flat, int64_t total, int64_t n,
                              uint32_t* __restrict__ row_keys) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    row_keys[i] = static_cast<uint32_t>(static_cast<int64_t>(flat[i]) / n);
  }
}

// Two-pass path, output: values[i] = x[flat[i]], indices[i] = flat[i]'s position in its row.
template <typename Bits, typename Index>
__global__ void gather_kernel(const Index* __restrict__ flat, const Bits* __restrict__ x, int64_t total, int64_t n,
                              Bits* __restrict__ values, int64_t* __restrict__ indices) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t source = static_cast<int64_t>(flat[i]);
    values[i] = x[source];
    indices[i] = source % n;
  }
}

// Short rows: each thread block sorts whole rows, one after another, with CUB's BlockRadixSort
// (stable): the input is read once and the outputs written once, with no temp memory. Slots past
// the row's end get the largest key; stability keeps them after the row's own largest keys.
template <typename Bits, int kThreadsPerBlock, int kItems>
__global__ void __launch_bounds__(kThreadsPerBlock)
    block_sort_rows_kernel(const Bits* __restrict__ x, int64_t rows, int n, KeyCodec<Bits> codec,
                           Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using BlockSort = cub::BlockRadixSort<Bits, kThreadsPerBlock, kItems, int32_t>;
  __shared__ typename BlockSort::TempStorage temp_storage;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform across the block
    const Bits* in = x + row * n;
    Bits keys[kItems];
    int32_t positions[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {  // blocked arrangement: thread t holds t * kItems + j
      const int position = int(threadIdx.x) * kItems + j;
      keys[j] = position < n ? codec.encode(in[position]) : Bits(~Bits(0));
      positions[j] = position;
    }
    BlockSort(temp_storage).SortBlockedToStriped(keys, positions);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {  // striped arrangement: rank j * threads + t (coalesced stores)
      const int rank = j * kThreadsPerBlock + int(threadIdx.x);
      if (rank < n) {
        const int64_t out = row * n + rank;
        values[out] = codec.decodes_exactly(keys[j]) ? codec.decode(keys[j]) : in[positions[j]];
        indices[out] = positions[j];
      }
    }
    __syncthreads();  // the next row reuses temp_storage
  }
}

template <typename Bits, int kThreadsPerBlock, int kItems>
void block_sort_rows(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values, int64_t* indices,
                     cudaStream_t stream) {
  const unsigned grid = grid_for(rows, 1, int64_t(current_device_info().sm_count) * Tuning::kBlockRowsBlocksPerSm);
  block_sort_rows_kernel<Bits, kThreadsPerBlock, kItems>
      <<<grid, kThreadsPerBlock, 0, stream>>>(x, rows, int(n), codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// Hands out one buffer again and again: the per-row sorts run one after another on one stream,
// so each may reuse the previous one's temp storage.
class ReusedWorkspace final : public Workspace {
 public:
  explicit ReusedWorkspace(Workspace& base) : base_(base) {}
  void* allocate(size_t bytes) override {
    if (bytes > capacity_) {
      buffer_ = base_.allocate(bytes);
      capacity_ = bytes;
    }
    return buffer_;
  }

 private:
  Workspace& base_;
  void* buffer_ = nullptr;
  size_t capacity_ = 0;
};

template <typename T>
T* allocate(Workspace& workspace, int64_t count) {
  return static_cast<T*>(workspace.allocate(size_t(count) * sizeof(T)));
}

// The (key, payload) double buffers of a sort_pairs over `total` elements, buffer 0 filled by encode_kernel:
// keys with the row above the element's bits when Key is wider than Bits, positions within rows of n (n = total:
// flat indices).
template <typename Key, typename Index>
struct Encoded {
  Key* keys[2];
  Index* positions[2];
};
template <typename Bits, typename Key, typename Index>
Encoded<Key, Index> encode_rows(const Bits* x, KeyCodec<Bits> codec, int64_t total, int64_t n, Workspace& workspace,
                                cudaStream_t stream) {
  Encoded<Key, Index> encoded{{allocate<Key>(workspace, total), allocate<Key>(workspace, total)},
                              {allocate<Index>(workspace, total), allocate<Index>(workspace, total)}};
  constexpr bool kWithRow = sizeof(Key) > sizeof(Bits);
  encode_kernel<Bits, Key, Index, kWithRow><<<elementwise_grid(total), kBlockThreads, 0, stream>>>(
      x, total, n, codec, encoded.keys[0], encoded.positions[0]);
  GPUPRIM_LAUNCH_CHECK();
  return encoded;
}

// One radix sort of (key, position) over all rows. With several rows the key carries the row
// above the element's bits (Key wide enough for both), so rows stay apart and are sorted inside.
template <typename Bits, typename Key, typename Index>
void sort_keyed_by_row(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  const int64_t total = rows * n;
  Encoded<Key, Index> e = encode_rows<Bits, Key, Index>(x, codec, total, n, workspace, stream);  // one row: bare keys
  const int end_bit = int(sizeof(Bits) * 8) + (sizeof(Key) == sizeof(Bits) ? 0 : row_bits_of(rows));
  const int result = sort_pairs(e.keys, e.positions, total, end_bit, workspace, stream);
  decode_kernel<Bits, Key, Index><<<elementwise_grid(total), kBlockThreads, 0, stream>>>(
      e.keys[result], e.positions[result], x, total, n, codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// One row of signed keys ascending, straight to CUB (it orders signed integers itself): no encode or
// decode pass, as CUB reads x and writes values directly (int64: positions 4, CUB's 8 passes of 24, the
// widening 12 bytes an element).
template <typename Key>
void sort_signed_row(const Key* x, int64_t n, Key* values, int64_t* indices, Workspace& workspace,
                     cudaStream_t stream) {
  uint32_t* positions[2] = {allocate<uint32_t>(workspace, n), allocate<uint32_t>(workspace, n)};
  const unsigned grid = elementwise_grid(n);
  iota_kernel<<<grid, kBlockThreads, 0, stream>>>(n, positions[0]);
  GPUPRIM_LAUNCH_CHECK();
  sort_pairs_direct<Key, uint32_t>(x, values, positions[0], positions[1], n, int(sizeof(Key) * 8),
                                              workspace, stream);
  widen_kernel<<<grid, kBlockThreads, 0, stream>>>(positions[1], n, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// One row longer than a block tile, n <= INT32_MAX (Index is int32_t only then): int32 and fp32 rows go to the
// onesweep sort, int64 rows ascending straight to CUB (the CUB instantiation sort_pairs_direct has:
// descending would be one more); every other row is encoded.
template <typename Bits, typename Index>
void sort_one_row(const Bits* x, KeyCodec<Bits> codec, int64_t n, Bits* values, int64_t* indices,
                  Workspace& workspace, cudaStream_t stream) {
  if constexpr (sizeof(Bits) == 4 && std::is_same_v<Index, int32_t>) {
    if (codec.kind != KeyKind::kUnsigned) {
      return sort_row_onesweep(x, codec.kind, codec.descending, n, values, indices, workspace, stream);
    }
  }
  if constexpr (sizeof(Bits) == 8 && std::is_same_v<Index, int32_t>) {
    if (codec.kind == KeyKind::kSigned && !codec.descending) {
      return sort_signed_row<int64_t>(reinterpret_cast<const int64_t*>(x), n, reinterpret_cast<int64_t*>(values),
                                      indices, workspace, stream);
    }
  }
  sort_keyed_by_row<Bits, Bits, Index>(x, codec, 1, n, values, indices, workspace, stream);
}

// Few long rows: each row sorted by its own device-wide radix sort, one after another.
template <typename Bits, typename Index>
void sort_row_by_row(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values, int64_t* indices,
                     Workspace& workspace, cudaStream_t stream) {
  const int64_t total = rows * n;
  Encoded<Bits, Index> e = encode_rows<Bits, Bits, Index>(x, codec, total, n, workspace, stream);
  // Every row takes the same number of passes, so every row's result lands in the same buffer.
  ReusedWorkspace row_workspace(workspace);
  int result = 0;
  for (int64_t r = 0; r < rows; ++r) {
    Bits* row_keys[2] = {e.keys[0] + r * n, e.keys[1] + r * n};
    Index* row_positions[2] = {e.positions[0] + r * n, e.positions[1] + r * n};
    result = sort_pairs(row_keys, row_positions, n, int(sizeof(Bits) * 8), row_workspace, stream);
  }
  decode_kernel<Bits, Bits, Index><<<elementwise_grid(total), kBlockThreads, 0, stream>>>(
      e.keys[result], e.positions[result], x, total, n, codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// Many rows of 64-bit keys (no room for the row in the key): sort everything by key, carrying
// flat indices, then stably by row; equal rows keep the key order of the first pass.
template <typename Bits, typename Index>
void sort_two_pass(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values, int64_t* indices,
                   Workspace& workspace, cudaStream_t stream) {
  const int64_t total = rows * n;
  Encoded<Bits, Index> e = encode_rows<Bits, Bits, Index>(x, codec, total, total, workspace, stream);  // flat indices
  Index** flat = e.positions;
  const int by_key = sort_pairs(e.keys, flat, total, int(sizeof(Bits) * 8), workspace, stream);
  const unsigned grid = elementwise_grid(total);
  uint32_t* row_keys[2] = {allocate<uint32_t>(workspace, total), allocate<uint32_t>(workspace, total)};
  row_of_kernel<Index><<<grid, kBlockThreads, 0, stream>>>(flat[by_key], total, n, row_keys[0]);
  GPUPRIM_LAUNCH_CHECK();
  Index* by_row_flat[2] = {flat[by_key], flat[1 - by_key]};
  const int by_row = sort_pairs(row_keys, by_row_flat, total, row_bits_of(rows), workspace, stream);
  gather_kernel<Bits, Index><<<grid, kBlockThreads, 0, stream>>>(by_row_flat[by_row], x, total, n, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// sort_rows with Index the payload's type (flat indices and positions). Rows of at least kLongRow are sorted
// one after another with the device-wide radix sort (each row fills the GPU) when there are few of them or
// their keys are 64-bit (no room for the row in the key): a composite key would cost more passes over wider
// keys than the extra launches.
template <typename Bits, typename Index>
void sort_rows_indexed(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  constexpr int kKeyBits = int(sizeof(Bits) * 8);
  const int row_bits = rows == 1 ? 0 : row_bits_of(rows);
  if (n <= kBlockTile && (rows == 1 || n >= Tuning::kShortestBlockRow)) {
    if (n <= kSmallTileThreads * kSmallTileItems) {
      block_sort_rows<Bits, kSmallTileThreads, kSmallTileItems>(x, codec, rows, n, values, indices, stream);
    } else if (n <= kMediumTileThreads * kMediumTileItems) {
      block_sort_rows<Bits, kMediumTileThreads, kMediumTileItems>(x, codec, rows, n, values, indices, stream);
    } else {
      block_sort_rows<Bits, kBlockTileThreads, kBlockTileItems>(x, codec, rows, n, values, indices, stream);
    }
  } else if (rows == 1) {
    sort_one_row<Bits, Index>(x, codec, n, values, indices, workspace, stream);
  } else if (n >= Tuning::kLongRow && (rows <= Tuning::kFewRows || kKeyBits == 64)) {
    sort_row_by_row<Bits, Index>(x, codec, rows, n, values, indices, workspace, stream);
  } else if (kKeyBits + row_bits <= 32) {
    if constexpr (sizeof(Bits) < 4) {
      sort_keyed_by_row<Bits, uint32_t, Index>(x, codec, rows, n, values, indices, workspace, stream);
    }
  } else if (kKeyBits + row_bits <= 64) {
    if constexpr (sizeof(Bits) < 8) {
      sort_keyed_by_row<Bits, uint64_t, Index>(x, codec, rows, n, values, indices, workspace, stream);
    }
  } else if (rows > int64_t(UINT32_MAX)) {  // 64-bit keys, row numbers too wide for the second pass
    sort_row_by_row<Bits, Index>(x, codec, rows, n, values, indices, workspace, stream);
  } else {
    sort_two_pass<Bits, Index>(x, codec, rows, n, values, indices, workspace, stream);
  }
}

}  // namespace

template <typename Bits>
void sort_rows(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values, int64_t* indices,
               Workspace& workspace, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  // 32-bit payloads (positions, flat indices) while every index fits: half the payload bytes
  // per radix pass, and 32-bit offsets inside CUB.
  if (rows * n <= INT32_MAX) {
    sort_rows_indexed<Bits, int32_t>(x, codec, rows, n, values, indices, workspace, stream);
  } else {
    sort_rows_indexed<Bits, int64_t>(x, codec, rows, n, values, indices, workspace, stream);
  }
}

#define GPUPRIM_INSTANTIATE_SORT_ROWS(BITS)                                                                  \
  template void sort_rows<BITS>(const BITS*, KeyCodec<BITS>, int64_t, int64_t, BITS*, int64_t*, Workspace&, \
                                cudaStream_t);
GPUPRIM_INSTANTIATE_SORT_ROWS(uint8_t)
GPUPRIM_INSTANTIATE_SORT_ROWS(uint16_t)
GPUPRIM_INSTANTIATE_SORT_ROWS(uint32_t)
GPUPRIM_INSTANTIATE_SORT_ROWS(uint64_t)

}  // namespace radix_sort
}  // namespace gpuprim
