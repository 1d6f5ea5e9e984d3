// gk_memread on GPUs: every thread keeps kLoadsInFlight 16-byte loads outstanding over a
// grid-stride walk of the 16-byte-aligned middle of the range, a few blocks per SM, so
// the bytes in flight cover the memory's latency as a copy engine's do; the unaligned
// head and tail (under 16 bytes each) go to the first block. The loads are evict_first in
// L2 (CUDA, sm_80+) where arch::once_read_evict_first says so, as the rungs read their
// once-read operands (up to 8 times the L2's size), and plain beyond. The loaded bytes
// are summed (as a checksum the tests verify, and so no load is dead code): 16-bit lanes of
// 32-bit words, emptied into a 64-bit total once per step; the warps' totals meet in one
// shared word, and a block's in the global sum when one was asked for.
#include "cuda/memread.cuh"

#include "cuda/arch/cache_policy.cuh"

#include "core/decompose.hpp"

#include <algorithm>

namespace gpukern::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kLoadsInFlight = 8;
constexpr int kBlocksPerSm = 4;

/// The bytes of `word` added pairwise into two 16-bit lanes.
__device__ __forceinline__ uint32_t byte_pairs(uint32_t word) {
  return (word & 0x00ff00ffu) + ((word >> 8) & 0x00ff00ffu);
}
__device__ __forceinline__ uint64_t lanes_total(uint32_t lanes) { return (lanes & 0xffffu) + (lanes >> 16); }

template <bool kEvictFirst>
__global__ void __launch_bounds__(kThreads)
    memread_kernel(const uint4* __restrict__ vectors, std::size_t count, const unsigned char* __restrict__ head,
                   int head_bytes, const unsigned char* __restrict__ tail, int tail_bytes,
                   unsigned long long* __restrict__ sum) {
  __shared__ unsigned long long block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const std::size_t stride = std::size_t(gridDim.x) * kThreads;
  std::size_t i = std::size_t(blockIdx.x) * kThreads + threadIdx.x;
  uint64_t total = 0;
  const uint64_t policy = kEvictFirst ? arch::l2_evict_first_policy() : 0;
  auto load = [&](std::size_t v) { return kEvictFirst ? arch::ld_global_nc_v4(vectors + v, policy) : vectors[v]; };
  // A step adds at most 2 * 255 * 4 * kLoadsInFlight to a 16-bit lane: no overflow.
  static_assert(2 * 255 * 4 * kLoadsInFlight < 65536, "a step's byte pairs fit a 16-bit lane");
  for (; i + (kLoadsInFlight - 1) * stride < count; i += kLoadsInFlight * stride) {
    uint4 v[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) v[u] = load(i + u * stride);
    uint32_t lanes = 0;
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u)
      lanes += byte_pairs(v[u].x) + byte_pairs(v[u].y) + byte_pairs(v[u].z) + byte_pairs(v[u].w);
    total += lanes_total(lanes);
  }
  for (; i < count; i += stride) {
    const uint4 v = load(i);
    total += lanes_total(byte_pairs(v.x) + byte_pairs(v.y) + byte_pairs(v.z) + byte_pairs(v.w));
  }
  if (blockIdx.x == 0) {
    if (int(threadIdx.x) < head_bytes) total += head[threadIdx.x];
    if (int(threadIdx.x) < tail_bytes) total += tail[threadIdx.x];
  }
  // The warp's totals by shuffles, then one shared atomic a warp (a 64-bit atomic from
  // every thread of the block on one word serialised at the kernel's end).
  for (int lanes = gpu::kWarpSize / 2; lanes > 0; lanes /= 2) total += gpu::shfl_xor(total, lanes);
  if (gpu::lane_id() == 0) atomicAdd(&block_total, static_cast<unsigned long long>(total));
  __syncthreads();
  if (threadIdx.x == 0 && sum) atomicAdd(sum, block_total);
}

}  // namespace

void memread(const void* src, std::size_t bytes, uint64_t* sum, const CudaContext& ctx) {
  const auto* begin = static_cast<const unsigned char*>(src);
  const std::size_t misalignment = reinterpret_cast<uintptr_t>(begin) % sizeof(uint4);
  const std::size_t head_bytes = std::min(bytes, misalignment ? sizeof(uint4) - misalignment : 0);
  const std::size_t count = (bytes - head_bytes) / sizeof(uint4);
  const std::size_t tail_bytes = bytes - head_bytes - count * sizeof(uint4);
  const auto* vectors = reinterpret_cast<const uint4*>(begin + head_bytes);
  const std::size_t blocks = std::clamp<std::size_t>(core::ceil_div<std::size_t>(count, kThreads), 1,
                                                     std::size_t(std::max(ctx.sm_count, 1)) * kBlocksPerSm);
  // The device word of the sum (none without one).
  const core::ScopedWorkspace<CudaContext> word(sum ? sizeof(unsigned long long) : 0, ctx);
  auto* device_sum = static_cast<unsigned long long*>(word.get());
  if (device_sum) GK_GPU_CHECK(gpu::memset_async(device_sum, 0, sizeof(unsigned long long), ctx.stream));
  const auto* tail = begin + head_bytes + count * sizeof(uint4);
  const auto kernel = arch::once_read_evict_first(bytes, ctx.l2_bytes) ? memread_kernel<true> : memread_kernel<false>;
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, ctx.stream>>>(vectors, count, begin, int(head_bytes), tail,
                                                                     int(tail_bytes), device_sum);
  GK_LAUNCH_CHECK();
  if (!sum) return;
  unsigned long long host_sum = 0;
  GK_GPU_CHECK(gpu::memcpy_async(&host_sum, device_sum, sizeof host_sum, gpu::kDeviceToHost, ctx.stream));
  GK_GPU_CHECK(gpu::stream_synchronize(ctx.stream));
  *sum = host_sum;
}

}  // namespace gpukern::cuda
