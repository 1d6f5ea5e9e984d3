// CUDA softmax rung 6, `split_row`: few long rows. One block per row leaves most of the
// 132 SMs idle when rows are few (64 rows of 262144 columns: 64 blocks), and a row
// longer than a block's on-chip storage cannot be held at all. This rung splits each
// row across several CTAs:
//   * sm_90+ on the 16-byte path (the policy): a thread-block cluster of 1-16 CTAs per
//     row in the hybrid layout (hybrid_row.cuh): each CTA holds its chunk partly in
//     registers, partly in shared memory (cp.async), 4 CTAs an SM, reduces its (max,
//     sum) pair, publishes it in its shared memory, and after one cluster barrier every
//     CTA merges the cluster's pairs through distributed shared memory (DSMEM) and
//     writes its chunk from chip. One read, one write, one cluster barrier per row.
//   * sm_90+ on the scalar path: the same with the chunk in registers only, 1-8 CTAs.
//   * elsewhere, and for rows beyond 16 (8) CTAs: a split across ordinary blocks in two
//     kernels. The first writes each chunk's (max, sum) to a workspace; the second
//     merges the row's pairs and reads its chunk again to write it (1.5x the traffic of
//     one read and one write, but any shape).
//   * a streaming cluster kernel (persistent clusters, a ring of shared-memory stages
//     filled by the bulk copy engine, pairs exchanged by st.async on mbarriers),
//     reachable only through the development driver: it measured below the others.
// Measured on the H100 (2026-11-21), 64x262144: f32 2.33 TB/s (84% of the copy;
// register path 2.06, streaming kernel 2.09, cuDNN 0.21, online 0.66), f16 2.01 (78%;
// register path 1.62, streaming 1.77), bf16 1.97 (76%; register path 1.48, streaming
// 1.65). Below 95%: a row's output cannot start before the whole row is on chip and
// reduced; with 64 rows the tensor is on chip in one or two waves, so the loads, the
// exps with the cluster barrier, and the stores run mostly one after the other, the
// DRAM idling between them. The split across blocks: 64x262144 f32 1.24 TB/s (45%).
//
// Accepts every valid call (the ladder's last resort for `auto`). Scalar path when
// pointers, strides or the row length are not 16-byte multiples. Special values as
// PyTorch (softmax_common.cuh: pairs from chunks of only -inf carry sum 0). In place
// works: every chunk is on chip (cluster) or fully reduced by the first kernel
// (split across blocks) before the same thread overwrites it.
#include "cuda/softmax/grid_row.cuh"
#include "cuda/softmax/hybrid_row.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"
#include "cuda/workspace.cuh"

#if defined(GPUKERN_CUDA)
#include <cooperative_groups.h>
#endif

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
// CTA owns one contiguous chunk of every row (row / cluster size). The chunks of the
// next rows stream into a ring of shared-memory stages through the bulk copy engine
// (cp.async.bulk, one thread issues them, completion on a per-stage mbarrier), so that
// while the cluster reduces and writes row i, rows i+1 .. i+stages-1 are in flight and
// DRAM does not idle. The CTAs of a cluster exchange their (max, sum) pairs by pushing
// them into every CTA's shared memory with st.async, which completes on a per-parity
// mbarrier: no cluster barrier (and no fence on the global stores) per row. The register
// path above runs every row in lockstep (load all, reduce, write all), leaving DRAM idle
// during the exps and the cluster barrier; with few rows that is most of the time.
//
// Why the exchange is safe without a barrier: CTA a pushes its pair for row i+2 into
// slot (and mbarrier) parity p of CTA b only after it received b's pair for row i+1,
// which b sends after its block barrier of row i+1, i.e. after every thread of b has
// finished reading slot p for row i and waiting on its phase.

/// Threads per CTA and the most stages of the ring (the stage count is also bounded by
/// shared memory: stages x chunk bytes).
struct StreamConfig {
  int threads;
  int max_stages;
};
constexpr StreamConfig kStreamConfigs[] = {{256, 2}, {512, 4}};
constexpr int kNumStreamConfigs = static_cast<int>(sizeof(kStreamConfigs) / sizeof(kStreamConfigs[0]));
constexpr int kMaxStreamStages = 8;
/// Bytes per bulk copy instruction: a stage is issued as pieces of at most this size.
[[maybe_unused]] constexpr uint32_t kBulkPiece = 32 * 1024;
/// Shared memory kept free beside the ring (static arrays of the kernel and slack).
constexpr size_t kStreamSmemReserve = 4 * 1024;

constexpr bool stream_configs_valid() {
  for (const StreamConfig c : kStreamConfigs)
    if (c.threads % 64 != 0 || c.threads > 1024 || c.max_stages < 1 || c.max_stages > kMaxStreamStages) return false;
  return true;
}
static_assert(stream_configs_valid(), "stream configs: whole warps, at most 1024 threads, 1..kMaxStreamStages stages");

#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
/// One arrival that also expects `bytes` of transactions in the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
/// Waits for the phase of parity `parity` to complete (acquire, cluster scope: the
/// transactions may come from other CTAs of the cluster).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}
/// Bulk copy global -> this CTA's shared memory, completing `bytes` on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}
/// The shared::cluster address of `local` (this CTA's variable) in CTA `rank`.
__device__ __forceinline__ uint32_t map_rank(const void* local, uint32_t rank) {
  return cluster::map_shared(smem_u32(local), rank);
}
/// Stores a pair into another CTA's shared memory, completing 8 bytes on its mbarrier.
__device__ __forceinline__ void push_pair(uint32_t remote_slot, RowStats s, uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(remote_slot),
               "f"(s.max), "f"(s.sum), "r"(remote_bar)
               : "memory");
}
#endif

template <class T, int V, int kThreads>
__global__ void __launch_bounds__(kThreads, 1)
    split_row_stream_kernel(RowArgs<T> a, int64_t chunk_vecs, int stages) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "bulk copies move whole 16-byte packs");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ uint4 smem_raw[];
  Pack<T, V>* const ring = reinterpret_cast<Pack<T, V>*>(smem_raw);  // [stages][chunk_vecs]
  __shared__ uint64_t full[kMaxStreamStages];                         // a stage's chunk has landed
  __shared__ uint64_t exchanged[2];                                   // every CTA's pair has landed, by row parity
  __shared__ alignas(8) RowStats pairs[2][kMaxCluster];               // the pairs, by row parity and rank
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
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
    mbar_init(&exchanged[0], 1);
    mbar_init(&exchanged[1], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster.sync();  // every CTA's barriers initialized before any CTA pushes into them

  // Thread 0 only: the chunk of `row` into stage s (an arrival without bytes past the
  // last row or for an empty chunk, so that every stage's phases stay in step).
  const auto issue = [&](int64_t row, int s) {
    if (row >= a.rows) return;
    mbar_arrive_expect_tx(&full[s], my_bytes);
    const char* src = reinterpret_cast<const char*>(a.x + row * a.ldx + begin * V);
    char* dst = reinterpret_cast<char*>(ring + int64_t(s) * chunk_vecs);
    for (uint32_t off = 0; off < my_bytes; off += kBulkPiece)
      bulk_load(dst + off, src + off, my_bytes - off < kBulkPiece ? my_bytes - off : kBulkPiece, &full[s]);
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) issue(first_row + s * row_step, s);

  int64_t it = 0;
  for (int64_t row = first_row; row < a.rows; row += row_step, ++it) {
    const int s = static_cast<int>(it % stages);
    mbar_wait(&full[s], static_cast<uint32_t>((it / stages) & 1));
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
    if (threadIdx.x == 0) mbar_arrive_expect_tx(&exchanged[parity], cluster_size * uint32_t(sizeof(RowStats)));
    if (threadIdx.x < cluster_size)
      push_pair(map_rank(&pairs[parity][rank], threadIdx.x), cta, map_rank(&exchanged[parity], threadIdx.x));
    mbar_wait(&exchanged[parity], static_cast<uint32_t>((it >> 1) & 1));
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
int stream_stages(const CudaContext& ctx, int config, int64_t chunk_vecs) {
  const int64_t avail = static_cast<int64_t>(ctx.smem_per_block_optin) - static_cast<int64_t>(kStreamSmemReserve);
  const int64_t fit = avail / std::max<int64_t>(1, chunk_vecs * kVectorBytes);
  return static_cast<int>(std::min<int64_t>(fit, kStreamConfigs[config].max_stages));
}

/// Smallest power-of-two cluster whose chunks fit at least `min_stages` stages.
int min_stream_cluster(const core::SoftmaxArgs& args, const CudaContext& ctx, int config, int min_stages) {
  const int64_t num_vec = args.cols / vector_elems(args);
  int size = 1;
  while (size <= kMaxCluster && stream_stages(ctx, config, ceil_div<int64_t>(num_vec, size)) < min_stages) size *= 2;
  return size;
}

#if defined(GPUKERN_CUDA)
/// Clusters of `cluster_size` CTAs of this kernel (with `smem` dynamic bytes) that fit
/// on the device at once (the persistent grid), cached; 0 = cannot launch.
int max_active_clusters(const void* kernel, const cudaLaunchConfig_t& config, int device, int cluster_size, size_t smem) {
  return cached_occupancy(std::make_tuple(device, kernel, cluster_size, smem),
                          [&](int* clusters) { return cudaOccupancyMaxActiveClusters(clusters, kernel, &config); });
}

/// Launches the streaming kernel; false (nothing launched) when no cluster of this
/// size fits on the device or not one stage fits in shared memory.
template <class T, int V, int kIndex>
bool launch_stream_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr StreamConfig c = kStreamConfigs[kIndex];
  const auto kernel = split_row_stream_kernel<T, V, c.threads>;
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, cluster_size);
  const int stages = stream_stages(ctx, kIndex, chunk_vecs);
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

// ----- the hybrid cluster path (sm_90+, 16-byte path) -----
// hybrid_row.cuh with kCluster: each CTA holds its chunk partly in registers, partly in
// shared memory, with the register cap that lets min_blocks CTAs share an SM; one
// cluster per row (grid-stride beyond the grid limit), one cluster barrier per row.
// 64x262144 f16 with 256 x 4 + shared memory: clusters of 8 CTAs of 64 KB, 4 CTAs an SM,
// meant to hold the whole tensor (512 CTAs) in one wave; the H100 keeps only 62 such
// clusters resident (cudaOccupancyMaxActiveClusters), so 2 rows run in a second wave.

// "/dN" (depth N): the pipelined statistics of hybrid_row.cuh, the copies N vectors a
// thread ahead of the reduction (64x262144 16-bit: d16 loses 5-10 points; with plain
// copies d8 > d4 > d2, with the evict_first copies of 2026-11-22 d2-d6 alike and d4 3
// points ahead of d8). 1024x4+s1/dN: one 1024-thread CTA an SM holding 16384 vectors
// (64 KB in registers, 192 KB staged), so a 512 KB 16-bit row takes a cluster of 2 and
// 64 rows fit the H100 at once (66 clusters resident), where clusters of 8 CTAs at 4 an
// SM leave 2 of the 64 rows to a second wave (62 resident). /d8 stays for the sweep.
constexpr HybridConfig kHybridClusterConfigs[] = {{256, 8, 4},    {256, 4, 4},    {512, 8, 2},     {256, 4, 4, 8},
                                                  {256, 8, 4, 8}, {512, 4, 2, 8}, {1024, 4, 1, 8}, {1024, 4, 1, 4}};
constexpr int kHybridOneSmConfig = 7;  // 1024x4+s1/d4
constexpr int kNumHybridConfigs = static_cast<int>(sizeof(kHybridClusterConfigs) / sizeof(kHybridClusterConfigs[0]));
static_assert(kHybridOneSmConfig < kNumHybridConfigs && kHybridClusterConfigs[kHybridOneSmConfig].min_blocks == 1,
              "the one-CTA-an-SM policy config");

/// Smallest power-of-two cluster whose CTAs hold the row in hybrid layout `config`.
int min_hybrid_cluster(const core::SoftmaxArgs& args, const CudaContext& ctx, int config) {
  return min_cluster_holding(args, hybrid_capacity(ctx, kHybridClusterConfigs[config]));
}

#if defined(GPUKERN_CUDA)
/// Launches the hybrid cluster kernel; false (nothing launched) when a cluster of this
/// size does not fit on the device.
template <class T, int V, int kIndex>
bool launch_hybrid_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size) {
  constexpr HybridConfig c = kHybridClusterConfigs[kIndex];
  const auto kernel = hybrid_row_kernel<T, V, c.threads, c.packs, c.min_blocks, true, c.depth>;
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, cluster_size);
  const int64_t smem_vecs = std::max<int64_t>(0, chunk_vecs - int64_t(c.threads) * c.packs);
  const size_t bytes = static_cast<size_t>(smem_vecs) * kVectorBytes;
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  if (cluster_size > kMaxPortableCluster)
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int64_t clusters = std::min(args.rows, kMaxGridBlocks / cluster_size);
  ClusterLaunch launch(clusters * cluster_size, c.threads, bytes, ctx.stream, cluster_size);
  if (cluster_size > kMaxPortableCluster) {
    // Non-portable sizes need whole free GPCs: ask the occupancy calculator first.
    launch.config.gridDim = dim3(static_cast<unsigned>(cluster_size));
    if (max_active_clusters(reinterpret_cast<const void*>(kernel), launch.config, ctx.device, cluster_size, bytes) <= 0)
      return false;
    launch.config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_size));
  }
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), chunk_vecs));
  GK_LAUNCH_CHECK();
  return true;
}

template <class T, int V, size_t... I>
bool launch_hybrid_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, int cluster_size,
                           std::index_sequence<I...>) {
  bool launched = false;
  ((index == static_cast<int>(I) ? (launched = launch_hybrid_config<T, V, static_cast<int>(I)>(args, ctx, cluster_size))
                                 : false),
   ...);
  return launched;
}
#endif

// ----- the grid-pipelined path (16-byte path, no clusters; grid_row.cuh) -----
// A persistent cooperative grid, CTA j owning column chunk j of every row, reads of
// later rows overlapping writes of earlier ones. "gTrRsSlL[bB]": T data threads (plus a
// coordinator warp), R rows a step, S stages of shared memory, the merge L steps
// behind, B CTAs an SM (1 if absent). Reachable only through the development driver:
// on the H200 (2026-11-21, NOTES run 7) every configuration took 0.15-0.21 ms for
// 64x262144 whatever the dtype, rows a step, stages or lag (f32 0.87 TB/s at best = 23%
// of the copy, 16-bit 0.41 = 12.5%; the cluster policy 73-75%, the split across blocks
// 51-53%), so the policy does not take it. Run 8 (H200): that time is the kernel's own
// (globaltimer, first CTA start to last CTA end: 155-210 us; host 20-80 us a call, hidden
// behind the GPU), unchanged without the cooperative attribute, with the carveout set,
// with the attributes set once, with a persistent workspace, and nearly so without
// spinning on late partials (-4%). A step costs about 2.5 us per row it holds (64 rows:
// ~150 us), most likely the all-to-all exchange of partials (grid_row.cuh); lag
// coordinator warps overlapping lag exchanges made it slower (0.17-0.68 ms). Run 9
// (H200): one merger CTA a row (one record a row for the others to read) roughly halved
// the time (f32 22 -> 44% of the copy, 16-bit 12.5 -> 30%); handing over between the
// data warps and the coordinator through named barriers instead of a block barrier
// changed nothing (f32 44.8%, f16 31.0%, bf16 30.3% at best; policy 73-75%). Still far
// below the cluster policy: a row's partials, merge and record cross the SMs' memory
// pipelines while those stream data, so each exchange takes microseconds, and rows
// in flight x exchange time must cover it.
constexpr GridConfig kGridConfigs[] = {{256, 4, 6, 3},  {256, 4, 8, 3},  {256, 2, 12, 6}, {256, 2, 10, 4},
                                       {256, 8, 5, 3},  {512, 4, 6, 3},  {256, 1, 16, 8}, {256, 8, 6, 2}};
constexpr int kNumGridConfigs = static_cast<int>(sizeof(kGridConfigs) / sizeof(kGridConfigs[0]));
/// Shared memory kept free beside a grid CTA's ring (its static arrays and slack).
constexpr size_t kGridSmemReserve = 2 * 1024;

constexpr bool grid_configs_valid() {
  for (const GridConfig c : kGridConfigs)
    if (!grid_config_valid(c)) return false;
  return true;
}
static_assert(grid_configs_valid(), "grid configs: whole warp pairs, 1-8 rows a step, lag >= 2, stages >= lag + 2");

/// CTAs of the grid for this call: blocks_per_sm on every SM, at most one per vector.
int64_t grid_parts(const core::SoftmaxArgs& args, const CudaContext& ctx, const GridConfig& c) {
  const int64_t num_vec = args.cols / vector_elems(args);
  return std::max<int64_t>(1, std::min<int64_t>(int64_t(ctx.sm_count) * c.blocks_per_sm, num_vec));
}

/// Dynamic shared memory of a grid CTA: the ring of stages.
size_t grid_smem_bytes(const core::SoftmaxArgs& args, const CudaContext& ctx, const GridConfig& c) {
  const int64_t num_vec = args.cols / vector_elems(args);
  const int64_t parts = grid_parts(args, ctx, c);
  const int64_t chunk_vecs = ceil_div<int64_t>(num_vec, parts);
  return static_cast<size_t>(c.stages) * static_cast<size_t>(c.rows) * static_cast<size_t>(chunk_vecs) * kVectorBytes;
}

/// "" when grid configuration `config` can serve the call, else why not.
std::string grid_reason(const core::SoftmaxArgs& args, const CudaContext& ctx, int config) {
#if !defined(GPUKERN_CUDA)
  (void)args, (void)ctx, (void)config;
  return "the grid path is CUDA-only";
#else
  if (ctx.arch.vendor == core::Vendor::Nvidia && ctx.arch.cc < 80) return "the grid path needs sm_80 (cp.async)";
  if (!vector_path_ok(args)) return "the grid path needs the 16-byte path";
  const size_t bytes = grid_smem_bytes(args, ctx, kGridConfigs[config]);
  if (bytes + kGridSmemReserve > ctx.smem_per_block_optin)
    return "ring of " + std::to_string(bytes) + " bytes exceeds shared memory";
  return {};
#endif
}

#if defined(GPUKERN_CUDA)
/// CTAs of `kernel` an SM with `smem` dynamic bytes, cached; 0 on error.
int grid_blocks_per_sm(const void* kernel, int device, int threads, size_t smem) {
  return cached_occupancy(std::make_tuple(device, kernel, smem), [&](int* blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  });
}

/// Launches the grid kernel cooperatively; false (nothing launched) when the ring does
/// not fit, the CTAs cannot all be resident, or the cooperative launch is refused.
template <class T, int V, int kIndex>
bool launch_grid_config(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr GridConfig c = kGridConfigs[kIndex];
  const auto kernel = grid_row_kernel<T, V, c.threads, c.rows, c.stages, c.lag>;
  if (!grid_reason(args, ctx, kIndex).empty()) return false;
  const int threads = c.threads + ctx.warp_size;
  const int64_t parts = grid_parts(args, ctx, c);
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, parts);
  const size_t smem = grid_smem_bytes(args, ctx, c);
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  // Every CTA waits on every other: all must be resident at once.
  if (int64_t(grid_blocks_per_sm(reinterpret_cast<const void*>(kernel), ctx.device, threads, smem)) * ctx.sm_count < parts)
    return false;
  const size_t ws_bytes = grid_workspace_bytes(c, parts);
  auto* const workspace = static_cast<GridPartial*>(workspace_alloc(ws_bytes, ctx));
  const CooperativeLaunch launch(parts, threads, smem, ctx.stream);
  const cudaError_t launched = cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), static_cast<int>(chunk_vecs),
                                                  workspace, launch_tags(static_cast<uint64_t>(args.rows)));
  if (launched != cudaSuccess) cudaGetLastError();  // refused (e.g. too large to be co-resident): nothing ran
  GK_GPU_CHECK(gpu::free_async(workspace, ctx.stream));
  return launched == cudaSuccess;
}

template <class T, int V, size_t... I>
bool launch_grid_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, std::index_sequence<I...>) {
  bool launched = false;
  ((index == static_cast<int>(I) ? (launched = launch_grid_config<T, V, static_cast<int>(I)>(args, ctx)) : false), ...);
  return launched;
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

enum class Path { Grid, Stream, Hybrid, Registers, Blocks };

/// A plan: the path, its configuration index and cluster size.
struct Plan {
  Path path;
  int config;
  int cluster_size;
};

/// The register cluster plan: the smallest cluster of at most 8 CTAs that holds the row,
/// trying 512 x 8 vectors a CTA, then 512 x 16 (f32 64x262144: 2.06 TB/s against 1.92
/// for 1024 x 8), then 1024 x 8; the split across blocks when none holds it.
Plan register_plan(const core::SoftmaxArgs& args) {
  for (int config : {1, 3, 2}) {
    const int size = min_cluster_size(args, config);
    if (size <= kMaxPortableCluster) return {Path::Registers, config, size};
  }
  return {Path::Blocks, 0, 0};
}

/// The policy: on sm_90+ with the 16-byte path, the hybrid cluster kernel with the
/// smallest cluster that holds the row. f32: 256 x 8 + shared memory, 4 CTAs an SM
/// (64x262144, H100 2026-11-21: 2.33 TB/s = 84% of the copy against 2.29 for 256 x 4
/// and 2.06 for the register path; the pipelined /d8 form measured the same, 84%).
/// 16-bit: 1024 x 4 + shared memory, one CTA an SM, pipelined statistics (/d4), when its
/// clusters cover at least half the SMs (64x262144 in flush mode, 2026-11-22, with the
/// staged copies evict_first: f16 88.9% of the copy, bf16 88.7%, against 87.1% and
/// 86.3% for /d8 and 78-80% for 256 x 4 + s4 in the same runs); with fewer
/// rows, 256 x 4 + shared memory, 4 CTAs an SM, which spreads them over more SMs
/// (not measured against each other there). The register plan without the 16-byte path
/// or beyond 16 CTAs; before sm_90, the split across blocks. Never the grid path: it
/// measures below both (NOTES runs 7-9; development configurations only).
Plan pick_plan(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (!ctx.cluster_launch) return {Path::Blocks, 0, 0};
  if (vector_path_ok(args)) {
    if (args.dtype != core::DType::F32) {
      const int size = min_hybrid_cluster(args, ctx, kHybridOneSmConfig);
      if (size <= kMaxPortableCluster && args.rows * size >= ctx.sm_count / 2)
        return {Path::Hybrid, kHybridOneSmConfig, size};
    }
    const int config = args.dtype == core::DType::F32 ? 0 : 1;
    const int size = min_hybrid_cluster(args, ctx, config);
    if (size <= kMaxCluster) return {Path::Hybrid, config, size};
  }
  return register_plan(args);
}

/// Runs a plan; false when a streaming plan found no room for its cluster (nothing ran).
bool try_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, Plan plan) {
  const bool vec = vector_path_ok(args);
  bool ran = true;
  with_storage_type(args.dtype, [&](auto tag) {
    using T = decltype(tag);
#if defined(GPUKERN_CUDA)
    if (plan.path == Path::Grid) {
      if constexpr (sizeof(T) * kVectorElems<T> == kVectorBytes) {
        constexpr auto kSeq = std::make_index_sequence<kNumGridConfigs>{};
        ran = vec && launch_grid_indexed<T, kVectorElems<T>>(plan.config, args, ctx, kSeq);
      }
      return;
    }
    if (plan.path == Path::Stream) {
      constexpr auto kSeq = std::make_index_sequence<kNumStreamConfigs>{};
      ran = launch_stream_indexed<T, kVectorElems<T>>(plan.config, args, ctx, plan.cluster_size, kSeq);
      return;
    }
    if (plan.path == Path::Hybrid) {
      if constexpr (sizeof(T) * kVectorElems<T> == kVectorBytes) {
        constexpr auto kSeq = std::make_index_sequence<kNumHybridConfigs>{};
        ran = launch_hybrid_indexed<T, kVectorElems<T>>(plan.config, args, ctx, plan.cluster_size, kSeq);
      }
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

void run_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, Plan plan) {
  if (!try_plan(args, ctx, plan)) try_plan(args, ctx, register_plan(args));
}

}  // namespace


void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  run_plan(args, ctx, pick_plan(args, ctx));
}

std::vector<std::string> split_row_config_names() {
  std::vector<std::string> names;
  for (const auto& c : kClusterConfigs) names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs));
  for (const auto& c : kStreamConfigs)
    names.push_back("t" + std::to_string(c.threads) + "s" + std::to_string(c.max_stages));
  for (const auto& c : kHybridClusterConfigs)
    names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs) + "+s" + std::to_string(c.min_blocks) +
                    (c.depth > 0 ? "/d" + std::to_string(c.depth) : std::string()));
  for (const auto& c : kGridConfigs)
    names.push_back("g" + std::to_string(c.threads) + "r" + std::to_string(c.rows) + "s" + std::to_string(c.stages) + "l" +
                    std::to_string(c.lag) + (c.blocks_per_sm > 1 ? "b" + std::to_string(c.blocks_per_sm) : std::string()));
  return names;
}

std::string split_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config, int cluster) {
  if (cluster < 0) {
    run_plan(args, ctx, {Path::Blocks, 0, 0});
    return {};
  }
  constexpr int kFirstGrid = kNumClusterConfigs + kNumStreamConfigs + kNumHybridConfigs;
  if (config < 0 || config >= kFirstGrid + kNumGridConfigs) return "no such config";
  if (config >= kFirstGrid) {
    const int index = config - kFirstGrid;
    if (cluster != 0) return "grid configs take no cluster size";
    if (std::string why = grid_reason(args, ctx, index); !why.empty()) return why;
    if (!try_plan(args, ctx, {Path::Grid, index, 0})) return "cooperative grid refused (CTAs not all resident)";
    return {};
  }
  if (!ctx.cluster_launch) return "no clusters before sm_90";
  if (config >= kNumClusterConfigs + kNumStreamConfigs) {
    if (!vector_path_ok(args)) return "the hybrid kernel needs the 16-byte path";
    const int index = config - kNumClusterConfigs - kNumStreamConfigs;
    const int min_size = min_hybrid_cluster(args, ctx, index);
    const int size = cluster == 0 ? min_size : cluster;
    if (size < min_size) return "row does not fit " + std::to_string(size) + " CTAs";
    if (size > kMaxCluster || (size & (size - 1)) != 0) return "cluster size " + std::to_string(size) + " unsupported";
    if (!try_plan(args, ctx, {Path::Hybrid, index, size}))
      return "no cluster of " + std::to_string(size) + " fits on the device";
    return {};
  }
  const bool stream = config >= kNumClusterConfigs;
  if (stream && !vector_path_ok(args)) return "the streaming kernel needs the 16-byte path";
  const int index = stream ? config - kNumClusterConfigs : config;
  // The streaming kernel needs one stage to run, two to overlap; cluster 0 asks for two.
  const int min_size = stream ? min_stream_cluster(args, ctx, index, 1) : min_cluster_size(args, index);
  const int size = cluster != 0 ? cluster : stream ? min_stream_cluster(args, ctx, index, 2) : min_size;
  if (size < min_size) return "row does not fit " + std::to_string(size) + " CTAs";
  if (size > kMaxCluster || (size & (size - 1)) != 0) return "cluster size " + std::to_string(size) + " unsupported";
  if (!try_plan(args, ctx, {stream ? Path::Stream : Path::Registers, index, size}))
    return "no cluster of " + std::to_string(size) + " fits on the device";
  return {};
}

}  // namespace gpukern::cuda::softmax
