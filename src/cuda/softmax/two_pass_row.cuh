// split_row's two-pass path: few long rows read twice, the second time from L2.
//
// Why: the cluster paths hold a whole row on chip, so a CTA loads its chunk, folds the
// statistics, waits at the cluster barrier, and only then stores. On 64x262144 the fold
// lands ~5 us after the last load whatever its order or instruction count (NOTES runs
// 11-12): the DRAM idles while it runs, 84-85% of the copy. Here no CTA waits for its
// own row's statistics. The rows are cut into chunks of kThreads x kPacks vectors and
// every chunk is visited twice:
//   * S (statistics): load the chunk (kept in L2), reduce it to (max, sum), publish the
//     pair in a workspace, forget the data;
//   * W (write): load the row's pairs, merge them, load the chunk again -- an L2 hit --
//     and write its outputs.
// The items run in one sequence, the S items of row r + lag beside the W items of row r:
// virtual block b holds the S items of row b and the W items of row b - lag (2 x chunks
// slots, empty ones skipped), and CTA j of the persistent grid takes items j, j + P,
// j + 2P... So while a row is written, the rows `lag` later are read: DRAM mixes reads
// and writes as in a copy, and the statistics of a row are ready long before its W items
// start (lag is sized so that the grid's P CTAs, which work on the P consecutive items of
// a round at once, never reach a row's W items while its S items are still running). The
// price: the chunk is read twice (the second time from L2, which must hold `lag` rows:
// at most a few MB) and each element's exp is computed twice.
//
// No deadlock: a W item waits only for S items earlier in the sequence, and every CTA
// takes its items in sequence order; all CTAs are resident at once (cooperative launch),
// so the earliest unfinished item can always run. The pairs are GridPartial words tagged
// per launch and row (grid_row.cuh): no reset, no fence. Every W item of a row merges the
// pairs in the same order with the same code, so all chunks of a row are scaled by
// identical statistics. In place works: a chunk's S item has read it before its pair is
// published, and its W item reads each vector before the same thread overwrites it.
// Special values as PyTorch (softmax_common.cuh).
#pragma once

#include "cuda/softmax/grid_row.cuh"
#include "cuda/softmax/softmax_common.cuh"

namespace gpukern::cuda::softmax {

/// A two-pass configuration: `threads` x `packs` vectors a chunk (the chunk in registers),
/// `blocks_per_sm` CTAs an SM, and the lag as `lag_rounds` rounds of the grid's CTAs.
/// stages > 0: the chunks come through a ring of `stages` shared-memory stages, filled by
/// cp.async stages - 1 items ahead (16-byte path only); 0: straight into registers.
struct TwoPassConfig {
  int threads;
  int packs;
  int blocks_per_sm;
  int lag_rounds;
  int stages = 0;
};

__host__ __device__ constexpr bool two_pass_config_valid(TwoPassConfig c) {
  return c.threads % 32 == 0 && c.threads <= 1024 && c.packs >= 1 && c.packs <= 16 && c.blocks_per_sm >= 1 &&
         c.threads * c.blocks_per_sm <= 2048 && c.lag_rounds >= 1 && (c.stages == 0 || c.stages >= 2);
}

/// Dynamic shared memory of a CTA: its ring of stages.
__host__ __device__ constexpr size_t two_pass_smem_bytes(TwoPassConfig c) {
  return static_cast<size_t>(c.stages) * c.threads * (c.packs + 1) * 16;  // chunks, then pairs
}

/// Rows of lag for a grid of `parts` CTAs over rows of `chunks` chunks: at least
/// lag_rounds x parts items between a row's last S item and its first W item.
__host__ __device__ constexpr int64_t two_pass_lag(TwoPassConfig c, int64_t parts, int64_t chunks) {
  return (int64_t(c.lag_rounds) * parts + 2 * chunks - 1) / (2 * chunks) + 1;
}

namespace two_pass_detail {

/// Item `item` of the sequence: an S item (write false) or a W item of `row`'s `chunk`;
/// false for the lag's empty slots and past the end.
struct Item {
  int64_t row, chunk;
  bool write;
};

__device__ __forceinline__ bool decode(int64_t item, int64_t rows, int64_t chunks, int64_t lag, Item& out) {
  const int64_t slots = 2 * chunks;
  // 32-bit division where it fits (the 64-bit one is a ~70-instruction subroutine).
  const int64_t block = (item | slots) >> 32 == 0 ? int64_t(uint32_t(item) / uint32_t(slots)) : item / slots;
  const int64_t slot = item - block * slots;
  out.write = slot >= chunks;
  out.row = out.write ? block - lag : block;
  out.chunk = out.write ? slot - chunks : slot;
  return out.row >= 0 && out.row < rows;
}

/// The first item at or after `item`, stepping by the grid, that is not an empty slot
/// (`total` when none is left).
__device__ __forceinline__ int64_t next_item(int64_t item, int64_t total, int64_t rows, int64_t chunks, int64_t lag) {
  Item it;
  while (item < total && !decode(item, rows, chunks, lag, it)) item += gridDim.x;
  return item < total ? item : total;
}

/// Processes one item whose chunk is in `frag` (vectors begin + tid + k * kThreads).
/// S: reduce and publish the chunk's pair. W: merge the row's pairs, write the chunk.
/// `prefetched`: this thread's copy of pair tid of a W item's row (checked here: taken
/// only if it already carries the row's tag), or null.
template <class T, int V, int kThreads, int kPacks>
__device__ __forceinline__ void process(const RowArgs<T>& a, const Item& it, int64_t begin, int64_t end,
                                        RowFragment<T, V, kPacks>& frag, int64_t chunks, GridPartial* pairs,
                                        unsigned long long tag_base, RowStats (&scratch)[2][kThreads / gpu::kWarpSize],
                                        int& parity, const GridPartial* prefetched = nullptr) {
  const int tid = static_cast<int>(threadIdx.x);
  const unsigned long long tag = tag_base + static_cast<unsigned long long>(it.row);
  GridPartial* const row_pairs = pairs + it.row * chunks;
  if (!it.write) {
    const RowStats cta = block_reduce<kThreads>(frag.stats(false), scratch[parity]);
    parity ^= 1;
    if (tid == 0) grid_detail::publish(row_pairs + it.chunk, cta, tag);
  } else {
    // The pairs are ready by now unless the lag is too short.
    RowStats mine = empty_stats();
    int64_t p = tid;
    if (prefetched != nullptr && p < chunks) {
      RowStats pair;
      if (!grid_detail::valid_partial(*prefetched, tag, pair)) pair = grid_detail::wait_partial(row_pairs + p, tag);
      mine = pair;
      p += kThreads;
    }
    for (; p < chunks; p += kThreads) mine = merge(mine, grid_detail::wait_partial(row_pairs + p, tag));
    const RowStats stats = block_reduce<kThreads>(mine, scratch[parity]);
    parity ^= 1;
    frag.store(a.y + it.row * a.ldy, begin + tid, kThreads, end, mine, stats, a.log);  // nothing kept: exps of x
  }
}

}  // namespace two_pass_detail

/// Registers only: each item's chunk is loaded when the item starts.
template <class T, int V, int kThreads, int kPacks, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    two_pass_row_kernel(RowArgs<T> a, int64_t chunks, int64_t lag, GridPartial* pairs, unsigned long long tag_base) {
  using namespace two_pass_detail;
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  constexpr int64_t kChunkVecs = int64_t(kThreads) * kPacks;
  const int64_t num_vec = a.cols / V;
  const int64_t total = (a.rows + lag) * 2 * chunks;
  const int tid = static_cast<int>(threadIdx.x);
  int parity = 0;
  for (int64_t item = blockIdx.x; item < total; item += gridDim.x) {
    Item it;
    if (!decode(item, a.rows, chunks, lag, it)) continue;  // the lag's empty slots (uniform per CTA)
    const int64_t begin = it.chunk * kChunkVecs;
    const int64_t end = begin + kChunkVecs < num_vec ? begin + kChunkVecs : num_vec;
    RowFragment<T, V, kPacks> frag;
    // S: default caching, the W item reads the chunk again from L2; W: the last use.
    if (!it.write) frag.template load<Cache::Default>(a.x + it.row * a.ldx, begin + tid, kThreads, end);
    else frag.template load<Cache::Streaming>(a.x + it.row * a.ldx, begin + tid, kThreads, end);
    process<T, V, kThreads, kPacks>(a, it, begin, end, frag, chunks, pairs, tag_base, scratch, parity);
  }
}

/// Through a ring of kStages shared-memory stages: the chunks of a CTA's next kStages - 1
/// items are in flight (cp.async) while it works on one, so each SM keeps up to
/// kStages - 1 chunks a CTA of loads outstanding whatever the item's arithmetic. Each
/// thread copies and later reads only its own vectors of a stage: no barrier guards the
/// ring. In place stays safe: a prefetch reads a chunk only its own W item writes.
template <class T, int V, int kThreads, int kPacks, int kMinBlocks, int kStages>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    two_pass_ring_kernel(RowArgs<T> a, int64_t chunks, int64_t lag, GridPartial* pairs, unsigned long long tag_base) {
  static_assert(sizeof(Pack<T, V>) == kVectorBytes, "cp.async moves whole 16-byte packs");
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace two_pass_detail;
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  extern __shared__ uint4 smem_raw[];
  Pack<T, V>* const ring = reinterpret_cast<Pack<T, V>*>(smem_raw);  // [kStages][kPacks][kThreads]
  // A W item's pairs come with its chunk (thread t copies pair t) when a row has at most
  // kThreads chunks, so that no W item waits on an L2 round trip behind the data traffic.
  GridPartial* const pair_ring = reinterpret_cast<GridPartial*>(ring + kStages * kPacks * kThreads);  // [kStages][kThreads]
  const bool prefetch_pairs = chunks <= kThreads;
  constexpr int64_t kChunkVecs = int64_t(kThreads) * kPacks;
  const int64_t num_vec = a.cols / V;
  const int64_t total = (a.rows + lag) * 2 * chunks;
  const int tid = static_cast<int>(threadIdx.x);
  const auto bounds = [&](int64_t item, Item& it, int64_t& begin, int64_t& end) {
    decode(item, a.rows, chunks, lag, it);
    begin = it.chunk * kChunkVecs;
    end = begin + kChunkVecs < num_vec ? begin + kChunkVecs : num_vec;
  };
  const auto fetch = [&](int64_t item, int stage) {
    if (item < total) {
      Item it;
      int64_t begin, end;
      bounds(item, it, begin, end);
      const T* x = a.x + it.row * a.ldx;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int64_t vi = begin + tid + int64_t(k) * kThreads;
        if (vi < end) gpu::cp_async_16(ring + (int64_t(stage) * kPacks + k) * kThreads + tid, x + vi * V);
      }
      if (it.write && prefetch_pairs && tid < chunks)
        gpu::cp_async_16(pair_ring + stage * kThreads + tid, pairs + it.row * chunks + tid);
    }
    gpu::cp_async_commit();  // an empty group past the end keeps the wait counts uniform
  };
  int64_t ahead = next_item(blockIdx.x, total, a.rows, chunks, lag);
  for (int s = 0; s < kStages - 1; ++s) {
    fetch(ahead, s);
    if (ahead < total) ahead = next_item(ahead + gridDim.x, total, a.rows, chunks, lag);
  }
  int parity = 0;
  int stage = 0;
  const Pack<T, V> neg_inf = neg_inf_pack<T, V>();
  for (int64_t item = next_item(blockIdx.x, total, a.rows, chunks, lag); item < total;
       item = next_item(item + gridDim.x, total, a.rows, chunks, lag)) {
    // The stage freed by the previous item takes the item kStages - 1 ahead.
    fetch(ahead, stage == 0 ? kStages - 1 : stage - 1);
    if (ahead < total) ahead = next_item(ahead + gridDim.x, total, a.rows, chunks, lag);
    gpu::cp_async_wait<kStages - 1>();
    Item it;
    int64_t begin, end;
    bounds(item, it, begin, end);
    RowFragment<T, V, kPacks> frag;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t vi = begin + tid + int64_t(k) * kThreads;
      frag.pack[k] = neg_inf;
      if (vi < end) frag.pack[k] = ring[(int64_t(stage) * kPacks + k) * kThreads + tid];
    }
    process<T, V, kThreads, kPacks>(a, it, begin, end, frag, chunks, pairs, tag_base, scratch, parity,
                                    prefetch_pairs ? pair_ring + stage * kThreads + tid : nullptr);
    stage = stage + 1 == kStages ? 0 : stage + 1;
  }
  gpu::cp_async_wait<0>();
#endif
}

}  // namespace gpukern::cuda::softmax
