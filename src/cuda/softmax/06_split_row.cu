// CUDA softmax rung 6, `split_row`: few long rows. One block per row leaves most of the
// 132 SMs idle when rows are few (64 rows of 262144 columns: 64 blocks), and a row
// longer than a block's on-chip storage cannot be held at all. This rung splits each
// row across several CTAs:
//   * sm_90+: a thread-block cluster of 1-8 CTAs per row. Each CTA holds its chunk in
//     registers (read once, 16-byte loads all in flight), reduces its (max, sum) pair,
//     publishes it in its shared memory, and after one cluster barrier every CTA merges
//     the cluster's pairs through distributed shared memory (DSMEM) and writes its chunk
//     from registers. One read, one write, one cluster barrier per row: the traffic of
//     block_row with cluster-size times the parallelism.
//   * elsewhere, and for rows beyond 8 CTAs' registers: a split across ordinary blocks in
//     two kernels. The first writes each chunk's (max, sum) to a workspace; the second
//     merges the row's pairs and reads its chunk again to write it (1.5x the traffic of
//     one read and one write, but any shape).
// Measured on the H100 (2026-11-21): see the device log (64x262144 f32 ~2.7 TB/s).
//
// Accepts every valid call (the ladder's last resort for `auto`). Scalar path when
// pointers, strides or the row length are not 16-byte multiples. Special values as
// PyTorch (softmax_common.cuh: pairs from chunks of only -inf carry sum 0). In place
// works: every chunk is on chip (cluster) or fully reduced by the first kernel
// (split across blocks) before the same thread overwrites it.
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#if defined(GPUKERN_CUDA)
#include <cooperative_groups.h>
#endif

#include <utility>

namespace gpukern::cuda::softmax {
namespace {

// ----- the cluster path (sm_90+) -----

/// Per-CTA register layout of the cluster kernel: `threads` x `packs` vectors a chunk.
struct ClusterConfig {
  int threads;
  int packs;
};
constexpr ClusterConfig kClusterConfigs[] = {{256, 8}, {512, 8}, {1024, 8}, {512, 16}};
constexpr int kNumClusterConfigs = static_cast<int>(sizeof(kClusterConfigs) / sizeof(kClusterConfigs[0]));
/// Largest cluster the policy uses: 8 is the portable limit (16 needs the non-portable
/// opt-in and whole free GPCs).
constexpr int kMaxPortableCluster = 8;
constexpr int kMaxCluster = 16;

constexpr bool cluster_configs_valid() {
  for (const ClusterConfig c : kClusterConfigs)
    if (c.threads % 64 != 0 || c.threads > 1024 || c.packs < 1 || c.threads * c.packs * 4 > 65536 / 2)
      return false;
  return true;
}
static_assert(cluster_configs_valid(),
              "cluster configs: whole warps, at most 1024 threads, and data registers (packs x 4 per thread) "
              "at most half of the 64K-register file");

template <class T, int V, int kThreads, int kPacks>
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
    RowFragment<T, V, kPacks> frag;
    frag.load(a.x + row * a.ldx, begin + threadIdx.x, kThreads, end);
    const RowStats mine = frag.stats(keep_exp);
    const RowStats cta = block_reduce<kThreads>(mine, scratch[parity]);
    if (threadIdx.x == 0) cta_stats[parity] = cta;
    cluster.sync();
    // Every thread merges the pairs in rank order: identical results in every CTA.
    RowStats stats = empty_stats();
    for (unsigned r = 0; r < cluster_size; ++r) stats = merge(stats, *cluster.map_shared_rank(&cta_stats[parity], r));
    parity ^= 1;
    frag.store(a.y + row * a.ldy, begin + threadIdx.x, kThreads, end, mine, stats, a.log);
  }
  cluster.sync();  // no CTA may exit while another still reads its cta_stats
#endif
}

int64_t vector_elems(const core::SoftmaxArgs& args) {
  return vector_path_ok(args) ? kVectorBytes / static_cast<int64_t>(core::dtype_size(args.dtype)) : 1;
}

int64_t cluster_capacity(int config) { return int64_t(kClusterConfigs[config].threads) * kClusterConfigs[config].packs; }

/// Smallest power-of-two cluster whose CTAs hold the row in `config`'s registers.
int min_cluster_size(const core::SoftmaxArgs& args, int config) {
  const int64_t num_vec = args.cols / vector_elems(args);
  int size = 1;
  while (size <= kMaxCluster && cluster_capacity(config) * size < num_vec) size *= 2;
  return size;
}

#if defined(GPUKERN_CUDA)
template <class T, int V, int kIndex>
void launch_cluster_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr ClusterConfig c = kClusterConfigs[kIndex];
  const auto kernel = split_row_cluster_kernel<T, V, c.threads, c.packs>;
  if (cluster_size > kMaxPortableCluster)
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int64_t num_vec = args.cols / V;
  const int64_t chunk_vecs = ceil_div<int64_t>(num_vec, cluster_size);
  const int64_t clusters = std::min(args.rows, kMaxGridBlocks / cluster_size);

  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_size));
  config.blockDim = dim3(c.threads);
  config.dynamicSmemBytes = 0;
  config.stream = ctx.stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(cluster_size);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  GK_GPU_CHECK(cudaLaunchKernelEx(&config, kernel, typed_args<T>(args), chunk_vecs));
  GK_LAUNCH_CHECK();
}

template <class T, int V, size_t... I>
void launch_cluster_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size,
                            std::index_sequence<I...>) {
  ((index == static_cast<int>(I) ? launch_cluster_config<T, V, static_cast<int>(I)>(args, ctx, cluster_size)
                                 : void()),
   ...);
}
#endif

// ----- the split across blocks (any architecture, any length) -----

constexpr int kBlockThreads = 256;
constexpr int kBlockUnroll = 4;
/// Vectors per block: 8 per thread keeps a block's chunk (32 KB of f32) long enough to
/// amortize its reduction, short enough to give long rows many blocks.
constexpr int64_t kBlockChunkVecs = 8 * kBlockThreads;
constexpr int64_t kMaxGridY = 65535;

template <class T, int V>
__global__ void __launch_bounds__(kBlockThreads) split_stats_kernel(RowArgs<T> a, int64_t chunk_vecs, RowStats* partial) {
  __shared__ RowStats scratch[2][kBlockThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(blockIdx.x) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  int parity = 0;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    const T* x = a.x + row * a.ldx;
    RowStats mine = empty_stats();
    for (int64_t base = begin + threadIdx.x; base < end; base += int64_t(kBlockUnroll) * kBlockThreads) {
      Pack<T, V> packs[kBlockUnroll];
#pragma unroll
      for (int u = 0; u < kBlockUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kBlockThreads;
        if (i < end) packs[u] = load_pack<T, V, Cache::Default>(x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kBlockUnroll; ++u) {
        if (base + int64_t(u) * kBlockThreads >= end) break;
        float v[V];
        unpack(packs[u], v);
        mine = add_values(mine, v);
      }
    }
    const RowStats stats = block_reduce<kBlockThreads>(mine, scratch[parity]);
    parity ^= 1;
    if (threadIdx.x == 0) partial[row * gridDim.x + blockIdx.x] = stats;
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kBlockThreads) split_write_kernel(RowArgs<T> a, int64_t chunk_vecs, const RowStats* partial) {
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(blockIdx.x) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    // Every thread merges the row's pairs in chunk order: identical results everywhere.
    RowStats stats = empty_stats();
    for (unsigned s = 0; s < gridDim.x; ++s) stats = merge(stats, partial[row * gridDim.x + s]);
    const OutputScale o = output_scale(stats, a.log);
    const T* x = a.x + row * a.ldx;
    T* y = a.y + row * a.ldy;
    for (int64_t i = begin + threadIdx.x; i < end; i += kBlockThreads) {
      float v[V];
      unpack(load_pack<T, V, Cache::Default>(x + i * V), v);
      Pack<T, V> out;
#pragma unroll
      for (int k = 0; k < V; ++k) out.v[k] = gpu::from_float<T>(output_value(v[k], o));
      store_pack<T, V>(y + i * V, out);
    }
  }
}

template <class T, int V>
void launch_blocks(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int64_t num_vec = args.cols / V;
  const int64_t splits = ceil_div(num_vec, kBlockChunkVecs);
  const int64_t grid_y = std::min(args.rows, kMaxGridY);
  if (splits > kMaxGridBlocks)
    throw core::Error(core::Status::Unsupported, "split_row: row of " + std::to_string(args.cols) + " elements needs more than " +
                                                     std::to_string(kMaxGridBlocks) + " blocks");
  // One (max, sum) pair per row and chunk, in stream-ordered memory: freed after the
  // second kernel without a host synchronization.
  RowStats* partial = nullptr;
  const size_t bytes = static_cast<size_t>(args.rows) * static_cast<size_t>(splits) * sizeof(RowStats);
  GK_GPU_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&partial), bytes, ctx.stream));
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(grid_y));
  const RowArgs<T> a = typed_args<T>(args);
  split_stats_kernel<T, V><<<grid, kBlockThreads, 0, ctx.stream>>>(a, kBlockChunkVecs, partial);
  const cudaError_t first = cudaGetLastError();
  if (first == cudaSuccess) split_write_kernel<T, V><<<grid, kBlockThreads, 0, ctx.stream>>>(a, kBlockChunkVecs, partial);
  const cudaError_t second = cudaGetLastError();
  GK_GPU_CHECK(cudaFreeAsync(partial, ctx.stream));
  GK_GPU_CHECK(first);
  GK_GPU_CHECK(second);
}

// ----- policy -----

/// A plan: cluster config index and cluster size, or config -1 for the split across blocks.
struct Plan {
  int config;
  int cluster_size;
};

/// The policy: on sm_90+ the cluster path with 512 x 8 vectors per CTA and the smallest
/// cluster that holds the row, 1024 x 8 when 512 x 8 would need more than 8 CTAs;
/// otherwise the split across blocks.
Plan pick_plan(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (!ctx.cluster_launch) return {-1, 0};
  for (int config : {1, 2}) {
    const int size = min_cluster_size(args, config);
    if (size <= kMaxPortableCluster) return {config, size};
  }
  return {-1, 0};
}

void run_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, Plan plan) {
  const bool vec = vector_path_ok(args);
  with_storage_type(args.dtype, [&](auto tag) {
    using T = decltype(tag);
#if defined(GPUKERN_CUDA)
    if (plan.config >= 0) {
      constexpr auto kSeq = std::make_index_sequence<kNumClusterConfigs>{};
      if (vec) launch_cluster_indexed<T, kVectorElems<T>>(plan.config, args, ctx, plan.cluster_size, kSeq);
      else launch_cluster_indexed<T, 1>(plan.config, args, ctx, plan.cluster_size, kSeq);
      return;
    }
#endif
    if (vec) launch_blocks<T, kVectorElems<T>>(args, ctx);
    else launch_blocks<T, 1>(args, ctx);
  });
}

}  // namespace

std::string split_row_supports(const core::SoftmaxArgs&, const CudaContext&) { return {}; }

void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (args.rows == 0 || args.cols == 0) return;
  run_plan(args, ctx, pick_plan(args, ctx));
}

std::vector<std::string> split_row_config_names() {
  std::vector<std::string> names;
  for (const auto& c : kClusterConfigs) names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs));
  return names;
}

std::string split_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config, int cluster) {
  if (args.rows == 0 || args.cols == 0) return {};
  if (cluster < 0) {
    run_plan(args, ctx, {-1, 0});
    return {};
  }
  if (!ctx.cluster_launch) return "no clusters before sm_90";
  if (config < 0 || config >= kNumClusterConfigs) return "no such config";
  const int min_size = min_cluster_size(args, config);
  const int size = cluster == 0 ? min_size : cluster;
  if (size < min_size) return "row does not fit " + std::to_string(size) + " CTAs";
  if (size > kMaxCluster || (size & (size - 1)) != 0) return "cluster size " + std::to_string(size) + " unsupported";
  run_plan(args, ctx, {config, size});
  return {};
}

}  // namespace gpukern::cuda::softmax
