// block_row's hybrid layout (rung 5, 05_block_row.cu), reused by split_row's clusters
// (rung 6): a row, or a cluster CTA's chunk of one, held on chip partly in registers and
// partly in shared memory, so that several long rows fit on one SM.
//
// Why: with the whole row in registers, a 64 KB row (1024x32768 f16) takes a 512-thread
// block at 58 registers a thread, so two rows share an SM; every block runs load, exps,
// barrier, store in lockstep with its neighbour, and the SM's exps (two per 16-bit
// element) leave DRAM idle between a wave's loads and its stores. Here a 256-thread
// block holds kThreads x kPacks vectors in registers (RowFragment) and the rest of its
// row in shared memory, loaded with cp.async 16-byte copies issued before the register
// loads (all in flight together). With the register cap of __launch_bounds__(kThreads,
// kMinBlocks), 4 such blocks (4 rows) share an SM, so one block's exps overlap its
// neighbours' loads and stores.
//
// Each thread stages, and reads back, only its own shared-memory vectors (j = tid +
// k * kThreads), so the staging needs no barrier, only the thread's cp.async wait. One
// block reduction (one barrier) per row; with kCluster, the CTAs of a cluster then merge
// their pairs through distributed shared memory after one cluster barrier, as in
// split_row's register kernel. f32 softmax keeps exp(x - thread max) in place (registers
// and shared memory), so the output is one multiply. Special values as PyTorch
// (softmax_common.cuh). In place works: a thread writes only vectors it has read into
// registers or its own shared memory, after the row's (cluster's) reduction.
// kDepth > 0 (split_row's one-CTA-an-SM layout) pipelines the statistics with the
// loads: the thread's shared-memory vectors are copied one commit group each, kDepth
// ahead, and each is folded into a running (max, sum) (the sum rescaled when the max
// grows) as soon as it lands, so the exps of the statistics overlap the loads instead
// of following them all. f32 softmax then recomputes the exps of the staged part on
// output (the thread max is known only at the end).
#pragma once

#include "cuda/arch/cluster.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/softmax/softmax_common.cuh"

#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GPUKERN_SOFTMAX_HYBRID_CLUSTER 1
#endif

namespace gpukern::cuda::softmax {

#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
namespace hybrid_detail {
/// The pair at `local` (a shared variable of this CTA) in CTA `rank` of the cluster.
__device__ __forceinline__ RowStats load_remote(const RowStats* local, unsigned rank) {
  const uint32_t remote = arch::map_shared_rank(static_cast<uint32_t>(__cvta_generic_to_shared(local)), rank);
  RowStats s;
  arch::ld_shared_cluster_v2(remote, s.max, s.sum);
  return s;
}
}  // namespace hybrid_detail
#endif

/// A hybrid layout: `threads` x `packs` vectors in registers, the rest of the row in
/// shared memory, with the register cap that lets `min_blocks` blocks share an SM.
struct HybridConfig {
  int threads = 256;
  int packs = 1;
  int min_blocks = 1;
  /// 0: every shared-memory copy issued up front, statistics after all have landed.
  /// d > 0: pipelined; the copies go one vector a thread at a time, d ahead of the
  /// vector being reduced, and each vector is folded into the thread's running (max,
  /// sum) as soon as it lands, so that the exps of the statistics overlap the loads.
  int depth = 0;
  /// Whole warps on either vendor, at most 1024 threads, at least one pack and one block
  /// an SM, a depth of 0 to 16.
  constexpr bool valid() const {
    return threads % 64 == 0 && threads <= 1024 && packs >= 1 && min_blocks >= 1 && depth >= 0 && depth <= 16;
  }
};

/// Shared memory a hybrid block may stage: its share of the SM when `min_blocks` blocks
/// run side by side (opt-in limit per block / min_blocks, less static arrays and the
/// per-block reservation), in 16-byte vectors.
inline int64_t hybrid_smem_vecs(const CudaContext& ctx, HybridConfig c) {
  const int64_t share = static_cast<int64_t>(ctx.smem_per_block_optin) / c.min_blocks - 3 * 1024;
  return share > 0 ? share / kVectorBytes : 0;
}

/// Vectors a hybrid block holds: registers plus its shared-memory share.
inline int64_t hybrid_capacity(const CudaContext& ctx, HybridConfig c) {
  return int64_t(c.threads) * c.packs + hybrid_smem_vecs(ctx, c);
}

/// One staged vector. kStream (split_row's clusters: one wave of few long rows) gives
/// the copy an L2 evict_first policy, so the tensor displaces itself instead of lines
/// still to be written back; block_row's rows (many waves) keep plain copies, which were
/// faster there.
template <bool kStream>
__device__ __forceinline__ void copy_vec(void* smem, const void* gmem) {
  if constexpr (kStream)
    arch::cp_async_16_stream(smem, gmem);
  else
    arch::cp_async_16(smem, gmem);
}

/// kMasked: each pack is checked against the kept columns (with_mask, softmax_common.cuh).
template <class T, int V, int kThreads, int kPacks, int kMinBlocks, bool kCluster, int kDepth = 0, bool kMasked = false>
__global__ void __launch_bounds__(kThreads, kMinBlocks) hybrid_row_kernel(RowArgs<T> a, int64_t chunk_vecs) {
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "cp.async stages whole 16-byte packs");
#if !defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  if constexpr (kCluster) {
    return;  // clusters exist from sm_90 on; the launcher never runs this elsewhere
  } else
#endif
  {
    extern __shared__ uint4 smem_raw[];  // uint4: 16-byte alignment for the packs
    Pack<T, V>* const staged = reinterpret_cast<Pack<T, V>*>(smem_raw);
    __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
    constexpr int64_t kRegVecs = int64_t(kThreads) * kPacks;
    constexpr bool kIsF32 = std::is_same_v<T, float>;
    unsigned rank = 0, cluster_size = 1;
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
    // Double-buffered by row parity: a CTA rewrites slot p two rows later, after the
    // cluster barrier of the row between, which every CTA passes only after reading p.
    __shared__ alignas(8) RowStats cta_stats[2];
    if constexpr (kCluster) {
      rank = arch::cluster_rank();
      cluster_size = arch::cluster_size();
    }
#endif
    // This CTA's chunk [begin, begin + reg_count + smem_vecs): the first reg_count
    // vectors in registers, the rest in shared memory. Offsets inside the chunk are
    // 32-bit (a chunk is on chip); row and column offsets of the tensor stay 64-bit.
    const int64_t num_vec = a.cols / V;
    const int64_t begin = int64_t(rank) * chunk_vecs < num_vec ? int64_t(rank) * chunk_vecs : num_vec;
    const int64_t chunk = begin + chunk_vecs < num_vec ? chunk_vecs : num_vec - begin;
    const int reg_count = static_cast<int>(chunk < kRegVecs ? chunk : kRegVecs);
    const int smem_vecs = static_cast<int>(chunk - reg_count);
    const bool keep_exp = !a.log;
    int parity = 0;
    for (int64_t row = blockIdx.x / cluster_size; row < a.rows; row += gridDim.x / cluster_size) {
      const RowRef<T> ref = a.at(row);
      // The chunk's view of the mask; only its vectors holding a kept element are read
      // (reg_read in registers, smem_read staged), the rest are written with the fill.
      const RowMask mask = ref.mask.shifted(begin * V);
      const int64_t chunk_read = mask.template vecs_read<kMasked>(V, chunk);
      const int reg_read = static_cast<int>(chunk_read < reg_count ? chunk_read : reg_count);
      const int smem_read = static_cast<int>(chunk_read - reg_read);
      const T* x = ref.x + begin * V;
      RowFragment<T, V, kPacks> frag;
      RowStats mine_regs;
      float m = -INFINITY;
      float sum = 0.0f;
      // f32 softmax keeps exp(x - thread max) in shared memory only in the unpipelined
      // form: the pipelined one knows the thread max only after its last vector.
      const bool keep_smem = kIsF32 && keep_exp && kDepth == 0;
      if constexpr (kDepth == 0) {
        // The shared-memory part first: its copies fly while the register loads issue.
        for (int j = threadIdx.x; j < smem_read; j += kThreads) copy_vec<kCluster>(staged + j, x + (reg_count + j) * V);
        arch::cp_async_commit();
        frag.load(x, threadIdx.x, kThreads, reg_read);
        mine_regs = frag.template stats<kMasked>(keep_exp, threadIdx.x, kThreads, mask.limited(int64_t(reg_count) * V));
        arch::cp_async_wait<0>();
        for (int j = threadIdx.x; j < smem_read; j += kThreads)
          m = nan_max(m, row_pack_max<kMasked>(staged[j], reg_count + j, mask));
        for (int j = threadIdx.x; j < smem_read; j += kThreads) {
          Pack<T, V> p = staged[j];
          float v[V];
          row_values<kMasked>(p, reg_count + j, mask, v);
#pragma unroll
          for (int e = 0; e < V; ++e) {
            // A thread whose part holds only -inf sums nothing and keeps zeros.
            const float ev = m == -INFINITY ? 0.0f : fast_exp2((v[e] - m) * kLog2e);
            sum += ev;
            if constexpr (kIsF32) p.v[e] = ev;
          }
          if constexpr (kIsF32) {
            if (keep_smem) staged[j] = p;
          }
        }
      } else {
        // Pipelined: the register loads, then the first kDepth shared-memory vectors of
        // this thread (one commit group each), then for vector k: issue vector k + kDepth,
        // wait until k has landed (all but the kDepth newest groups), fold k in. Every
        // iteration commits a group, empty past the end, so the wait count is constant.
        const int steps = (smem_read + kThreads - 1) / kThreads;
        frag.load(x, threadIdx.x, kThreads, reg_read);
#pragma unroll
        for (int k = 0; k < kDepth; ++k) {
          const int j = threadIdx.x + k * kThreads;
          if (j < smem_read) copy_vec<kCluster>(staged + j, x + (reg_count + j) * V);
          arch::cp_async_commit();
        }
        mine_regs = frag.template stats<kMasked>(keep_exp, threadIdx.x, kThreads, mask.limited(int64_t(reg_count) * V));
        for (int k = 0; k < steps; ++k) {
          const int jn = threadIdx.x + (k + kDepth) * kThreads;
          if (jn < smem_read) copy_vec<kCluster>(staged + jn, x + (reg_count + jn) * V);
          arch::cp_async_commit();
          arch::cp_async_wait<kDepth>();
          const int j = threadIdx.x + k * kThreads;
          if (j >= smem_read) continue;
          const Pack<T, V> p = staged[j];
          const float nm = nan_max(m, row_pack_max<kMasked>(p, reg_count + j, mask));
          if (nm != m) {  // the running max grew (or is NaN): rescale the sum so far
            sum = sum == 0.0f ? 0.0f : sum * fast_exp2((m - nm) * kLog2e);
            m = nm;
          }
          // A thread whose part holds only -inf (so far) sums nothing.
          if (m != -INFINITY) {
            float v[V];
            row_values<kMasked>(p, reg_count + j, mask, v);
#pragma unroll
            for (int e = 0; e < V; ++e) sum += fast_exp2((v[e] - m) * kLog2e);
          }
        }
      }
      const RowStats mine_smem = m == -INFINITY ? empty_stats() : RowStats{m, sum};
      RowStats stats = block_reduce<kThreads>(merge(mine_regs, mine_smem), scratch[parity]);
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
      if constexpr (kCluster) {
        if (threadIdx.x == 0) cta_stats[parity] = stats;
        arch::cluster_sync_aligned();
        // Lane r of every warp reads CTA r's pair; a butterfly over the warp merges them.
        // Same inputs in the same lanes: identical results in every warp of every CTA.
        const unsigned lane = static_cast<unsigned>(gpu::lane_id());
        stats = lane < cluster_size ? hybrid_detail::load_remote(&cta_stats[parity], lane) : empty_stats();
        stats = group_reduce<gpu::kWarpSize>(stats);
      }
#endif
      parity ^= 1;
      T* y = ref.y + begin * V;
      frag.template store<kMasked>(y, threadIdx.x, kThreads, reg_count, mine_regs, stats, mask);
      const OutputScale o = output_scale(stats, a.log);
      // kept: y = e * 2^((m_part - max) log2e) / sum; a part of only -inf holds e = 0.
      const float factor = fast_exp2((mine_smem.max - stats.max) * kLog2e) / stats.sum;
      for (int j = threadIdx.x; j < smem_read; j += kThreads) {
        Pack<T, V> in = staged[j];
        Pack<T, V> out;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float v = gpu::to_float(in.v[e]);
          out.v[e] = gpu::from_float<T>(keep_smem ? v * factor : output_value(v * mask.scale, o));
        }
        mask_output<kMasked>(out, reg_count + j, mask);
        store_pack<T, V>(y + (reg_count + j) * V, out);
      }
      const Pack<T, V> fill = fill_pack<T, V>(mask);
      for (int j = smem_read + threadIdx.x; j < smem_vecs; j += kThreads)
        store_pack<T, V>(y + (reg_count + j) * V, fill);
    }
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
    if constexpr (kCluster) arch::cluster_sync_aligned();  // no CTA exits while another reads its pair
#endif
  }
}

}  // namespace gpukern::cuda::softmax
