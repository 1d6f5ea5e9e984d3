// The schedule of the persistent wgmma_tma kernels (12_wgmma_tma.cuh): which tiles, and
// which K blocks of them, each CTA (cluster) computes and in which order; the K split of
// the last, partial round of tiles and the hand-over of partial sums between the two
// CTAs of a split tile; and the host side that plans it.
#pragma once

#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/arch/barrier.cuh"
#include "cuda/workspace.cuh"

#include "cuda/arch/memory_order.cuh"

#include <algorithm>
#include <cstdint>

namespace gpukern::cuda::gemm {

/// The persistent schedule: cluster tiles (kClusterM block tiles stacked along M)
/// visited in L2 raster order, and K blocks per tile.
///
/// The last, partial round (split_first .. total - 1: fewer tiles than CTAs) may be
/// split along K so that no CTA idles through it: CTA c < tail ("owner") computes K
/// blocks [0, split_kb) of tile split_first + c, and the idle CTAs ("helpers") take
/// K blocks [split_kb, k_blocks) of the tail tiles in turn. 512 tiles on 132 SMs
/// (4096^3) leave 116 tail tiles and 16 helpers. Both halves of a tile keep the
/// L2-friendly order of the data-parallel rounds (all owners walk K together). Of the
/// two CTAs of a split tile (per consumer warpgroup), the one that finishes first parks
/// its partial sums in `partials` and leaves; the second adds them and runs the
/// epilogue, so neither waits for a CTA that has not arrived (no co-residency needed).
/// `flags` (claim, ready) per split tile and consumer are tagged with `epoch`, unique
/// per launch, so the workspace needs no clearing.
struct WgmmaSchedule {
  int cluster_tiles_m = 0, tiles_n = 0, total = 0, k_blocks = 0;
  int split_first = 0, split_kb = 0;  // split_first == total: no split
  // Reuse across rounds of tiles: bit 0, whole tiles of odd rounds walk K backwards (see
  // produce_stages); bit 1, odd raster groups are walked backwards (tile_coords' snake).
  int serpentine = 0;
  float* partials = nullptr;
  uint64_t* flags = nullptr;
  uint64_t epoch = 0;
};

/// One unit of a CTA's work: K blocks [kb_begin, kb_end) of `tile`; `slot` indexes
/// the split workspace when the tile is split.
struct WorkUnit {
  int tile, kb_begin, kb_end, slot;
  bool split;
};

/// Unit `i` of CTA (cluster) `cta` of `ctas`; false past its last unit. Data-parallel
/// rounds first (tiles cta, cta + ctas, ... below split_first), then the split tail.
__device__ __forceinline__ bool work_unit(const WgmmaSchedule& s, int cta, int ctas, int i, WorkUnit& u) {
  const int whole = cta < s.split_first ? (s.split_first - 1 - cta) / ctas + 1 : 0;
  if (i < whole) {
    u = {cta + i * ctas, 0, s.k_blocks, 0, false};
    return true;
  }
  const int tail = s.total - s.split_first, j = i - whole;
  if (cta < tail) {
    if (j > 0) return false;
    u = {s.split_first + cta, 0, s.split_kb, cta, true};
    return true;
  }
  const int slot = cta - tail + j * (ctas - tail);
  if (slot >= tail) return false;
  u = {s.split_first + slot, s.split_kb, s.k_blocks, slot, true};
  return true;
}

/// The end of a split tile for one consumer warpgroup (its 64x256 f32 accumulators,
/// 128 per thread). Returns whether this warpgroup holds the whole sum and runs the
/// epilogue; false: it parked its partial sums for the other CTA.
__device__ __forceinline__ bool split_fixup(const WgmmaSchedule& s, int slot, int consumer, float (&acc)[128]) {
  __shared__ int verdict[2];  // per consumer: whether it arrived second
  volatile int* const second = &verdict[consumer];
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int key = 2 * slot + consumer;
  uint64_t* claim = s.flags + 2 * key;
  uint64_t* ready = claim + 1;
  float4* part = reinterpret_cast<float4*>(s.partials) + static_cast<size_t>(key) * (32 * 128);
  if (tid == 0) *second = atomicExch(reinterpret_cast<unsigned long long*>(claim), s.epoch) == s.epoch;
  arch::named_barrier_sync(1 + consumer, 128);
  if (!*second) {
    // First: park the partial sums (each warp writes 512 contiguous bytes a store).
#pragma unroll
    for (int i = 0; i < 32; ++i)
      __stcg(part + i * 128 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
    arch::named_barrier_sync(1 + consumer, 128);
    if (tid == 0) {
      __threadfence();
      arch::st_release_gpu(ready, s.epoch);
    }
    return false;
  }
  // Second: the first one claimed before us and is storing; wait for it, add.
  if (tid == 0)
    while (arch::ld_acquire_gpu(ready) != s.epoch) __nanosleep(64);
  arch::named_barrier_sync(1 + consumer, 128);
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float4 v = __ldcg(part + i * 128 + tid);
    acc[4 * i] += v.x;
    acc[4 * i + 1] += v.y;
    acc[4 * i + 2] += v.z;
    acc[4 * i + 3] += v.w;
  }
  return true;
}

/// A consumer warpgroup's walk over its CTA's work units, in the producer's order
/// (work_unit): `mainloop(unit)` accumulates the unit's K blocks into `acc`; a
/// split tile then goes through split_fixup, and the warpgroup left holding the whole
/// sum runs `epilogue(m0, n0)` for the tile at `origin(tile)`.
template <class Origin, class Mainloop, class Epilogue>
__device__ __forceinline__ void consume_units(const WgmmaSchedule& sched, int cta, int ctas, int consumer,
                                              float (&acc)[128], Origin origin, Mainloop mainloop, Epilogue epilogue) {
  WorkUnit u;
  for (int i = 0; work_unit(sched, cta, ctas, i, u); ++i) {
    mainloop(u);
    if (u.split && !split_fixup(sched, u.slot, consumer, acc)) continue;
    int m0, n0;
    origin(u.tile, m0, n0);
    epilogue(m0, n0);
  }
}

// ---------------------------------------------------------------- host side

/// The persistent schedule of `tiles_m` x `tiles_n` tiles of `k_blocks` K blocks, no split.
inline WgmmaSchedule make_schedule(int tiles_m, int tiles_n, int k_blocks) {
  WgmmaSchedule s;
  s.cluster_tiles_m = tiles_m;
  s.tiles_n = tiles_n;
  s.total = tiles_m * tiles_n;
  s.k_blocks = k_blocks;
  s.split_first = s.total;
  return s;
}

/// The cost model of the K split of the last partial round over `ctas` persistent CTAs:
/// the K blocks each helper should take of a tail tile, or 0 when splitting does not
/// pay (no partial round, too few K blocks, or too little gain for a launch workspace).
/// Owner time k - x + c against the busiest helper's n (x + c), where c is the K
/// blocks' worth of time a split tile costs its CTAs beyond its K blocks (parking or
/// adding 128 KB of partial sums and refilling the pipeline), about 6.
inline int tail_split_blocks(const WgmmaSchedule& s, int ctas) {
  const int tail = s.total % ctas, helpers = ctas - tail;
  if (s.total <= ctas || tail == 0 || s.k_blocks < 2) return 0;
  const int busiest = ceil_div(tail, helpers);  // tail tiles of the busiest helper
  constexpr double kPartialBlocks = 6;
  double best = s.k_blocks;
  int x = 0;
  for (int c = 1; c < s.k_blocks; ++c) {
    const double t = std::max(s.k_blocks - c + kPartialBlocks, busiest * (c + kPartialBlocks));
    if (t < best) best = t, x = c;
  }
  return best > s.k_blocks - 2 ? 0 : x;
}

/// Splits the last partial round over `ctas` persistent CTAs (WgmmaSchedule): helpers
/// take `helper_blocks` K blocks (at most all but one) of each tail tile; 0 leaves the
/// schedule unsplit. A split schedule gets its workspace (partial sums, then the flags;
/// from the stream-ordered pool) and a launch-unique epoch; returns that workspace for
/// the caller to free after the launch, or null (no split).
inline void* split_tail(WgmmaSchedule& s, int ctas, int helper_blocks, const CudaContext& ctx) {
  const int tail = s.total % ctas;
  if (s.total <= ctas || tail == 0 || helper_blocks <= 0 || s.k_blocks < 2) return nullptr;
  const int x = std::min(helper_blocks, s.k_blocks - 1);
  s.split_first = s.total - tail;
  s.split_kb = s.k_blocks - x;
  // Per split tile and consumer warpgroup: 64x256 f32 partial sums, and (claim, ready).
  const std::size_t partial_bytes = static_cast<std::size_t>(tail) * 2 * 64 * 256 * sizeof(float);
  void* ws = workspace_alloc(partial_bytes + static_cast<std::size_t>(tail) * 2 * 2 * sizeof(uint64_t), ctx);
  s.partials = static_cast<float*>(ws);
  s.flags = reinterpret_cast<uint64_t*>(static_cast<char*>(ws) + partial_bytes);
  s.epoch = launch_tags(1);
  return ws;
}

}  // namespace gpukern::cuda::gemm
