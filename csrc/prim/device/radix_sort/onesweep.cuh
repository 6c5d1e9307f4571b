// Onesweep LSD radix sort of one row of 32-bit keys into torch.sort's output: the sorted values and their
// int64 source indices, stable, 8-bit digits (four passes). Written for gpuprim.sort (ops/sort), where it
// replaces iota + CUB's pair sort + a widening pass: the first pass makes the positions in registers and the
// last writes values and int64 indices straight to the outputs, so nothing else touches the data.
//
//   histogram_kernel : reads the keys once, builds the 4 digit histograms and, in the last block to
//                      finish, their exclusive scans ("bins").
//   pass 1 (kFirst)  : reads keys only (encodes them); writes (key, u32 position).
//   pass 2,3 (kMiddle): moves (u32 key, u32 position).
//   pass 4 (kLast)   : writes decoded keys and positions widened to int64 into the outputs.
// Bytes per element: 4 + (4 + 8) + 16 + 16 + (8 + 4 + 8) = 68, CUB's SortPairs<u32, u32> moves the same
// (the CUB path it replaced in gpuprim.sort moved 84).
//
// The histogram is bound by its 4 shared-memory atomics per key, not by their conflicts (copies of the
// counters per bin did not pay: docs/experiments/sort.md).
//
// Each pass (one tile of THREADS * ITEMS keys per thread block, tile ids from an atomic counter):
//   load keys warp-striped -> per-warp digit histograms in shared memory -> publish the tile's
//   per-digit counts (decoupled look-back "partial") -> stable block ranking (per-warp match of
//   digits, counters per (warp, digit), scan across (digit, warp)) -> scatter keys and values
//   into shared memory in tile-sorted order -> look-back for the tile's global digit offsets ->
//   coalesced-by-digit-run writes to global memory. Tiles whose keys all have one digit skip the
//   ranking and copy straight through ("short circuit", as CUB does).
//
// Limits: 1 <= n <= 2^31 - 1 (positions are u32, look-back status words hold a 31-bit count).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

#include <algorithm>

#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"
#include "prim/device/scan/lookback.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/radix_sort/tuning_radix_sort.h"
#include "prim/warp/match.cuh"
#include "prim/warp/scan.cuh"

namespace gpuprim {
namespace onesweep {

constexpr int kDigits = 256;
// Look-back status word of (tile, digit): 0 = nothing yet; bit 31 clear, value c + 1 = the tile's
// own count c of the digit ("partial"); bit 31 set = kInc | (inclusive prefix of the digit over
// tiles 0..tile), prefix <= n <= 2^31 - 1.
constexpr uint32_t kInc = 0x80000000u;
constexpr uint32_t kValueMask = 0x7FFFFFFFu;

enum PassKind { kFirst = 0, kMiddle = 1, kLast = 2 };

// THREADS, ITEMS: tile = THREADS * ITEMS keys (CUB SM90, 4-byte key + 4-byte value, 32-bit
// offsets: 384 x 23). Each warp counts its digits with shared atomics before ranking, so the tile's
// counts are published before the ranking loop (CUB's BlockRadixRankMatchEarlyCounts), and finds
// the lanes holding its digit with 8 ballots (as CUB; __match_any_sync was slower: docs/experiments/sort.md).
// MINB: __launch_bounds__ min blocks per SM. LB_BATCH: look-back statuses read per round trip.
template <int THREADS_, int ITEMS_, int MINB_ = 2, int LB_BATCH_ = 4>
struct Config {
  static constexpr int THREADS = THREADS_;
  static constexpr int ITEMS = ITEMS_;
  static constexpr int MINB = MINB_;
  static constexpr int LB_BATCH = LB_BATCH_;
  static constexpr int WARPS = THREADS / 32;
  static constexpr int TILE = THREADS * ITEMS;
  static_assert(THREADS % 32 == 0 && THREADS >= kDigits && THREADS <= 1024, "THREADS: a multiple of 32 in [256, 1024]");
  static_assert(WARPS <= 32, "");
  // Shared memory words: keys[TILE], values[TILE], hist[WARPS][256], offsets[256], misc[40].
  static constexpr size_t SMEM_WORDS = size_t(2) * TILE + size_t(WARPS) * kDigits + kDigits + 40;
  static constexpr size_t SMEM_BYTES = SMEM_WORDS * 4;
};

// ---------------------------------------------------------------------------------------------
// Key hooks. encode(raw bits) -> unsigned key whose ascending order is the wanted order;
// decode(key, position) -> raw bits to store (position: the element's source index, so a codec
// whose encode is lossy, e.g. fp32 with -0.0 / NaN, can read the input back).
// encode is applied in the histogram kernel and pass 1, decode only in the last pass.
// ---------------------------------------------------------------------------------------------
struct KeyU32 {
  __device__ __forceinline__ uint32_t encode(uint32_t b) const { return b; }
  __device__ __forceinline__ uint32_t decode(uint32_t k, uint32_t) const { return k; }
};
// gpuprim.sort's keys: the key codec (prim/util/key_codec.cuh: torch.sort's order, NaN above every number,
// -0.0 == +0.0, descending by inverting the key) with its kind and order fixed at compile time, so its branches
// fold away. Zeros and NaNs, whose keys lose the sign or payload, are read back from the input x.
template <KeyKind kKind, bool kDescending>
struct SortKey {
  const uint32_t* x;
  __device__ __forceinline__ static KeyCodec<uint32_t> codec() {
    return {kKind, kFloat32InfBits /* used for kFloat only */, kDescending};
  }
  __device__ __forceinline__ uint32_t encode(uint32_t b) const { return codec().encode(b); }
  __device__ __forceinline__ uint32_t decode(uint32_t k, uint32_t pos) const {
    return codec().decodes_exactly(k) ? codec().decode(k) : __ldg(x + pos);
  }
};

// ---------------------------------------------------------------------------------------------
// Device helpers
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t* dynamic_smem() {
  extern __shared__ uint32_t onesweep_dynamic_smem[];
  return onesweep_dynamic_smem;
}
__device__ __forceinline__ uint32_t ld_relaxed(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t lanemask_le() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(m));
  return m;
}

// A lane's I items of its warp's stripe of a tile (item u at warp_base + u * 32 + lane); 0 past tile_items.
template <int I>
__device__ __forceinline__ void load_striped(const uint32_t* tile, bool full, int tile_items, int warp_base, int lane,
                                             uint32_t (&out)[I]) {
  const uint32_t* src = tile + warp_base + lane;
  if (full) {
#pragma unroll
    for (int u = 0; u < I; ++u) out[u] = src[u * 32];
  } else {
#pragma unroll
    for (int u = 0; u < I; ++u) out[u] = (warp_base + u * 32 + lane < tile_items) ? src[u * 32] : 0u;
  }
}

// Decoupled look-back for digit d of `tile` (tile > 0): sums the counts of d over tiles
// [0, tile), walking back from tile - 1 until an inclusive prefix is found (tile 0 always
// publishes one). Only partial statuses are ever waited for, and every tile publishes its
// partial before it looks back, so a tile only waits on tiles that took their ids earlier (and
// hence are running): no deadlock. Reads LB_BATCH statuses per round trip; a status word only
// goes 0 -> partial -> inclusive, so any non-zero value read is valid to use.
template <int LB_BATCH>
__device__ __forceinline__ uint32_t lookback(uint32_t* status, uint32_t tile, int d, uint32_t count) {
  uint32_t excl = 0;
  int j = int(tile) - 1;
  for (;;) {
    uint32_t w[LB_BATCH];
#pragma unroll
    for (int b = 0; b < LB_BATCH; ++b) {
      w[b] = (j - b >= 0) ? ld_relaxed(status + size_t(j - b) * kDigits + d) : kInc;
    }
    bool done = false;
#pragma unroll
    for (int b = 0; b < LB_BATCH; ++b) {
      uint32_t x = w[b];
      while (x == 0) x = ld_relaxed(status + size_t(j - b) * kDigits + d);
      if (x & kInc) {
        excl += x & kValueMask;
        done = true;
        break;
      }
      excl += x - 1;
    }
    if (done) break;
    j -= LB_BATCH;
  }
  st_relaxed(status + size_t(tile) * kDigits + d, kInc | ((excl + count) & kValueMask));
  return excl;
}

// ---------------------------------------------------------------------------------------------
// Histogram kernel: hist[p][d] += count of digit d at bits [8p, 8p+8) over all encoded keys;
// the last block to finish writes bins[p][d] = exclusive scan of hist[p] over d.
// hist and *done must be zero on entry.
// ---------------------------------------------------------------------------------------------
constexpr int kHistThreads = radix_sort::Tuning::kOnesweepHistogramThreads;
constexpr int kHistUnroll = radix_sort::Tuning::kOnesweepHistogramUnroll;  // uint4 loads in flight per thread

__device__ __forceinline__ void hist_add4(uint32_t (*h)[kDigits], uint32_t k0, uint32_t k1, uint32_t k2,
                                          uint32_t k3, int lane) {
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const uint32_t d0 = (k0 >> (8 * b)) & 0xFF, d1 = (k1 >> (8 * b)) & 0xFF;
    const uint32_t d2 = (k2 >> (8 * b)) & 0xFF, d3 = (k3 >> (8 * b)) & 0xFF;
    const bool same = (d0 == d1) & (d0 == d2) & (d0 == d3);
    // Whole warp on one digit (all-equal keys, high digits of sorted keys): one atomic, not 128
    // conflicting ones.
    const uint32_t lane0 = __shfl_sync(kFullMask, d0, 0);  // every lane: not inside a short-circuit &&
    const bool uniform = __all_sync(kFullMask, same && d0 == lane0);
    if (uniform) {
      if (lane == 0) atomicAdd(&h[b][d0], 128u);
    } else if (same) {
      atomicAdd(&h[b][d0], 4u);
    } else {
      atomicAdd(&h[b][d0], 1u);
      atomicAdd(&h[b][d1], 1u);
      atomicAdd(&h[b][d2], 1u);
      atomicAdd(&h[b][d3], 1u);
    }
  }
}

template <class Ops>
__global__ void __launch_bounds__(kHistThreads)
    histogram_kernel(const uint32_t* __restrict__ keys, uint32_t n, uint32_t* hist, uint32_t* bins, uint32_t* done,
                     Ops ops) {
  __shared__ uint32_t h[4][kDigits];
  __shared__ uint32_t warp_sums[4][kHistThreads / 32];
  __shared__ int is_last;
  const int tid = threadIdx.x, lane = tid & 31;
  for (int i = tid; i < 4 * kDigits; i += kHistThreads) (&h[0][0])[i] = 0;
  __syncthreads();

  // Keys before the first 16-byte boundary (a tensor's data may start anywhere 4-byte aligned): one per
  // thread of block 0; the vector loads start after them.
  const uint32_t head = min(n, uint32_t((16 - (reinterpret_cast<uintptr_t>(keys) & 15)) & 15) / 4);
  if (blockIdx.x == 0 && uint32_t(tid) < head) {
    const uint32_t k = ops.encode(keys[tid]);
#pragma unroll
    for (int b = 0; b < 4; ++b) atomicAdd(&h[b][(k >> (8 * b)) & 0xFF], 1u);
  }
  keys += head;
  n -= head;

  // Main part: whole warp-chunks of 32 * kHistUnroll uint4 (warp-uniform trip count).
  const size_t nvec = n / 4;
  constexpr size_t kChunk = 32 * kHistUnroll;
  const size_t nchunks = nvec / kChunk;
  const uint4* v4 = reinterpret_cast<const uint4*>(keys);
  const size_t gwarp = (size_t(blockIdx.x) * kHistThreads + tid) / 32;
  const size_t nwarps = size_t(gridDim.x) * (kHistThreads / 32);
  for (size_t c = gwarp; c < nchunks; c += nwarps) {
    uint4 x[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) x[u] = v4[c * kChunk + u * 32 + lane];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      hist_add4(h, ops.encode(x[u].x), ops.encode(x[u].y), ops.encode(x[u].z), ops.encode(x[u].w), lane);
    }
  }
  // Tail: the keys after the last whole chunk, one per thread.
  const size_t tail_begin = nchunks * kChunk * 4;
  for (size_t i = tail_begin + size_t(blockIdx.x) * kHistThreads + tid; i < n; i += size_t(gridDim.x) * kHistThreads) {
    const uint32_t k = ops.encode(keys[i]);
#pragma unroll
    for (int b = 0; b < 4; ++b) atomicAdd(&h[b][(k >> (8 * b)) & 0xFF], 1u);
  }
  __syncthreads();
  for (int i = tid; i < 4 * kDigits; i += kHistThreads) {
    const uint32_t c = (&h[0][0])[i];
    if (c) atomicAdd(hist + i, c);
  }
  // Last block (threadfence-reduction pattern): its fence + ticket come after every other
  // block's global atomics, so it sees complete histograms.
  __threadfence();
  __syncthreads();
  if (tid == 0) is_last = (atomicAdd(done, 1u) == gridDim.x - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const int warp = tid >> 5;
  uint32_t cnt[4], incl[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    cnt[p] = ld_relaxed(hist + p * kDigits + tid);  // from L2 (not a stale L1 line)
    incl[p] = warp::inclusive_scan(cnt[p]);
    if (lane == 31) warp_sums[p][warp] = incl[p];
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    uint32_t base = 0;
    for (int w = 0; w < warp; ++w) base += warp_sums[p][w];
    bins[p * kDigits + tid] = base + incl[p] - cnt[p];
  }
}

// ---------------------------------------------------------------------------------------------
// One onesweep pass over digit bits [shift, shift + 8).
//   keys_in: raw bits (kFirst) or encoded keys; vals_in: u32 positions (unused for kFirst).
//   keys_out: encoded keys, or decoded raw bits (kLast); vals_out: u32 positions, or int64 (kLast).
//   bins: exclusive digit offsets of this pass (256); status: this pass's look-back words
//   (num_tiles * 256, zero on entry); tile_counter: zero on entry.
// ---------------------------------------------------------------------------------------------
template <class Cfg, int KIND, class Ops, typename ValOut>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    onesweep_pass_kernel(const uint32_t* __restrict__ keys_in, const uint32_t* __restrict__ vals_in,
                         uint32_t* __restrict__ keys_out, ValOut* __restrict__ vals_out,
                         const uint32_t* __restrict__ bins, uint32_t* status, uint32_t* tile_counter, uint32_t n,
                         int shift_arg, Ops ops) {
  constexpr int T = Cfg::THREADS, I = Cfg::ITEMS, W = Cfg::WARPS, TILE = Cfg::TILE;
  uint32_t* const smem = dynamic_smem();
  uint32_t* s_keys = smem;                 // [TILE] keys in tile-sorted order
  uint32_t* s_vals = smem + TILE;          // [TILE] values in tile-sorted order
  uint32_t* s_hist = smem + 2 * TILE;      // [W][256] per-(warp, digit) counters / offsets
  uint32_t* s_offs = s_hist + W * kDigits;  // [256] global offset of digit d minus its tile prefix
  uint32_t* s_misc = s_offs + kDigits;     // [0, 8): bin-scan warp sums; [32]: tile id

  const int shift = KIND == kFirst ? 0 : (KIND == kLast ? 24 : shift_arg);
  auto digit = [shift](uint32_t k) -> uint32_t {
    if (KIND == kLast) return k >> 24;
    return (k >> shift) & 0xFFu;
  };

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int b = lane; b < kDigits; b += 32) s_hist[warp * kDigits + b] = 0;
  if (tid == 0) s_misc[32] = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const uint32_t tile = s_misc[32];
  const size_t tile_base = size_t(tile) * TILE;
  const int tile_items = int(min(size_t(TILE), size_t(n) - tile_base));
  const bool full = tile_items == TILE;
  const int warp_base = warp * (I * 32);  // warp-striped: item u of lane l is warp_base + u*32 + l

  // ---- load keys (padding: the largest key, so it ranks last in the tile) ----
  uint32_t keys[I];
  {
    load_striped<I>(keys_in + tile_base, full, tile_items, warp_base, lane, keys);
    if (KIND == kFirst) {
#pragma unroll
      for (int u = 0; u < I; ++u) keys[u] = ops.encode(keys[u]);
    }
    if (!full) {
#pragma unroll
      for (int u = 0; u < I; ++u) {
        if (warp_base + u * 32 + lane >= tile_items) keys[u] = 0xFFFFFFFFu;
      }
    }
  }

  // ---- per-warp digit counts ----
#pragma unroll
  for (int u = 0; u < I; ++u) atomicAdd(&s_hist[warp * kDigits + digit(keys[u])], 1u);
  __syncthreads();

  // ---- tile counts per digit: exclusive scan over warps, publish, scan over digits ----
  uint32_t count = 0, tile_excl = 0;
  if (tid < kDigits) {
    uint32_t run = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const uint32_t x = s_hist[w * kDigits + tid];
      s_hist[w * kDigits + tid] = run;
      run += x;
    }
    count = run;
    st_relaxed(status + size_t(tile) * kDigits + tid, tile == 0 ? (kInc | count) : (count + 1));
    const uint32_t incl = warp::inclusive_scan(count);
    if (lane == 31) s_misc[warp] = incl;
    tile_excl = incl - count;
  }
  const int short_circuit = __syncthreads_or(tid < kDigits && count == uint32_t(TILE));
  if (tid < kDigits) {
    for (int w = 0; w < warp; ++w) tile_excl += s_misc[w];
  }

  if (short_circuit) {
    // Every key of the tile (padding included) has one digit D: the tile is already in order.
    if (tid < kDigits) {
      // Only s_offs[D] is used; D's tile prefix is 0.
      const uint32_t excl = tile == 0 ? 0u : lookback<Cfg::LB_BATCH>(status, tile, tid, count);
      s_offs[tid] = bins[tid] + excl;
    }
    __syncthreads();
    const uint32_t base = s_offs[digit(keys[0])];
#pragma unroll
    for (int u = 0; u < I; ++u) {
      const int p = warp_base + u * 32 + lane;
      if (full || p < tile_items) {
        const uint32_t v = KIND == kFirst ? uint32_t(tile_base + p) : vals_in[tile_base + p];
        const uint32_t g = base + p;
        keys_out[g] = KIND == kLast ? ops.decode(keys[u], v) : keys[u];
        vals_out[g] = ValOut(v);
      }
    }
    return;
  }

  // ---- (warp, digit) offsets within the tile ----
  if (tid < kDigits) {
#pragma unroll
    for (int w = 0; w < W; ++w) s_hist[w * kDigits + tid] += tile_excl;
  }
  __syncthreads();

  // ---- ranks within the tile: a warp's keys in order (u, then lane), each digit's leader lane bumping
  // the (warp, digit) offset by its peers ----
  uint32_t ranks[I];
  const uint32_t le = lanemask_le();
#pragma unroll
  for (int u = 0; u < I; ++u) {
    const uint32_t d = digit(keys[u]);
    const uint32_t peers = warp::match_bits<8>(d);
    const int leader = 31 - __clz(peers);
    uint32_t old = 0;
    if (lane == leader) old = atomicAdd(&s_hist[warp * kDigits + d], uint32_t(__popc(peers)));
    old = __shfl_sync(kFullMask, old, leader);
    ranks[u] = old + __popc(peers & le) - 1;
  }

  // ---- values in (loads stay in flight over the key scatter and the look-back), keys and
  // values to shared memory in tile-sorted order ----
  uint32_t vals[I];
  if constexpr (KIND != kFirst) {
    load_striped<I>(vals_in + tile_base, full, tile_items, warp_base, lane, vals);
  }
#pragma unroll
  for (int u = 0; u < I; ++u) s_keys[ranks[u]] = keys[u];

  // ---- global offsets: look-back ----
  if (tid < kDigits) {
    const uint32_t excl = tile == 0 ? 0u : lookback<Cfg::LB_BATCH>(status, tile, tid, count);
    s_offs[tid] = bins[tid] + excl - tile_excl;  // >= 0: bins[d] counts this tile's keys below d
  }

#pragma unroll
  for (int u = 0; u < I; ++u) {
    s_vals[ranks[u]] = KIND == kFirst ? uint32_t(tile_base + warp_base + u * 32 + lane) : vals[u];
  }
  __syncthreads();

  // ---- write out: consecutive threads take consecutive sorted slots (runs of one digit) ----
#pragma unroll
  for (int u = 0; u < I; ++u) {
    const int i = tid + u * T;
    if (full || i < tile_items) {  // slots >= tile_items hold the padding (largest key, last)
      const uint32_t k = s_keys[i];
      const uint32_t v = s_vals[i];
      const uint32_t g = s_offs[digit(k)] + uint32_t(i);
      keys_out[g] = KIND == kLast ? ops.decode(k, v) : k;
      vals_out[g] = ValOut(v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------
// ctrl buffer (u32 words): hist[4][256] | bins[4][256] | counters[64] (4 tile counters, done) |
// status[4][num_tiles][256]. All of it is zeroed by one memset per sort.
inline size_t num_tiles(uint32_t n, int tile) { return (size_t(n) + tile - 1) / tile; }
inline size_t ctrl_words(uint32_t n, int tile) { return 2 * 4 * kDigits + 64 + 4 * num_tiles(n, tile) * kDigits; }

// Dynamic shared memory above 48 KB needs the kernel's opt-in: set on every call (cheap next to a sort,
// and right for whichever device is current).
template <class Cfg, int KIND, class Ops, typename ValOut>
void launch_pass(const uint32_t* kin, const uint32_t* vin, uint32_t* kout, ValOut* vout, const uint32_t* bins,
                 uint32_t* status, uint32_t* ctr, uint32_t n, int shift, Ops ops, cudaStream_t stream) {
  auto kernel = onesweep_pass_kernel<Cfg, KIND, Ops, ValOut>;
  GPUPRIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::SMEM_BYTES)));
  const unsigned grid = unsigned(num_tiles(n, Cfg::TILE));
  kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, stream>>>(kin, vin, kout, vout, bins, status, ctr, n, shift, ops);
  GPUPRIM_LAUNCH_CHECK();
}

// Sorts n keys (raw bits per Ops) ascending by Ops' order, stably: keys_out = decoded sorted keys,
// idx_out = source indices. keys_in is only read and must not overlap the outputs. The middle passes
// use keys_out and the first 4n bytes of idx_out as their ping-pong buffer, so the workspace is
// only 8n bytes + the look-back state (4 bytes per digit and tile: ~0.5 byte per element).
template <class Cfg, class Ops>
void sort(const uint32_t* keys_in, uint32_t* keys_out, int64_t* idx_out, uint32_t n, Ops ops, Workspace& workspace,
          cudaStream_t stream) {
  if (n == 0) return;
  const size_t tiles = num_tiles(n, Cfg::TILE);
  auto* tmp_keys = static_cast<uint32_t*>(workspace.allocate(size_t(n) * 4));
  auto* tmp_vals = static_cast<uint32_t*>(workspace.allocate(size_t(n) * 4));
  auto* ctrl = static_cast<uint32_t*>(workspace.allocate(ctrl_words(n, Cfg::TILE) * 4));
  uint32_t* hist = ctrl;
  uint32_t* bins = ctrl + 4 * kDigits;
  uint32_t* ctrs = ctrl + 8 * kDigits;  // [0..3] tile counters, [4] histogram done counter
  uint32_t* status = ctrs + 64;
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(ctrl, 0, ctrl_words(n, Cfg::TILE) * 4, stream));
  const auto histogram = histogram_kernel<Ops>;
  const unsigned hist_grid = unsigned(std::min<int64_t>(resident_blocks(histogram, kHistThreads),
                                                        (int64_t(n) + kHistThreads - 1) / kHistThreads));
  histogram<<<hist_grid, kHistThreads, 0, stream>>>(keys_in, n, hist, bins, ctrs + 4, ops);
  GPUPRIM_LAUNCH_CHECK();
  uint32_t* mid_vals = reinterpret_cast<uint32_t*>(idx_out);
  const size_t st = tiles * kDigits;
  launch_pass<Cfg, kFirst>(keys_in, nullptr, tmp_keys, tmp_vals, bins, status, ctrs + 0, n, 0, ops, stream);
  // The middle passes move encoded keys: one instantiation (Ops-independent) for every key kind.
  launch_pass<Cfg, kMiddle>(tmp_keys, tmp_vals, keys_out, mid_vals, bins + kDigits, status + st, ctrs + 1, n, 8,
                            KeyU32{}, stream);
  launch_pass<Cfg, kMiddle>(keys_out, mid_vals, tmp_keys, tmp_vals, bins + 2 * kDigits, status + 2 * st, ctrs + 2, n,
                            16, KeyU32{}, stream);
  launch_pass<Cfg, kLast>(tmp_keys, tmp_vals, keys_out, idx_out, bins + 3 * kDigits, status + 3 * st, ctrs + 3, n,
                          24, ops, stream);
}

}  // namespace onesweep
}  // namespace gpuprim
