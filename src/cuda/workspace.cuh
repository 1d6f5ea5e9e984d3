// Per-call scratch memory of the CUDA rungs and the tags that let kernels of one launch
// recognise each other's flags in it. Shared by the GEMM (wgmma_tma's repack and split
// tail) and the softmax (split_row's grid path).
#pragma once

#include "cuda/context.cuh"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>

namespace gpukern::cuda {

#if defined(GPUKERN_CUDA)
/// Stream-ordered workspace from a library-private pool per device that keeps its memory
/// between calls (release threshold: never), so repeated calls pay for the allocation
/// once, like a BLAS library's workspace. (The default pool's threshold is 0: it hands its
/// memory back at every synchronization and maps it again at the next call, ~50 us of host
/// time a call on an H200.) Free it with cudaFreeAsync on the same stream.
inline void* workspace_alloc(std::size_t bytes, const CudaContext& ctx) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;  // one per device index, any number of devices
  cudaMemPool_t pool;
  {
    std::lock_guard<std::mutex> lock(mutex);
    cudaMemPool_t& slot = pools[ctx.device];
    if (!slot) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = ctx.device;
      cudaMemPool_t created = nullptr;
      GK_GPU_CHECK(cudaMemPoolCreate(&created, &props));
      uint64_t keep = UINT64_MAX;
      GK_GPU_CHECK(cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep));
      slot = created;
    }
    pool = slot;
  }
  void* p = nullptr;
  GK_GPU_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool, ctx.stream));
  return p;
}
#endif

/// The first of `count` consecutive 64-bit tags no other launch of this process gets,
/// none of them 0: a process-wide counter from a random start. A kernel that marks flags
/// in a per-call workspace (which holds whatever an earlier user left) with its own tags
/// needs no clearing pass: stale words carry other tags.
inline uint64_t launch_tags(uint64_t count) {
  static std::atomic<uint64_t> counter{[] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }()};
  for (;;) {
    const uint64_t first = counter.fetch_add(count);
    if (first != 0 && first + count > first) return first;  // the range holds no 0
  }
}

}  // namespace gpukern::cuda
