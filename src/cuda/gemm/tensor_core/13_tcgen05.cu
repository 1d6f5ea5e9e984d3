// Rung 13 `tcgen05`: Blackwell datacenter (sm_100a: B200, GB200) tensor-core GEMM.
// f16/bf16 and tf32 in every transpose, f32 accumulation in tensor memory.
//
// EXPERIMENTAL, COMPILE-VERIFIED ONLY: never run. No sm_100 GPU was available; the
// kernel is written from the PTX ISA and checked by compiling it for sm_100a (ptxas: no
// spills) and by reading its SASS (ctest cuda.tc_sass requires the tcgen05 MMA
// instruction in it). This file is compiled for the sm_100a target only (its own object
// library in src/cuda/CMakeLists.txt, which defines GPUKERN_TCGEN05_SM100A); without a
// CUDA that knows sm_100a it is compiled without the kernel and the rung declines. The
// rung runs only on compute capability 10.0, and auto never picks it.
//
// Change from 12 (wgmma_tma): the accumulator leaves the registers. On sm_100 the tensor
// cores write a per-SM tensor memory (TMEM, 128 lanes x 512 columns of 32 bits) and one
// thread issues each MMA for the whole CTA (tcgen05.mma, here 128x256x16 per
// instruction), so the math needs no warpgroup holding 128 accumulators per thread:
//  * Loads: as in 12, one thread issues TMA copies of 128-byte-swizzled boxes into a
//    kStages ring, completion counted in bytes on a "full" mbarrier per stage.
//  * Math: one thread of the MMA warp waits for a stage, issues its tcgen05.mma (K = 64
//    bf16/f16 or 32 tf32 per stage) and tcgen05.commit's the stage's "empty" mbarrier:
//    the barrier fires when those MMAs have read the stage, with no consumer warps.
//  * Accumulators: two 128x256 f32 buffers fill all 512 TMEM columns, so the MMAs of the
//    next tile run while the epilogue drains this one (a "tmem full" and a "tmem empty"
//    mbarrier per buffer hand them back and forth).
//  * Epilogue: 4 warps, warp w reading TMEM lanes 32 (w % 4) .. +31 (the hardware's
//    lane quarters), one C row per thread, 32 columns per tcgen05.ld. With beta == 0 and
//    TMA-addressable C, each warp writes 32-row x 128-byte swizzled boxes (conflict-free
//    16-byte stores) and TMA-stores them, double-buffered; otherwise it stores from the
//    registers (any alpha/beta, any C alignment; beta == 0 never reads C).
//  * Warps: 0 = TMA producer, 1 = TMEM owner + MMA issuer, 2-5 = epilogue (192
//    threads, one persistent CTA per SM, tiles in the L2-grouped order of 12).
// Operands TMA cannot address (unaligned rows) are repacked as in 12 (tma_host.cuh).
// tcgen05 reads 32-bit operands MN-major too, so tf32 needs none of 12's C^T trick.
#include "cuda/gemm/configs/sm100.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/gemm/tensor_core/tma_host.cuh"

#if defined(GPUKERN_TCGEN05_SM100A)
#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/arch/tcgen05_sm100.cuh"

#include <algorithm>
#endif

namespace gpukern::cuda::gemm {
#if defined(GPUKERN_TCGEN05_SM100A)
namespace {

/// Tile configuration. An operand stage holds BK (one 128-byte swizzle row: 64 16-bit or
/// 32 f32 elements) of K for a 128-row A tile and a 256-row B tile.
///  * K-major operand: rows of 128 bytes, one TMA box per operand (128 or 256 rows),
///    8-row swizzle atoms 1024 bytes apart (the descriptor's stride byte offset).
///  * MN-major operand: boxes of BK K-rows x 128 bytes of M/N (64 or 32 elements),
///    kBoxBytes = BK x 128 apart along M/N (the descriptor's leading byte offset).
///  `Tile` names kStages (operand stages) and kGroupM (tile rows per L2 raster group).
template <class T, class Tile>
struct Tcgen05Config {
  static constexpr int kBlockM = 128, kBlockN = 256;
  static constexpr int kStages = Tile::kStages;
  static constexpr int kGroupM = Tile::kGroupM;
  static constexpr int kElem = static_cast<int>(sizeof(T));
  static constexpr int kRowBytes = 128;
  static constexpr int kBK = kRowBytes / kElem;          // K per stage
  static constexpr int kInstrK = 32 / kElem;             // K per tcgen05.mma: 16 (f16/bf16) or 8 (tf32)
  static constexpr int kKSteps = kBK / kInstrK;          // MMAs per stage: 4
  static constexpr int kMnBoxElems = kRowBytes / kElem;  // M/N elements per MN-major box
  static constexpr int kMnBoxBytes = kBK * kRowBytes;    // one MN-major box
  static constexpr int kABytes = kBlockM * kRowBytes;    // 16 KB either majorness
  static constexpr int kBBytes = kBlockN * kRowBytes;    // 32 KB
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kAccCols = kBlockN;  // f32 accumulator: one TMEM column per C column
  static constexpr int kAccBuffers = 2;
  static constexpr uint32_t kTmemCols = kAccCols * kAccBuffers;
  static constexpr int kEpiWarps = 4, kEpiRows = 32;  // one TMEM lane quarter per epilogue warp
  static constexpr int kThreads = (2 + kEpiWarps) * 32;
  static constexpr int kEpiBoxBytes = kEpiRows * kRowBytes;  // a 32-row x 128-byte C staging box
  static constexpr int kEpiSlots = 2;                        // staging boxes per epilogue warp
  static constexpr int kEpiBytes = kEpiWarps * kEpiSlots * kEpiBoxBytes;
  // full + empty per stage, tmem_full + tmem_empty per accumulator, the TMEM address word.
  static constexpr int kBarrierBytes = 8 * (2 * kStages + 2 * kAccBuffers) + 8;
  static constexpr int kSmemBytes = kStages * kStageBytes + kEpiBytes + kBarrierBytes + 1024;  // + alignment slack

  static_assert(kBK % kInstrK == 0 && kKSteps >= 1, "a stage is whole MMAs deep");
  static_assert(kGroupM >= 1, "an L2 raster group holds at least one tile row");
  static_assert(kBlockM == 128, "cta_group::1 tcgen05.mma with M = 128: row i of the tile is TMEM lane i");
  static_assert(kBlockN % 16 == 0 && kBlockN >= 16 && kBlockN <= 256, "M = 128 MMAs take N = 16..256 in steps of 16");
  static_assert(kTmemCols <= 512, "the accumulators must fit the 512 TMEM columns");
  static_assert(kBlockM % kMnBoxElems == 0 && kBlockN % kMnBoxElems == 0, "MN-major tiles are whole boxes");
  static_assert(kStageBytes % 1024 == 0 && kABytes % 1024 == 0 && kMnBoxBytes % 1024 == 0,
                "128-byte swizzle needs every box 1024-byte aligned");
  static_assert(kEpiWarps * kEpiRows == kBlockM, "the epilogue warps cover the tile's rows");
  // 227 KB per block on sm_100; the 1 KB the system reserves per CTA (SHARED:1024 in
  // cuobjdump -res-usage) is counted too, to stay on the safe side.
  static_assert(kSmemBytes + 1024 <= 227 * 1024, "a B200 block gets at most 227 KB of shared memory");
};

template <class T>
using TcgenConfig = Tcgen05Config<T, sm100::Tcgen05>;

struct Tcgen05Schedule {
  int tiles_m = 0, tiles_n = 0, total = 0, k_blocks = 0;
};

template <class T>
constexpr arch::Tcgen05Format kMmaFormat = std::is_same_v<T, gpu::bf16_t>   ? arch::Tcgen05Format::BF16
                                           : std::is_same_v<T, gpu::half_t> ? arch::Tcgen05Format::F16
                                                                            : arch::Tcgen05Format::TF32;

/// `OutT` = void: the epilogue stores C from the registers (any alpha/beta, any C
/// alignment). Otherwise (beta == 0, TMA-addressable C of type OutT) it stages C in
/// shared memory and TMA-stores it.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, class OutT>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    tcgen05_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_c, TcProblem p, Tcgen05Schedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)  // the device pass (this file has only the sm_100a one)
  // Descriptor fields per operand. K-major: the K step moves 32 bytes along the swizzled
  // row (the hardware applies the swizzle to the computed address); the leading byte
  // offset is unused (16). MN-major: the K step moves kInstrK rows of 128 bytes; the
  // leading byte offset is the distance between M/N boxes. Stride byte offset: 8 rows
  // of 128 bytes (one swizzle atom) either way.
  constexpr uint32_t kAStep = kAKMajor ? 32 : Cfg::kInstrK * Cfg::kRowBytes;
  constexpr uint32_t kBStep = kBKMajor ? 32 : Cfg::kInstrK * Cfg::kRowBytes;
  constexpr uint32_t kALbo = kAKMajor ? 16 : Cfg::kMnBoxBytes, kBLbo = kBKMajor ? 16 : Cfg::kMnBoxBytes;
  constexpr uint32_t kSbo = 8 * Cfg::kRowBytes;
  constexpr uint32_t kIdesc =
      arch::make_tcgen05_instr_desc(kMmaFormat<T>, kMmaFormat<T>, !kAKMajor, !kBKMajor, Cfg::kBlockM, Cfg::kBlockN);

  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (arch::smem_addr(smem_raw) + 1023) & ~1023u;
  auto a_tile = [&](int s) { return base + s * Cfg::kStageBytes; };
  auto b_tile = [&](int s) { return base + s * Cfg::kStageBytes + Cfg::kABytes; };
  const uint32_t epi_base = base + Cfg::kStages * Cfg::kStageBytes;
  const uint32_t full_bar = epi_base + Cfg::kEpiBytes;          // kStages x 8 bytes
  const uint32_t empty_bar = full_bar + 8 * Cfg::kStages;       // kStages x 8 bytes
  const uint32_t tmem_full_bar = empty_bar + 8 * Cfg::kStages;  // kAccBuffers x 8 bytes
  const uint32_t tmem_empty_bar = tmem_full_bar + 8 * Cfg::kAccBuffers;
  const uint32_t tmem_slot = tmem_empty_bar + 8 * Cfg::kAccBuffers;  // tcgen05.alloc writes the address here
  const uint8_t* tmem_slot_ptr = smem_raw + (tmem_slot - arch::smem_addr(smem_raw));

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      arch::mbar_init(full_bar + 8 * s, 1);   // the producer's arrive.expect_tx; TMA counts the bytes
      arch::mbar_init(empty_bar + 8 * s, 1);  // one tcgen05.commit per stage use
    }
    for (int b = 0; b < Cfg::kAccBuffers; ++b) {
      arch::mbar_init(tmem_full_bar + 8 * b, 1);                // the MMA thread's commit after a tile
      arch::mbar_init(tmem_empty_bar + 8 * b, Cfg::kEpiWarps);  // lane 0 of each epilogue warp
    }
    arch::fence_barrier_init();
  }
  if (warp == 1) {
    arch::tmem_alloc<Cfg::kTmemCols>(tmem_slot);
    arch::tmem_relinquish_alloc_permit();
  }
  // The TMEM address, written by the tensor-memory allocator, reaches the other warps
  // through shared memory and this barrier, bracketed by the tcgen05 fences.
  arch::tcgen05_fence_before_thread_sync();
  __syncthreads();
  arch::tcgen05_fence_after_thread_sync();
  const uint32_t tmem_base = *reinterpret_cast<const volatile uint32_t*>(tmem_slot_ptr);

  const int first_tile = static_cast<int>(blockIdx.x), tile_step = static_cast<int>(gridDim.x);
  auto tile_origin = [&](int t, int& m0, int& n0) {
    const TileCoord c = tile_coords(t, sched.tiles_m, sched.tiles_n, Cfg::kGroupM);
    m0 = c.m * Cfg::kBlockM;
    n0 = c.n * Cfg::kBlockN;
  };

  if (warp == 0) {
    // ---------------- TMA producer ----------------
    if (lane == 0) {
      arch::prefetch_tensor_map(&map_a);
      arch::prefetch_tensor_map(&map_b);
      int stage = 0;
      uint32_t phase = 0;
      for (int t = first_tile; t < sched.total; t += tile_step) {
        int m0, n0;
        tile_origin(t, m0, n0);
        for (int kb = 0; kb < sched.k_blocks; ++kb) {
          const int k0 = kb * Cfg::kBK;
          const uint32_t full = full_bar + 8 * stage;
          arch::mbar_wait(empty_bar + 8 * stage, phase ^ 1);  // the MMAs that read this stage are done
          arch::mbar_arrive_expect_tx(full, Cfg::kStageBytes);
          if constexpr (kAKMajor) {
            arch::tma_load_2d(a_tile(stage), &map_a, full, k0, m0);  // one 128-row box
          } else {
#pragma unroll
            for (int i = 0; i < Cfg::kBlockM / Cfg::kMnBoxElems; ++i)
              arch::tma_load_2d(a_tile(stage) + i * Cfg::kMnBoxBytes, &map_a, full, m0 + i * Cfg::kMnBoxElems, k0);
          }
          if constexpr (kBKMajor) {
            arch::tma_load_2d(b_tile(stage), &map_b, full, k0, n0);  // one 256-row box
          } else {
#pragma unroll
            for (int i = 0; i < Cfg::kBlockN / Cfg::kMnBoxElems; ++i)
              arch::tma_load_2d(b_tile(stage) + i * Cfg::kMnBoxBytes, &map_b, full, n0 + i * Cfg::kMnBoxElems, k0);
          }
          if (++stage == Cfg::kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else if (warp == 1) {
    // ---------------- MMA issuer (one thread) ----------------
    if (lane == 0) {
      int stage = 0;
      uint32_t phase = 0;
      int local = 0;  // this CTA's tile count: accumulator buffer local % 2, its use local / 2
      for (int t = first_tile; t < sched.total; t += tile_step, ++local) {
        const int buf = local % Cfg::kAccBuffers;
        const uint32_t use_parity = static_cast<uint32_t>(local / Cfg::kAccBuffers) & 1;
        arch::mbar_wait(tmem_empty_bar + 8 * buf, use_parity ^ 1);  // the epilogue drained this buffer
        arch::tcgen05_fence_after_thread_sync();
        const uint32_t d_tmem = tmem_base + static_cast<uint32_t>(buf * Cfg::kAccCols);
        for (int kb = 0; kb < sched.k_blocks; ++kb) {
          arch::mbar_wait(full_bar + 8 * stage, phase);
          arch::tcgen05_fence_after_thread_sync();
#pragma unroll
          for (int kk = 0; kk < Cfg::kKSteps; ++kk) {
            const uint64_t desc_a = arch::make_tcgen05_sw128_desc(a_tile(stage) + kk * kAStep, kALbo, kSbo);
            const uint64_t desc_b = arch::make_tcgen05_sw128_desc(b_tile(stage) + kk * kBStep, kBLbo, kSbo);
            const uint32_t accumulate = (kb > 0 || kk > 0) ? 1u : 0u;
            if constexpr (sizeof(T) == 2)
              arch::tcgen05_mma_f16(d_tmem, desc_a, desc_b, kIdesc, accumulate);
            else
              arch::tcgen05_mma_tf32(d_tmem, desc_a, desc_b, kIdesc, accumulate);
          }
          arch::tcgen05_commit(empty_bar + 8 * stage);  // frees the stage once these MMAs have read it
          if (++stage == Cfg::kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        arch::tcgen05_commit(tmem_full_bar + 8 * buf);  // the tile's accumulator is complete
      }
    }
  } else {
    // ---------------- epilogue (warps 2-5) ----------------
    const int quarter = warp % 4;  // the TMEM lanes (tile rows) this warp may read
    const uint32_t lane_addr = static_cast<uint32_t>(quarter * Cfg::kEpiRows) << 16;
    int local = 0;
    for (int t = first_tile; t < sched.total; t += tile_step, ++local) {
      int m0, n0;
      tile_origin(t, m0, n0);
      const int buf = local % Cfg::kAccBuffers;
      const uint32_t use_parity = static_cast<uint32_t>(local / Cfg::kAccBuffers) & 1;
      arch::mbar_wait(tmem_full_bar + 8 * buf, use_parity);
      __syncwarp();  // tcgen05.ld is .sync.aligned: the lanes leave the spin loop together
      arch::tcgen05_fence_after_thread_sync();
      const uint32_t acc = tmem_base + lane_addr + static_cast<uint32_t>(buf * Cfg::kAccCols);
      const int row0 = m0 + quarter * Cfg::kEpiRows;  // first C row of this warp
      // After the last TMEM read of the tile: hand the buffer back to the MMA thread.
      auto release = [&] {
        arch::tcgen05_fence_before_thread_sync();
        __syncwarp();
        if (lane == 0) arch::mbar_arrive(tmem_empty_bar + 8 * buf);
      };
      uint32_t v[32];
      if constexpr (std::is_void_v<OutT>) {
        // Thread `lane` holds C row row0 + lane, columns n0 + 32 c .. +31.
        constexpr int kChunks = Cfg::kAccCols / 32;
#pragma unroll 1
        for (int c = 0; c < kChunks; ++c) {
          arch::tmem_ld_32x32b_x32(acc + 32 * c, v);
          arch::tmem_wait_ld(v);
          if (c == kChunks - 1) release();
#pragma unroll
          for (int j = 0; j < 16; ++j)
            store_c_pair<T>(p, row0 + lane, n0 + 32 * c + 2 * j, __uint_as_float(v[2 * j]),
                            __uint_as_float(v[2 * j + 1]));
        }
      } else {
        // Box b covers C columns n0 + b * kBoxCols .. + kBoxCols - 1 of this warp's 32
        // rows: 128 bytes per row, 16-byte chunk j of row r at j ^ (r % 8), so the 8
        // threads of each store phase hit 8 different bank groups.
        constexpr int kOutBytes = static_cast<int>(sizeof(OutT));
        constexpr int kBoxCols = Cfg::kRowBytes / kOutBytes;  // 32 f32 or 64 16-bit
        constexpr int kBoxes = Cfg::kAccCols / kBoxCols;
        constexpr int kLoadsPerBox = kBoxCols / 32;
        const uint32_t staging = epi_base + quarter * Cfg::kEpiSlots * Cfg::kEpiBoxBytes;
#pragma unroll 1
        for (int b = 0; b < kBoxes; ++b) {
          const uint32_t box = staging + (b % Cfg::kEpiSlots) * Cfg::kEpiBoxBytes;
          if (lane == 0) arch::bulk_wait_group_read<Cfg::kEpiSlots - 1>();  // this slot's last store has read it
          __syncwarp();
#pragma unroll
          for (int h = 0; h < kLoadsPerBox; ++h) {
            arch::tmem_ld_32x32b_x32(acc + b * kBoxCols + 32 * h, v);
            arch::tmem_wait_ld(v);
            if (b == kBoxes - 1 && h == kLoadsPerBox - 1) release();
            // 32 values = 128 (f32) or 64 (16-bit) bytes = 8 or 4 chunks of the row.
            constexpr int kChunksPerLoad = 32 * kOutBytes / 16;
#pragma unroll
            for (int j = 0; j < kChunksPerLoad; ++j) {
              const int chunk = h * kChunksPerLoad + j;
              uint32_t w[4];
              if constexpr (kOutBytes == 4) {
#pragma unroll
                for (int e = 0; e < 4; ++e) w[e] = __float_as_uint(p.alpha * __uint_as_float(v[4 * j + e]));
              } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                  w[e] = pack_pair<OutT>(p.alpha * __uint_as_float(v[8 * j + 2 * e]),
                                         p.alpha * __uint_as_float(v[8 * j + 2 * e + 1]));
              }
              arch::st_shared_v4(box + arch::sw128_offset(lane, chunk), w[0], w[1], w[2], w[3]);
            }
          }
          arch::fence_proxy_async();  // the generic-proxy writes, before the TMA store reads them
          __syncwarp();
          if (lane == 0) {
            arch::tma_store_2d(&map_c, box, n0 + b * kBoxCols, row0);
            arch::bulk_commit_group();
          }
        }
      }
    }
    if constexpr (!std::is_void_v<OutT>) {
      if (lane == 0) arch::bulk_wait_group<0>();  // C is written before the CTA exits
    }
  }

  // Every TMEM read and MMA is complete (the epilogue waited for the last tile's
  // commit and its own tcgen05.wait::ld); the allocating warp frees the columns.
  arch::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 1) {
    __syncwarp();  // lane 0 comes from the MMA loop; dealloc is .sync.aligned
    arch::tcgen05_fence_after_thread_sync();
    arch::tmem_dealloc<Cfg::kTmemCols>(tmem_base);
  }
#endif
}

// ---------------------------------------------------------------- host side

template <class Cfg, class T, bool kAKMajor, bool kBKMajor, class OutT>
void launch_kernel(const core::GemmArgs& args, const CudaContext& ctx, const CUtensorMap& map_c) {
  auto kernel = tcgen05_kernel<Cfg, T, kAKMajor, kBKMajor, OutT>;
  const TcProblem p = make_tc_problem(args);
  Tcgen05Schedule sched;
  sched.tiles_m = ceil_div(p.m, Cfg::kBlockM);
  sched.tiles_n = ceil_div(p.n, Cfg::kBlockN);
  sched.total = sched.tiles_m * sched.tiles_n;
  sched.k_blocks = ceil_div(p.k, Cfg::kBK);
  // K-major: one box of the whole tile's rows (TMA boxes reach 256 rows); MN-major:
  // boxes of BK K-rows, one per 128 bytes of M/N.
  const CUtensorMap map_a =
      kAKMajor ? make_tensor_map<T>(args.a, args.lda, p.m, p.k, TmaWalk::AlongRows, false, Cfg::kBlockM)
               : make_tensor_map<T>(args.a, args.lda, p.k, p.m, TmaWalk::AcrossRows, false, Cfg::kBK);
  const CUtensorMap map_b =
      kBKMajor ? make_tensor_map<T>(args.b, args.ldb, p.n, p.k, TmaWalk::AlongRows, false, Cfg::kBlockN)
               : make_tensor_map<T>(args.b, args.ldb, p.k, p.n, TmaWalk::AcrossRows, false, Cfg::kBK);
  allow_dynamic_smem_once(kernel, Cfg::kSmemBytes, ctx.device);
  const int grid = std::max(1, std::min(ctx.sm_count, sched.total));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream>>>(map_a, map_b, map_c, p, sched);
  GK_LAUNCH_CHECK();
}

/// Picks the epilogue: TMA store when beta == 0 and TMA can address C (16-byte aligned
/// base and pitch, whole 16-byte chunks per row), else stores from the registers.
template <class T, bool kAKMajor, bool kBKMajor>
void launch_layout(const core::GemmArgs& call, const CudaContext& ctx) {
  using Cfg = TcgenConfig<T>;
  core::GemmArgs args = call;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n);
  const TmaRepacked repacked = make_operands_tma_addressable<T, kAKMajor, kBKMajor>(args, ctx);
  const bool c_f32 = args.c_type == core::DType::F32;
  const std::size_t c_bytes = c_f32 ? 4 : sizeof(T);
  const bool tma_store = tma_store_ok(args, c_bytes);
  constexpr int kEpiRows = Cfg::kEpiRows;
  if (tma_store && (c_f32 || sizeof(T) == 4)) {
    launch_kernel<Cfg, T, kAKMajor, kBKMajor, float>(
        args, ctx, make_tensor_map<float>(args.c, args.ldc, m, n, TmaWalk::AcrossRows, true, kEpiRows));
  } else if constexpr (sizeof(T) == 2) {
    if (tma_store)  // C in the input type
      launch_kernel<Cfg, T, kAKMajor, kBKMajor, T>(
          args, ctx, make_tensor_map<T>(args.c, args.ldc, m, n, TmaWalk::AcrossRows, false, kEpiRows));
    else
      launch_kernel<Cfg, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{});
  } else {
    launch_kernel<Cfg, T, kAKMajor, kBKMajor, void>(args, ctx, CUtensorMap{});
  }
  repacked.release(ctx);
}

template <class T>
void launch_typed(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if (ak && bk)
    launch_layout<T, true, true>(args, ctx);
  else if (ak)
    launch_layout<T, true, false>(args, ctx);
  else if (bk)
    launch_layout<T, false, true>(args, ctx);
  else
    launch_layout<T, false, false>(args, ctx);
}

/// Whether this module holds sm_100a machine code for the kernels (elsewhere the body
/// compiles to nothing, which must never run).
bool built_for_sm100a() {
  static const bool built =
      kernel_built_for(tcgen05_kernel<TcgenConfig<gpu::bf16_t>, gpu::bf16_t, true, false, void>, 100);
  return built;
}

}  // namespace
#endif  // GPUKERN_TCGEN05_SM100A

core::Verdict tcgen05_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  switch (args.type()) {
    case core::GemmType::F16:
    case core::GemmType::BF16:
    case core::GemmType::TF32:
      break;
    default:
      return {core::Decline::Dtype, "f32 needs allow_tf32 (tensor cores)"};
  }
#if defined(GPUKERN_TCGEN05_SM100A)
  const int smem =
      args.ab_type == core::DType::F32 ? TcgenConfig<float>::kSmemBytes : TcgenConfig<gpu::bf16_t>::kSmemBytes;
  return tma_rung_reason(ctx, smem, built_for_sm100a(), "sm_100a");
#else
  return "module not built for sm_100a (needs CUDA 12.8 or later)";
#endif
}

void tcgen05_run(const core::GemmArgs& args, const CudaContext& ctx) {
#if defined(GPUKERN_TCGEN05_SM100A)
  if (tc_trivial_call(args, ctx)) return;
  gpu::with_storage_type(args.ab_type, [&](auto t) { launch_typed<decltype(t)>(args, ctx); });
#else
  (void)ctx;
  (void)args;
  throw core::Error(core::Status::Unsupported, "tcgen05: module not built for sm_100a");
#endif
}

}  // namespace gpukern::cuda::gemm
