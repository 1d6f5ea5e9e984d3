// The main loop of the warp-specialized wgmma_tma kernels (12_wgmma_tma.cuh): their
// configuration, the shared-memory layout (a ring of operand stages, C staging boxes, a
// "full" and an "empty" mbarrier per stage), the producer thread that fills the stages
// with TMA, and the consumer loop that runs wgmma on them and hands them back.
#pragma once

#include "cuda/arch/cluster.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/arch/wgmma_sm90.cuh"
#include "cuda/gemm/tensor_core/wgmma_schedule.cuh"

#include <type_traits>

namespace gpukern::cuda::gemm {

/// Whether a tuning `Tile` is one of the exact-f32 (3xTF32) C^T kernel's: its field
/// kExactF32, false where it has none.
template <class Tile, class = void>
struct ExactF32Tile : std::false_type {};
template <class Tile>
struct ExactF32Tile<Tile, std::void_t<decltype(Tile::kExactF32)>> : std::bool_constant<Tile::kExactF32> {};

/// Whether a tuning `Tile` loads B in whole 64-row boxes past its columns (a 96-wide tile:
/// two boxes, either layout): its field kWholeBBoxes, false where it has none.
template <class Tile, class = void>
struct WholeBBoxesTile : std::false_type {};
template <class Tile>
struct WholeBBoxesTile<Tile, std::void_t<decltype(Tile::kWholeBBoxes)>> : std::bool_constant<Tile::kWholeBBoxes> {};

/// The configuration of the warp-specialized kernels for a tuning `Tile` with the named
/// fields kBlockM x kBlockN (the CTA tile: 64, 128, 192 or 256 rows, one consumer
/// warpgroup per 64; 256, 192, 168, 128, 96, 64 or 32 columns, the wgmma N), kStages
/// (shared-memory stages), kClusterM (CTAs per cluster along M, which share B through TMA
/// multicast), kProducerRegs / kConsumerRegs (setmaxnreg per warpgroup), kGroupM (tile
/// rows per L2 raster group), kEpiBoxes (C staging boxes per consumer and round of the
/// TMA-store epilogue) and kEpiBuffers (rounds whose TMA stores may be in flight per
/// consumer). Every operand tile is a set of 64-row "boxes" of 128-byte rows (64
/// f16/bf16 or 32 f32 elements of K when K-major, 64 elements of M or N when MN-major):
/// one swizzle pattern, 8 KB. A K-major operand's boxes follow each other as one run of
/// rows, which one TMA copy fills (A's tile rows, a_box_rows; each cluster CTA's share of
/// B's, b_copy_rows); MN-major ones take a copy per box, MN-major B in pieces of
/// kBBoxRows rows along K (64: the whole box): a cluster whose CTAs outnumber B's boxes
/// (64x64 tiles in clusters of 2) splits each box between them, every piece landing where
/// its rows lie in the tile. A tile 168, 96 or 32 wide (kPartialBBoxes) is not whole
/// boxes: its B, K-major only, is that many rows of 128 bytes loaded in kBBoxRows-row
/// pieces (56, 48, 32), which the CTAs of a cluster share out in turn (the first CTA loads
/// one more). A tile 96 wide may instead (kWholeBBoxes) load B as two whole boxes in
/// either layout, the second one's last 32 rows unused: wgmma reads MN-major B only in
/// whole 64-element boxes.
template <class Tile>
struct WgmmaConfig {
  static constexpr int kBlockM = Tile::kBlockM, kBlockN = Tile::kBlockN;
  static constexpr int kConsumers = kBlockM / 64;  // consumer warpgroups, 64 rows of the tile each
  static constexpr int kAcc = kBlockN / 2;         // f32 accumulators per consumer thread (64 x kBlockN / 128)
  static constexpr int kStages = Tile::kStages;
  static constexpr int kClusterM = Tile::kClusterM;
  static constexpr int kGroupM = Tile::kGroupM;
  static constexpr int kProducerRegs = Tile::kProducerRegs, kConsumerRegs = Tile::kConsumerRegs;

  static constexpr int kRowBytes = 128;  // one 128-byte swizzle row
  static constexpr int kBoxRows = 64;
  static constexpr int kBoxBytes = kBoxRows * kRowBytes;
  static constexpr int kABoxes = kBlockM / kBoxRows;
  // B's rows a stage holds: the tile's columns, or whole boxes past them (kWholeBBoxes).
  static constexpr bool kWholeBBoxes = WholeBBoxesTile<Tile>::value;
  static constexpr int kBRows = kWholeBBoxes ? (kBlockN + kBoxRows - 1) / kBoxRows * kBoxRows : kBlockN;
  // B's rows are not whole boxes (a 168-wide tile): only K-major B, rows along N.
  static constexpr bool kPartialBBoxes = kBRows % kBoxRows != 0;
  static constexpr int kBBoxRows = Tile::kBBoxRows;    // rows of one TMA copy of B
  static constexpr int kBPieces = kBRows / kBBoxRows;  // TMA copies of B a stage
  // The bytes TMA brings into a stage. An exact-f32 C^T tile (kExactF32) keeps the rounded
  // rests of its shared operand (kBlockN rows of 128 bytes) beside it in the stage.
  static constexpr bool kExactF32 = ExactF32Tile<Tile>::value;
  static constexpr int kLoadBytes = kABoxes * kBoxBytes + kBRows * kRowBytes;
  static constexpr int kRestBytes = kExactF32 ? kBlockN * kRowBytes : 0;
  static constexpr int kStageBytes = kLoadBytes + kRestBytes;
  static constexpr int kThreads = (kConsumers + 1) * 128;
  // TMA-store epilogue: each consumer stages kEpiBoxes boxes of C (64 rows x 128 bytes)
  // a round, so a 64x256 slice leaves in 2 (16-bit C) or 4 (f32 C) rounds, in a ring of
  // kEpiBuffers round buffers (a round waits only for the stores kEpiBuffers rounds back).
  static constexpr int kEpiBoxes = Tile::kEpiBoxes;
  static constexpr int kEpiBuffers = Tile::kEpiBuffers;
  static constexpr int kEpiBytes = kConsumers * kEpiBuffers * kEpiBoxes * kBoxBytes;
  // A "full" and an "empty" mbarrier per stage, and per stage the claimed tile that starts
  // there and its mbarrier (produce_claimed).
  static constexpr int kBarrierBytes = 4 * kStages * 8;
  static constexpr int kSmemBytes = kStages * kStageBytes + kEpiBytes + kBarrierBytes + 1024;  // + alignment slack

  static_assert(kBlockM % 64 == 0 && kConsumers >= 1 && kConsumers <= kMaxConsumers,
                "one to four consumer warpgroups, one m64 slice of the tile each");
  static_assert(kBlockN == 32 || kBlockN == 64 || kBlockN == 96 || kBlockN == 128 || kBlockN == 168 || kBlockN == 192 ||
                    kBlockN == 256,
                "the consumers issue m64n256, m64n192, m64n168, m64n128, m64n96, m64n64 or m64n32 wgmma");
  static_assert(!kWholeBBoxes || !kExactF32, "the C^T kernel's shared operand is its tile's rows");
  static_assert(kBlockM % kBoxRows == 0, "A's tiles are whole 64-row boxes");
  static_assert(kBRows % kBBoxRows == 0 && kBBoxRows % 8 == 0, "B's pieces are whole 8-row swizzle atoms");
  static_assert(kPartialBBoxes || kBoxRows % kBBoxRows == 0, "a piece of a whole box lies inside the box");
  static_assert(kPartialBBoxes || kBPieces % kClusterM == 0, "the CTAs of a cluster split B's boxes evenly");
  static_assert(kPartialBBoxes || (kBRows / kClusterM % 8 == 0 && kBRows / kClusterM <= 256),
                "a CTA's share of K-major B is one TMA box (at most 256 rows of whole swizzle atoms)");
  static_assert(kGroupM % kClusterM == 0, "an L2 raster group holds whole clusters");
  static_assert(kPartialBBoxes || kBlockN % (kEpiBoxes * 32) == 0,
                "the TMA-store rounds cover the tile's columns (f32 C: 32 a box)");
  static_assert(kStageBytes % 1024 == 0, "128-byte swizzle needs every box 1024-byte aligned");
  static_assert(kSmemBytes <= 227 * 1024, "an H100 block gets at most 227 KB of shared memory");
  static_assert(kConsumers * kConsumerRegs * 128 + kProducerRegs * 128 <= 65536,
                "the warpgroups' registers must fit the SM's 64K register file");
  // setmaxnreg moves registers within the CTA's allocation at launch, which for a kernel
  // that uses it is the __launch_bounds__ cap (64K / kThreads, at most 255, rounded down
  // to 8): the consumers can add only what the producer gave back, or their
  // setmaxnreg.inc waits forever (a 256x128 tile asking 120 of 96 hung).
  static constexpr int kLaunchRegs = (65536 / kThreads < 255 ? 65536 / kThreads : 255) / 8 * 8;
  static_assert(kConsumers * (kConsumerRegs - kLaunchRegs) <= kLaunchRegs - kProducerRegs,
                "the consumers' setmaxnreg.inc must fit in what the producer's setmaxnreg.dec frees");
};

/// The split workspace's shape for configuration `Cfg` (wgmma_schedule.cuh): a key per
/// CTA of a cluster and consumer warpgroup, each parking its 64 x kBlockN sums.
template <class Cfg>
constexpr SplitSlots split_slots() {
  return {Cfg::kClusterM * Cfg::kConsumers, 64 * Cfg::kBlockN};
}

template <class T>
constexpr int kElemsPerRow = 128 / static_cast<int>(sizeof(T));  // K elements per stage (BK)

/// Rows of A a stage holds data for: a 64-row tile over fewer rows of K-major A loads only
/// the `m` rows A has, rounded up to the 8-row swizzle atom, not a box whose rows past M
/// TMA fills with zeros; the stages then expect that many fewer bytes (a_stage_bytes).
/// The rows left over in shared memory feed only accumulator rows past M, never stored.
template <class Cfg, bool kAKMajor>
__host__ __device__ constexpr int a_loaded_rows(int m) {
  return kAKMajor && Cfg::kBlockM == 64 && m < 64 ? (m + 7) / 8 * 8 : Cfg::kBlockM;
}

/// Rows of A's TMA box: K-major A is one copy of the tile's rows a stage (a_loaded_rows:
/// 64-row boxes one after the other in shared memory are one box of their rows, the same
/// bytes in the same swizzle), MN-major A a 64-element box per 64 rows. The host sizes
/// A's map by it.
template <class Cfg, bool kAKMajor>
__host__ __device__ constexpr int a_box_rows(int m) {
  return kAKMajor ? a_loaded_rows<Cfg, kAKMajor>(m) : Cfg::kBoxRows;
}

/// Rows of B's TMA copy: K-major B whose rows are whole boxes is one copy of each cluster
/// CTA's share of them a stage (the CTA's kBPieces / kClusterM pieces, made contiguous);
/// otherwise a piece, kBBoxRows.
template <class Cfg, bool kBKMajor>
__host__ __device__ constexpr int b_copy_rows() {
  return kBKMajor && !Cfg::kPartialBBoxes ? Cfg::kBRows / Cfg::kClusterM : Cfg::kBBoxRows;
}

/// The bytes a stage of `Cfg` receives for a call of `m` rows (a_loaded_rows).
template <class Cfg, bool kAKMajor>
__host__ __device__ constexpr uint32_t a_stage_bytes(int m) {
  return static_cast<uint32_t>(Cfg::kLoadBytes - (Cfg::kBlockM - a_loaded_rows<Cfg, kAKMajor>(m)) * Cfg::kRowBytes);
}

/// Shared memory of the kernels below, 1024-byte aligned (the 128-byte swizzle
/// repeats every 1024 bytes): kStages operand stages, each consumer's C staging buffers,
/// then a "full" and an "empty" mbarrier per stage.
template <class Cfg>
struct WgmmaSmem {
  uint32_t base;
  __device__ explicit WgmmaSmem(const void* raw) : base((arch::smem_addr(raw) + 1023) & ~1023u) {}
  __device__ uint32_t stage(int s) const { return base + s * Cfg::kStageBytes; }
  __device__ uint32_t c_staging(int consumer, int buffer = 0) const {
    return base + Cfg::kStages * Cfg::kStageBytes +
           (consumer * Cfg::kEpiBuffers + buffer) * Cfg::kEpiBoxes * Cfg::kBoxBytes;
  }
  __device__ uint32_t full(int s) const { return base + Cfg::kStages * Cfg::kStageBytes + Cfg::kEpiBytes + 8 * s; }
  __device__ uint32_t empty(int s) const { return full(Cfg::kStages) + 8 * s; }
  /// The tile a claimed schedule starts at stage s (an int; negative: the end) and, in a
  /// cluster's other CTAs, the mbarrier on which it arrives from the leader.
  __device__ uint32_t tile_slot(int s) const { return full(2 * Cfg::kStages) + 8 * s; }
  __device__ uint32_t tile_bar(int s) const { return full(3 * Cfg::kStages) + 8 * s; }
  /// The exact-f32 C^T kernel's "split" barrier of stage s: complete once the stage's
  /// shared operand is split into its tf32 parts. tile_bar's, which only a claimed
  /// schedule's cluster peers use: that kernel runs without clusters.
  __device__ uint32_t split(int s) const {
    static_assert(Cfg::kClusterM == 1, "the split barriers are the cluster peers' tile_bar");
    return tile_bar(s);
  }
  /// Thread 32: each "full" barrier completes on the producer's expect_tx arrival plus
  /// the TMA bytes, each "empty" one on `readers` arrivals. Thread 32 is in the producer
  /// warpgroup's second warp, which produces nothing, so the producer warp's own set-up
  /// (prefetches, L2 policies) runs alongside instead of before the barriers'.
  __device__ void init_barriers(uint32_t readers) const {
    if (threadIdx.x != 32) return;
    for (int s = 0; s < Cfg::kStages; ++s) {
      arch::mbar_init(full(s), 1);
      arch::mbar_init(empty(s), readers);
      arch::mbar_init(tile_bar(s), 1);
    }
    arch::fence_barrier_init();
  }
};

/// Position in the ring of stages, shared by the producer and the consumers.
template <int kStages>
struct StageRing {
  int stage = 0;
  uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

/// The producer warp's fill of the free stage the ring is at: one lane announces its
/// `bytes` on its "full" barrier and lets `load(stage, full_barrier, origin, kb)` issue K
/// block `kb` of the tile at `o` into it; every lane moves the ring on.
template <class Cfg, class Load>
__device__ __forceinline__ void fill_stage(const WgmmaSmem<Cfg>& sm, StageRing<Cfg::kStages>& ring, Load& load,
                                           const TileOrigin& o, int kb, uint32_t bytes) {
  if (arch::elect_one()) {
    arch::mbar_arrive_expect_tx(sm.full(ring.stage), bytes);
    load(ring.stage, sm.full(ring.stage), o, kb);
  }
  ring.advance();
}

template <class Cfg, class Origin, class Load>
__device__ __forceinline__ void produce_claimed(const WgmmaSmem<Cfg>& sm, const WgmmaSchedule& sched, int cta, int ctas,
                                                Origin origin, Load load, uint32_t stage_bytes);

/// The producer warp (all 32 lanes, converged, so the loop state is warp-uniform; one
/// lane issues, fill_stage): for each of this CTA's work units (work_unit) and each of
/// their K blocks, waits until every reader has released the stage, announces its bytes
/// and lets `load(stage, full_barrier, origin, kb)` issue the TMA copies (origin: the
/// unit's TileOrigin), `stage_bytes` in all (less than a whole stage where a 64-row tile
/// loads only the rows A has, a_stage_bytes). A claimed schedule takes
/// produce_claimed instead. Run by a single
/// thread, the same loop kept its state in per-thread registers and spent ~90
/// instructions a stage moving TMA operands into uniform ones: at 128x128 tiles (a
/// stage every ~500 cycles) the stages then arrived late and the tensor cores waited.
template <class Cfg, class Origin, class Load>
__device__ __forceinline__ void produce_stages(const WgmmaSmem<Cfg>& sm, const WgmmaSchedule& sched, int cta, int ctas,
                                               Origin origin, Load load, uint32_t stage_bytes = Cfg::kLoadBytes) {
  if (sched.claimed) {
    produce_claimed(sm, sched, cta, ctas, origin, load, stage_bytes);
    return;
  }
  StageRing<Cfg::kStages> ring;
  WorkUnit u;
  for (int i = 0; work_unit(sched, cta, ctas, i, u); ++i) {
    const TileOrigin o = origin(u.tile);
    // Serpentine K: consecutive rounds share an operand slab (the raster walks tile
    // columns inside a row group), and a round that starts where the previous one ended
    // finds those K blocks still in L2. The consumers do not care about the order (the
    // first K block they see starts the sum).
    const bool backwards = (sched.serpentine & 1) && !u.split && (i & 1);
    for (int j = 0; j < u.kb_end - u.kb_begin; ++j) {
      const int kb = backwards ? u.kb_end - 1 - j : u.kb_begin + j;
      arch::mbar_wait(sm.empty(ring.stage), ring.phase ^ 1);
      fill_stage(sm, ring, load, o, kb, stage_bytes);
    }
  }
  // In a cluster, the tail: wait until every consumer of the cluster has released each
  // stage's last fill (a stage never filled passes at once), so that no peer arrives on
  // this CTA's barriers after it leaves. The CTA then leaves without a cluster barrier,
  // which cost ~1.2k cycles at the end of a 64x128 tile's CTA (1000^3).
  if constexpr (Cfg::kClusterM > 1) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      arch::mbar_wait(sm.empty(ring.stage), ring.phase ^ 1);
      ring.advance();
    }
  }
}

/// The producer warp of a claimed schedule (WgmmaSchedule::claimed): tile `cta` first,
/// then the tiles the launch-wide counter hands out, all K blocks of each in order. The
/// tile's number goes into the slot of the stage where it starts, ahead of that stage's
/// "full" arrival, so the consumers read it there (consume_units); past the last tile the
/// slot says -1 and "full" completes with no bytes. In a cluster the leader (rank 0)
/// claims and stores the number into the other CTAs' slots with st.async, completing on
/// their tile_bar; their producers wait for it there, then load their own parts of the
/// tile. The leader can overwrite a slot only after its "empty" barrier has heard from
/// every consumer of the cluster, which read the number before releasing the stage. The
/// claim for the next tile is sent as a tile starts and its answer read when the next one
/// does, so its round trip hides behind the loads. Lane 0 claims, stores and signals; the
/// warp takes the tile from it. The slot's store comes before that stage's "full" arrival
/// in lane 0's own program order: fill_stage's elect_one picks lane 0 of the converged warp.
template <class Cfg, class Origin, class Load>
__device__ __forceinline__ void produce_claimed(const WgmmaSmem<Cfg>& sm, const WgmmaSchedule& sched, int cta, int ctas,
                                                Origin origin, Load load, uint32_t stage_bytes) {
  constexpr int kCluster = Cfg::kClusterM;
  static_assert(Cfg::kStages <= 32, "tile_parity holds a bit per stage");
  const bool leader = kCluster == 1 || arch::cluster_rank() == 0;
  StageRing<Cfg::kStages> ring;
  uint32_t tile_parity = 0;  // per stage: the parity of tile_bar's next phase (non-leaders)
  int tile = cta;
  unsigned long long ask = 0;
  bool asked = false;
  const bool lane0 = threadIdx.x % 32 == 0;
  for (;;) {
    arch::mbar_wait(sm.empty(ring.stage), ring.phase ^ 1);
    if (leader) {
      int next = tile;
      if (lane0) {
        if (asked) next = ctas + static_cast<int>(resolve_arrival_ticket(sched.flags, sched.tag, ask));
        if (next >= sched.total) next = -1;
        arch::st_shared_u32(sm.tile_slot(ring.stage), static_cast<uint32_t>(next));
#pragma unroll
        for (int r = 1; r < kCluster; ++r)
          arch::st_async_u32(arch::map_shared_rank(sm.tile_slot(ring.stage), r), static_cast<uint32_t>(next),
                             arch::map_shared_rank(sm.tile_bar(ring.stage), r));
        if (next >= 0) ask = arrival_fetch(sched.flags);
      }
      tile = __shfl_sync(0xffffffffu, next, 0);
      asked = tile >= 0;
    } else {
      if (lane0) arch::mbar_arrive_expect_tx(sm.tile_bar(ring.stage), 4);
      arch::mbar_wait_acquire_cluster(sm.tile_bar(ring.stage), (tile_parity >> ring.stage) & 1);
      tile_parity ^= 1u << ring.stage;
      tile = static_cast<int>(arch::ld_shared_u32_ordered(sm.tile_slot(ring.stage)));
    }
    if (tile < 0) {
      if (lane0) arch::mbar_arrive(sm.full(ring.stage));  // the end: the consumers read -1
      return;
    }
    const TileOrigin o = origin(tile);
    for (int kb = 0; kb < sched.k_blocks; ++kb) {
      if (kb > 0) arch::mbar_wait(sm.empty(ring.stage), ring.phase ^ 1);
      fill_stage(sm, ring, load, o, kb, stage_bytes);
    }
  }
}

/// The tile a consumer warp of a claimed schedule starts next (negative: none), read from
/// the slot of the stage it waits for next (produce_claimed). Lane 0 reads it and passes
/// it on: the same lane later hands the stage back (release), so the read is ordered
/// before the producer may write the slot again, and the tile is warp-uniform.
template <class Cfg>
__device__ __forceinline__ int claimed_tile(const WgmmaSmem<Cfg>& sm, const StageRing<Cfg::kStages>& ring) {
  arch::mbar_wait(sm.full(ring.stage), ring.phase);
  uint32_t tile = 0;
  if (threadIdx.x % 32 == 0) tile = arch::ld_shared_u32_ordered(sm.tile_slot(ring.stage));
  return static_cast<int>(__shfl_sync(0xffffffffu, tile, 0));
}

/// A consumer's main loop over one tile's K blocks: wait for the stage, `issue(stage,
/// kb, parity)` its wgmmas (after wgmma_fence), commit, wait until the previous K
/// block's group is done, `retired(parity)` (that group read the other parity's
/// registers), and hand the previous stage back with `release`. K blocks go in pairs,
/// so `parity` is a compile-time constant (0, 1) that can name register buffers.
template <class Cfg, class Issue, class Retired, class Release>
__device__ __forceinline__ void consume_tile(const WgmmaSmem<Cfg>& sm, StageRing<Cfg::kStages>& ring, int k_blocks,
                                             Issue issue, Retired retired, Release release) {
  int prev = 0;
  auto step = [&](int kb, auto parity) {
    arch::mbar_wait(sm.full(ring.stage), ring.phase);
    issue(ring.stage, kb, parity);
    arch::wgmma_commit();
    arch::wgmma_wait<1>();  // the previous K block's wgmmas are done reading its stage
    retired(parity);
    if (kb > 0) release(prev);
    prev = ring.stage;
    ring.advance();
  };
  int kb = 0;
  for (; kb + 1 < k_blocks; kb += 2) {
    step(kb, std::integral_constant<int, 0>{});
    step(kb + 1, std::integral_constant<int, 1>{});
  }
  if (kb < k_blocks) step(kb, std::integral_constant<int, 0>{});
  arch::wgmma_wait<0>();
  release(prev);
}

}  // namespace gpukern::cuda::gemm
