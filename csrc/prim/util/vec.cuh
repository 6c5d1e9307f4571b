// Row-kernel building blocks shared by embedding_bag, segment_reduce and index_reduce: aligned vectors of
// Vec row elements (one 16-byte load or store at most) and the accumulator type of an element type.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace gpuprim {

template <int Vec, typename T>
struct alignas(sizeof(T) * Vec) VecOf {
  T items[Vec];
};

template <int Vec, typename T>
__device__ __forceinline__ VecOf<Vec, T> load_vec(const T* p) {
  return *reinterpret_cast<const VecOf<Vec, T>*>(p);
}

template <int Vec, typename T>
__device__ __forceinline__ void store_vec(T* p, const VecOf<Vec, T>& v) {
  *reinterpret_cast<VecOf<Vec, T>*>(p) = v;
}

// A store of a row that nothing reads soon (evict-first in L2: st.global.cs), so that a kernel writing a large
// output keeps the rows it gathers from in L2. 16-byte vectors; narrower ones store plainly.
template <int Vec, typename T>
__device__ __forceinline__ void store_vec_streaming(T* p, const VecOf<Vec, T>& v) {
  if constexpr (sizeof(VecOf<Vec, T>) == 16) {
    uint32_t w[4];
    __builtin_memcpy(w, &v, 16);
    asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                 : "memory");
  } else {
    store_vec<Vec>(p, v);
  }
}

// fp16, bf16 and fp32 accumulate in fp32, fp64 in fp64, integers in int64.
template <typename T> struct AccOf { using type = int64_t; };
template <> struct AccOf<__half> { using type = float; };
template <> struct AccOf<__nv_bfloat16> { using type = float; };
template <> struct AccOf<float> { using type = float; };
template <> struct AccOf<double> { using type = double; };

}  // namespace gpuprim
