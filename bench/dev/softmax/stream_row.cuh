// A development candidate of split_row, not in the module (its policy never picks it):
// the streaming cluster kernel. Persistent clusters, each walking rows cluster_id,
// cluster_id + clusters, ...; each CTA owns one contiguous chunk of every row (row /
// cluster size). The chunks of the next rows stream into a ring of shared-memory stages
// through the bulk copy engine (cp.async.bulk, one thread issues them, completion on a
// per-stage mbarrier), so that while the cluster reduces and writes row i, rows i+1 ..
// i+stages-1 are in flight. The CTAs of a cluster exchange their (max, sum) pairs by
// pushing them into every CTA's shared memory with st.async, which completes on a
// per-parity mbarrier: no cluster barrier (and no fence on the global stores) per row.
// It measured below the hybrid cluster policy (docs/notes/cuda-softmax.md).
//
// Why the exchange is safe without a barrier: CTA a pushes its pair for row i+2 into
// slot (and mbarrier) parity p of CTA b only after it received b's pair for row i+1,
// which b sends after its block barrier of row i+1, i.e. after every thread of b has
// finished reading slot p for row i and waiting on its phase.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/cluster.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/softmax/06_split_row_cluster.cuh"
#include "cuda/softmax/softmax_common.cuh"

#if defined(GPUKERN_CUDA)
#include <cooperative_groups.h>
#endif

#include <algorithm>

namespace gpukern::cuda::softmax::dev {

constexpr int kMaxStreamStages = 8;

/// Threads per CTA and the most stages of the ring (the stage count is also bounded by
/// shared memory: stages x chunk bytes).
struct StreamConfig {
  int threads = 256;
  int max_stages = 2;
  /// Whole warps, at most 1024 threads, 1..kMaxStreamStages stages.
  constexpr bool valid() const {
    return threads % 64 == 0 && threads <= 1024 && max_stages >= 1 && max_stages <= kMaxStreamStages;
  }
};
/// Bytes per bulk copy instruction: a stage is issued as pieces of at most this size.
[[maybe_unused]] constexpr uint32_t kBulkPiece = 32 * 1024;
/// Shared memory kept free beside the ring (static arrays of the kernel and slack).
constexpr size_t kStreamSmemReserve = 4 * 1024;

#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/// The shared::cluster address of `local` (this CTA's variable) in CTA `rank`.
__device__ __forceinline__ uint32_t map_rank(const void* local, uint32_t rank) {
  return arch::map_shared_rank(arch::smem_addr(local), rank);
}
#endif

template <class T, int V, int kThreads>
__global__ void __launch_bounds__(kThreads, 1) split_row_stream_kernel(RowArgs<T> a, int64_t chunk_vecs, int stages) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "bulk copies move whole 16-byte packs");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ uint4 smem_raw[];
  Pack<T, V>* const ring = reinterpret_cast<Pack<T, V>*>(smem_raw);  // [stages][chunk_vecs]
  __shared__ uint64_t full[kMaxStreamStages];                        // a stage's chunk has landed
  __shared__ uint64_t exchanged[2];                                  // every CTA's pair has landed, by row parity
  __shared__ alignas(8) RowStats pairs[2][kMaxCluster];              // the pairs, by row parity and rank
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  const unsigned rank = cluster.block_rank();
  const unsigned cluster_size = cluster.num_blocks();
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(rank) * chunk_vecs < num_vec ? int64_t(rank) * chunk_vecs : num_vec;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  const int64_t my_vecs = end - begin;
  const uint32_t my_bytes = static_cast<uint32_t>(my_vecs) * kVectorBytes;
  const int64_t first_row = blockIdx.x / cluster_size;
  const int64_t row_step = gridDim.x / cluster_size;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) arch::mbar_init(arch::smem_addr(&full[s]), 1);
    arch::mbar_init(arch::smem_addr(&exchanged[0]), 1);
    arch::mbar_init(arch::smem_addr(&exchanged[1]), 1);
    arch::fence_barrier_init();
  }
  cluster.sync();  // every CTA's barriers initialized before any CTA pushes into them

  // Thread 0 only: the chunk of `row` into stage s (an arrival without bytes past the
  // last row or for an empty chunk, so that every stage's phases stay in step).
  const auto issue = [&](int64_t row, int s) {
    if (row >= a.rows) return;
    arch::mbar_arrive_expect_tx(arch::smem_addr(&full[s]), my_bytes);
    const char* src = reinterpret_cast<const char*>(a.x + row * a.ldx + begin * V);
    char* dst = reinterpret_cast<char*>(ring + int64_t(s) * chunk_vecs);
    for (uint32_t off = 0; off < my_bytes; off += kBulkPiece)
      arch::bulk_load(arch::smem_addr(dst + off), src + off, my_bytes - off < kBulkPiece ? my_bytes - off : kBulkPiece,
                      arch::smem_addr(&full[s]));
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) issue(first_row + s * row_step, s);

  int64_t it = 0;
  for (int64_t row = first_row; row < a.rows; row += row_step, ++it) {
    const int s = static_cast<int>(it % stages);
    arch::mbar_wait_acquire_cluster(arch::smem_addr(&full[s]), static_cast<uint32_t>((it / stages) & 1));
    const Pack<T, V>* chunk = ring + int64_t(s) * chunk_vecs;

    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < my_vecs; i += kThreads) m = nan_max(m, pack_max(chunk[i]));
    float sum = 0.0f;
    if (m != -INFINITY) {
      for (int64_t i = threadIdx.x; i < my_vecs; i += kThreads) {
        const Pack<T, V> p = chunk[i];
#pragma unroll
        for (int e = 0; e < V; ++e) sum += fast_exp2((gpu::to_float(p.v[e]) - m) * kLog2e);
      }
    }
    const RowStats own = m == -INFINITY ? empty_stats() : RowStats{m, sum};
    const int parity = static_cast<int>(it & 1);
    const RowStats cta = block_reduce<kThreads>(own, scratch[parity]);

    // Exchange: lane r of warp 0 pushes this CTA's pair into CTA r's slot [parity][rank].
    if (threadIdx.x == 0)
      arch::mbar_arrive_expect_tx(arch::smem_addr(&exchanged[parity]), cluster_size * uint32_t(sizeof(RowStats)));
    if (threadIdx.x < cluster_size)
      arch::st_async_v2(map_rank(&pairs[parity][rank], threadIdx.x), cta.max, cta.sum,
                        map_rank(&exchanged[parity], threadIdx.x));
    arch::mbar_wait_acquire_cluster(arch::smem_addr(&exchanged[parity]), static_cast<uint32_t>((it >> 1) & 1));
    // Every thread merges the pairs in rank order: identical results in every CTA.
    RowStats stats = empty_stats();
    for (unsigned r = 0; r < cluster_size; ++r) stats = merge(stats, pairs[parity][r]);

    const OutputScale o = output_scale(stats, a.log);
    T* y = a.y + row * a.ldy + begin * V;
    for (int64_t i = threadIdx.x; i < my_vecs; i += kThreads) {
      Pack<T, V> out;
      output_pack(chunk[i], o, out);
      store_pack<T, V>(y + i * V, out);
    }
    __syncthreads();  // every thread is done with stage s
    if (threadIdx.x == 0) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(row + int64_t(stages) * row_step, s);
    }
  }
  cluster.sync();  // no CTA exits while another may still push into it
#endif
}

/// Stages of the ring for chunks of `chunk_vecs` 16-byte packs (0: not even one fits).
inline int stream_stages(const CudaContext& ctx, const StreamConfig& config, int64_t chunk_vecs) {
  const int64_t avail = static_cast<int64_t>(ctx.smem_per_block_optin) - static_cast<int64_t>(kStreamSmemReserve);
  const int64_t fit = avail / std::max<int64_t>(1, chunk_vecs * kVectorBytes);
  return static_cast<int>(std::min<int64_t>(fit, config.max_stages));
}

/// Smallest power-of-two cluster whose chunks fit at least `min_stages` stages.
inline int min_stream_cluster(const core::SoftmaxArgs& args, const CudaContext& ctx, const StreamConfig& config,
                              int min_stages) {
  const int64_t num_vec = args.cols / vector_elems(args);
  int size = 1;
  while (size <= kMaxCluster && stream_stages(ctx, config, ceil_div<int64_t>(num_vec, size)) < min_stages) size *= 2;
  return size;
}

#if defined(GPUKERN_CUDA)
/// Launches the streaming kernel; false (nothing launched) when no cluster of this
/// size fits on the device or not one stage fits in shared memory.
template <class T, int V, const StreamConfig& kConfig>
bool launch_stream(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr StreamConfig c = kConfig;
  static_assert(c.valid(), "stream layout: see StreamConfig::valid");
  const auto kernel = split_row_stream_kernel<T, V, c.threads>;
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, cluster_size);
  const int stages = stream_stages(ctx, c, chunk_vecs);
  if (stages < 1) return false;
  const size_t smem = static_cast<size_t>(stages) * static_cast<size_t>(chunk_vecs) * kVectorBytes;
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  if (cluster_size > kMaxPortableCluster)
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  // One cluster to ask the occupancy calculator; the grid is set once it has answered.
  ClusterLaunch launch(cluster_size, c.threads, smem, ctx.stream, cluster_size);
  const int resident =
      max_active_clusters(reinterpret_cast<const void*>(kernel), launch.config, ctx.device, cluster_size, smem);
  if (resident <= 0) return false;
  const int64_t clusters = std::min<int64_t>(args.rows, resident);
  launch.config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_size));
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs, stages));
  GK_LAUNCH_CHECK();
  return true;
}
#endif

}  // namespace gpukern::cuda::softmax::dev
