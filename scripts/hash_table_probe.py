"""What random atomics and hash-table probe layouts cost on this GPU (cupy kernels, not the library).

python scripts/hash_table_probe.py [n]   (n = 128M by default; needs cupy)

n random int32 keys (distinct) and n random positions, tables of capacity n / load for loads 0.5 / 0.8 / 0.9.
Prints ms per kernel (median of 7, CUDA events) and whether each find returned every value (ok_* = 1.0).
docs/experiments/hash_map.md holds a run.
"""
import sys

import cupy as cp
import numpy as np

SRC = r"""
#define EMPTY32 (-2147483647 - 1)
__device__ __forceinline__ unsigned long long mix(unsigned long long h) {
  h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ull; h ^= h >> 33; return h;
}
__device__ __forceinline__ long long home(int key, long long cap) {
  return (long long)__umul64hi(mix((unsigned long long)(long long)key), (unsigned long long)cap);
}
extern "C" __global__ void gather8(const long long* t, const int* pos, long long n, long long* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  out[i] = t[pos[i]];
}
extern "C" __global__ void cas32(int* t, const int* pos, long long n, int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  out[i] = atomicCAS(t + pos[i], EMPTY32, (int)i);
}
extern "C" __global__ void cas32_red(int* t, unsigned long long* low, const int* pos, long long n, int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int p = pos[i];
  out[i] = atomicCAS(t + p, EMPTY32, (int)i);
  atomicMin(low + p, (unsigned long long)i);
}
extern "C" __global__ void red64(unsigned long long* low, const int* pos, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  atomicMin(low + pos[i], (unsigned long long)i);
}
extern "C" __global__ void cas64(unsigned long long* t, const int* pos, long long n, int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  out[i] = (int)atomicCAS(t + pos[i], 0ull, (unsigned long long)i + 1);
}
extern "C" __global__ void store64(unsigned long long* t, const int* pos, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  t[pos[i]] = (unsigned long long)i;
}
// Packed (key, value) slot, linear probing, CAS-first, from home & home_mask (-1, or ~3 for a 4-slot bucket).
extern "C" __global__ void insert_packed(unsigned long long* t, long long cap, const int* keys, const int* vals,
                                         long long n, long long home_mask) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int k = keys[i];
  unsigned long long want = ((unsigned long long)(unsigned)k << 32) | (unsigned)vals[i];
  unsigned long long empty = ((unsigned long long)(unsigned)EMPTY32 << 32);
  long long s = home(k, cap) & home_mask;
  for (long long step = 0; step < cap; ++step) {
    unsigned long long cur = atomicCAS(t + s, empty, want);
    if (cur == empty || (int)(cur >> 32) == k) return;
    s = s + 1 == cap ? 0 : s + 1;
  }
}
extern "C" __global__ void claim_split(int* t, long long cap, unsigned long long* low, const int* keys, long long n,
                                       long long* slot_of) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int k = keys[i];
  long long s = home(k, cap);
  for (long long step = 0; step < cap; ++step) {
    int cur = atomicCAS(t + s, EMPTY32, k);
    if (cur == EMPTY32 || cur == k) break;
    s = s + 1 == cap ? 0 : s + 1;
  }
  slot_of[i] = s;
  if (low != nullptr) atomicMin(low + s, (unsigned long long)i);
}
extern "C" __global__ void assign_split(int* vals_t, const unsigned long long* low, const int* vals, long long n,
                                        const long long* slot_of) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  long long s = slot_of[i];
  if (low[s] == (unsigned long long)i) vals_t[s] = vals[i];
}
extern "C" __global__ void find_split(const int* t, const int* vt, long long cap, const int* q, long long n, int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int k = q[i];
  long long s = home(k, cap);
  int r = -1;
  for (long long step = 0; step < cap; ++step) {
    int cur = t[s];
    if (cur == k) { r = vt[s]; break; }
    if (cur == EMPTY32) break;
    s = s + 1 == cap ? 0 : s + 1;
  }
  out[i] = r;
}
extern "C" __global__ void find_packed(const unsigned long long* t, long long cap, const int* q, long long n,
                                       int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int k = q[i];
  long long s = home(k, cap);
  int r = -1;
  for (long long step = 0; step < cap; ++step) {
    unsigned long long cur = t[s];
    int ck = (int)(cur >> 32);
    if (ck == k) { r = (int)(unsigned)cur; break; }
    if (ck == EMPTY32) break;
    s = s + 1 == cap ? 0 : s + 1;
  }
  out[i] = r;
}

// Packed slots, home rounded down to a 4-slot (one 32-byte sector) bucket, the bucket read with two 16-byte loads.
extern "C" __global__ void find_bucket(const unsigned long long* t, long long cap, const int* q, long long n,
                                       int* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i >= n) return;
  int k = q[i];
  long long s = home(k, cap) & ~3ll;
  int r = -1;
  for (long long step = 0; step < cap; step += 4) {
    if (s + 4 <= cap) {
      const ulonglong2* p = reinterpret_cast<const ulonglong2*>(t + s);
      ulonglong2 a = p[0], b = p[1];
      unsigned long long w[4] = {a.x, a.y, b.x, b.y};
      bool stop = false;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        int ck = (int)(w[j] >> 32);
        if (ck == k) { r = (int)(unsigned)w[j]; stop = true; break; }
        if (ck == EMPTY32) { stop = true; break; }
      }
      if (stop) break;
      s += 4; if (s >= cap) s = 0;
    } else {
      bool stop = false;
      for (; s < cap; ++s) {
        unsigned long long w = t[s]; int ck = (int)(w >> 32);
        if (ck == k) { r = (int)(unsigned)w; stop = true; break; }
        if (ck == EMPTY32) { stop = true; break; }
      }
      if (stop) break;
      s = 0;
    }
  }
  out[i] = r;
}
"""

mod = cp.RawModule(code=SRC, options=("-std=c++17",))
K = {name: mod.get_function(name) for name in [
    "gather8", "cas32", "cas32_red", "red64", "cas64", "store64", "insert_packed", "claim_split",
    "assign_split", "find_split", "find_packed", "find_bucket"]}


def bench(fn, reps=7):
    times = []
    for _ in range(reps + 1):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(times[1:]))


def launch(name, n, *args):
    K[name](((n + 255) // 256,), (256,), args)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 27
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "n", n)
keys = (cp.random.permutation(2 * n)[:n].astype(cp.int64) * 7 - 2**30).astype(cp.int32)
vals = cp.arange(n, dtype=cp.int32)
perm = cp.random.permutation(n)
q = keys[perm]
want = vals[perm]
N = np.int64(n)
for lf in (0.5, 0.8, 0.9):
    cap = int(np.ceil(n / lf))
    C = np.int64(cap)
    pos = cp.random.randint(0, cap, n, dtype=cp.int32)
    t8 = cp.zeros(cap, dtype=cp.uint64)
    t4 = cp.zeros(cap, dtype=cp.int32)
    low = cp.zeros(cap + 1, dtype=cp.uint64)
    out8 = cp.zeros(n, dtype=cp.int64)
    out4 = cp.zeros(n, dtype=cp.int32)
    slot_of = cp.zeros(n, dtype=cp.int64)
    r = {}
    r["gather8"] = bench(lambda: launch("gather8", n, t8, pos, N, out8))
    r["store64"] = bench(lambda: launch("store64", n, t8, pos, N))
    r["red64"] = bench(lambda: launch("red64", n, low, pos, N))
    r["cas32"] = bench(lambda: (t4.fill(-2**31), launch("cas32", n, t4, pos, N, out4)))
    r["fill4"] = bench(lambda: t4.fill(-2**31))
    r["cas32_red"] = bench(lambda: (t4.fill(-2**31), launch("cas32_red", n, t4, low, pos, N, out4)))
    r["cas64"] = bench(lambda: (t8.fill(0), launch("cas64", n, t8, pos, N, out4)))
    r["fill8"] = bench(lambda: t8.fill(0))
    empty64 = np.uint64((2**31) << 32)

    def ins_packed():
        t8.fill(empty64)
        launch("insert_packed", n, t8, C, keys, vals, N, np.int64(-1))

    def ins_split():
        t4.fill(-2**31)
        low.fill(np.uint64(2**64 - 1))
        launch("claim_split", n, t4, C, low, keys, N, slot_of)
        launch("assign_split", n, t4, low, vals, N, slot_of)

    def claim_only():
        t4.fill(-2**31)
        launch("claim_split", n, t4, C, np.uint64(0), keys, N, slot_of)  # a null low: no bid

    r["insert_packed"] = bench(ins_packed)
    r["find_packed"] = bench(lambda: launch("find_packed", n, t8, C, q, N, out4))
    r['ok_packed'] = float(bool(cp.all(out4 == want)))
    def ins_bucket():
        t8.fill(empty64)
        launch("insert_packed", n, t8, C, keys, vals, N, np.int64(~3))

    r["insert_bucket"] = bench(ins_bucket)
    r["find_bucket"] = bench(lambda: launch("find_bucket", n, t8, C, q, N, out4))
    r['ok_bucket'] = float(bool(cp.all(out4 == want)))
    r["insert_split"] = bench(ins_split)
    r["claim_nobid"] = bench(claim_only)
    vt = cp.zeros(cap, dtype=cp.int32)
    # a split table holding the same pairs, for find
    t4.fill(-2**31)
    launch("claim_split", n, t4, C, low, keys, N, slot_of)
    vt[slot_of] = vals
    r["find_split"] = bench(lambda: launch("find_split", n, t4, vt, C, q, N, out4))
    r['ok_split'] = float(bool(cp.all(out4 == want)))
    print(f"lf {lf} cap {cap}: " + " ".join(f"{k}={v:.2f}" for k, v in r.items()), flush=True)
