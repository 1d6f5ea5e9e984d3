// Rung 12 `wgmma_tma`: Hopper (sm_90a) tensor-core GEMM. f16/bf16 in every transpose,
// tf32 with A not transposed (B either way); f32 accumulation.
//
// Change from 11 (mma_multistage): the three jobs that mma.sync kernels give every
// warp are split and handed to the hardware units built for them on Hopper.
//  * Loads: the tensor memory accelerator (TMA) copies each 64-row box of an operand
//    tile from global to shared memory in one instruction issued by one thread, in the
//    128-byte swizzled layout the tensor cores read without bank conflicts, zero-filling
//    whatever lies outside the matrix (odd shapes need no edge code). Completion is
//    counted in bytes on an mbarrier: no cp.async groups, no address arithmetic per thread.
//  * Math: wgmma (HGMMA in SASS) lets a warpgroup of 4 warps multiply a 64x256x16 block
//    straight out of shared memory, asynchronously, with the accumulators in registers;
//    no ldmatrix, no fragment registers. It reaches the H100's dense rate; mma.sync
//    reaches about two thirds of it.
//  * Warp specialization: one producer warpgroup (40 registers after setmaxnreg) only
//    issues TMA; two consumer warpgroups (232 registers) only issue wgmma, each owning
//    64x256 of the 128x256 block tile. A kStages-deep ring of shared-memory stages with
//    a "full" and an "empty" mbarrier per stage lets loads run ahead of the math.
//  * Persistence: one CTA per SM loops over tiles in an L2-grouped order; the producer
//    starts the next tile's loads while the consumers run the epilogue of this one.
//    Odd rounds walk K backwards and odd raster groups backwards, so each round starts
//    on operand data the previous one left in L2 (4096^3: 123 MB from DRAM, not 149).
//  * Epilogue through TMA stores (beta == 0, 16-byte-addressable C rows): each consumer
//    writes its scaled accumulators into swizzled shared-memory boxes and one thread
//    hands them to a TMA store, which drains to global memory while the consumers
//    already run the next tile's wgmmas. Storing from the registers instead (scattered
//    4-byte writes, still used for beta != 0 and unaligned C) kept the tensor cores idle
//    for ~10% of the time: this step took the rung from ~85% to ~100% of cuBLAS.
//  * Without clusters (TmaGridConfig; tf32 with N-major B), the two consumers run one K
//    block apart (kStagger), so one's epilogue overlaps the other's wgmmas, and the
//    last, partial round of tiles is split along K between its CTAs and the idle ones
//    when that pays (WgmmaSchedule; 8192^3 on 132 SMs: +2%).
//  * Clusters of 2 CTAs along M share the B tile, each loading half and TMA-multicasting
//    it to both: a third less L2 traffic, which under the H100's power cap is clock.
// Operands that TMA cannot address (base or row pitch not a multiple of 16 bytes,
// e.g. packed odd K) are first repacked into a 16-byte-pitched workspace by one
// memory-bound pass (~2 x 34 MB at 4097x4095x4093 bf16, ~30 us), then run the same way.
//
// tf32 with N-contiguous B (NN, the common layout): wgmma reads 32-bit operands from
// shared memory K-major only, so wgmma_tf32_nn_kernel computes C^T = B^T A^T with B^T
// fed from registers (see there). H100, 2026-11-21, cuBLAS tf32 timed alternately:
// 4096^3 402 TFLOP/s (101.7%), 8192^3 394 (103.5%); NT (both K-major, shared memory)
// 392 (98.5%); 4097x4095x4093 NN 239 (178%).
//
// Measured: see the configuration table below and bench/results/ (gpukern-bench).
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/gemm/tensor_core_sm90.cuh"

#include "cuda/gemm/tma_host.cuh"

#include <utility>

// Timeline probe (scripts/tc_gemm_device.cu's trace mode defines it; nothing elsewhere):
// slot 0 entry, 1 + i consumer 0 starting work unit i (so also done with the epilogue of
// unit i - 1), 12 consumer 0 done with its last epilogue, 13 the first stage landed
// (consumer 0), 14 consumer 0's C stores drained.
#ifndef GPUKERN_WGMMA_TRACE
#define GPUKERN_WGMMA_TRACE(slot) ((void)0)
#endif

namespace gpukern::cuda::gemm {
namespace {

/// Tile configuration of the warp-specialized kernel. Every operand tile is a set of
/// 64-row "boxes" of 128-byte rows (64 f16/bf16 or 32 f32 elements of K when K-major,
/// 64 elements of M or N when MN-major): one TMA box, one swizzle pattern, 8 KB.
template <int kStages_, int kClusterM_, int kProducerRegs_, int kConsumerRegs_, int kGroupM_ = 16, int kEpiBoxes_ = 2,
          int kStagger_ = 0>
struct WgmmaConfig {
  static constexpr int kBlockM = 128, kBlockN = 256;
  static constexpr int kConsumers = 2;   // consumer warpgroups, 64 rows of the tile each
  static constexpr int kStages = kStages_;
  static constexpr int kClusterM = kClusterM_;
  static constexpr int kGroupM = kGroupM_;  // tile rows per L2 raster group
  static constexpr int kProducerRegs = kProducerRegs_, kConsumerRegs = kConsumerRegs_;

  static constexpr int kRowBytes = 128;  // one 128-byte swizzle row
  static constexpr int kBoxRows = 64;
  static constexpr int kBoxBytes = kBoxRows * kRowBytes;
  static constexpr int kABoxes = kBlockM / kBoxRows, kBBoxes = kBlockN / kBoxRows;
  static constexpr int kStageBytes = (kABoxes + kBBoxes) * kBoxBytes;
  static constexpr int kThreads = (kConsumers + 1) * 128;
  // TMA-store epilogue: each consumer stages kEpiBoxes boxes of C (64 rows x 128 bytes)
  // at a time, so a 64x256 slice leaves in 2 (16-bit C) or 4 (f32 C) rounds.
  static constexpr int kEpiBoxes = kEpiBoxes_;
  // Consumer 1 starts kStagger K blocks after consumer 0 (0: together), so that one
  // consumer's epilogue runs while the other still issues wgmmas.
  static constexpr int kStagger = kStagger_;
  static_assert(kStagger < kStages, "consumer 0 must reach its signal without consumer 1 releasing a stage");
  static constexpr int kEpiBytes = kConsumers * kEpiBoxes * kBoxBytes;
  static constexpr int kBarrierBytes = 2 * kStages * 8;
  static constexpr int kSmemBytes = kStages * kStageBytes + kEpiBytes + kBarrierBytes + 1024;  // + alignment slack

  static_assert(kBlockM == 64 * kConsumers, "each consumer warpgroup owns one m64 slice of the tile");
  static_assert(kBlockN == 256, "the consumers issue m64n256 wgmma: the tile is 256 wide");
  static_assert(kBlockM % kBoxRows == 0 && kBlockN % kBoxRows == 0, "tiles are whole 64-row boxes");
  static_assert(kBBoxes % kClusterM == 0, "the CTAs of a cluster split B's boxes evenly");
  static_assert(kGroupM % kClusterM == 0, "an L2 raster group holds whole clusters");
  static_assert(kStageBytes % 1024 == 0, "128-byte swizzle needs every box 1024-byte aligned");
  static_assert(kSmemBytes <= 227 * 1024, "an H100 block gets at most 227 KB of shared memory");
  static_assert(kConsumers * kConsumerRegs * 128 + kProducerRegs * 128 <= 65536,
                "the warpgroups' registers must fit the SM's 64K register file");
};

// The H100 table. One thread issues all TMA copies, so the producer warpgroup gives
// nearly all its registers away. TmaConfig is what the rung runs (see the end of this
// table). With 3 stages there is room for 4 staging boxes per consumer, so a 16-bit
// 64x256 slice leaves in one TMA-store round; with 4 stages, 2 boxes (two rounds). Measured against each other on the H100 (2026-11-21, cuBLAS timed
// alternately with each; bf16/f16 at 4096^3 and 8192^3, % of cuBLAS):
//   3 stages, 4 staging boxes, no cluster (TmaConfig)    99.5 103.8 100.1 103.0
//   4 stages, 2 staging boxes, no cluster                 99.0 101.4  98.7  99.1
//   4 stages, 2 staging boxes, 2-CTA cluster, B multicast 99.3 102.4  99.1 102.3
//   4 stages, stores from registers (the first epilogue)  88.4  95.6  88.4  95.6
//   4-CTA clusters lose (83-92%): fewer clusters fit the GPCs at once.
// Run-to-run spread of one configuration is 1-2 points; clusters did not clearly win
// once the epilogue stopped stalling the math, so the simpler grid stays.
// Later the same day (dev driver, two calls each on an H100 and an H200, bf16/f16
// 4096^3 % of cuBLAS): consumer 1 one K block behind consumer 0 (kStagger = 1, so one
// consumer's epilogue runs under the other's wgmmas) 99.7 100.0 100.1 99.7 against
// 98.1-99.5 without; 2 blocks behind the same within noise. 8192^3: the split tail
// (plan_tail_split) 103.5-104.4 against 101.7-102.4 without it.
// 2026-11-22 (H100, three dev-driver calls, cuBLAS alternating, with and without a
// memset before each call; src/cuda/gemm/dev/h100-2026-11-22-*): at full clock the
// 3-stage, 4-box form ran a 4096^3 round in 45-46 us against 43-44 us for 4 stages + 2
// boxes (with or without clusters), 96.7-98.5% of cuBLAS against 98.0-98.8% (8192^3:
// 97.9-104.0 against 103.7-104.8): the rung ran 4 stages, 2 boxes, stagger 1 (TmaGridConfig).
// 2026-11-22, seventh session (H100; src/cuda/gemm/dev/h100-2026-11-22-power-*.log): at
// 4096^3 both libraries run at the 700 W cap, and the whole remaining gap was clock, not
// cycles: under ncu (one call, clocks free) TmaGridConfig took 287.8k cycles against
// cuBLAS's 287.7k, but at 1.571 GHz against 1.598 (timed back to back after a 512 MiB
// memset each: 1780 MHz against 1817, 96.8% of cuBLAS). Our kernel spent more energy a
// call: 27.9M instructions against 16.9M (wgmma descriptors rebuilt per thread and moved
// to uniform registers before every wgmma) and ~40% more L2 lookups (no multicast).
// With the descriptors in uniform registers (19.2M instructions) the 2-CTA cluster with
// B multicast (31.6M L2 read sectors against 37.7M) runs at cuBLAS's clock, and it is
// now the fastest form: back to back, 4096^3 99.1-99.9% of cuBLAS (bf16, f16) against
// 97-98% for TmaGridConfig, 8192^3 102-103% against 97-98%. Raster groups of 4, 8 or 32
// tile rows: 0.5-2% slower than 16 (8: 7-10% at 8192^3). So the rung runs clusters of 2,
// no stagger (with the multicast, the stagger measured level) and no tail split.
using TmaConfig = WgmmaConfig<4, 2, 40, 232, 16, 2, 0>;
using TmaGridConfig = WgmmaConfig<4, 1, 40, 232, 16, 2, 1>;
using TmaCluster4Config = WgmmaConfig<4, 4, 40, 232>;

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
[[maybe_unused]] __device__ __forceinline__ bool work_unit(const WgmmaSchedule& s, int cta, int ctas, int i, WorkUnit& u) {
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
/// epilogue; false: it parked its partial sums for the other CTA. (Unused where the
/// kernels' sm_90a bodies compile away.)
[[maybe_unused]] __device__ __forceinline__ bool split_fixup(const WgmmaSchedule& s, int slot, int consumer,
                                                             float (&acc)[128]) {
  __shared__ int verdict[2];  // per consumer: whether it arrived second
  volatile int* const second = &verdict[consumer];
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int key = 2 * slot + consumer;
  uint64_t* claim = s.flags + 2 * key;
  uint64_t* ready = claim + 1;
  float4* part = reinterpret_cast<float4*>(s.partials) + static_cast<size_t>(key) * (32 * 128);
  if (tid == 0) *second = atomicExch(reinterpret_cast<unsigned long long*>(claim), s.epoch) == s.epoch;
  gpu::named_barrier_sync(1 + consumer, 128);
  if (!*second) {
    // First: park the partial sums (each warp writes 512 contiguous bytes a store).
#pragma unroll
    for (int i = 0; i < 32; ++i)
      __stcg(part + i * 128 + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
    gpu::named_barrier_sync(1 + consumer, 128);
    if (tid == 0) {
      __threadfence();
      sm90::st_release_gpu(ready, s.epoch);
    }
    return false;
  }
  // Second: the first one claimed before us and is storing; wait for it, add.
  if (tid == 0)
    while (sm90::ld_acquire_gpu(ready) != s.epoch) __nanosleep(64);
  gpu::named_barrier_sync(1 + consumer, 128);
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

template <class T>
constexpr int kElemsPerRow = 128 / static_cast<int>(sizeof(T));  // K elements per stage (BK)

/// Shared memory of the kernels below, 1024-byte aligned (the 128-byte swizzle
/// repeats every 1024 bytes): kStages operand stages, each consumer's C staging boxes,
/// then a "full" and an "empty" mbarrier per stage.
template <class Cfg>
struct WgmmaSmem {
  uint32_t base;
  __device__ explicit WgmmaSmem(const void* raw) : base((sm90::smem_addr(raw) + 1023) & ~1023u) {}
  __device__ uint32_t stage(int s) const { return base + s * Cfg::kStageBytes; }
  __device__ uint32_t c_staging(int consumer) const {
    return base + Cfg::kStages * Cfg::kStageBytes + consumer * Cfg::kEpiBoxes * Cfg::kBoxBytes;
  }
  __device__ uint32_t full(int s) const { return base + Cfg::kStages * Cfg::kStageBytes + Cfg::kEpiBytes + 8 * s; }
  __device__ uint32_t empty(int s) const { return full(Cfg::kStages) + 8 * s; }
  /// Thread 0: each "full" barrier completes on the producer's expect_tx arrival plus
  /// the TMA bytes, each "empty" one on `readers` arrivals.
  __device__ void init_barriers(uint32_t readers) const {
    if (threadIdx.x != 0) return;
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm90::mbar_init(full(s), 1);
      sm90::mbar_init(empty(s), readers);
    }
    sm90::fence_barrier_init();
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

/// The producer thread: for each of this CTA's work units (work_unit) and each of
/// their K blocks, waits until every reader has released the stage, announces its bytes
/// and lets `load(stage, full_barrier, m0, n0, kb)` issue the TMA copies.
template <class Cfg, class Origin, class Load>
__device__ __forceinline__ void produce_stages(const WgmmaSmem<Cfg>& sm, const WgmmaSchedule& sched, int cta,
                                               int ctas, Origin origin, Load load) {
  StageRing<Cfg::kStages> ring;
  WorkUnit u;
  for (int i = 0; work_unit(sched, cta, ctas, i, u); ++i) {
    int m0, n0;
    origin(u.tile, m0, n0);
    // Serpentine K: consecutive rounds share an operand slab (the raster walks tile
    // columns inside a row group), and a round that starts where the previous one ended
    // finds those K blocks still in L2. The consumers do not care about the order (the
    // first K block they see starts the sum).
    const bool backwards = (sched.serpentine & 1) && !u.split && (i & 1);
    for (int j = 0; j < u.kb_end - u.kb_begin; ++j) {
      const int kb = backwards ? u.kb_end - 1 - j : u.kb_begin + j;
      sm90::mbar_wait(sm.empty(ring.stage), ring.phase ^ 1);
      sm90::mbar_arrive_expect_tx(sm.full(ring.stage), Cfg::kStageBytes);
      load(ring.stage, sm.full(ring.stage), m0, n0, kb);
      ring.advance();
    }
  }
}

/// One consumer's TMA-store epilogue in kRounds rounds: its 128 threads write their
/// part of the round into the staging boxes (`write(round)`), then its first thread
/// hands them to TMA stores (`store(round)`), which read shared memory while the
/// consumer goes on; a round first waits until the previous stores have read it.
template <int kRounds, class Write, class Store>
__device__ __forceinline__ void tma_store_rounds(int consumer, Write write, Store store) {
  const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
  for (int round = 0; round < kRounds; ++round) {
    if (leader) sm90::bulk_wait_group_read<0>();
    gpu::named_barrier_sync(1 + consumer, 128);
    write(round);
    sm90::fence_proxy_async();  // the generic-proxy writes, before the async-proxy read
    gpu::named_barrier_sync(1 + consumer, 128);
    if (leader) {
      store(round);
      sm90::bulk_commit_group();
    }
  }
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
    sm90::mbar_wait(sm.full(ring.stage), ring.phase);
    issue(ring.stage, kb, parity);
    sm90::wgmma_commit();
    sm90::wgmma_wait<1>();  // the previous K block's wgmmas are done reading its stage
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
  sm90::wgmma_wait<0>();
  release(prev);
}

/// A consumer warpgroup's walk over its CTA's work units, in the producer's order
/// (work_unit): `mainloop(unit, index)` accumulates the unit's K blocks into `acc`; a
/// split tile then goes through split_fixup, and the warpgroup left holding the whole
/// sum runs `epilogue(m0, n0)` for the tile at `origin(tile)`.
template <class Origin, class Mainloop, class Epilogue>
__device__ __forceinline__ void consume_units(const WgmmaSchedule& sched, int cta, int ctas, int consumer,
                                              float (&acc)[128], Origin origin, Mainloop mainloop,
                                              Epilogue epilogue) {
  WorkUnit u;
  for (int i = 0; work_unit(sched, cta, ctas, i, u); ++i) {
    mainloop(u, i);
    if (u.split && !split_fixup(sched, u.slot, consumer, acc)) continue;
    int m0, n0;
    origin(u.tile, m0, n0);
    epilogue(m0, n0);
  }
}

/// `OutT` = void: the epilogue stores C from the registers (any alpha/beta, any C
/// alignment). Otherwise (beta == 0, TMA-addressable C of type OutT) it stages C in
/// shared memory and TMA stores it, which the next tile's math overlaps.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, class OutT = void>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_c, TcProblem p, WgmmaSchedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 2 || (kAKMajor && kBKMajor), "wgmma reads 32-bit operands K-major only");
  constexpr int kCluster = Cfg::kClusterM;
  constexpr int kBK = kElemsPerRow<T>;
  constexpr int kKSteps = sizeof(T) == 2 ? kBK / 16 : kBK / 8;  // wgmma K per instruction: 16 or 8
  // Descriptor advance per K step: 32 bytes along a K-major row; 16 rows of 128 bytes
  // when MN-major (K runs down the rows of a box).
  constexpr uint32_t kAStep = kAKMajor ? 32 : 16 * Cfg::kRowBytes;
  constexpr uint32_t kBStep = kBKMajor ? 32 : 16 * Cfg::kRowBytes;
  // Leading byte offset: unused for K-major 128-byte swizzle (the K step fits in a row);
  // for MN-major it is the distance between 64-element boxes along M/N. Stride byte
  // offset: 8 rows of 128 bytes, the swizzle atom.
  constexpr uint32_t kALbo = kAKMajor ? 16 : Cfg::kBoxBytes, kBLbo = kBKMajor ? 16 : Cfg::kBoxBytes;
  constexpr uint32_t kSbo = 8 * Cfg::kRowBytes;

  extern __shared__ uint8_t smem_raw[];
  const WgmmaSmem<Cfg> sm(smem_raw);
  auto a_tile = [&](int s) { return sm.stage(s); };
  auto b_tile = [&](int s) { return sm.stage(s) + Cfg::kABoxes * Cfg::kBoxBytes; };

  // Broadcast from lane 0: the same value, but now ptxas knows it is warp-uniform, so
  // the role branches below are uniform and the loop state, barrier addresses and wgmma
  // descriptors live in uniform registers (one scalar op a warp) instead of per-thread
  // ones moved over with R2UR before every wgmma.
  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_in_group = (static_cast<int>(threadIdx.x) / 32) % 4;
  const uint32_t rank = kCluster > 1 ? cluster::rank() : 0;
  const int cluster_id = static_cast<int>(blockIdx.x) / kCluster;
  const int clusters = static_cast<int>(gridDim.x) / kCluster;

  if (threadIdx.x == 0) GPUKERN_WGMMA_TRACE(0);
  // "empty": one arrival per consumer warp of every CTA that reads this CTA's multicast.
  sm.init_barriers(Cfg::kConsumers * 4 * kCluster);
  if constexpr (kCluster > 1) cluster::sync();  // peers arrive on and write to our barriers
  else __syncthreads();

  auto tile_origin = [&](int t, int& m0, int& n0) {
    const TileCoord c =
        tile_coords(t, sched.cluster_tiles_m, sched.tiles_n, Cfg::kGroupM / kCluster, (sched.serpentine & 2) != 0);
    m0 = (c.m * kCluster + static_cast<int>(rank)) * Cfg::kBlockM;
    n0 = c.n * Cfg::kBlockN;
  };

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      sm90::prefetch_tensor_map(&map_a);
      sm90::prefetch_tensor_map(&map_b);
      produce_stages(sm, sched, cluster_id, clusters, tile_origin,
                     [&](int stage, uint32_t full, int m0, int n0, int kb) {
        const int k0 = kb * kBK;
#pragma unroll
        for (int i = 0; i < Cfg::kABoxes; ++i) {
          const int mn = m0 + i * Cfg::kBoxRows;
          sm90::tma_load_2d(a_tile(stage) + i * Cfg::kBoxBytes, &map_a, full, kAKMajor ? k0 : mn, kAKMajor ? mn : k0);
        }
#pragma unroll
        for (int i = static_cast<int>(rank); i < Cfg::kBBoxes; i += kCluster) {
          const int mn = n0 + i * Cfg::kBoxRows;
          const uint32_t dst = b_tile(stage) + i * Cfg::kBoxBytes;
          if constexpr (kCluster > 1)
            sm90::tma_load_2d_multicast(dst, &map_b, full, kBKMajor ? k0 : mn, kBKMajor ? mn : k0,
                                        static_cast<uint16_t>((1u << kCluster) - 1));
          else
            sm90::tma_load_2d(dst, &map_b, full, kBKMajor ? k0 : mn, kBKMajor ? mn : k0);
        }
      });
    }
  } else {
    // ---------------- consumers ----------------
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    // Lane 0 of each warp hands a finished stage back to every producer that fills it.
    auto release = [&](int s) {
      if (lane != 0) return;
      if constexpr (kCluster > 1) {
#pragma unroll
        for (int r = 0; r < kCluster; ++r) sm90::mbar_arrive_cluster(sm.empty(s), r);
      } else {
        sm90::mbar_arrive(sm.empty(s));
      }
    };
    StageRing<Cfg::kStages> ring;
    // wgmma descriptors of stage 0, K step 0; a stage or a K step only adds its byte
    // offset / 16 to the address field (bits 0-13: shared addresses stay below 2^18, so
    // the sum never carries out of it). Building each descriptor from its address took
    // ~70 instructions a K block a warp (masks, shifts, moves), which the H100's power
    // limit turns into clock: 27.9M instructions for 4096^3 against cuBLAS's 16.9M.
    const uint64_t desc_a0 = sm90::make_sw128_desc(a_tile(0) + consumer * Cfg::kBoxBytes, kALbo, kSbo);
    const uint64_t desc_b0 = sm90::make_sw128_desc(b_tile(0), kBLbo, kSbo);
    // Stagger: consumer 0 signals named barrier 3 once it issues K block kStagger of its
    // first unit (fewer blocks: its last one); consumer 1 waits for that first.
    int stagger_at = -1;
    if constexpr (Cfg::kStagger > 0) {
      WorkUnit first;
      if (work_unit(sched, cluster_id, clusters, 0, first)) {
        if (consumer == 1) gpu::named_barrier_sync(3, 256);
        else stagger_at = min(Cfg::kStagger, first.kb_end - first.kb_begin - 1);
      }
    }
    consume_units(
        sched, cluster_id, clusters, consumer, acc, tile_origin,
        [&](const WorkUnit& u, int unit) {
          if (threadIdx.x == 128 && unit < 11) GPUKERN_WGMMA_TRACE(1 + unit);
          consume_tile(
              sm, ring, u.kb_end - u.kb_begin,
              [&](int stage, int kb, auto) {
                if (threadIdx.x == 128 && kb == 0 && unit == 0) GPUKERN_WGMMA_TRACE(13);
                if constexpr (Cfg::kStagger > 0) {
                  if (kb == stagger_at && unit == 0) gpu::named_barrier_arrive(3, 256);
                }
                sm90::wgmma_fence();
                const uint32_t stage_field = static_cast<uint32_t>(stage) * (Cfg::kStageBytes >> 4);
#pragma unroll
                for (int kk = 0; kk < kKSteps; ++kk) {
                  const uint64_t desc_a = sm90::desc_advance(desc_a0, stage_field + kk * (kAStep >> 4));
                  const uint64_t desc_b = sm90::desc_advance(desc_b0, stage_field + kk * (kBStep >> 4));
                  const int accumulate = (kb > 0 || kk > 0) ? 1 : 0;
                  if constexpr (sizeof(T) == 2)
                    sm90::wgmma_m64n256k16<T, kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(acc, desc_a, desc_b, accumulate);
                  else
                    sm90::wgmma_m64n256k8_tf32(acc, desc_a, desc_b, accumulate);
                }
              },
              [](auto) {}, release);
        },
        [&](int m0, int n0) {
          // Thread (warp w, lane l) holds rows 16w + l/4 and +8, columns 8i + 2(l%4) and +1
          // (i = 0..31) of its consumer's 64x256 slice.
          if constexpr (std::is_void_v<OutT>) {
            const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
            const int col = n0 + 2 * (lane % 4);
#pragma unroll
            for (int i = 0; i < 32; ++i) {
              store_c_pair<T>(p, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
              store_c_pair<T>(p, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
            }
          } else {
            // Stage kEpiBoxes boxes (64 rows x 128 bytes, 128-byte swizzle: 16-byte chunk
            // j of row r at j ^ (r % 8), conflict-free for these writes) and TMA store them;
            // the store clips whatever lies outside C.
            constexpr int kOutBytes = static_cast<int>(sizeof(OutT));
            constexpr int kBoxCols = Cfg::kRowBytes / kOutBytes;
            constexpr int kRoundCols = kBoxCols * Cfg::kEpiBoxes;
            const uint32_t staging = sm.c_staging(consumer);
            tma_store_rounds<Cfg::kBlockN / kRoundCols>(
                consumer,
                [&](int round) {
                  if constexpr (kOutBytes == 2) {
                    // stmatrix: 8-column groups g and g + 1 (one 16-byte chunk of a row
                    // each) of the warp's 16 rows are four 8x8 matrices, one store; lane
                    // l addresses row l % 8 of matrix l / 8 = (group g + l / 16, rows + 8
                    // ((l / 8) % 2)). A quarter of the st.shared of the scalar form.
                    const int mat = lane / 8;
                    const int r = warp_in_group * 16 + 8 * (mat % 2) + lane % 8;
                    auto write = [&](auto scaled) {
                      auto packed = [&](int a) {
                        if constexpr (decltype(scaled)::value)
                          return pack_pair<OutT>(p.alpha * acc[a], p.alpha * acc[a + 1]);
                        else
                          return pack_pair<OutT>(acc[a], acc[a + 1]);
                      };
#pragma unroll
                      for (int g = 0; g < kRoundCols / 8; g += 2) {
                        const int i = round * (kRoundCols / 8) + g;
                        const int mine = g + mat / 2;  // the column group this lane addresses
                        const uint32_t addr = staging + (mine / 8) * Cfg::kBoxBytes + sm90::sw128_offset(r, mine % 8);
                        sm90::stmatrix_x4(addr, packed(4 * i), packed(4 * i + 2), packed(4 * i + 4), packed(4 * i + 6));
                      }
                    };
                    // alpha = 1 (the common call) skips 128 multiplies a thread a tile.
                    if (p.alpha != 1.0f) write(std::true_type{});
                    else write(std::false_type{});
                  } else {
                    const int r_lo = warp_in_group * 16 + lane / 4;
#pragma unroll
                    for (int j = 0; j < kRoundCols / 8; ++j) {
                      const int i = round * (kRoundCols / 8) + j;
                      const int cr = 8 * j + 2 * (lane % 4);
                      const uint32_t box = staging + (cr / kBoxCols) * Cfg::kBoxBytes;
                      const uint32_t byte = (cr % kBoxCols) * kOutBytes;
#pragma unroll
                      for (int h = 0; h < 2; ++h) {
                        const int r = r_lo + 8 * h;
                        const uint32_t addr = box + sm90::sw128_offset(r, byte >> 4) + (byte & 15);
                        const float v0 = p.alpha * acc[4 * i + 2 * h], v1 = p.alpha * acc[4 * i + 2 * h + 1];
                        sm90::st_shared_v2f32(addr, v0, v1);
                      }
                    }
                  }
                },
                [&](int round) {
#pragma unroll
                  for (int b = 0; b < Cfg::kEpiBoxes; ++b)
                    sm90::tma_store_2d(&map_c, staging + b * Cfg::kBoxBytes, n0 + round * kRoundCols + b * kBoxCols,
                                       m0 + consumer * 64);
                });
          }
        });
    if (threadIdx.x == 128) GPUKERN_WGMMA_TRACE(12);
    if constexpr (!std::is_void_v<OutT>) {
      if (threadIdx.x % 128 == 0) sm90::bulk_wait_group<0>();  // C is written before the CTA exits
    }
    if (threadIdx.x == 128) GPUKERN_WGMMA_TRACE(14);
  }
  if constexpr (kCluster > 1) cluster::sync();  // no CTA leaves while a peer may still signal it
#endif
}

/// tf32 with row-major (N-contiguous) B, where wgmma cannot read B from shared memory
/// (32-bit operands must be K-major there). The kernel computes C^T = B^T A^T instead:
/// wgmma's A operand is B^T, taken from registers (each consumer loads its fragments
/// from the TMA-staged B tile with 32-bit shared loads), and its B operand is A^T, which
/// is K-major in shared memory as stored. A CTA tile is 256 rows of C (wgmma N) by 128
/// columns (two consumers x wgmma M = 64). Fragment row r of warp w holds C column
///   n(w, r) = 8 (w % 2) + 32 (w / 2) + 16 ((r % 8) / 4) + r % 4 + 4 (r / 8)
/// (a permutation of the consumer's 64 columns) so that the 32 lanes of one shared load
/// hit 32 different banks through the 128-byte swizzle. Stage: user B as 4 boxes of
/// 32 K rows x 32 columns (4 KB), user A as 4 boxes of 64 rows x 32 K (8 KB).
template <class Cfg, class OutT>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tf32_nn_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_c, TcProblem p, WgmmaSchedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(Cfg::kClusterM == 1 && Cfg::kBlockM == 128 && Cfg::kBlockN == 256, "the tf32 NN tile");
  constexpr int kBK = 32;             // K per stage: one 128-byte row of A
  constexpr int kTileM = 256, kTileN = 128;
  constexpr int kBBoxBytes = 4096;    // 32 K rows x 128 bytes
  extern __shared__ uint8_t smem_raw[];
  const WgmmaSmem<Cfg> sm(smem_raw);
  // The user's B tile takes the kABoxes slot (16 KB), the user's A tile the kBBoxes slot.
  auto bt = [&](int s) { return sm.stage(s); };
  auto at = [&](int s) { return sm.stage(s) + Cfg::kABoxes * Cfg::kBoxBytes; };

  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);  // uniform, as above
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = (static_cast<int>(threadIdx.x) / 32) % 4;
  sm.init_barriers(Cfg::kConsumers * 4);
  __syncthreads();
  auto tile_origin = [&](int t, int& m0, int& n0) {
    const TileCoord c = tile_coords(t, sched.cluster_tiles_m, sched.tiles_n, Cfg::kGroupM / 2);
    m0 = c.m * kTileM;
    n0 = c.n * kTileN;
  };
  const int first = static_cast<int>(blockIdx.x), step = static_cast<int>(gridDim.x);

  if (warpgroup == 0) {
    sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      sm90::prefetch_tensor_map(&map_a);
      sm90::prefetch_tensor_map(&map_b);
      produce_stages(sm, sched, first, step, tile_origin, [&](int stage, uint32_t full, int m0, int n0, int kb) {
        const int k0 = kb * kBK;
#pragma unroll
        for (int i = 0; i < 4; ++i) sm90::tma_load_2d(at(stage) + i * Cfg::kBoxBytes, &map_a, full, k0, m0 + 64 * i);
#pragma unroll
        for (int j = 0; j < 4; ++j) sm90::tma_load_2d(bt(stage) + j * kBBoxBytes, &map_b, full, n0 + 32 * j, k0);
      });
    }
  } else {
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int g = lane / 4, q = lane % 4;
    // This thread's two fragment rows (h = 0: row g, h = 1: row g + 8) as columns of
    // the consumer's 64, and their place in the B tile's boxes.
    int col[2];
    uint32_t col_off[2], col_chunk[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      col[h] = 8 * (warp % 2) + 32 * (warp / 2) + 16 * (g / 4) + g % 4 + 4 * h;
      const int n_local = 64 * consumer + col[h];
      col_off[h] = (n_local / 32) * kBBoxBytes + (n_local % 4) * 4;
      col_chunk[h] = (n_local % 32) / 4;
    }
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    // [K-block parity][K step][register]: the registers a running wgmma reads are not
    // written until wgmma_wait says it is done.
    uint32_t frag[2][4][4];
    auto release = [&](int s) {
      if (lane == 0) sm90::mbar_arrive(sm.empty(s));
    };
    StageRing<Cfg::kStages> ring;
    consume_units(
        sched, first, step, consumer, acc, tile_origin,
        [&](const WorkUnit& u, int) {
          consume_tile(
              sm, ring, u.kb_end - u.kb_begin,
              [&](int stage, int kb, auto parity) {
                uint32_t(&f)[4][4] = frag[decltype(parity)::value];
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                  for (int e = 0; e < 2; ++e)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                      const int k = 8 * kk + q + 4 * e;  // register 2e + h: (row g + 8h, K column q + 4e)
                      f[kk][2 * e + h] =
                          sm90::ld_shared_u32(bt(stage) + col_off[h] + k * 128 + ((col_chunk[h] ^ (k & 7)) << 4));
                    }
                sm90::wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {
                  const uint64_t desc = sm90::make_sw128_desc(at(stage) + kk * 32, 16, 8 * Cfg::kRowBytes);
                  sm90::wgmma_m64n256k8_tf32_rs(acc, f[kk], desc, (kb > 0 || kk > 0) ? 1 : 0);
                }
              },
              [&](auto parity) {
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) sm90::keep_registers(frag[1 - decltype(parity)::value][kk]);
              },
              release);
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) {
            sm90::keep_registers(frag[0][kk]);
            sm90::keep_registers(frag[1][kk]);
          }
        },
        [&](int m0, int n0) {
          // acc[4i + 2h + p] = C(m0 + 8i + 2q + p, n0 + 64 consumer + col[h]), i = 0..31.
          if constexpr (std::is_void_v<OutT>) {
#pragma unroll
            for (int i = 0; i < 32; ++i)
#pragma unroll
              for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int pp = 0; pp < 2; ++pp) {
                  const int row = m0 + 8 * i + 2 * q + pp, c = n0 + 64 * consumer + col[h];
                  if (row < p.m && c < p.n)
                    store_one(static_cast<float*>(p.c) + static_cast<int64_t>(row) * p.ldc + c, acc[4 * i + 2 * h + pp],
                              p.alpha, p.beta);
                }
          } else {
            // Rounds of 64 rows x the consumer's 64 columns (2 boxes of 32 f32 columns).
            const uint32_t staging = sm.c_staging(consumer);
            tma_store_rounds<kTileM / 64>(
                consumer,
                [&](int round) {
#pragma unroll
                  for (int j = 0; j < 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                      for (int pp = 0; pp < 2; ++pp) {
                        const int r = 8 * j + 2 * q + pp;
                        const uint32_t addr = staging + (col[h] / 32) * Cfg::kBoxBytes +
                                              sm90::sw128_offset(r, (col[h] % 32) / 4) + (col[h] % 4) * 4;
                        sm90::st_shared_f32(addr, p.alpha * acc[4 * (8 * round + j) + 2 * h + pp]);
                      }
                },
                [&](int round) {
                  sm90::tma_store_2d(&map_c, staging, n0 + 64 * consumer, m0 + 64 * round);
                  sm90::tma_store_2d(&map_c, staging + Cfg::kBoxBytes, n0 + 64 * consumer + 32, m0 + 64 * round);
                });
          }
        });
    if constexpr (!std::is_void_v<OutT>) {
      if (threadIdx.x % 128 == 0) sm90::bulk_wait_group<0>();
    }
  }
#endif
}

// ---------------------------------------------------------------- host side

// Tensor maps, the TMA-addressability check and the repack workspace: tma_host.cuh.

/// How many clusters of `Cfg` can be resident at once (one CTA per SM; clusters must
/// fit inside a GPC, so 4-CTA clusters may leave SMs idle). Queried once per config.
template <class Cfg, class Kernel>
int resident_clusters(Kernel kernel, const CudaContext& ctx) {
  if constexpr (Cfg::kClusterM == 1) {
    return ctx.sm_count;
  } else {
    const int clusters = cached_occupancy(std::make_pair(ctx.device, reinterpret_cast<const void*>(kernel)), [&](int* n) {
      const ClusterLaunch one(Cfg::kClusterM, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream, Cfg::kClusterM);
      return cudaOccupancyMaxActiveClusters(n, kernel, &one.config);
    });
    return clusters > 0 ? clusters : ctx.sm_count / Cfg::kClusterM;
  }
}

/// Launch options of the persistent kernels (the development driver sweeps them).
struct WgmmaOptions {
  int split = -1;      // plan_tail_split's helper_blocks: < 0 the cost model, 0 no split
  int serpentine = 3;  // WgmmaSchedule::serpentine
};

/// The persistent schedule of `tiles_m` x `tiles_n` tiles of `k_blocks` K blocks, no split.
WgmmaSchedule make_schedule(int tiles_m, int tiles_n, int k_blocks) {
  WgmmaSchedule s;
  s.cluster_tiles_m = tiles_m;
  s.tiles_n = tiles_n;
  s.total = tiles_m * tiles_n;
  s.k_blocks = k_blocks;
  s.split_first = s.total;
  return s;
}

/// The K split of the last partial round over `ctas` persistent CTAs (WgmmaSchedule).
/// `helper_blocks`: K blocks each helper takes of a tail tile; < 0 picks it from a cost
/// model (owner time k - x + c against the busiest helper's n (x + c), c = the K blocks'
/// worth of time a partial takes to park or add), 0 turns the split off. A split
/// schedule gets its workspace (partial sums, then the flags; from the stream-ordered
/// pool) and a launch-unique epoch; returns that workspace for the caller to free after
/// the launch, or null (no split).
void* plan_tail_split(WgmmaSchedule& s, int ctas, int helper_blocks, const CudaContext& ctx) {
  const int tail = s.total % ctas, helpers = ctas - tail;
  if (s.total <= ctas || tail == 0 || helper_blocks == 0 || s.k_blocks < 2) return nullptr;
  const int busiest = ceil_div(tail, helpers);  // tail tiles of the busiest helper
  int x = helper_blocks;
  if (x < 0) {
    // Measured on the H200 (2026-11-21): a split tile costs its CTAs ~6 K blocks'
    // worth of time beyond its K blocks (parking or adding 128 KB of partial sums and
    // refilling the pipeline). So 4096^3 (116 tail tiles for 16 helpers) does not split;
    // 8192^3 (68 for 64) does, +2% over no split.
    constexpr double kPartialBlocks = 6;
    double best = s.k_blocks;
    x = 0;
    for (int c = 1; c < s.k_blocks; ++c) {
      const double t = std::max(s.k_blocks - c + kPartialBlocks, busiest * (c + kPartialBlocks));
      if (t < best) best = t, x = c;
    }
    if (best > s.k_blocks - 2) return nullptr;  // not worth a launch workspace
  }
  x = std::min(x, s.k_blocks - 1);
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

/// Launches one configuration on TMA-addressable operands, as many persistent
/// clusters as fit on the device at once.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, class OutT>
void launch_kernel(const core::GemmArgs& args, const CudaContext& ctx, const CUtensorMap& map_c, WgmmaOptions opt) {
  auto kernel = wgmma_tma_kernel<Cfg, T, kAKMajor, kBKMajor, OutT>;
  const TcProblem p = make_tc_problem(args);
  WgmmaSchedule sched = make_schedule(ceil_div(ceil_div(p.m, Cfg::kBlockM), Cfg::kClusterM),
                                      ceil_div(p.n, Cfg::kBlockN), ceil_div(p.k, kElemsPerRow<T>));

  const CUtensorMap map_a =
      kAKMajor ? make_tensor_map<T>(args.a, args.lda, p.m, p.k) : make_tensor_map<T>(args.a, args.lda, p.k, p.m);
  const CUtensorMap map_b =
      kBKMajor ? make_tensor_map<T>(args.b, args.ldb, p.n, p.k) : make_tensor_map<T>(args.b, args.ldb, p.k, p.n);
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));

  const int resident = resident_clusters<Cfg>(kernel, ctx);
  const int clusters = std::max(1, std::min(resident, sched.total));
  const ClusterLaunch launch(int64_t(clusters) * Cfg::kClusterM, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream,
                             Cfg::kClusterM);
  void* ws = plan_tail_split(sched, clusters, Cfg::kClusterM == 1 ? opt.split : 0, ctx);
  sched.serpentine = opt.serpentine;
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, map_a, map_b, map_c, p, sched));
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
}

/// Picks the epilogue: TMA store when beta == 0 and TMA can address C, else stores
/// from the registers.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor>
void launch_config(const core::GemmArgs& args, const CudaContext& ctx, WgmmaOptions opt) {
  const bool c_f32 = args.c_type == core::DType::F32;
  const std::size_t c_bytes = c_f32 ? 4 : sizeof(T);
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n);
  // TMA stores whole 16-byte chunks of a row: the row length must be a multiple of 16
  // bytes, or the store would spill into the columns between n and ldc.
  const bool tma_store = args.beta == 0.0f && tma_addressable(args.c, args.ldc, c_bytes) &&
                         (static_cast<std::size_t>(n) * c_bytes) % 16 == 0;
  if (tma_store && (c_f32 || sizeof(T) == 4)) {
    launch_kernel<Cfg, T, kAKMajor, kBKMajor, float>(args, ctx, make_tensor_map<float>(args.c, args.ldc, m, n, true),
                                                     opt);
  } else if constexpr (sizeof(T) == 2) {
    if (tma_store) {
      launch_kernel<Cfg, T, kAKMajor, kBKMajor, T>(args, ctx, make_tensor_map<T>(args.c, args.ldc, m, n), opt);
      return;
    }
    launch_kernel<Cfg, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{}, opt);
  } else {
    launch_kernel<Cfg, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{}, opt);
  }
}

template <class Cfg, class T, bool kAKMajor, bool kBKMajor>
void launch_wgmma_layout(const core::GemmArgs& call, const CudaContext& ctx, WgmmaOptions opt) {
  core::GemmArgs args = call;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n), k = static_cast<int>(args.k);
  void* a_copy = kAKMajor ? make_tma_addressable<T>(args.a, args.lda, m, k, ctx)
                          : make_tma_addressable<T>(args.a, args.lda, k, m, ctx);
  void* b_copy = kBKMajor ? make_tma_addressable<T>(args.b, args.ldb, n, k, ctx)
                          : make_tma_addressable<T>(args.b, args.ldb, k, n, ctx);
  launch_config<Cfg, T, kAKMajor, kBKMajor>(args, ctx, opt);
  if (a_copy) GK_GPU_CHECK(cudaFreeAsync(a_copy, ctx.stream));
  if (b_copy) GK_GPU_CHECK(cudaFreeAsync(b_copy, ctx.stream));
}

/// tf32 with N-contiguous B (wgmma_tf32_nn_kernel): its own configuration, 4 stages.
using TmaTf32NNConfig = WgmmaConfig<4, 1, 40, 232, 16, 2>;

void launch_tf32_nn(const core::GemmArgs& call, const CudaContext& ctx, WgmmaOptions opt) {
  using Cfg = TmaTf32NNConfig;
  core::GemmArgs args = call;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n), k = static_cast<int>(args.k);
  void* a_copy = make_tma_addressable<float>(args.a, args.lda, m, k, ctx);
  void* b_copy = make_tma_addressable<float>(args.b, args.ldb, k, n, ctx);
  const TcProblem p = make_tc_problem(args);
  WgmmaSchedule sched = make_schedule(ceil_div(m, 256), ceil_div(n, 128), ceil_div(k, 32));
  const CUtensorMap map_a = make_tensor_map<float>(args.a, args.lda, m, k);
  const CUtensorMap map_b = make_tensor_map<float>(args.b, args.ldb, k, n, false, 32);
  const bool tma_store = args.beta == 0.0f && tma_addressable(args.c, args.ldc, 4) && n % 4 == 0;
  const CUtensorMap map_c = tma_store ? make_tensor_map<float>(args.c, args.ldc, m, n, true) : CUtensorMap{};
  auto kernel = tma_store ? wgmma_tf32_nn_kernel<Cfg, float> : wgmma_tf32_nn_kernel<Cfg, void>;
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const int grid = std::max(1, std::min(ctx.sm_count, sched.total));
  void* ws = plan_tail_split(sched, grid, opt.split, ctx);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream>>>(map_a, map_b, map_c, p, sched);
  GK_LAUNCH_CHECK();
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
  if (a_copy) GK_GPU_CHECK(cudaFreeAsync(a_copy, ctx.stream));
  if (b_copy) GK_GPU_CHECK(cudaFreeAsync(b_copy, ctx.stream));
}

template <class Cfg, class T>
void launch_wgmma_typed(const core::GemmArgs& args, const CudaContext& ctx, WgmmaOptions opt) {
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if constexpr (sizeof(T) == 4) {
    // supports() admitted K-major A only; B either way.
    if (bk) launch_wgmma_layout<Cfg, T, true, true>(args, ctx, opt);
    else launch_tf32_nn(args, ctx, opt);
  } else {
    if (ak && bk) launch_wgmma_layout<Cfg, T, true, true>(args, ctx, opt);
    else if (ak) launch_wgmma_layout<Cfg, T, true, false>(args, ctx, opt);
    else if (bk) launch_wgmma_layout<Cfg, T, false, true>(args, ctx, opt);
    else launch_wgmma_layout<Cfg, T, false, false>(args, ctx, opt);
  }
}

template <class Cfg>
void launch_wgmma_config(const core::GemmArgs& args, const CudaContext& ctx, WgmmaOptions opt = {}) {
  gpu::with_storage_type(args.ab_type, [&](auto t) { launch_wgmma_typed<Cfg, decltype(t)>(args, ctx, opt); });
}

/// Whether this module holds sm_90a machine code for the kernels (a build without the
/// 90a target would run an empty body on an H100).
/// Looked up once: the module's machine code does not change (supports() runs per call).
bool built_for_sm90a() {
  static const bool built = kernel_built_for(wgmma_tma_kernel<TmaConfig, gpu::bf16_t, true, false, void>, 90);
  return built;
}

}  // namespace

core::Verdict wgmma_tma_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  switch (args.type()) {
    case core::GemmType::F16:
    case core::GemmType::BF16:
      break;
    case core::GemmType::TF32:
      // wgmma reads 32-bit operands from shared memory K-major only; N-contiguous B goes
      // through registers instead (wgmma_tf32_nn_kernel). Both MN-major: no path.
      if (args.trans_a)
        return {core::Decline::Layout, "tf32 needs A not transposed (K-major): wgmma has no 32-bit transpose"};
      break;
    default:
      return {core::Decline::Dtype, "f32 needs allow_tf32 (tensor cores)"};
  }
  return tma_rung_reason(ctx, TmaConfig::kSmemBytes, built_for_sm90a(), "sm_90a");
}

void wgmma_tma_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx)) return;
  launch_wgmma_config<TmaConfig>(args, ctx);
}

}  // namespace gpukern::cuda::gemm
