// Ordered 64-bit accesses to global memory at GPU scope, for flags and values that CTAs
// of one launch exchange through memory: relaxed (a whole word, single-copy atomic, no
// ordering implied), acquire loads and release stores.
#pragma once

#include "cuda/arch/vendor.cuh"

#include <cstdint>

namespace gpukern::cuda::arch {

/// A relaxed (GPU scope, L2) 64-bit store: the word is written whole, nothing is ordered.
__device__ __forceinline__ void st_relaxed_gpu(uint64_t* p, uint64_t v) {
#if defined(GPUKERN_CUDA)
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/// A relaxed (GPU scope, L2) 64-bit load: the word is read whole, nothing is ordered.
__device__ __forceinline__ uint64_t ld_relaxed_gpu(const uint64_t* p) {
  uint64_t v;
#if defined(GPUKERN_CUDA)
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
#else
  v = __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
  return v;
}

/// GPU-scope acquire load of a flag word: later accesses see what the releasing writer
/// wrote before its release store.
__device__ __forceinline__ uint64_t ld_acquire_gpu(const uint64_t* p) {
  uint64_t v;
#if defined(GPUKERN_CUDA)
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
#else
  v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
  return v;
}

/// GPU-scope release store of a flag word: earlier accesses are visible to an acquiring
/// reader that sees the value.
__device__ __forceinline__ void st_release_gpu(uint64_t* p, uint64_t v) {
#if defined(GPUKERN_CUDA)
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

}  // namespace gpukern::cuda::arch
