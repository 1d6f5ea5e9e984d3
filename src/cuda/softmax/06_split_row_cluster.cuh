// split_row's cluster paths (rung 6, 06_split_row.cu; sm_90 and later): a row split
// across the CTAs of a thread-block cluster, each CTA holding one chunk of it on chip,
// the CTAs' (max, sum) pairs merged through distributed shared memory (DSMEM) after one
// cluster barrier a row. Two layouts of a CTA's chunk:
//   * registers only (split_row_cluster_kernel, here; any path, 16-byte or scalar);
//   * block_row's hybrid layout with kCluster (05_block_row_hybrid.cuh): part in
//     registers, part in shared memory, several CTAs an SM (16-byte path).
// The rung instantiates its policy's layouts; the development driver
// instantiates other candidates from the same templates.
#pragma once

#include "cuda/softmax/05_block_row_hybrid.cuh"
#include "cuda/softmax/softmax_common.cuh"

#if defined(GPUKERN_CUDA)
#include <cooperative_groups.h>
#endif

#include <algorithm>
#include <tuple>

namespace gpukern::cuda::softmax {

/// Largest cluster the policy asks for without the non-portable opt-in (8 is the
/// portable limit; 16 needs the opt-in and whole free GPCs), and the largest at all.
constexpr int kMaxPortableCluster = 8;
constexpr int kMaxCluster = 16;

/// Per-CTA register layout of the register cluster kernel: `threads` x `packs` vectors a
/// chunk.
struct ClusterConfig {
  int threads = 256;
  int packs = 1;
  /// Vectors of a chunk the layout holds.
  constexpr int64_t capacity() const { return int64_t(threads) * packs; }
  /// Whole warps, at most 1024 threads, and data registers (packs x 4 a thread) at most
  /// half of the 64K-register file.
  constexpr bool valid() const {
    return threads % 64 == 0 && threads <= 1024 && packs >= 1 && threads * packs * 4 <= 65536 / 2;
  }
};

/// kMasked: each pack is checked against the kept columns (with_mask, softmax_common.cuh).
template <class T, int V, int kThreads, int kPacks, bool kMasked = false>
__global__ void __launch_bounds__(kThreads) split_row_cluster_kernel(RowArgs<T> a, int64_t chunk_vecs) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const unsigned cluster_size = cluster.num_blocks();
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  // Double-buffered by row parity: a CTA rewrites slot p two rows later, after the
  // cluster barrier of the row between, which every CTA passes only after reading p.
  __shared__ RowStats cta_stats[2];
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(rank) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  const int64_t num_clusters = gridDim.x / cluster_size;
  const bool keep_exp = !a.log;
  int parity = 0;
  for (int64_t row = blockIdx.x / cluster_size; row < a.rows; row += num_clusters) {
    const RowRef<T> ref = a.at_lean(row);
    RowFragment<T, V, kPacks> frag;
    // Only the vectors holding a kept column are read; the rest get the fill on store.
    frag.load(ref.x, begin + threadIdx.x, kThreads, ref.mask.template vecs_read<kMasked>(V, end));
    const RowStats mine =
        frag.template stats<kMasked>(keep_exp, begin + threadIdx.x, kThreads, ref.mask.limited(end * V));
    const RowStats cta = block_reduce<kThreads>(mine, scratch[parity]);
    if (threadIdx.x == 0) cta_stats[parity] = cta;
    cluster.sync();
    // Every thread merges the pairs in rank order: identical results in every CTA.
    RowStats stats = empty_stats();
    for (unsigned r = 0; r < cluster_size; ++r) stats = merge(stats, *cluster.map_shared_rank(&cta_stats[parity], r));
    parity ^= 1;
    frag.template store<kMasked>(ref.y, begin + threadIdx.x, kThreads, end, mine, stats, ref.mask);
  }
  cluster.sync();  // no CTA may exit while another still reads its cta_stats
#endif
}

/// Smallest power-of-two cluster whose CTAs, `capacity` vectors each, hold the row
/// (2 * kMaxCluster when none does).
inline int min_cluster_holding(const core::SoftmaxArgs& args, int64_t capacity) {
  const int64_t num_vec = args.cols / vector_elems(args);
  int size = 1;
  while (size <= kMaxCluster && capacity * size < num_vec) size *= 2;
  return size;
}

#if defined(GPUKERN_CUDA)
/// Clusters of `cluster_size` CTAs of this kernel (with `smem` dynamic bytes) that fit
/// on the device at once, cached; 0 = cannot launch.
inline int max_active_clusters(const void* kernel, const cudaLaunchConfig_t& config, int device, int cluster_size,
                               size_t smem) {
  return cached_occupancy(std::make_tuple(device, kernel, cluster_size, smem),
                          [&](int* clusters) { return cudaOccupancyMaxActiveClusters(clusters, kernel, &config); });
}

/// A launch of `clusters` clusters of `cluster_size` CTAs of `kernel`; for a size beyond
/// kMaxPortableCluster, the non-portable opt-in set and the occupancy calculator asked
/// first (such clusters need whole free GPCs): false when none fits (nothing to launch).
template <class Kernel>
bool cluster_launch_fits(Kernel kernel, ClusterLaunch& launch, const CudaContext& ctx, int cluster_size,
                         int64_t clusters, size_t smem) {
  if (cluster_size <= kMaxPortableCluster) return true;
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  launch.config.gridDim = dim3(static_cast<unsigned>(cluster_size));
  if (max_active_clusters(reinterpret_cast<const void*>(kernel), launch.config, ctx.device, cluster_size, smem) <= 0)
    return false;
  launch.config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_size));
  return true;
}

/// Launches split_row_cluster_kernel in layout kConfig, one cluster of `cluster_size`
/// CTAs a row (grid-stride beyond the grid limit). False (nothing launched) when a
/// cluster of this size does not fit on the device. The cluster must hold the row
/// (min_cluster_holding(args, kConfig.capacity()) <= cluster_size <= kMaxCluster).
template <class T, int V, const ClusterConfig& kConfig>
bool launch_register_cluster(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr ClusterConfig c = kConfig;
  static_assert(c.valid(), "register cluster layout: see ClusterConfig::valid");
  bool ran = false;
  with_mask(args, [&](auto masked) {
    const auto kernel = split_row_cluster_kernel<T, V, c.threads, c.packs, decltype(masked)::value>;
    const int64_t num_vec = args.cols / V;
    const int64_t chunk_vecs = ceil_div<int64_t>(num_vec, cluster_size);
    const int64_t clusters = std::min(total_rows(args), kMaxGridBlocks / cluster_size);
    ClusterLaunch launch(clusters * cluster_size, c.threads, 0, ctx.stream, cluster_size);
    if (!cluster_launch_fits(kernel, launch, ctx, cluster_size, clusters, 0)) return;
    GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs));
    GK_LAUNCH_CHECK();
    ran = true;
  });
  return ran;
}

/// Launches hybrid_row_kernel with kCluster in layout kConfig, one cluster of
/// `cluster_size` CTAs a row (grid-stride beyond the grid limit); 16-byte path only.
/// False (nothing launched) when a cluster of this size does not fit on the device.
/// The cluster must hold the row (min_cluster_holding(args, hybrid_capacity(ctx,
/// kConfig)) <= cluster_size <= kMaxCluster).
template <class T, int V, const HybridConfig& kConfig>
bool launch_hybrid_cluster(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "the hybrid layout stages whole 16-byte packs");
  constexpr HybridConfig c = kConfig;
  static_assert(c.valid(), "hybrid layout: see HybridConfig::valid");
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, cluster_size);
  const int64_t smem_vecs = std::max<int64_t>(0, chunk_vecs - int64_t(c.threads) * c.packs);
  const size_t bytes = static_cast<size_t>(smem_vecs) * kVectorBytes;
  bool ran = false;
  with_mask(args, [&](auto masked) {
    const auto kernel =
        hybrid_row_kernel<T, V, c.threads, c.packs, c.min_blocks, true, c.depth, decltype(masked)::value>;
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    GK_GPU_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    const int64_t clusters = std::min(total_rows(args), kMaxGridBlocks / cluster_size);
    ClusterLaunch launch(clusters * cluster_size, c.threads, bytes, ctx.stream, cluster_size);
    if (!cluster_launch_fits(kernel, launch, ctx, cluster_size, clusters, bytes)) return;
    GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs));
    GK_LAUNCH_CHECK();
    ran = true;
  });
  return ran;
}
#endif

}  // namespace gpukern::cuda::softmax
