// Named barriers (bar.sync / bar.arrive, CUDA only: HIP has none): hardware barriers
// 1-15 over a subset of a block's warps, so a group of warps can synchronize, or hand
// work over to another group, without stopping the rest of the block.
#pragma once

#include "cuda/arch/vendor.cuh"

#if defined(GPUKERN_CUDA)
namespace gpukern::cuda::arch {

/// Hardware barrier `id` (1-15; 0 is __syncthreads') over `threads` threads, a multiple
/// of the warp size: lets a group of warps synchronize without the rest of the block.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Arrival on named barrier `id` without waiting (the waiters use named_barrier_sync
/// with the same thread count): a producer's half of a hand-over.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace gpukern::cuda::arch

#endif
