// The schedule of the persistent wgmma_tma kernels (12_wgmma_tma.cuh): which tiles, and
// which K blocks of them, each CTA (cluster) computes and in which order; the K split of
// the last, partial round of tiles or of every tile when tiles are few, the hand-over of
// partial sums between the CTAs of a split tile; and the host side that plans it.
#pragma once

#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/arch/barrier.cuh"
#include "cuda/arch/memory_order.cuh"
#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/workspace.cuh"

#include <algorithm>
#include <cstdint>

namespace gpukern::cuda::gemm {

/// The persistent schedule: cluster tiles (kClusterM block tiles stacked along M)
/// visited in L2 raster order, and K blocks per tile. A batched launch numbers the tiles
/// item by item: tile t is tile t % per_item of batch item t / per_item.
///
/// Tiles split_first .. total - 1 (the "split tiles", `tail` of them) may be split along
/// K in `ways` ranges: range 0 is K blocks [0, split_kb), ranges 1 .. ways - 1 share
/// [split_kb, k_blocks) evenly. Two uses:
///  * the last, partial round of many tiles (split_tail): CTA c < tail ("owner") computes
///    range 0 of split tile c after its whole rounds, and the CTAs idle in that round
///    ("helpers") take the other ranges in turn, so no CTA idles through it. 8192^3 on
///    132 SMs leaves 68 tail tiles for 64 helpers. The owners keep the L2-friendly order
///    of the data-parallel rounds (all walk K together);
///  * fewer tiles than CTAs (split_all): split_first = 0 and every tile is split, so
///    tiles x ways units share the CTAs instead of `tiles` (in turn, when they are more
///    units than CTAs).
/// Every CTA (per cluster CTA and consumer warpgroup: one "key") of a split tile takes an
/// arrival ticket (arrival_ticket.cuh) when it finishes its range; all but the last park
/// their f32 partial sums in `partials` and leave, the last adds them and runs the
/// epilogue, so no CTA waits for one that has not arrived (no co-residency needed).
/// `flags` (a ticket word and ways - 1 ready words per key) carry the launch's `tag`, so
/// the workspace needs no clearing. The last CTA adds the parked sums to its
/// own, so the order of the f32 additions follows the arrivals: a split call's result
/// may differ in the last bits from one run to the next (within the error bounds).
struct WgmmaSchedule {
  int cluster_tiles_m = 0, tiles_n = 0, total = 0, k_blocks = 0;
  int per_item = 0;  // tiles of one batch item (cluster_tiles_m x tiles_n); total = per_item x items
  // The L2 raster (tile_coords, set_raster): tile_origin_of's divisions by a batch item's
  // tiles, a group's tiles, a group's cluster tile rows (by_rows.d, the group size) and
  // the last group's rows.
  FastDiv by_item, by_group, by_rows, by_last_rows;
  int split_first = 0, split_kb = 0, ways = 1;  // split_first == total: no split
  // Reuse across rounds of tiles: bit 0, whole tiles of odd rounds walk K backwards (see
  // produce_stages); bit 1, odd raster groups are walked backwards (tile_coords' snake).
  int serpentine = 0;
  // 1: tiles claimed at run time (no split): each CTA (cluster) starts on tile `cta` and
  // then takes the next unclaimed tile from a launch-wide counter (`flags[0]`, an arrival
  // ticket word under `tag`), so the tiles in flight at any moment are the ~ctas after the
  // last one claimed, however the CTAs' speeds differ (produce_claimed).
  int claimed = 0;
  float* partials = nullptr;
  uint64_t* flags = nullptr;
  uint64_t tag = 0;  // the launch's arrival tag (arrival_tag)
};

/// Where tile `tile` of a schedule lies: the origin (m0, n0) of its block tile in C and its
/// batch item.
struct TileOrigin {
  int m0, n0, item;
};

/// One unit of a CTA's work: K blocks [kb_begin, kb_end) of `tile`; `slot` (the split
/// tile's index from split_first) indexes the split workspace when the tile is split.
struct WorkUnit {
  int tile, kb_begin, kb_end, slot;
  bool split;
};

/// Unit `i` of CTA (cluster) `cta` of `ctas`; false past its last unit. Data-parallel
/// rounds first (tiles cta, cta + ctas, ... below split_first), then the split tiles'
/// tail x ways units: unit j is range j / tail of split tile j % tail. Every tile split
/// (split_first == 0): CTA c takes units c, c + ctas, ..., balanced however many there
/// are. The last round split: an owner takes its tile's range 0 after its whole rounds,
/// and the helpers (ctas > tail) take the ranges 1 .. ways - 1 in turn.
__host__ __device__ __forceinline__ bool work_unit(const WgmmaSchedule& s, int cta, int ctas, int i, WorkUnit& u) {
  // A data-parallel unit without a division: unit i is whole exactly when its tile is
  // below split_first (the producer's first copy waits on this).
  if (static_cast<int64_t>(cta) + static_cast<int64_t>(i) * ctas < s.split_first) {
    u = {cta + i * ctas, 0, s.k_blocks, 0, false};
    return true;
  }
  // Past the data-parallel units: `whole`, their count, stepping back from i over this
  // CTA's split units (a few), so no division joins the first unit's path (the compiler
  // hoisted one there, ahead of the producer's first copy).
  int whole = i;
  while (whole > 0 && static_cast<int64_t>(cta) + static_cast<int64_t>(whole - 1) * ctas >= s.split_first) --whole;
  const int tail = s.total - s.split_first, j = i - whole;
  int unit;
  if (s.split_first == 0) {
    unit = cta + j * ctas;
  } else if (cta < tail) {
    if (j > 0) return false;
    unit = cta;
  } else {
    unit = cta + j * (ctas - tail);
  }
  if (unit >= tail * s.ways) return false;
  const int slot = unit % tail, range = unit / tail;
  const int rest = s.k_blocks - s.split_kb, shares = s.ways - 1;  // ranges 1.. share [split_kb, k_blocks)
  const int kb_begin = range == 0 ? 0 : s.split_kb + (range - 1) * rest / shares;
  const int kb_end = range == 0 ? s.split_kb : s.split_kb + range * rest / shares;
  u = {s.split_first + slot, kb_begin, kb_end, slot, true};
  return true;
}

/// Consumer warpgroups of a CTA at most (a 256-row tile of the wgmma_tma kernels).
constexpr int kMaxConsumers = 4;

/// The end of a split tile for one consumer warpgroup (its 64 x (2 kAcc) f32
/// accumulators, kAcc per thread) under split key `key`. Returns whether this warpgroup
/// arrived last, holds the whole sum and runs the epilogue; false: it parked its
/// partial sums for the last one. The ticket comes first and only names the parking
/// buffer; each parked buffer is handed to the last by its ready word (a release store of
/// arrival_flag after the park, an acquire load by the last).
template <int kAcc>
__device__ __forceinline__ bool split_fixup(const WgmmaSchedule& s, int key, int consumer, float (&acc)[kAcc]) {
  constexpr int kVecs = kAcc / 4;         // float4 per thread
  __shared__ int tickets[kMaxConsumers];  // per consumer warpgroup: its arrival ticket
  volatile int* const ticket = &tickets[consumer];
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int parked = s.ways - 1;
  uint64_t* claim = s.flags + static_cast<size_t>(key) * s.ways;
  uint64_t* ready = claim + 1;  // one per parked partial sum
  float4* part = reinterpret_cast<float4*>(s.partials) + static_cast<size_t>(key) * parked * (kVecs * 128);
  if (tid == 0) *ticket = static_cast<int>(take_arrival_ticket(claim, s.tag));
  arch::named_barrier_sync(1 + consumer, 128);
  const int t = *ticket;
  if (t < parked) {
    // Park the partial sums in buffer t (each warp writes 512 contiguous bytes a store).
    float4* mine = part + static_cast<size_t>(t) * (kVecs * 128);
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
      __stcg(mine + i * 128 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
    arch::named_barrier_sync(1 + consumer, 128);
    if (tid == 0) {
      __threadfence();
      arch::st_release_gpu(ready + t, arrival_flag(s.tag));
    }
    return false;
  }
  // Last: every other CTA has arrived and is parking; wait for each buffer, add.
  if (tid < parked)
    while (arch::ld_acquire_gpu(ready + tid) != arrival_flag(s.tag)) __nanosleep(64);
  arch::named_barrier_sync(1 + consumer, 128);
  for (int b = 0; b < parked; ++b) {
    const float4* theirs = part + static_cast<size_t>(b) * (kVecs * 128);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const float4 v = __ldcg(theirs + i * 128 + tid);
      acc[4 * i] += v.x;
      acc[4 * i + 1] += v.y;
      acc[4 * i + 2] += v.z;
      acc[4 * i + 3] += v.w;
    }
  }
  return true;
}

/// A consumer warpgroup's walk over its CTA's work units, in the producer's order
/// (work_unit, or with claimed tiles the tile `claimed()` reads from the next stage: the
/// producer's, negative at the end): `mainloop(unit)` accumulates the unit's K blocks into
/// `acc`; a split tile then goes through split_fixup (key: slot x keys_per_tile +
/// key_in_tile, one per CTA of the cluster and consumer), and the warpgroup left holding
/// the whole sum runs `epilogue(origin(tile))` (a TileOrigin).
template <int kAcc, class Origin, class Claimed, class Mainloop, class Store>
__device__ __forceinline__ void consume_units(const WgmmaSchedule& sched, int cta, int ctas, int keys_per_tile,
                                              int key_in_tile, int consumer, float (&acc)[kAcc], Origin origin,
                                              Claimed claimed, Mainloop mainloop, Store epilogue) {
  WorkUnit u;
  for (int i = 0;; ++i) {
    if (sched.claimed) {
      const int tile = claimed();
      if (tile < 0) break;
      u = {tile, 0, sched.k_blocks, 0, false};
    } else if (!work_unit(sched, cta, ctas, i, u)) {
      break;
    }
    // The origin before the main loop, not between the last wgmma and the stores.
    const TileOrigin o = origin(u.tile);
    mainloop(u, o);
    if (u.split && !split_fixup(sched, u.slot * keys_per_tile + key_in_tile, consumer, acc)) continue;
    epilogue(o);
  }
}

/// The origin of tile `tile`: its item, then its place in the item's L2 raster (as
/// tile_coords, over cluster tiles of kClusterM x kBlockM rows in groups of by_rows.d, with
/// the schedule's FastDivs; `rank` the CTA's block tile in its cluster).
template <int kBlockM, int kBlockN, int kClusterM>
__host__ __device__ __forceinline__ TileOrigin tile_origin_of(const WgmmaSchedule& s, int tile, bool snake, int rank) {
  const int item = s.by_item(tile);
  const int t = tile - item * s.per_item;
  const int group = s.by_group(t);
  const int first_m = group * s.by_rows.d;
  const FastDiv& by_rows = s.cluster_tiles_m - first_m < s.by_rows.d ? s.by_last_rows : s.by_rows;
  int in_group = t - group * s.by_group.d;
  if (snake && (group & 1)) in_group = by_rows.d * s.tiles_n - 1 - in_group;
  const int col = by_rows(in_group);
  const int row = first_m + in_group - col * by_rows.d;
  return {(row * kClusterM + rank) * kBlockM, col * kBlockN, item};
}

// ---------------------------------------------------------------- host side

/// The most tiles a launch schedules: tile indices, CTA strides and unit counts stay in
/// int (a batch with more tiles runs in several launches).
constexpr int64_t kMaxScheduledTiles = int64_t(1) << 30;

/// The raster of `s`'s tiles: groups of `group_m` cluster tile rows (fewer where the
/// tile rows are fewer), column by column inside a group (tile_coords).
inline void set_raster(WgmmaSchedule& s, int group_m) {
  const int g = std::max(1, std::min(group_m, s.cluster_tiles_m));
  s.by_item = FastDiv(s.per_item);
  s.by_group = FastDiv(g * s.tiles_n);
  s.by_rows = FastDiv(g);
  s.by_last_rows = FastDiv(s.cluster_tiles_m - (s.cluster_tiles_m - 1) / g * g);
}

/// The persistent schedule of `items` batch items of `tiles_m` x `tiles_n` tiles of
/// `k_blocks` K blocks, no split, rastered in groups of `group_m` tile rows. The caller
/// keeps tiles x items within kMaxScheduledTiles.
inline WgmmaSchedule make_schedule(int tiles_m, int tiles_n, int k_blocks, int items = 1, int group_m = 1) {
  WgmmaSchedule s;
  s.cluster_tiles_m = tiles_m;
  s.tiles_n = tiles_n;
  s.per_item = tiles_m * tiles_n;
  s.total = s.per_item * items;
  s.k_blocks = k_blocks;
  s.split_first = s.total;
  set_raster(s, group_m);
  return s;
}

/// A K split of the last partial round: the helpers take `helper_blocks` K blocks of
/// each tail tile in ways - 1 ranges (the owner keeps the rest, range 0).
struct TailSplit {
  int helper_blocks = 0;  // 0: no split
  int ways = 2;
  double blocks = 0;  // the last round's estimated time in K blocks (k_blocks unsplit; 0: no partial round)
};

/// The cost model of the K split of the last partial round over `ctas` persistent CTAs:
/// how many K blocks the helpers take of a tail tile and in how many ranges, or
/// helper_blocks 0 when splitting does not pay (no partial round, too few K blocks, or
/// too little gain for a launch workspace). Owner time k - x + c against the busiest
/// helper's n (x / (ways - 1) + c), n its ranges, where c is the K blocks' worth of time
/// a split tile costs its CTAs beyond its K blocks: parking or adding 128 KB of partial
/// sums and refilling the pipeline, about 6 at two ways, and each further range adds one
/// more partial sum for the last CTA to read. A further range is taken only where it
/// saves 8% of the round's time (the model's error): where the idle CTAs outnumber the
/// tail tiles. 3072^3 in 128x256 clusters leaves 12 tail clusters of 48 K blocks for 54
/// idle ones: two ways 30 K blocks of time, four 22.
inline TailSplit tail_split_plan(const WgmmaSchedule& s, int ctas) {
  const int tail = s.total % ctas, helpers = ctas - tail;
  const TailSplit unsplit{0, 2, tail == 0 ? 0.0 : static_cast<double>(s.k_blocks)};
  if (s.total <= ctas || tail == 0 || s.k_blocks < 2) return unsplit;
  constexpr double kPartialBlocks = 6, kRangeBlocks = 2, kWaysGain = 0.92;
  constexpr int kMaxTailWays = 8;
  double best = s.k_blocks;
  TailSplit plan;
  for (int ways = 2; ways <= std::min(kMaxTailWays, s.k_blocks); ++ways) {
    const int ranges = ways - 1;
    const int busiest = ceil_div(tail * ranges, helpers);  // ranges of the busiest helper
    const double c = kPartialBlocks + kRangeBlocks * (ways - 2);
    const double bar = ways > 2 ? best * kWaysGain : best;  // what a further range must beat
    for (int x = ranges; x < s.k_blocks; ++x) {             // at least one K block a range
      const double t = std::max(s.k_blocks - x + c, busiest * (static_cast<double>(x) / ranges + c));
      if (t < bar && t < best) best = t, plan = {x, ways, t};
    }
  }
  return best > s.k_blocks - 2 ? unsplit : plan;
}

/// The split workspace's shape per split tile: keys (CTAs of a cluster x consumer
/// warpgroups) and f32 partial sums per key (a consumer's 64 x kBlockN accumulators).
struct SplitSlots {
  int keys_per_tile = 2;
  int floats_per_key = 64 * 256;
};

/// Plans the K split of the last partial round over `ctas` persistent CTAs
/// (WgmmaSchedule): helpers take `split.helper_blocks` K blocks (at most all but one) of
/// each tail tile, in split.ways - 1 ranges of at least one K block. False (the schedule
/// unchanged): no partial round, a single K block, helper_blocks <= 0 or ways < 2.
inline bool plan_tail_split(WgmmaSchedule& s, int ctas, TailSplit split) {
  const int tail = s.total % ctas;
  if (s.total <= ctas || tail == 0 || split.helper_blocks <= 0 || split.ways < 2 || s.k_blocks < 2) return false;
  const int ways = std::min(split.ways, s.k_blocks);
  s.split_first = s.total - tail;
  s.split_kb = s.k_blocks - std::min(std::max(split.helper_blocks, ways - 1), s.k_blocks - 1);
  s.ways = ways;
  return true;
}

/// Plans every tile split in `ways` (at most k_blocks) even K ranges, when there are
/// fewer tiles than the `ctas` persistent CTAs (clusters) the launch may have; the
/// launch then takes min(ctas, tiles x ways) of them (more than the tiles, as the split
/// needs). False (the schedule unchanged): ways < 2, or no fewer tiles than CTAs.
inline bool plan_split_all(WgmmaSchedule& s, int ctas, int ways) {
  ways = std::min(ways, s.k_blocks);
  if (ways < 2 || s.total >= ctas) return false;
  s.split_first = 0;
  s.split_kb = s.k_blocks / ways;  // range 0 the shortest: the others share the remainder
  s.ways = ways;
  return true;
}

/// The workspace of a schedule a plan_* call split (parked partial sums, then the
/// flags; from the stream-ordered pool) and its launch-unique tags; free it after the
/// launch.
inline void* split_workspace(WgmmaSchedule& s, SplitSlots slots, const CudaContext& ctx) {
  const std::size_t keys = static_cast<std::size_t>(s.total - s.split_first) * slots.keys_per_tile;
  const std::size_t partial_bytes = keys * (s.ways - 1) * slots.floats_per_key * sizeof(float);
  void* ws = workspace_alloc(partial_bytes + keys * s.ways * sizeof(uint64_t), ctx);
  s.partials = static_cast<float*>(ws);
  s.flags = reinterpret_cast<uint64_t*>(static_cast<char*>(ws) + partial_bytes);
  s.tag = arrival_tag();
  return ws;
}

/// plan_tail_split with its workspace: returns it (free it after the launch) or null.
inline void* split_tail(WgmmaSchedule& s, int ctas, TailSplit split, SplitSlots slots, const CudaContext& ctx) {
  return plan_tail_split(s, ctas, split) ? split_workspace(s, slots, ctx) : nullptr;
}

/// plan_split_all with its workspace: returns it (free it after the launch) or null.
inline void* split_all(WgmmaSchedule& s, int ctas, int ways, SplitSlots slots, const CudaContext& ctx) {
  return plan_split_all(s, ctas, ways) ? split_workspace(s, slots, ctx) : nullptr;
}

/// Turns an unsplit schedule into one whose tiles are claimed at run time
/// (WgmmaSchedule::claimed) and returns its workspace, the claim word (free it after the
/// launch). The caller keeps the tiles below kMaxArrivals (one claim a tile, one more a CTA).
inline void* claim_tiles(WgmmaSchedule& s, const CudaContext& ctx) {
  void* ws = workspace_alloc(sizeof(uint64_t), ctx);
  s.claimed = 1;
  s.flags = static_cast<uint64_t*>(ws);
  s.tag = arrival_tag();
  return ws;
}

}  // namespace gpukern::cuda::gemm
