// L2 cache policies (sm_80+): 64-bit policy words made by createpolicy, passed to the
// .L2::cache_hint forms of loads, stores and copies (cp_async.cuh). A policy of
// evict_first over the whole access marks data read or written once, so it displaces
// itself instead of lines still to be reused or written back.
#pragma once

#include "cuda/arch/vendor.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gpukern::cuda::arch {

/// Streams read once of up to this many times the L2's size load evict_first; longer ones
/// load without a policy. evict_first keeps such a stream from displacing what L2 holds
/// dirty (after a memset, writing it back adds the L2's size to the DRAM traffic, a large
/// share of a range a few times the L2); far beyond the L2 that matters little, and plain
/// loads read faster (gk_memread's stream, skinny's TMA copies of a vocabulary-sized
/// weight). The measurements: docs/notes/llm-gemm.md, "A read-only stream on GPUs" and
/// "skinny's W without an L2 policy beyond 8x the L2".
constexpr std::size_t kEvictFirstL2s = 8;

/// Whether a once-read stream of `bytes` loads evict_first on a device of `l2_bytes` of L2.
inline bool once_read_evict_first(std::size_t bytes, std::size_t l2_bytes) {
  return bytes <= kEvictFirstL2s * std::max<std::size_t>(l2_bytes, 1);
}

/// A policy that makes every L2 line it touches evict_first. 0 where there is none (no
/// cache hints before sm_80, none on HIP).
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy = 0;
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

/// A policy that makes every L2 line it touches evict_last (kept in L2 over others).
/// 0 where there is none.
__device__ __forceinline__ uint64_t l2_evict_last_policy() {
  uint64_t policy = 0;
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

/// A 16-byte read-only load of global memory under L2 policy `policy` (the .L2::cache_hint
/// form, sm_80+), not allocated in L1. A plain load where there are no cache hints.
__device__ __forceinline__ uint4 ld_global_nc_v4(const uint4* p, uint64_t policy) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(policy));
  return v;
#else
  (void)policy;
  return *p;
#endif
}

}  // namespace gpukern::cuda::arch
