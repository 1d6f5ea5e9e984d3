// The kernels of rung 12 `wgmma_tma` (see 12_wgmma_tma.cu for what the rung changes and
// why) and their host launchers, built from the schedule (wgmma_schedule.cuh), the main
// loop (wgmma_mainloop.cuh) and the epilogues (wgmma_epilogue.cuh):
//  * wgmma_tma_kernel: f16/bf16 in every transpose, tf32 with A and B K-major; the CTA
//    tile (64, 128, 192 or 256 rows, 256, 192, 168, 128, 64 or 32 columns; 168 and 32
//    with K-major 16-bit B only) is a field of its configuration;
//  * wgmma_tf32_nn_kernel: tf32 with N-contiguous B, as C^T = B^T A^T, and exact f32
//    (3xTF32) with B either way;
// Both run strided batches in one launch (WgmmaExtras, wgmma_batch.cuh); the first fuses
// the bias + activation epilogue itself, the tf32 NN kernel through a pass over its f32
// C (wgmma_epilogue_pass). And the declarations of the rung's choice of configuration
// per call (WgmmaChoice, 12_wgmma_tma.cu). Kept in a header so a development driver can
// instantiate other configurations and schedule policies; the rung's configurations are
// in cuda/gemm/configs/sm90.cuh.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/mma_sm80.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/arch/wgmma_sm90.cuh"
#include "cuda/arch/cluster.cuh"
#include "cuda/arch/grid_dependency.cuh"
#include "cuda/gemm/tensor_core/tma_host.cuh"
#include "cuda/gemm/tensor_core/wgmma_batch.cuh"
#include "cuda/gemm/tensor_core/wgmma_epilogue.cuh"
#include "cuda/gemm/tensor_core/wgmma_mainloop.cuh"
#include "cuda/gemm/tensor_core/wgmma_schedule.cuh"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

namespace gpukern::cuda::gemm {

/// `OutT` = void: the epilogue stores C from the registers (any alpha/beta, any C
/// alignment). Otherwise (beta == 0, TMA-addressable C of type OutT) it stages C in
/// shared memory and TMA stores it, which the next tile's math overlaps. `x`: batch
/// items (3-D maps, wgmma_batch.cuh) and the fused epilogue.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, class OutT = void>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_c, TcProblem p, WgmmaExtras x, WgmmaSchedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 2 || (kAKMajor && kBKMajor), "wgmma reads 32-bit operands K-major only");
  static_assert(!Cfg::kPartialBBoxes || (kBKMajor && sizeof(T) == 2),
                "a tile of part boxes of B (168, 96 or 32 wide) takes 16-bit, K-major B");
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
  const uint32_t rank = kCluster > 1 ? arch::cluster_rank() : 0;
  const int cluster_id = static_cast<int>(blockIdx.x) / kCluster;
  const int clusters = static_cast<int>(gridDim.x) / kCluster;

  // The producer warp's tensor-map prefetches and L2 policies come first: its first copy
  // then waits for neither once the barriers are set up.
  const bool producer_warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0) == 0;
  uint64_t a_policy = 0, b_policy = 0;
  if (producer_warp) {
    if (arch::elect_one()) {
      arch::prefetch_tensor_map(&map_a);
      arch::prefetch_tensor_map(&map_b);
    }
    const uint64_t keep = arch::l2_evict_last_policy(), once = arch::l2_evict_first_policy();
    a_policy = x.a_once ? once : keep;
    b_policy = x.b_once ? once : keep;
  }
  // "empty": one arrival per consumer warp of every CTA that reads this CTA's multicast.
  sm.init_barriers(Cfg::kConsumers * 4 * kCluster);
  if constexpr (kCluster > 1)
    arch::cluster_sync();  // peers arrive on and write to our barriers
  else
    __syncthreads();
  // Launched as a programmatic dependent (ClusterLaunch), the set-up above ran while the
  // stream's previous kernel finished; from here on global memory is touched.
  arch::wait_grid_dependency();

  auto tile_origin = [&](int t) {
    return tile_origin_of<Cfg::kBlockM, Cfg::kBlockN, kCluster>(sched, t, (sched.serpentine & 2) != 0,
                                                                static_cast<int>(rank));
  };

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    arch::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    // One warp produces, converged (produce_stages says why); its other three idle.
    if (producer_warp) {
      produce_stages(
          sm, sched, cluster_id, clusters, tile_origin,
          [&](int stage, uint32_t full, const TileOrigin& o, int kb) {
            const int k0 = kb * kBK;
            const bool maps_3d = x.maps_3d != 0;
            const int a_item = o.item * x.a_item, b_item = o.item * x.b_item;
            // A: K-major, the tile's rows in one copy (a_box_rows); MN-major, a box per 64 rows.
            if constexpr (kAKMajor) {
              tma_load_item(a_tile(stage), &map_a, full, k0, o.m0, maps_3d, a_item, a_policy);
            } else {
#pragma unroll
              for (int i = 0; i < Cfg::kABoxes; ++i)
                tma_load_item(a_tile(stage) + i * Cfg::kBoxBytes, &map_a, full, o.m0 + i * Cfg::kBoxRows, k0, maps_3d,
                              a_item, a_policy);
            }
            // A copy of B at (c0, c1) into `dst`, multicast to the cluster's CTAs in a cluster.
            const auto load_b = [&](uint32_t dst, int c0, int c1) {
              if constexpr (kCluster > 1)
                tma_load_item_multicast(dst, &map_b, full, c0, c1, maps_3d, b_item,
                                        static_cast<uint16_t>((1u << kCluster) - 1), b_policy);
              else
                tma_load_item(dst, &map_b, full, c0, c1, maps_3d, b_item, b_policy);
            };
            if constexpr (kBKMajor && !Cfg::kPartialBBoxes) {
              // K-major B of whole boxes: this CTA's share of the tile's rows in one copy
              // (b_copy_rows).
              constexpr int kRows = b_copy_rows<Cfg, kBKMajor>();
              load_b(b_tile(stage) + rank * kRows * Cfg::kRowBytes, k0, o.n0 + static_cast<int>(rank) * kRows);
            } else {
              // Piece i of B: rows [i * kBBoxRows, +kBBoxRows) of the tile, along N when
              // K-major (a tile of part boxes); along K within box i / kPerBox (64 columns
              // of N) when MN-major.
              constexpr int kPerBox = Cfg::kPartialBBoxes ? 1 : Cfg::kBoxRows / Cfg::kBBoxRows;
#pragma unroll
              for (int i = static_cast<int>(rank); i < Cfg::kBPieces; i += kCluster) {
                const int sub = (i % kPerBox) * Cfg::kBBoxRows;
                load_b(b_tile(stage) + i * Cfg::kBBoxRows * Cfg::kRowBytes,
                       kBKMajor ? k0 : o.n0 + (i / kPerBox) * Cfg::kBoxRows,
                       kBKMajor ? o.n0 + i * Cfg::kBBoxRows : k0 + sub);
              }
            }
          },
          a_stage_bytes<Cfg, kAKMajor>(p.m));
    }
  } else {
    // ---------------- consumers ----------------
    arch::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    float acc[Cfg::kAcc];
#pragma unroll
    for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = 0.0f;
    int rounds_done = 0;  // TMA-store epilogue rounds so far (their staging ring)
    // Lane 0 of each warp hands a finished stage back to every producer that fills it.
    auto release = [&](int s) {
      if (lane != 0) return;
      if constexpr (kCluster > 1) {
#pragma unroll
        for (int r = 0; r < kCluster; ++r) arch::mbar_arrive_cluster(sm.empty(s), r);
      } else {
        arch::mbar_arrive(sm.empty(s));
      }
    };
    StageRing<Cfg::kStages> ring;
    // wgmma descriptors of stage 0, K step 0; a stage or a K step only adds its byte
    // offset / 16 to the address field (bits 0-13: shared addresses stay below 2^18, so
    // the sum never carries out of it). Building each descriptor from its address costs
    // ~70 instructions a K block a warp (masks, shifts, moves), and under the H100's
    // power limit instructions cost clock.
    const uint64_t desc_a0 = arch::make_sw128_desc(a_tile(0) + consumer * Cfg::kBoxBytes, kALbo, kSbo);
    const uint64_t desc_b0 = arch::make_sw128_desc(b_tile(0), kBLbo, kSbo);
    TileBias<Cfg::kBlockN> bias;  // the tile's bias, loaded as its main loop starts
    consume_units(
        sched, cluster_id, clusters, kCluster * Cfg::kConsumers, static_cast<int>(rank) * Cfg::kConsumers + consumer,
        consumer, acc, tile_origin, [&] { return claimed_tile(sm, ring); },
        [&](const WorkUnit& u, const TileOrigin& o) {
          if (x.epi.active()) bias.load(x.epi, o.item, o.n0, p.n);
          consume_tile(
              sm, ring, u.kb_end - u.kb_begin,
              [&](int stage, int kb, auto) {
                arch::wgmma_fence();
                const uint32_t stage_field = static_cast<uint32_t>(stage) * (Cfg::kStageBytes >> 4);
#pragma unroll
                for (int kk = 0; kk < kKSteps; ++kk) {
                  const uint64_t desc_a = arch::desc_advance(desc_a0, stage_field + kk * (kAStep >> 4));
                  const uint64_t desc_b = arch::desc_advance(desc_b0, stage_field + kk * (kBStep >> 4));
                  const int accumulate = (kb > 0 || kk > 0) ? 1 : 0;
                  if constexpr (sizeof(T) == 2)
                    arch::wgmma_m64k16<Cfg::kBlockN, T, kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(acc, desc_a, desc_b,
                                                                                            accumulate);
                  else
                    arch::wgmma_m64k8_tf32<Cfg::kBlockN>(acc, desc_a, desc_b, accumulate);
                }
              },
              [](auto) {}, release);
        },
        [&](const TileOrigin& o) {
          store_wgmma_tile<Cfg, T, OutT>(p, x, map_c, sm, consumer, warp_in_group, lane, acc, bias, o, rounds_done);
        });
    if constexpr (!std::is_void_v<OutT>) {
      if (threadIdx.x % 128 == 0) arch::bulk_wait_group<0>();  // C is written before the CTA exits
    }
  }
  // No CTA leaves while a peer may still signal it: under the static schedule the
  // producer's tail (produce_stages) waits for the peers' last releases; a claimed
  // schedule's leader also stores into its peers' tile slots, so those clusters sync.
  if constexpr (kCluster > 1) {
    if (sched.claimed) arch::cluster_sync();
  }
#endif
}

/// tf32 with row-major (N-contiguous) B, where wgmma cannot read B from shared memory
/// (32-bit operands must be K-major there). The kernel computes C^T = B^T A^T instead:
/// wgmma's A operand is B^T, taken from registers (each consumer loads its fragments
/// from the TMA-staged B tile with 32-bit shared loads), and its B operand is A^T, which
/// is K-major in shared memory as stored. A CTA tile is Cfg::kBlockN rows of C (wgmma N:
/// 256, or 128 or 64 where the 256-row tiles are few) by 128 columns (two consumers x
/// wgmma M = 64). Fragment row r of warp w holds C column
///   n(w, r) = 8 (w % 2) + 32 (w / 2) + 16 ((r % 8) / 4) + r % 4 + 4 (r / 8)
/// (a permutation of the consumer's 64 columns) so that the 32 lanes of one shared load
/// hit 32 different banks through the 128-byte swizzle. Stage: user B as 4 boxes of
/// 32 K rows x 32 columns (4 KB), user A as one copy of Cfg::kBlockN rows x 32 K.
///
/// Exact f32 (Cfg::kExactF32, 3xTF32): both operands are split into a rounded tf32 part
/// and its rest (arch::split_tf32), and each K step issues the three products
/// small * big, big * small, big * big. The consumers split their B^T fragments in
/// registers; the producer warpgroup's three idle warps split each stage's A tile in
/// shared memory (the rounded part in place, the rest beside it) and signal the stage's
/// "split" barrier, on which the consumers wait besides "full". A stage's products go into
/// a second set of accumulators that starts from zero and is added into the first in f32
/// once the stage's wgmmas are done: the tensor cores' f32 accumulation does not round to
/// nearest, and over a long K its error would pass f32's bound. kBKMajor (exact f32
/// only): user B stored N x K, as one copy of 128 rows x 32 K a stage; fragment row r of
/// warp w then holds C column 16 w + r, conflict-free through the swizzle as it is.
template <class Cfg, class OutT, bool kBKMajor = false>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tf32_nn_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_c, TcProblem p, WgmmaExtras x, WgmmaSchedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(
      Cfg::kClusterM == 1 && Cfg::kBlockM == 128 && (Cfg::kBlockN == 256 || Cfg::kBlockN == 128 || Cfg::kBlockN == 64),
      "the tf32 NN tiles: 256, 128 or 64 rows of C by 128 columns");
  constexpr bool kExact = Cfg::kExactF32;
  static_assert(!kBKMajor || kExact, "K-major B takes this kernel in exact f32 only");
  static_assert(!kExact || Cfg::kBlockN <= 128, "exact f32 keeps two sets of accumulators: 128 or 64 rows of C");
  constexpr int kBK = 32;  // K per stage: one 128-byte row of A
  constexpr int kTileM = Cfg::kBlockN, kTileN = 128;
  constexpr int kBBoxBytes = 4096;  // MN-major B: 32 K rows x 128 bytes
  constexpr int kSplitters = 96;    // exact f32: warps 1-3 of the producer warpgroup
  constexpr int kSplitBarrier = 8;  // their named barrier (the consumers use 1 + consumer)
  extern __shared__ uint8_t smem_raw[];
  const WgmmaSmem<Cfg> sm(smem_raw);
  // The user's B tile takes the kABoxes slot (16 KB), the user's A tile the B slot, and
  // in exact f32 the rests of A's elements the kTileM rows of 128 bytes after it.
  auto bt = [&](int s) { return sm.stage(s); };
  auto at = [&](int s) { return sm.stage(s) + Cfg::kABoxes * Cfg::kBoxBytes; };
  auto rest = [&](int s) { return at(s) + kTileM * Cfg::kRowBytes; };

  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);  // uniform, as above
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = (static_cast<int>(threadIdx.x) / 32) % 4;
  const bool producer_warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0) == 0;
  uint64_t keep = 0;
  if (producer_warp) {  // ahead of the barrier setup, as in wgmma_tma_kernel
    if (arch::elect_one()) {
      arch::prefetch_tensor_map(&map_a);
      arch::prefetch_tensor_map(&map_b);
    }
    keep = arch::l2_evict_last_policy();
  }
  sm.init_barriers(Cfg::kConsumers * 4);
  __syncthreads();
  arch::wait_grid_dependency();  // as in wgmma_tma_kernel
  auto tile_origin = [&](int t) { return tile_origin_of<kTileM, kTileN, 1>(sched, t, false, 0); };
  const int first = static_cast<int>(blockIdx.x), step = static_cast<int>(gridDim.x);

  if (warpgroup == 0) {
    arch::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    if (producer_warp) {  // one warp, as above
      produce_stages(sm, sched, first, step, tile_origin, [&](int stage, uint32_t full, const TileOrigin& o, int kb) {
        const int k0 = kb * kBK;
        const bool maps_3d = x.maps_3d != 0;
        // User A (K-major) as one copy of the tile's kTileM rows; K-major user B as one
        // copy of its 128 rows (a_box_rows says why one copy).
        tma_load_item(at(stage), &map_a, full, k0, o.m0, maps_3d, o.item * x.a_item, keep);
        if constexpr (kBKMajor) {
          tma_load_item(bt(stage), &map_b, full, k0, o.n0, maps_3d, o.item * x.b_item, keep);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            tma_load_item(bt(stage) + j * kBBoxBytes, &map_b, full, o.n0 + 32 * j, k0, maps_3d, o.item * x.b_item,
                          keep);
        }
      });
    } else if constexpr (kExact) {
      // The splitters: every stage in the consumers' order (work_unit, or the claimed
      // tiles read from the stages' slots as the consumers read them), A's elements
      // split once for both consumers, 16 bytes at a time.
      const int tid = static_cast<int>(threadIdx.x) - 32;
      StageRing<Cfg::kStages> ring;
      WorkUnit u;
      for (int i = 0;; ++i) {
        int blocks = sched.k_blocks;
        if (sched.claimed) {
          if (claimed_tile(sm, ring) < 0) break;
        } else if (work_unit(sched, first, step, i, u)) {
          blocks = u.kb_end - u.kb_begin;
        } else {
          break;
        }
        for (int j = 0; j < blocks; ++j) {
          arch::mbar_wait(sm.full(ring.stage), ring.phase);
          const uint32_t a = at(ring.stage), r = rest(ring.stage);
          for (int c = tid; c < kTileM * Cfg::kRowBytes / 16; c += kSplitters) {
            uint32_t v[4], small[4];
            arch::ld_shared_v4(a + 16 * c, v);
#pragma unroll
            for (int e = 0; e < 4; ++e) arch::split_tf32(v[e], v[e], small[e]);
            arch::st_shared_v4(a + 16 * c, v[0], v[1], v[2], v[3]);
            arch::st_shared_v4(r + 16 * c, small[0], small[1], small[2], small[3]);
          }
          arch::fence_proxy_async();  // the stores, before wgmma reads them (async proxy)
          arch::named_barrier_sync(kSplitBarrier, kSplitters);
          if (tid == 0) arch::mbar_arrive(sm.split(ring.stage));
          ring.advance();
        }
      }
    }
  } else {
    arch::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int g = lane / 4, q = lane % 4;
    // This thread's two fragment rows (h = 0: row g, h = 1: row g + 8) as columns of
    // the consumer's 64, and their place in the B tile's boxes.
    int col[2];
    uint32_t col_off[2], col_chunk[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      col[h] = kBKMajor ? 16 * warp + g + 8 * h : 8 * (warp % 2) + 32 * (warp / 2) + 16 * (g / 4) + g % 4 + 4 * h;
      const int n_local = 64 * consumer + col[h];
      col_off[h] = kBKMajor ? (n_local / 64) * Cfg::kBoxBytes + (n_local % 64) * Cfg::kRowBytes
                            : (n_local / 32) * kBBoxBytes + (n_local % 4) * 4;
      col_chunk[h] = kBKMajor ? n_local % 8 : (n_local % 32) / 4;
    }
    // Fragment register 2e + h of K step kk: (row g + 8h, K column q + 4e).
    auto load_fragments = [&](int stage, uint32_t(&f)[4][4]) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int e = 0; e < 2; ++e)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int k = 8 * kk + q + 4 * e;
            f[kk][2 * e + h] =
                kBKMajor ? arch::ld_shared_u32(bt(stage) + col_off[h] + (((k / 4) ^ col_chunk[h]) << 4) + q * 4)
                         : arch::ld_shared_u32(bt(stage) + col_off[h] + k * 128 + ((col_chunk[h] ^ (k & 7)) << 4));
          }
    };
    float acc[Cfg::kAcc];
#pragma unroll
    for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = 0.0f;
    int rounds_done = 0;
    auto release = [&](int s) {
      if (lane == 0) arch::mbar_arrive(sm.empty(s));
    };
    StageRing<Cfg::kStages> ring;
    auto claimed = [&] { return claimed_tile(sm, ring); };
    auto store = [&](const TileOrigin& o) {
      store_tf32_nn_tile<Cfg, OutT>(p, x, map_c, sm, consumer, q, col, acc, o, rounds_done);
    };
    if constexpr (kExact) {
      float blk[Cfg::kAcc];  // one stage's products
      consume_units(
          sched, first, step, Cfg::kConsumers, consumer, consumer, acc, tile_origin, claimed,
          [&](const WorkUnit& u, const TileOrigin&) {
            for (int j = 0; j < u.kb_end - u.kb_begin; ++j) {
              const int stage = ring.stage;
              uint32_t big[4][4], small[4][4];
              arch::mbar_wait(sm.full(stage), ring.phase);  // B (TMA)
              load_fragments(stage, big);
#pragma unroll
              for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                for (int e = 0; e < 4; ++e) arch::split_tf32(big[kk][e], big[kk][e], small[kk][e]);
              arch::mbar_wait(sm.split(stage), ring.phase);  // A's parts (the splitters)
              arch::wgmma_fence();
#pragma unroll
              for (int kk = 0; kk < 4; ++kk) {
                const uint64_t desc = arch::make_sw128_desc(at(stage) + kk * 32, 16, 8 * Cfg::kRowBytes);
                const uint64_t desc_rest = arch::make_sw128_desc(rest(stage) + kk * 32, 16, 8 * Cfg::kRowBytes);
                arch::wgmma_m64k8_tf32_rs<kTileM>(blk, small[kk], desc, kk > 0 ? 1 : 0);
                arch::wgmma_m64k8_tf32_rs<kTileM>(blk, big[kk], desc_rest, 1);
                arch::wgmma_m64k8_tf32_rs<kTileM>(blk, big[kk], desc, 1);
              }
              arch::wgmma_commit();
              arch::wgmma_wait<0>();
              arch::keep_accumulators(blk);
#pragma unroll
              for (int kk = 0; kk < 4; ++kk) {
                arch::keep_registers(big[kk]);
                arch::keep_registers(small[kk]);
              }
#pragma unroll
              for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = j == 0 ? blk[i] : acc[i] + blk[i];
              release(stage);
              ring.advance();
            }
          },
          store);
    } else {
      // [K-block parity][K step][register]: the registers a running wgmma reads are not
      // written until wgmma_wait says it is done.
      uint32_t frag[2][4][4];
      consume_units(
          sched, first, step, Cfg::kConsumers, consumer, consumer, acc, tile_origin, claimed,
          [&](const WorkUnit& u, const TileOrigin&) {
            consume_tile(
                sm, ring, u.kb_end - u.kb_begin,
                [&](int stage, int kb, auto parity) {
                  uint32_t(&f)[4][4] = frag[decltype(parity)::value];
                  load_fragments(stage, f);
                  arch::wgmma_fence();
#pragma unroll
                  for (int kk = 0; kk < 4; ++kk) {
                    const uint64_t desc = arch::make_sw128_desc(at(stage) + kk * 32, 16, 8 * Cfg::kRowBytes);
                    arch::wgmma_m64k8_tf32_rs<kTileM>(acc, f[kk], desc, (kb > 0 || kk > 0) ? 1 : 0);
                  }
                },
                [&](auto parity) {
#pragma unroll
                  for (int kk = 0; kk < 4; ++kk) arch::keep_registers(frag[1 - decltype(parity)::value][kk]);
                },
                release);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
              arch::keep_registers(frag[0][kk]);
              arch::keep_registers(frag[1][kk]);
            }
          },
          store);
    }
    if constexpr (!std::is_void_v<OutT>) {
      if (threadIdx.x % 128 == 0) arch::bulk_wait_group<0>();
    }
  }
#endif
}

// ---------------------------------------------------------------- host side

// Tensor maps, the TMA-addressability check and the repack workspace: tma_host.cuh.

/// The rung's schedule policies. A policy fills in what make_schedule leaves open for a
/// launch over `ctas` persistent CTAs (clusters) with at least one tile each: the
/// serpentine order and the K split of the last partial round; it returns the split's
/// workspace (free it after the launch) or null. (A launch whose tiles are split
/// `ways` ways, fewer tiles than CTAs, takes split_all instead.)
/// wgmma_tma_kernel: serpentine rounds and raster groups; the cost model's K split of
/// the last round (per cluster: both CTAs of a cluster take the same units). 3000^3 in
/// 128x256 clusters: 144 on 66 leave a last round of 12 for 54 idle clusters.
struct WgmmaTmaPolicy {
  template <class Cfg>
  static void* plan(WgmmaSchedule& s, int ctas, const CudaContext& ctx) {
    s.serpentine = 3;
    return split_tail(s, ctas, tail_split_plan(s, ctas), split_slots<Cfg>(), ctx);
  }
};
/// wgmma_tf32_nn_kernel: every round forwards in K, the cost model's K split.
struct WgmmaTf32NNPolicy {
  template <class Cfg>
  static void* plan(WgmmaSchedule& s, int ctas, const CudaContext& ctx) {
    return split_tail(s, ctas, tail_split_plan(s, ctas), split_slots<Cfg>(), ctx);
  }
};

/// Whether an unsplit launch of `sched` over `ctas` persistent CTAs (clusters) claims its
/// tiles at run time (WgmmaSchedule::claimed; the rule and GPUKERN_WGMMA_SCHEDULE are in
/// 12_wgmma_tma.cu).
/// `mem_gbps`: the device's peak memory bandwidth (DeviceArch::mem_gbps; 0 not known).
bool wgmma_claims_tiles(const WgmmaSchedule& sched, int ctas, int mem_gbps = 0);

/// Plans a launch of `sched` on at most `resident` persistent CTAs (clusters): with
/// `ways` >= 2 and fewer tiles than that, every tile split in `ways` K ranges
/// (split_all) over min(resident, tiles x ways) CTAs; otherwise one CTA a tile up to
/// `resident` and the policy's plan, its tiles claimed at run time where
/// wgmma_claims_tiles says so. Sets `ctas`; returns the workspace (split or claim) or null.
template <class Cfg, class Policy>
void* plan_launch(WgmmaSchedule& sched, int resident, int ways, int& ctas, const CudaContext& ctx) {
  if (void* ws = ways >= 2 ? split_all(sched, resident, ways, split_slots<Cfg>(), ctx) : nullptr) {
    ctas = std::min(resident, sched.total * sched.ways);
    return ws;
  }
  ctas = std::max(1, std::min(resident, sched.total));
  if (void* ws = Policy::template plan<Cfg>(sched, ctas, ctx)) return ws;
  return wgmma_claims_tiles(sched, ctas, ctx.arch.mem_gbps) ? claim_tiles(sched, ctx) : nullptr;
}

/// How many clusters of `Cfg` can be resident at once (one CTA per SM; clusters must
/// fit inside a GPC, so 4-CTA clusters may leave SMs idle). Queried once per config.
template <class Cfg, class Kernel>
int resident_clusters(Kernel kernel, const CudaContext& ctx) {
  if constexpr (Cfg::kClusterM == 1) {
    return ctx.sm_count;
  } else {
    const int clusters =
        cached_occupancy(std::make_pair(ctx.device, reinterpret_cast<const void*>(kernel)), [&](int* n) {
          const ClusterLaunch one(Cfg::kClusterM, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream, Cfg::kClusterM);
          return cudaOccupancyMaxActiveClusters(n, kernel, &one.config);
        });
    return clusters > 0 ? clusters : ctx.sm_count / Cfg::kClusterM;
  }
}

/// The call as the kernels see it: make_tc_problem, with C's element pairs moved as one
/// access only where every item's C keeps them aligned.
inline TcProblem make_wgmma_problem(const core::GemmArgs& args) {
  TcProblem p = make_tc_problem(args);
  if (args.batched() && args.stride_c % 2 != 0) p.c_pairs = false;
  return p;
}

/// What a launch passes beyond the plain call: 3-D maps for a batch (an operand with
/// batch stride 0 is read at item 0), C's item stride, the epilogue.
inline WgmmaExtras make_wgmma_extras(const core::GemmArgs& args) {
  WgmmaExtras x;
  x.maps_3d = args.batched() ? 1 : 0;
  x.a_item = args.batched() && args.stride_a != 0 ? 1 : 0;
  x.b_item = args.batched() && args.stride_b != 0 ? 1 : 0;
  x.stride_c = args.batched() ? args.stride_c : 0;
  x.epi = epilogue_of(args);
  return x;
}

/// Marks the operands whose loads go evict-first (WgmmaExtras::a_once, b_once): read by
/// few tiles close together in time, no broadcast over items, in the shape classes where
/// that measured ahead of evict-last (H100, same-run A/Bs, notes/llm-gemm.md and
/// notes/attention.md). B of a call of at most two cluster tile rows (T <= 512 against a
/// weight; the L2 raster walks a tile column's rows one after the other, so the second row
/// reads B while it is still in L2): one row +5-12% of cuBLAS at T 32-128 on the
/// 4096..14336-wide weights, two rows +4% at T = 512 (4096 x 4096 90 -> 103%); four rows
/// (T = 1024) level; batched calls keep one row (the two-row form was measured on single
/// calls only). The 128256-wide vocabulary projection lost 1-4% and keeps evict-last.
/// A of a call one tile wide (attention's P V): +1.5-9% over K of 32 blocks or more (S >=
/// 2048), 1.5-4% behind over shorter ones.
inline void mark_read_once(WgmmaExtras& x, const WgmmaSchedule& s, const core::GemmArgs& args) {
  constexpr int64_t kVocabularyWide = 65536;
  constexpr int kMinOnceBlocks = 32;
  const int once_rows = args.batched() ? 1 : 2;
  x.a_once = s.tiles_n == 1 && s.k_blocks >= kMinOnceBlocks && (!args.batched() || args.stride_a != 0);
  x.b_once = s.cluster_tiles_m <= once_rows && args.n < kVocabularyWide && (!args.batched() || args.stride_b != 0);
}

/// The tensor map of an operand of T that is `mn` (its M or N) by `k`, stored K-major
/// (rows of K elements, which the kernel walks along) or MN-major (rows of MN elements),
/// with pitch `ld` and batch stride `stride` (2-D for an unbatched call), in boxes of
/// `box_rows` rows. An exact f32 call's operands load as f32: a TFLOAT32 map rounds them
/// to tf32 on the way in, which leaves the 3xTF32 split nothing to split.
template <class T>
CUtensorMap make_operand_map(const core::GemmArgs& args, const void* ptr, int64_t ld, int64_t stride, int mn, int k,
                             bool k_major, int box_rows = 64) {
  const bool plain_f32 = args.type() == core::GemmType::F32;
  const int rows = k_major ? mn : k, cols = k_major ? k : mn;
  return make_tensor_map<T>(ptr, ld, rows, cols, k_major ? TmaWalk::AlongRows : TmaWalk::AcrossRows, plain_f32,
                            box_rows, tma_items(args, stride, rows, ld, sizeof(T)));
}

/// C's tensor map for TMA stores of OutT (f32 described as f32, not tf32).
template <class OutT>
CUtensorMap make_c_map(const core::GemmArgs& args) {
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n);
  return make_tensor_map<OutT>(args.c, args.ldc, m, n, TmaWalk::AcrossRows, true, 64,
                               tma_items(args, args.stride_c, m, args.ldc, sizeof(OutT)));
}

/// Launches wgmma_tma_kernel<Cfg> on TMA-addressable operands, as many persistent
/// clusters as fit on the device at once, every tile split in `ways` K ranges when
/// there are fewer tiles than that (plan_launch). The tiles of all batch items share
/// the launch (at most kMaxScheduledTiles: wgmma_tma_run_with launches larger batches
/// in parts).
template <class Cfg, class Policy, class T, bool kAKMajor, bool kBKMajor, class OutT>
void launch_wgmma_kernel(const core::GemmArgs& args, const CudaContext& ctx, const CUtensorMap& map_c, int ways) {
  auto kernel = wgmma_tma_kernel<Cfg, T, kAKMajor, kBKMajor, OutT>;
  const TcProblem p = make_wgmma_problem(args);
  WgmmaSchedule sched =
      make_schedule(ceil_div(ceil_div(p.m, Cfg::kBlockM), Cfg::kClusterM), ceil_div(p.n, Cfg::kBlockN),
                    ceil_div(p.k, kElemsPerRow<T>), static_cast<int>(args.batch), Cfg::kGroupM / Cfg::kClusterM);
  WgmmaExtras x = make_wgmma_extras(args);
  mark_read_once(x, sched, args);

  const CUtensorMap map_a =
      make_operand_map<T>(args, args.a, args.lda, args.stride_a, p.m, p.k, kAKMajor, a_box_rows<Cfg, kAKMajor>(p.m));
  const CUtensorMap map_b =
      make_operand_map<T>(args, args.b, args.ldb, args.stride_b, p.n, p.k, kBKMajor, b_copy_rows<Cfg, kBKMajor>());
  allow_dynamic_smem_once(kernel, Cfg::kSmemBytes, ctx.device);

  int clusters = 0;
  void* ws = plan_launch<Cfg, Policy>(sched, resident_clusters<Cfg>(kernel, ctx), ways, clusters, ctx);
  const ClusterLaunch launch(int64_t(clusters) * Cfg::kClusterM, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream,
                             Cfg::kClusterM, dependent_launch(ctx));
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, map_a, map_b, map_c, p, x, sched));
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
}

/// Whether a call can run in a store-bound configuration (kEpiBuffers > 1: only its
/// TMA-store kernels exist): 16-bit A, B and C, beta == 0, C addressable by TMA.
inline bool wgmma_store_fits(const core::GemmArgs& args) {
  return core::dtype_size(args.ab_type) == 2 && args.c_type == args.ab_type && tma_store_ok(args, 2);
}

/// Whether a call can run in a tile of part boxes of B (168, 96 or 32 wide: B in K-major
/// pieces along N): 16-bit A and B, B K-major.
inline bool wgmma_k_major_b_fits(const core::GemmArgs& args) {
  return core::dtype_size(args.ab_type) == 2 && b_is_k_major(args);
}

/// Picks the epilogue: TMA store when beta == 0 and TMA can address C, else stores
/// from the registers.
template <class Cfg, class Policy, class T, bool kAKMajor, bool kBKMajor>
void launch_wgmma_epilogue(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  if constexpr (Cfg::kEpiBuffers > 1) {
    // A store-bound configuration exists for 16-bit C stored by TMA alone (wgmma_store_fits).
    if constexpr (sizeof(T) == 2) {
      if (wgmma_store_fits(args)) {
        launch_wgmma_kernel<Cfg, Policy, T, kAKMajor, kBKMajor, T>(args, ctx, make_c_map<T>(args), ways);
        return;
      }
    }
    throw core::Error(core::Status::InternalError,
                      "wgmma_tma: the store-bound configuration got a call it cannot store");
  } else {
    const bool c_f32 = args.c_type == core::DType::F32;
    const std::size_t c_bytes = c_f32 ? 4 : sizeof(T);
    const bool tma_store = tma_store_ok(args, c_bytes);
    if (tma_store && (c_f32 || sizeof(T) == 4)) {
      launch_wgmma_kernel<Cfg, Policy, T, kAKMajor, kBKMajor, float>(args, ctx, make_c_map<float>(args), ways);
    } else if constexpr (sizeof(T) == 2) {
      if (tma_store) {
        launch_wgmma_kernel<Cfg, Policy, T, kAKMajor, kBKMajor, T>(args, ctx, make_c_map<T>(args), ways);
        return;
      }
      launch_wgmma_kernel<Cfg, Policy, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{}, ways);
    } else {
      launch_wgmma_kernel<Cfg, Policy, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{}, ways);
    }
  }
}

/// Repacks the operands TMA cannot address (unbatched calls: the rung declines batched
/// operands TMA cannot address), then launches.
template <class Cfg, class Policy, class T, bool kAKMajor, bool kBKMajor>
void launch_wgmma_layout(const core::GemmArgs& call, const CudaContext& ctx, int ways = 1) {
  core::GemmArgs args = call;
  const TmaRepacked repacked =
      args.batched() ? TmaRepacked{} : make_operands_tma_addressable<T, kAKMajor, kBKMajor>(args, ctx);
  launch_wgmma_epilogue<Cfg, Policy, T, kAKMajor, kBKMajor>(args, ctx, ways);
  repacked.release(ctx);
}

/// Runs a call with wgmma_tma_kernel<Cfg>: f16/bf16 in every transpose, tf32 (f32 data)
/// with A and B K-major (tf32 with N-contiguous B takes launch_wgmma_tf32_nn); `ways`
/// >= 2 splits every tile along K when tiles are fewer than CTAs. A configuration of
/// part boxes of B (Cfg::kPartialBBoxes) has only 16-bit, K-major-B kernels: it takes
/// the calls wgmma_k_major_b_fits accepts.
template <class Cfg, class Policy = WgmmaTmaPolicy>
void launch_wgmma(const core::GemmArgs& args, const CudaContext& ctx, int ways = 1) {
  if (Cfg::kPartialBBoxes && !wgmma_k_major_b_fits(args))
    throw core::Error(core::Status::InternalError, "wgmma_tma: a K-major-B configuration got a call it cannot run");
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  gpu::with_storage_type(args.ab_type, [&](auto t) {
    using T = decltype(t);
    constexpr bool kMnMajorB = !Cfg::kPartialBBoxes;  // whether its MN-major-B and tf32 kernels exist
    if constexpr (sizeof(T) == 4) {
      if constexpr (kMnMajorB) launch_wgmma_layout<Cfg, Policy, T, true, true>(args, ctx, ways);
    } else if (bk) {
      if (ak)
        launch_wgmma_layout<Cfg, Policy, T, true, true>(args, ctx, ways);
      else
        launch_wgmma_layout<Cfg, Policy, T, false, true>(args, ctx, ways);
    } else if constexpr (kMnMajorB) {
      if (ak)
        launch_wgmma_layout<Cfg, Policy, T, true, false>(args, ctx, ways);
      else
        launch_wgmma_layout<Cfg, Policy, T, false, false>(args, ctx, ways);
    }
  });
}

/// C_b = act(C_b + bias_b) for every batch item of a call with f32 C: the tf32 NN
/// kernel's epilogue, through the module's epilogue pass.
void wgmma_epilogue_pass(const core::GemmArgs& args, const CudaContext& ctx);

/// C = A B through wgmma_tf32_nn_kernel<Cfg, OutT, kBKMajor> (launch_wgmma_tf32_nn).
template <class Cfg, class Policy, bool kBKMajor>
void launch_wgmma_ct(const core::GemmArgs& call, const CudaContext& ctx, int ways) {
  core::GemmArgs args = call;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n), k = static_cast<int>(args.k);
  const TmaRepacked repacked =
      args.batched() ? TmaRepacked{} : make_operands_tma_addressable<float, true, kBKMajor>(args, ctx);
  const TcProblem p = make_wgmma_problem(args);
  WgmmaExtras x = make_wgmma_extras(args);
  x.epi = Epilogue{};  // applied by wgmma_epilogue_pass after the kernel (store_tf32_nn_tile says why)
  WgmmaSchedule sched = make_schedule(ceil_div(m, Cfg::kBlockN), ceil_div(n, 128), ceil_div(k, 32),
                                      static_cast<int>(args.batch), Cfg::kGroupM / 2);
  const CUtensorMap map_a = make_operand_map<float>(args, args.a, args.lda, args.stride_a, m, k, true, Cfg::kBlockN);
  const CUtensorMap map_b =
      make_operand_map<float>(args, args.b, args.ldb, args.stride_b, n, k, kBKMajor, kBKMajor ? 128 : 32);
  const bool tma_store = tma_store_ok(args, 4);
  const CUtensorMap map_c = tma_store ? make_c_map<float>(args) : CUtensorMap{};
  auto kernel = tma_store ? wgmma_tf32_nn_kernel<Cfg, float, kBKMajor> : wgmma_tf32_nn_kernel<Cfg, void, kBKMajor>;
  allow_dynamic_smem_once(kernel, Cfg::kSmemBytes, ctx.device);
  int grid = 0;
  void* ws = plan_launch<Cfg, Policy>(sched, ctx.sm_count, ways, grid, ctx);
  launch_kernel(dependent_launch(ctx), kernel, dim3(grid), Cfg::kThreads, Cfg::kSmemBytes, ctx.stream, map_a, map_b,
                map_c, p, x, sched);
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
  if (args.has_epilogue()) wgmma_epilogue_pass(args, ctx);  // C (f32) = act(C + bias)
  repacked.release(ctx);
}

/// Runs a tf32 call with K-major A and N-contiguous B with wgmma_tf32_nn_kernel<Cfg>, or
/// with an exact-f32 configuration (Cfg::kExactF32) an exact f32 call with K-major A and B
/// either way, repacking the operands TMA cannot address; `ways` as for launch_wgmma. A
/// fused epilogue runs as a pass over C after the kernel (C is f32: rounded once).
template <class Cfg, class Policy = WgmmaTf32NNPolicy>
void launch_wgmma_tf32_nn(const core::GemmArgs& call, const CudaContext& ctx, int ways = 1) {
  if constexpr (Cfg::kExactF32) {
    if (b_is_k_major(call)) return launch_wgmma_ct<Cfg, Policy, true>(call, ctx, ways);
  }
  launch_wgmma_ct<Cfg, Policy, false>(call, ctx, ways);
}

// ---------------------------------------------------------------- the choice of configuration

/// The configurations the rung ships (cuda/gemm/configs/sm90.cuh), by tile.
enum class WgmmaTile : int {
  Large,        // 128x256, clusters of 2 (sm90::WgmmaTma)
  Mid,          // 128x128 (sm90::WgmmaTmaMid)
  Short,        // 64x128 (sm90::WgmmaTmaShort)
  Tf32NN,       // tf32 with N-contiguous B, C^T = B^T A^T (sm90::WgmmaTf32NN)
  Store,        // 128x256, clusters of 2, deep C staging for store-bound calls (sm90::WgmmaTmaStore)
  MidC2,        // 128x128, clusters of 2 (sm90::WgmmaTmaMidC2)
  Narrow,       // 128x64 (sm90::WgmmaTmaNarrow)
  SmallC2,      // 64x64, clusters of 2 (sm90::WgmmaTmaSmallC2)
  ShortC2,      // 64x128, clusters of 2 (sm90::WgmmaTmaShortC2)
  NarrowC2,     // 128x64, clusters of 2 (sm90::WgmmaTmaNarrowC2)
  WideC2,       // 128x192, clusters of 2 (sm90::WgmmaTmaWideC2)
  TallC2,       // 192x192, clusters of 2 (sm90::WgmmaTmaTallC2)
  WaveC2,       // 128x168, clusters of 2, 16-bit K-major B (sm90::WgmmaTmaWave168C2)
  Thin,         // 64x32, 16-bit K-major B (sm90::WgmmaTmaThin)
  Small,        // 64x64 (sm90::WgmmaTmaSmall)
  Tf32NNMid,    // tf32 with N-contiguous B, C^T on 128 x 128 tiles of C (sm90::WgmmaTf32NNMid)
  Tf32NNShort,  // tf32 with N-contiguous B, C^T on 64 x 128 tiles of C (sm90::WgmmaTf32NNShort)
  F32NNMid,     // exact f32 (3xTF32), C^T on 128 x 128 tiles of C (sm90::WgmmaF32NNMid)
  F32NNShort,   // exact f32 (3xTF32), C^T on 64 x 128 tiles of C (sm90::WgmmaF32NNShort)
  Tall96C2,     // 192x96, clusters of 2 (sm90::WgmmaTmaTall96C2)
  Tall96KC2,    // 192x96, clusters of 2, 16-bit K-major B (sm90::WgmmaTmaTall96KC2)
};

/// Which configuration runs a call, how many K ranges each tile is split in (1: none;
/// the split applies only when tiles are fewer than CTAs), and the table row's reason.
struct WgmmaChoice {
  WgmmaTile tile = WgmmaTile::Large;
  int ways = 1;
  const char* why = "";
  /// "128x256c2", "128x128", "64x128 splitk4", "tf32nn splitk2": what
  /// GPUKERN_WGMMA_CONFIG accepts.
  std::string name() const;
};

/// The rung's choice for a call (the table in 12_wgmma_tma.cu), unless
/// GPUKERN_WGMMA_CONFIG forces one that applies to it.
WgmmaChoice choose_wgmma_config(const core::GemmArgs& args, const CudaContext& ctx);

/// The choice named `text` ("128x128", "128x128 splitk4"; a space, '-', ':' or '/'
/// before "splitk"), or false.
bool parse_wgmma_config(const std::string& text, WgmmaChoice* choice);

/// Runs a call the rung accepted with `choice`. A choice that cannot run the call (every
/// tile but the tf32 NN ones for tf32 with N-contiguous B, and those for any other call)
/// takes the call's own kernel with the choice's split.
void wgmma_tma_run_with(const core::GemmArgs& args, const CudaContext& ctx, const WgmmaChoice& choice);

/// The Mid, MidC2, Short, Small, SmallC2, ShortC2, Store, Narrow, NarrowC2, WideC2,
/// TallC2, Tall96C2, Tall96KC2, WaveC2 and Thin tiles' launchers (launch_wgmma with their
/// configurations), compiled beside the large tile's (12_wgmma_tma_mid.cu holds both
/// 128x128 ones, 12_wgmma_tma_short.cu 64x128, 64x64 and 64x64c2, 12_wgmma_tma_short_c2.cu,
/// 12_wgmma_tma_store.cu, 12_wgmma_tma_narrow.cu, 12_wgmma_tma_narrow_c2.cu,
/// 12_wgmma_tma_wide_c2.cu, 12_wgmma_tma_tall_c2.cu, 12_wgmma_tma_tall96_c2.cu both 192x96
/// ones, 12_wgmma_tma_part_b.cu the last two). launch_wgmma_store takes only calls
/// wgmma_store_fits accepts, launch_wgmma_tall96_kc2, launch_wgmma_wave_c2 and
/// launch_wgmma_thin only calls wgmma_k_major_b_fits accepts.
void launch_wgmma_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_mid_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_short(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_store(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_narrow(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_small(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_small_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_short_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_narrow_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_wide_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_tall_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_tall96_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_tall96_kc2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_wave_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_thin(const core::GemmArgs& args, const CudaContext& ctx, int ways);
/// The C^T kernel's launchers on its 256-, 128- and 64-row tiles (launch_wgmma_tf32_nn
/// with sm90::WgmmaTf32NN, WgmmaTf32NNMid, WgmmaTf32NNShort; 12_wgmma_tma_tf32nn.cu):
/// tf32 calls with K-major A and N-contiguous B only.
void launch_wgmma_tf32_nn_large(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_tf32_nn_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_tf32_nn_short(const core::GemmArgs& args, const CudaContext& ctx, int ways);
/// The same kernel in exact f32 (3xTF32) on its 128- and 64-row tiles (sm90::WgmmaF32NNMid,
/// WgmmaF32NNShort; 12_wgmma_tma_f32nn.cu): exact f32 calls with K-major A, B either way.
void launch_wgmma_f32_nn_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways);
void launch_wgmma_f32_nn_short(const core::GemmArgs& args, const CudaContext& ctx, int ways);

}  // namespace gpukern::cuda::gemm
