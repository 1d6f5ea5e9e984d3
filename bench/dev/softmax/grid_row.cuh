// A development candidate of split_row, not in the module (its policy never picks it):
// the grid-pipelined path. Few long rows split across a persistent grid of ordinary CTAs
// (no clusters), reads of later rows streaming while earlier rows are written, as in a
// copy.
//
// Why it was tried: with few rows (64x262144) the cluster paths hold the whole tensor on
// chip in one wave, so every CTA reads its whole chunk, reduces, then writes: DRAM reads
// and writes run one after the other with idle gaps. Here a grid of P co-resident CTAs
// (a cooperative launch) splits the columns: CTA j owns column chunk j of every row and
// walks the rows in order, kRows rows a step, through a ring of kStages shared-memory
// stages filled by cp.async 16-byte copies. At step s a CTA
//   * reduces its chunk of the step's rows (their copies landed) to (max, sum) partials
//     and publishes them in a global workspace;
//   * writes its chunk of the rows of step s - kLag, whose partials from every CTA have
//     been merged meanwhile, and refills that stage with the rows kStages steps on.
// So each SM keeps (kStages - kLag - 1) steps of loads in flight while it stores, and the
// cross-CTA latency of the partials hides behind kLag steps. It measured far below the
// cluster policy (docs/notes/cuda-softmax.md): a row's partials, merge and record cross
// the SMs' memory pipelines while those stream data, so each exchange takes
// microseconds, and rows in flight x exchange time must cover it.
//
// One extra warp per CTA, the coordinator, does the global exchange so that the data
// warps never wait on it: after the step's barrier it merges the data warps' partials
// and publishes them; as the merger of the rows r with r % P == j it then gathers the P
// partials of the previous step's such rows and publishes one merged record a row; last
// it reads the merged records of the rows of step s + 1 - kLag, ready for the data
// warps' next step. The data warps and the coordinator hand over through named barriers.
// (Every CTA gathering every partial itself put thousands of loads a row on the same few
// L2 lines.)
//
// Publication without resets or fences: the workspace (a ring of grid_workspace_steps
// steps, stream-ordered from a pool per call, so garbage) tags each partial with the
// 64-bit tag `tag_base + row`, where the host draws tag_base from a process-wide counter
// (random start) advanced by the row count per launch, so a tag never repeats: no
// memset, no atomics, no counters. The tag rides inside the data (GridPartial: two
// 64-bit words, each a float beside 32 check bits of the tag, stored and loaded whole),
// so a reader validates what it loaded itself. (Release stores and acquire fences made
// each step wait for the SM's copies in flight.) A ring slot is rewritten 2 * kLag + 2
// steps later, when every CTA has read it (a CTA reads step t's partials before it
// publishes step t + kLag, which the writer has seen before it writes).
//
// Special values as PyTorch (softmax_common.cuh; chunks of only -inf carry sum 0). In
// place works: a thread overwrites only vectors it copied into its own shared-memory
// slots kLag steps earlier, and only CTA j reads chunk j. Every partial is merged in the
// same order in every CTA, so all CTAs scale a row with identical statistics.
#pragma once

#include "cuda/arch/barrier.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/memory_order.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/workspace.cuh"

#include <algorithm>
#include <string>
#include <tuple>

namespace gpukern::cuda::softmax::dev {

/// A grid configuration: `threads` data threads (plus one coordinator warp), `rows` rows
/// a step, a ring of `stages` steps of shared memory, the merge `lag` steps behind the
/// reduction, `blocks_per_sm` CTAs on each SM.
struct GridConfig {
  int threads = 256;
  int rows = 1;
  int stages = 4;
  int lag = 2;
  int blocks_per_sm = 1;
};

__host__ __device__ constexpr bool grid_config_valid(GridConfig c) {
  return c.threads % 64 == 0 && c.threads + 64 <= 1024 && c.rows >= 1 && c.rows <= 8 && c.lag >= 2 && c.lag <= 12 &&
         c.stages >= c.lag + 2 && c.blocks_per_sm >= 1;
}

/// Steps of partials the workspace ring holds: a slot is rewritten after every CTA has
/// read it (2 * lag steps at the latest; two more as a margin).
__host__ __device__ constexpr int grid_workspace_steps(GridConfig c) { return 2 * c.lag + 2; }

/// Merged records (GridPartial) are kFinalStride partials apart: one 128-byte line each.
constexpr int kFinalStride = 8;

/// Workspace of a launch over `parts` CTAs: the ring of partials, then the merged records.
__host__ __device__ constexpr size_t grid_workspace_bytes(GridConfig c, int64_t parts) {
  return static_cast<size_t>(grid_workspace_steps(c)) * c.rows * static_cast<size_t>(parts + kFinalStride) * 16;
}

/// One CTA's partial of one row as two 64-bit words, each carrying 32 bits of the row's
/// 64-bit tag beside one float: (max, tag_lo) and (sum, tag_lo ^ tag_hi). Each word is
/// stored and loaded whole (single-copy atomic), so a reader that sees both check halves
/// right has the pair of this row of this launch, with no fence on either side.
struct alignas(16) GridPartial {
  uint64_t max_word;
  uint64_t sum_word;
};
static_assert(sizeof(GridPartial) == 16, "grid_workspace_bytes counts 16-byte partials");

namespace grid_detail {

__device__ __forceinline__ unsigned max_check(uint64_t tag) { return static_cast<unsigned>(tag); }
__device__ __forceinline__ unsigned sum_check(uint64_t tag) {
  return static_cast<unsigned>(tag) ^ static_cast<unsigned>(tag >> 32);
}
__device__ __forceinline__ uint64_t pack_word(float value, unsigned check) {
  return (static_cast<uint64_t>(check) << 32) | __float_as_uint(value);
}

__device__ __forceinline__ void store_word(uint64_t* p, uint64_t v) { arch::st_relaxed_gpu(p, v); }
__device__ __forceinline__ uint64_t load_word(const uint64_t* p) { return arch::ld_relaxed_gpu(p); }

__device__ __forceinline__ void publish(GridPartial* p, RowStats s, uint64_t tag) {
  store_word(&p->max_word, pack_word(s.max, max_check(tag)));
  store_word(&p->sum_word, pack_word(s.sum, sum_check(tag)));
}

/// The statistics a partial holds once both of its words carry `tag` (spins until then).
__device__ __forceinline__ RowStats wait_partial(const GridPartial* p, uint64_t tag) {
  uint64_t max_word = load_word(&p->max_word);
  uint64_t sum_word = load_word(&p->sum_word);
  while (static_cast<unsigned>(max_word >> 32) != max_check(tag)) max_word = load_word(&p->max_word);
  while (static_cast<unsigned>(sum_word >> 32) != sum_check(tag)) sum_word = load_word(&p->sum_word);
  return {__uint_as_float(static_cast<unsigned>(max_word)), __uint_as_float(static_cast<unsigned>(sum_word))};
}

}  // namespace grid_detail

/// The grid-pipelined kernel: launch `blocks` CTAs of kThreads + warp size threads, all
/// co-resident (cooperative launch), with kStages * kRows * chunk_vecs 16-byte packs of
/// dynamic shared memory. `workspace`: grid_workspace_bytes.
template <class T, int V, int kThreads, int kRows, int kStages, int kLag>
__global__ void __launch_bounds__(kThreads + gpu::kWarpSize)
    grid_row_kernel(RowArgs<T> a, int chunk_vecs, GridPartial* workspace, uint64_t tag_base) {
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "cp.async stages whole 16-byte packs");
  static_assert(grid_config_valid({kThreads, kRows, kStages, kLag}), "grid config: see grid_config_valid");
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kWarps = kThreads / gpu::kWarpSize;  // data warps
  constexpr int kRingRows = grid_workspace_steps({kThreads, kRows, kStages, kLag}) * kRows;
  extern __shared__ uint4 smem_raw[];
  Pack<T, V>* const ring = reinterpret_cast<Pack<T, V>*>(smem_raw);  // [kStages][kRows][chunk_vecs]
  // The data warps and the coordinator hand over through named barriers, not a block
  // barrier, so neither waits for the other's global-memory round trips unless it needs
  // their result: "stats" barriers (data warps arrive when a step's warp partials are in
  // warp_stats, the coordinator syncs), one a slot of a ring of kLag + 1 steps, and
  // "final" barriers (the coordinator arrives when a step's merged records are in
  // row_stats, the data warps sync before writing it), two slots. A slot's barrier is
  // reused only after its previous generation completed (the data warps cannot get
  // kLag + 1 steps ahead of the coordinator: they wait for the merged records kLag back).
  constexpr int kStatsSlots = kLag + 1;
  constexpr int kStatsBarrier = 1, kFinalBarrier = 1 + kStatsSlots;
  constexpr int kAll = kThreads + gpu::kWarpSize;
  static_assert(kFinalBarrier + 2 <= 16, "named barriers 1-15");
  __shared__ RowStats warp_stats[kStatsSlots][kRows][kWarps];
  __shared__ RowStats row_stats[2][kRows];

  const int parts = static_cast<int>(gridDim.x);
  // The merged records after the partials: one a row of the ring, 128 bytes apart.
  GridPartial* const finals = workspace + int64_t(kRingRows) * parts;
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(blockIdx.x) * chunk_vecs < num_vec ? int64_t(blockIdx.x) * chunk_vecs : num_vec;
  const int my_vecs = static_cast<int>(begin + chunk_vecs < num_vec ? chunk_vecs : num_vec - begin);
  const int64_t num_steps = (a.rows + kRows - 1) / kRows;
  const int tid = static_cast<int>(threadIdx.x);
  const bool coordinator = tid >= kThreads;
  const int lane = gpu::lane_id();

  // Copies the rows of `step` into its stage: each thread its own vectors (tid + k * kThreads).
  const auto load_step = [&](int64_t step) {
    if (step >= num_steps) return;
    Pack<T, V>* stage = ring + int64_t(step % kStages) * kRows * chunk_vecs;
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = step * kRows + r;
      if (row >= a.rows) break;
      const T* x = a.x + row * a.ldx + begin * V;
      for (int v = tid; v < my_vecs; v += kThreads) arch::cp_async_16(stage + r * chunk_vecs + v, x + int64_t(v) * V);
    }
  };

  if (!coordinator) {
    for (int s = 0; s < kStages; ++s) {
      load_step(s);
      arch::cp_async_commit();
    }
    for (int64_t s = 0; s < num_steps + kLag; ++s) {
      if (s < num_steps) {
        arch::cp_async_wait<kStages - kLag - 1>();
        const Pack<T, V>* stage = ring + int64_t(s % kStages) * kRows * chunk_vecs;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const Pack<T, V>* chunk = stage + r * chunk_vecs;
          float m = -INFINITY;
          for (int v = tid; v < my_vecs; v += kThreads) m = nan_max(m, pack_max(chunk[v]));
          float sum = 0.0f;
          if (m != -INFINITY) {
            for (int v = tid; v < my_vecs; v += kThreads) {
              const Pack<T, V> p = chunk[v];
#pragma unroll
              for (int e = 0; e < V; ++e) sum += fast_exp2((gpu::to_float(p.v[e]) - m) * kLog2e);
            }
          }
          const RowStats w = group_reduce<gpu::kWarpSize>(m == -INFINITY ? empty_stats() : RowStats{m, sum});
          if (lane == 0) warp_stats[s % kStatsSlots][r][gpu::warp_id()] = w;
        }
        arch::named_barrier_arrive(kStatsBarrier + static_cast<int>(s % kStatsSlots), kAll);
      }
      const int64_t t = s - kLag;  // the step written now, once its merged records are in
      if (t >= 0) {
        arch::named_barrier_sync(kFinalBarrier + static_cast<int>(t % 2), kAll);
        Pack<T, V>* stage = ring + int64_t(t % kStages) * kRows * chunk_vecs;
        for (int r = 0; r < kRows; ++r) {
          const int64_t row = t * kRows + r;
          if (row >= a.rows) break;
          const OutputScale o = output_scale(row_stats[t % 2][r], a.log);
          T* y = a.y + row * a.ldy + begin * V;
          const Pack<T, V>* chunk = stage + r * chunk_vecs;
          for (int v = tid; v < my_vecs; v += kThreads) {
            Pack<T, V> out;
            output_pack(chunk[v], o, out);
            store_pack<T, V>(y + int64_t(v) * V, out);
          }
        }
        // The stage's own vectors were read above by this same thread: refill it.
        load_step(t + kStages);
        arch::cp_async_commit();
      }
    }
  } else {
    // Coordinator step s: step s's partials out, merger duty for step s - 1, the merged
    // records of step s + 1 - kLag in (the data warps write that step at their step s + 1).
    for (int64_t s = 0; s <= num_steps + kLag - 2; ++s) {
      if (s < num_steps) arch::named_barrier_sync(kStatsBarrier + static_cast<int>(s % kStatsSlots), kAll);
      if (s < num_steps && lane < kRows && s * kRows + lane < a.rows) {
        // Lane r publishes this CTA's partial of row s * kRows + r.
        RowStats cta = empty_stats();
        for (int w = 0; w < kWarps; ++w) cta = merge(cta, warp_stats[s % kStatsSlots][lane][w]);
        const int64_t row = s * kRows + lane;
        grid_detail::publish(workspace + (row % kRingRows) * parts + blockIdx.x, cta,
                             tag_base + static_cast<uint64_t>(row));
      }
      // Merger duty: row r's partials are merged by CTA r % parts one step after they
      // were published, into one record a row (its own 128-byte line) that the other
      // CTAs read: one load a row and CTA instead of every CTA loading every partial.
      const int64_t tm = s - 1;
      if (tm >= 0 && tm < num_steps) {
        for (int r = 0; r < kRows; ++r) {
          const int64_t row = tm * kRows + r;
          if (row >= a.rows) break;
          if (row % parts != blockIdx.x) continue;
          const uint64_t tag = tag_base + static_cast<uint64_t>(row);
          const GridPartial* part = workspace + (row % kRingRows) * parts;
          RowStats acc = empty_stats();
          for (int e0 = lane; e0 < parts; e0 += 8 * gpu::kWarpSize) {
            uint64_t max_word[8], sum_word[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) {  // 8 loads a lane in flight together
              const int e = e0 + u * gpu::kWarpSize;
              if (e >= parts) continue;
              max_word[u] = grid_detail::load_word(&part[e].max_word);
              sum_word[u] = grid_detail::load_word(&part[e].sum_word);
            }
#pragma unroll
            for (int u = 0; u < 8; ++u) {
              const int e = e0 + u * gpu::kWarpSize;
              if (e >= parts) continue;
              while (static_cast<unsigned>(max_word[u] >> 32) != grid_detail::max_check(tag))
                max_word[u] = grid_detail::load_word(&part[e].max_word);
              while (static_cast<unsigned>(sum_word[u] >> 32) != grid_detail::sum_check(tag))
                sum_word[u] = grid_detail::load_word(&part[e].sum_word);
              acc = merge(acc, {__uint_as_float(static_cast<unsigned>(max_word[u])),
                                __uint_as_float(static_cast<unsigned>(sum_word[u]))});
            }
          }
          acc = group_reduce<gpu::kWarpSize>(acc);
          if (lane == 0) grid_detail::publish(finals + (row % kRingRows) * kFinalStride, acc, tag);
        }
      }
      // The merged records of the step the data warps write next (lane r: row r).
      const int64_t t = s + 1 - kLag;
      if (t >= 0 && t < num_steps && lane < kRows && t * kRows + lane < a.rows) {
        const int64_t row = t * kRows + lane;
        const uint64_t tag = tag_base + static_cast<uint64_t>(row);
        row_stats[t % 2][lane] = grid_detail::wait_partial(finals + (row % kRingRows) * kFinalStride, tag);
      }
      if (t >= 0 && t < num_steps) arch::named_barrier_arrive(kFinalBarrier + static_cast<int>(t % 2), kAll);
    }
  }
  arch::cp_async_wait<0>();
#endif
}

/// Shared memory kept free beside a grid CTA's ring (its static arrays and slack).
constexpr size_t kGridSmemReserve = 2 * 1024;

/// CTAs of the grid for this call: blocks_per_sm on every SM, at most one per vector.
inline int64_t grid_parts(const core::SoftmaxArgs& args, const CudaContext& ctx, const GridConfig& c) {
  const int64_t num_vec = args.cols / vector_elems(args);
  return std::max<int64_t>(1, std::min<int64_t>(int64_t(ctx.sm_count) * c.blocks_per_sm, num_vec));
}

/// Dynamic shared memory of a grid CTA: the ring of stages.
inline size_t grid_smem_bytes(const core::SoftmaxArgs& args, const CudaContext& ctx, const GridConfig& c) {
  const int64_t num_vec = args.cols / vector_elems(args);
  const int64_t parts = grid_parts(args, ctx, c);
  const int64_t chunk_vecs = ceil_div<int64_t>(num_vec, parts);
  return static_cast<size_t>(c.stages) * static_cast<size_t>(c.rows) * static_cast<size_t>(chunk_vecs) * kVectorBytes;
}

/// "" when grid configuration `config` can serve the call, else why not.
inline std::string grid_reason(const core::SoftmaxArgs& args, const CudaContext& ctx, const GridConfig& config) {
#if !defined(GPUKERN_CUDA)
  (void)args, (void)ctx, (void)config;
  return "the grid path is CUDA-only";
#else
  if (ctx.arch.vendor == core::Vendor::Nvidia && ctx.arch.cc < 80) return "the grid path needs sm_80 (cp.async)";
  if (!vector_path_ok(args)) return "the grid path needs the 16-byte path";
  const size_t bytes = grid_smem_bytes(args, ctx, config);
  if (bytes + kGridSmemReserve > ctx.smem_per_block_optin)
    return "ring of " + std::to_string(bytes) + " bytes exceeds shared memory";
  return {};
#endif
}

#if defined(GPUKERN_CUDA)
/// CTAs of `kernel` an SM with `smem` dynamic bytes, cached; 0 on error.
inline int grid_blocks_per_sm(const void* kernel, int device, int threads, size_t smem) {
  return cached_occupancy(std::make_tuple(device, kernel, smem), [&](int* blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  });
}

/// Launches the grid kernel cooperatively; false (nothing launched) when the ring does
/// not fit, the CTAs cannot all be resident, or the cooperative launch is refused.
template <class T, int V, const GridConfig& kConfig>
bool launch_grid(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr GridConfig c = kConfig;
  static_assert(grid_config_valid(c), "grid config: see grid_config_valid");
  const auto kernel = grid_row_kernel<T, V, c.threads, c.rows, c.stages, c.lag>;
  if (!grid_reason(args, ctx, c).empty()) return false;
  const int threads = c.threads + ctx.warp_size;
  const int64_t parts = grid_parts(args, ctx, c);
  const int64_t chunk_vecs = ceil_div<int64_t>(args.cols / V, parts);
  const size_t smem = grid_smem_bytes(args, ctx, c);
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  // Every CTA waits on every other: all must be resident at once.
  if (int64_t(grid_blocks_per_sm(reinterpret_cast<const void*>(kernel), ctx.device, threads, smem)) * ctx.sm_count <
      parts)
    return false;
  const size_t ws_bytes = grid_workspace_bytes(c, parts);
  auto* const workspace = static_cast<GridPartial*>(workspace_alloc(ws_bytes, ctx));
  const CooperativeLaunch launch(parts, threads, smem, ctx.stream);
  const cudaError_t launched =
      cudaLaunchKernelEx(&launch.config, kernel, typed_args<T>(args), static_cast<int>(chunk_vecs), workspace,
                         launch_tags(static_cast<uint64_t>(args.rows)));
  if (launched != cudaSuccess) cudaGetLastError();  // refused (e.g. too large to be co-resident): nothing ran
  GK_GPU_CHECK(gpu::free_async(workspace, ctx.stream));
  return launched == cudaSuccess;
}
#endif

}  // namespace gpukern::cuda::softmax::dev
