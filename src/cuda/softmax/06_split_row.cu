// CUDA softmax rung 6, `split_row`: few long rows. One block per row leaves most of the
// 132 SMs idle when rows are few (64 rows of 262144 columns: 64 blocks), and a row
// longer than a block's on-chip storage cannot be held at all. This rung splits each
// row across several CTAs:
//   * sm_90+ (the policy): a thread-block cluster of 1-8 CTAs per row. Each CTA holds
//     its chunk in registers (read once, 16-byte loads all in flight), reduces its
//     (max, sum) pair, publishes it in its shared memory, and after one cluster barrier
//     every CTA merges the cluster's pairs through distributed shared memory (DSMEM) and
//     writes its chunk from registers. One read, one write, one cluster barrier per row:
//     the traffic of block_row with cluster-size times the parallelism.
//   * elsewhere, and for rows beyond 8 CTAs' registers: a split across ordinary blocks in
//     two kernels. The first writes each chunk's (max, sum) to a workspace; the second
//     merges the row's pairs and reads its chunk again to write it (1.5x the traffic of
//     one read and one write, but any shape).
//   * a streaming variant of the cluster path (persistent clusters, chunks double-
//     buffered in shared memory by cp.async), reachable only through the development
//     driver until it is measured on the long-row shapes (see below).
// Measured on the H100 (2026-11-21): 64x262144 f32 2.06 TB/s (75% of the copy; cuDNN
// 0.21, online 0.65), f16 1.63 (64%), bf16 1.46 (57%); 1024x32768 f32 2.58 (90%).
// Below 95% because every row is a wave in lockstep: all CTAs load, then reduce (the
// exps and the cluster barrier, with DRAM idle), then write. The streaming variant
// overlaps the next rows' loads with that phase; its only measurement so far is
// 4096x4096 f32, 1.28 TB/s (46%: 132 persistent CTAs each holding a quarter-full
// buffer), a shape it is not meant for. The split across blocks: 64x262144 f32 1.33
// TB/s (48%).
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

#include <map>
#include <mutex>
#include <tuple>
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

/// Smallest power-of-two cluster whose CTAs, `capacity` vectors each, hold the row
/// (2 * kMaxCluster when none does).
int min_cluster_holding(const core::SoftmaxArgs& args, int64_t capacity) {
  const int64_t num_vec = args.cols / vector_elems(args);
  int size = 1;
  while (size <= kMaxCluster && capacity * size < num_vec) size *= 2;
  return size;
}

int64_t cluster_capacity(int config) { return int64_t(kClusterConfigs[config].threads) * kClusterConfigs[config].packs; }

/// Smallest power-of-two cluster whose CTAs hold the row in `config`'s registers.
int min_cluster_size(const core::SoftmaxArgs& args, int config) { return min_cluster_holding(args, cluster_capacity(config)); }

#if defined(GPUKERN_CUDA)
/// The launch configuration of a kernel in clusters of `cluster_size` CTAs along x.
/// `config` points at `attribute`: use it where it is made (no copies).
struct ClusterLaunch {
  cudaLaunchAttribute attribute[1];
  cudaLaunchConfig_t config = {};

  ClusterLaunch(int64_t blocks, int threads, size_t smem_bytes, cudaStream_t stream, int cluster_size) {
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = static_cast<unsigned>(cluster_size);
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

template <class T, int V, int kIndex>
void launch_cluster_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr ClusterConfig c = kClusterConfigs[kIndex];
  const auto kernel = split_row_cluster_kernel<T, V, c.threads, c.packs>;
  if (cluster_size > kMaxPortableCluster)
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int64_t num_vec = args.cols / V;
  const int64_t chunk_vecs = ceil_div<int64_t>(num_vec, cluster_size);
  const int64_t clusters = std::min(args.rows, kMaxGridBlocks / cluster_size);
  ClusterLaunch launch(clusters * cluster_size, c.threads, 0, ctx.stream, cluster_size);
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs));
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

// ----- the streaming cluster path (sm_90+, 16-byte path) -----
// Persistent clusters, each walking rows cluster_id, cluster_id + clusters, ...; each
// CTA's chunk of a row lands in shared memory through cp.async, double-buffered: the
// chunk of row i+2 is in flight while row i is reduced and written. The register path
// above runs every row in lockstep (load all, reduce, write all), leaving DRAM idle
// during the exps and the cluster barrier; with few rows that is most of the time.

/// Threads x packs per CTA: the chunk one shared-memory buffer holds (16-byte packs).
struct StreamConfig {
  int threads;
  int packs;
};
constexpr StreamConfig kStreamConfigs[] = {{512, 8}, {256, 8}};
constexpr int kNumStreamConfigs = static_cast<int>(sizeof(kStreamConfigs) / sizeof(kStreamConfigs[0]));

constexpr size_t stream_smem_bytes(StreamConfig c) { return 2 * size_t(c.threads) * c.packs * kVectorBytes; }

constexpr bool stream_configs_valid() {
  for (const StreamConfig c : kStreamConfigs)
    if (c.threads % 64 != 0 || c.threads > 1024 || stream_smem_bytes(c) > 200 * 1024) return false;
  return true;
}
static_assert(stream_configs_valid(),
              "stream configs: whole warps, at most 1024 threads, two buffers within the smallest shared-memory "
              "opt-in of the sm_90 parts we build for");

template <class T, int V, int kThreads, int kPacks>
__global__ void __launch_bounds__(kThreads) split_row_stream_kernel(RowArgs<T> a, int64_t chunk_vecs) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "cp.async moves whole 16-byte packs");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  constexpr int kChunk = kThreads * kPacks;
  extern __shared__ uint4 smem_raw[];
  Pack<T, V>* const buffers = reinterpret_cast<Pack<T, V>*>(smem_raw);  // [2][kChunk]
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  __shared__ RowStats cta_stats[2];  // by row parity, as in the register path
  const unsigned rank = cluster.block_rank();
  const unsigned cluster_size = cluster.num_blocks();
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(rank) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  const int64_t first_row = blockIdx.x / cluster_size;
  const int64_t row_step = gridDim.x / cluster_size;
  constexpr bool kIsF32 = std::is_same_v<T, float>;
  const bool keep_exp = kIsF32 && !a.log;

  // Each thread copies, and later reads, only its own packs (tid + k * kThreads): the
  // buffers need no barrier, only this thread's cp.async wait.
  const auto prefetch = [&](int64_t row, int buffer) {
    if (row < a.rows) {
      const T* x = a.x + row * a.ldx;
      Pack<T, V>* dst = buffers + buffer * kChunk + threadIdx.x;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int64_t vi = begin + threadIdx.x + int64_t(k) * kThreads;
        if (vi < end) gpu::cp_async_16(dst + k * kThreads, x + vi * V);
      }
    }
    gpu::cp_async_commit();  // a group per row slot, empty past the last row: the wait count stays uniform
  };

  prefetch(first_row, 0);
  prefetch(first_row + row_step, 1);
  int parity = 0, buffer = 0;
  for (int64_t row = first_row; row < a.rows; row += row_step, buffer ^= 1) {
    gpu::cp_async_wait<1>();  // all but the newest group (row + row_step) have landed
    Pack<T, V>* mine = buffers + buffer * kChunk + threadIdx.x;

    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (begin + threadIdx.x + int64_t(k) * kThreads < end) m = nan_max(m, pack_max(mine[k * kThreads]));
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      if (begin + threadIdx.x + int64_t(k) * kThreads >= end) continue;
      Pack<T, V> p = mine[k * kThreads];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        // A thread of only -inf sums nothing and keeps zeros (see RowFragment).
        const float e = m == -INFINITY ? 0.0f : fast_exp2((gpu::to_float(p.v[i]) - m) * kLog2e);
        sum += e;
        if constexpr (kIsF32) p.v[i] = e;
      }
      if constexpr (kIsF32) {
        if (keep_exp) mine[k * kThreads] = p;  // f32 softmax: the exps replace x in place
      }
    }
    const RowStats own = m == -INFINITY ? empty_stats() : RowStats{m, sum};
    const RowStats cta = block_reduce<kThreads>(own, scratch[parity]);
    if (threadIdx.x == 0) cta_stats[parity] = cta;
    cluster.sync();
    RowStats stats = empty_stats();
    for (unsigned r = 0; r < cluster_size; ++r) stats = merge(stats, *cluster.map_shared_rank(&cta_stats[parity], r));
    parity ^= 1;

    const OutputScale o = output_scale(stats, a.log);
    const float factor = fast_exp2((own.max - stats.max) * kLog2e) / stats.sum;
    T* y = a.y + row * a.ldy;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t vi = begin + threadIdx.x + int64_t(k) * kThreads;
      if (vi >= end) continue;
      const Pack<T, V> p = mine[k * kThreads];
      Pack<T, V> out;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float v = gpu::to_float(p.v[i]);
        out.v[i] = gpu::from_float<T>(keep_exp ? v * factor : output_value(v, o));
      }
      store_pack<T, V>(y + vi * V, out);
    }
    // This buffer's packs are consumed (by this thread, in program order before the
    // copy is issued): refill it with the row two steps ahead.
    prefetch(row + 2 * row_step, buffer);
  }
  gpu::cp_async_wait<0>();
  cluster.sync();  // no CTA may exit while another still reads its cta_stats
#endif
}

#if defined(GPUKERN_CUDA)
/// Clusters of `cluster_size` CTAs of this kernel that fit on the device at once (the
/// persistent grid), cached per device, kernel and cluster size; 0 = cannot launch.
int max_active_clusters(const void* kernel, const cudaLaunchConfig_t& config, int device, int cluster_size) {
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int>, int> cache;
  const auto key = std::make_tuple(device, kernel, cluster_size);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
    cudaGetLastError();
    clusters = 0;
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache[key] = clusters;
  return clusters;
}

/// Launches the streaming kernel; false (nothing launched) when no cluster of this
/// size fits on the device.
template <class T, int V, int kIndex>
bool launch_stream_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr StreamConfig c = kStreamConfigs[kIndex];
  const auto kernel = split_row_stream_kernel<T, V, c.threads, c.packs>;
  constexpr size_t kSmem = stream_smem_bytes(c);
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem)));
  if (cluster_size > kMaxPortableCluster)
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  // One cluster to ask the occupancy calculator; the grid is set once it has answered.
  ClusterLaunch launch(cluster_size, c.threads, kSmem, ctx.stream, cluster_size);
  const int resident = max_active_clusters(reinterpret_cast<const void*>(kernel), launch.config, ctx.device, cluster_size);
  if (resident <= 0) return false;
  const int64_t clusters = std::min<int64_t>(args.rows, resident);
  launch.config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_size));
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, cluster_size);
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs));
  GK_LAUNCH_CHECK();
  return true;
}

template <class T, int V, size_t... I>
bool launch_stream_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size,
                           std::index_sequence<I...>) {
  bool launched = false;
  ((index == static_cast<int>(I) ? (launched = launch_stream_config<T, V, static_cast<int>(I)>(args, ctx, cluster_size))
                                 : false),
   ...);
  return launched;
}
#endif

int64_t stream_capacity(int config) { return int64_t(kStreamConfigs[config].threads) * kStreamConfigs[config].packs; }

/// Smallest power-of-two cluster whose CTAs' buffers hold the row's chunks.
int min_stream_cluster(const core::SoftmaxArgs& args, int config) { return min_cluster_holding(args, stream_capacity(config)); }

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
      Pack<T, V> out;
      output_pack(load_pack<T, V, Cache::Default>(x + i * V), o, out);
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
  GK_GPU_CHECK(gpu::malloc_async(reinterpret_cast<void**>(&partial), bytes, ctx.stream));
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(grid_y));
  const RowArgs<T> a = typed_args<T>(args);
  split_stats_kernel<T, V><<<grid, kBlockThreads, 0, ctx.stream>>>(a, kBlockChunkVecs, partial);
  const gpu::error_t first = gpu::last_launch_error();
  if (first == gpu::kSuccess) split_write_kernel<T, V><<<grid, kBlockThreads, 0, ctx.stream>>>(a, kBlockChunkVecs, partial);
  const gpu::error_t second = gpu::last_launch_error();
  GK_GPU_CHECK(gpu::free_async(partial, ctx.stream));
  GK_GPU_CHECK(first);
  GK_GPU_CHECK(second);
}

// ----- policy -----

enum class Path { Stream, Registers, Blocks };

/// A plan: the path, its configuration index and cluster size.
struct Plan {
  Path path;
  int config;
  int cluster_size;
};

/// The policy, from the H100 sweep of 2026-11-21: on sm_90+ the register cluster path
/// with the smallest cluster of at most 8 CTAs that holds the row, trying 512 x 8
/// vectors a CTA, then 512 x 16 (f32 64x262144: 2.06 TB/s against 1.92 for 1024 x 8),
/// then 1024 x 8; otherwise, and before sm_90, the split across blocks. The streaming
/// kernel is not in the policy: it has no measurement on the long-row shapes yet.
Plan pick_plan(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (!ctx.cluster_launch) return {Path::Blocks, 0, 0};
  for (int config : {1, 3, 2}) {
    const int size = min_cluster_size(args, config);
    if (size <= kMaxPortableCluster) return {Path::Registers, config, size};
  }
  return {Path::Blocks, 0, 0};
}

/// Runs a plan; false when a streaming plan found no room for its cluster (nothing ran).
bool try_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, Plan plan) {
  const bool vec = vector_path_ok(args);
  bool ran = true;
  with_storage_type(args.dtype, [&](auto tag) {
    using T = decltype(tag);
#if defined(GPUKERN_CUDA)
    if (plan.path == Path::Stream) {
      constexpr auto kSeq = std::make_index_sequence<kNumStreamConfigs>{};
      ran = launch_stream_indexed<T, kVectorElems<T>>(plan.config, args, ctx, plan.cluster_size, kSeq);
      return;
    }
    if (plan.path == Path::Registers) {
      constexpr auto kSeq = std::make_index_sequence<kNumClusterConfigs>{};
      if (vec) launch_cluster_indexed<T, kVectorElems<T>>(plan.config, args, ctx, plan.cluster_size, kSeq);
      else launch_cluster_indexed<T, 1>(plan.config, args, ctx, plan.cluster_size, kSeq);
      return;
    }
#endif
    if (vec) launch_blocks<T, kVectorElems<T>>(args, ctx);
    else launch_blocks<T, 1>(args, ctx);
  });
  return ran;
}

void run_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, Plan plan) { try_plan(args, ctx, plan); }

}  // namespace

std::string split_row_supports(const core::SoftmaxArgs&, const CudaContext&) { return {}; }

void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (args.rows == 0 || args.cols == 0) return;
  run_plan(args, ctx, pick_plan(args, ctx));
}

std::vector<std::string> split_row_config_names() {
  std::vector<std::string> names;
  for (const auto& c : kClusterConfigs) names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs));
  for (const auto& c : kStreamConfigs) names.push_back("s" + std::to_string(c.threads) + "x" + std::to_string(c.packs));
  return names;
}

std::string split_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config, int cluster) {
  if (args.rows == 0 || args.cols == 0) return {};
  if (cluster < 0) {
    run_plan(args, ctx, {Path::Blocks, 0, 0});
    return {};
  }
  if (!ctx.cluster_launch) return "no clusters before sm_90";
  if (config < 0 || config >= kNumClusterConfigs + kNumStreamConfigs) return "no such config";
  const bool stream = config >= kNumClusterConfigs;
  if (stream && !vector_path_ok(args)) return "the streaming kernel needs the 16-byte path";
  const int index = stream ? config - kNumClusterConfigs : config;
  const int min_size = stream ? min_stream_cluster(args, index) : min_cluster_size(args, index);
  const int size = cluster == 0 ? min_size : cluster;
  if (size < min_size) return "row does not fit " + std::to_string(size) + " CTAs";
  if (size > kMaxCluster || (size & (size - 1)) != 0) return "cluster size " + std::to_string(size) + " unsupported";
  if (!try_plan(args, ctx, {stream ? Path::Stream : Path::Registers, index, size}))
    return "no cluster of " + std::to_string(size) + " fits on the device";
  return {};
}

}  // namespace gpukern::cuda::softmax
