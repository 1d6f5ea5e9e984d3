// cp.async (sm_80+): asynchronous copies of 4 or 16 bytes from global to shared memory
// that bypass the registers, committed in groups and waited for by group count.
// Where cp.async does not exist (HIP, older CUDA targets) a copy is done synchronously,
// which keeps the results and loses only the overlap; commit and wait are then no-ops.
#pragma once

#include "cuda/arch/cache_policy.cuh"
#include "cuda/arch/vendor.cuh"

#include <cstdint>

namespace gpukern::cuda::arch {

/// A 4-byte copy. `src_bytes` below 4 fills the destination with zeros, so edge tiles
/// need no separate path: out-of-range elements are copied with src_bytes = 0.
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, int src_bytes) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes) : "memory");
#else
  *smem = src_bytes > 0 ? *gmem : 0.0f;
#endif
}

/// A 16-byte copy with zero fill beyond `src_bytes`; both addresses 16-byte aligned.
/// Bypasses L1 (.cg).
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, int src_bytes) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes) : "memory");
#else
  for (int i = 0; i < 4; ++i) smem[i] = 4 * i < src_bytes ? gmem[i] : 0.0f;
#endif
}

/// A whole 16-byte copy of any data (no zero fill); both addresses 16-byte aligned.
/// Bypasses L1 (.cg).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
#else
  *static_cast<uint4*>(smem) = *static_cast<const uint4*>(gmem);
#endif
}

/// cp_async_16 for data read once: the L2 lines it brings in carry an evict_first
/// policy (cache_policy.cuh), as ld.global.cs gives loads, so a tensor streamed through
/// shared memory displaces itself rather than lines still waiting to be written back.
__device__ __forceinline__ void cp_async_16_stream(void* smem, const void* gmem) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "l"(l2_evict_first_policy())
               : "memory");
#else
  cp_async_16(smem, gmem);
#endif
}

/// Closes the group of copies issued since the previous commit.
__device__ __forceinline__ void cp_async_commit() {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace gpukern::cuda::arch
