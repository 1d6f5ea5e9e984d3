// Programmatic dependent launch (NVIDIA sm_90 and later). A kernel launched with the
// programmatic-stream-serialization attribute may start while the kernel before it in the
// stream is still finishing (its CTAs exiting, its writes being flushed); its CTAs set up
// what touches no global memory (barriers, tensor-map prefetches, register split) in that
// time and then wait here until the previous grid has completed and its writes are
// visible. Without the attribute, or with no kernel before it, the wait returns at once.
// CUDA only (HIP has no equivalent).
#pragma once

#include "cuda/arch/vendor.cuh"

#if defined(GPUKERN_CUDA)
namespace gpukern::cuda::arch {

/// Waits until every grid this one depends on has completed and its memory is visible.
/// Every thread that touches global memory must pass it first.
__device__ __forceinline__ void wait_grid_dependency() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace gpukern::cuda::arch
#endif
