// Rung 11 `mma_multistage`: mma.sync tensor-core GEMM for sm_80+ (Ampere, Ada, Hopper,
// consumer Blackwell); tf32 (f32 data with allow_tf32), f16, bf16; f32 accumulation.
//
// Change from 10 (wmma): the same tensor cores, driven the way the fastest Ampere
// kernels drive them, each change removing a stall that wmma leaves in:
//  * cp.async multi-stage pipeline: global -> shared copies bypass the registers and
//    run kStages - 1 K blocks ahead of the math, so memory latency hides behind MMAs
//    instead of behind a __syncthreads per step.
//  * Swizzled shared memory: each 16-byte chunk of a row is stored at chunk ^ (row % 8),
//    so the 8 rows one ldmatrix phase reads (and the rows cp.async writes) fall in 8
//    different bank groups with no padding (rows stay 128-byte multiples).
//  * ldmatrix: one instruction loads a warp's 16x16 fragment (4 8x8 matrices) where
//    WMMA's load emits several; ldmatrix.trans serves MN-major 16-bit operands.
//  * Double-buffered fragments: K step kk+1's fragments load while step kk's MMAs run.
//  * Larger warp tiles (64x32: 16 mma.m16n8 per 6 ldmatrix.x4 per K step, where wmma's
//    16x16 fragments need 2 loads per MMA) raise the math per byte of shared memory read.
//    On sm_90, problems the tiles divide exactly take 64x64 warp tiles (32 mma per 8
//    ldmatrix.x4: 0.031 shared bytes per flop against 0.047; at ~450 TFLOP/s 64x32
//    would need ~100 of the SM's 128 shared bytes per clock for ldmatrix alone, plus
//    the cp.async fills) in a 256x128 block of 8 warps.
//  * Cheap copies: a block whose tile lies inside the matrix copies full K blocks from
//    one per-thread pointer stepped by fixed strides (2 instructions per cp.async);
//    copy_tile's bounds-checked form (~25 per cp.async) serves only edge blocks and
//    the last partial K block. Tile-divisible problems use a kernel without the
//    checked path at all (kChecked = false), which is what lets the 64x64 warp tile
//    fit in 255 registers without spills.
//  * Thread-block raster in L2 groups of kGroupM tile rows.
// tf32 operands that are MN-major (ldmatrix cannot transpose 32-bit elements) are read
// with 32-bit shared loads from the same swizzled layout. Edges: cp.async with a
// smaller source size zero-fills the rest of a chunk, so any M, N, K works; rows must
// start 16-byte aligned (decline otherwise).
//
// Measured (H100 SXM 80GB HBM3, 2026-11-21, CUDA 13.0, NN row-major, cuBLAS bf16/f16 in
// the same run, scripts/tc_gemm_device.cu variants mode, two runs of two passes each).
// Before: 128x128 tile, 64x32 warps, copy_tile everywhere: bf16 4096^3 315 TFLOP/s
// (39%), 8192^3 332 (41%). Now (sm_90 16-bit tile-divisible: 256x128, 4x2 warps of
// 64x64, 4 stages, unchecked kernel), in % of cuBLAS, per pass:
//   bf16 4096^3 428-447 TFLOP/s (54.4-56.4%)   8192^3 456-470 (57.9-62.2%)
//   f16  4096^3 415-450 (54.7-59.4%)            8192^3 415-447 (55.4-59.4%)
// mma.sync m16n8k16 bf16 alone (registers only, 8 warps/SM) peaks at 614 TFLOP/s on
// this card, so these are 68-77% of the mma.sync ceiling. The same kernel binary
// moved by up to 10-15% between passes and positions in a run: the numbers above were
// all taken after the wgmma rungs, where 128x256 ran ~10% slower than in the rung's
// own slot (right after cuBLAS; 440-449 at 4096^3, 484 at 8192^3 bf16). Alternatives:
//   128x256 (2x4 warps of 64x64), 3 stages: 4096^3 bf16 391-459, 8192^3 402-484,
//     lower minimum than 256x128 in every cell; 4 stages no better.
//   256x128, 3 stages: 392-464, the same spread, lower minimum at 8192^3.
//   128x128 of 4 warps (64x64), 3 stages, 2 blocks/SM: 398-441.
//   persistent 256x128 / 128x256 (kPersistent: next tile's loads under the epilogue):
//     386-434, 3-13% below 256x128 in the same pass in every cell, and spills 16-24
//     bytes with MN-major A. Kept as an option (off).
//   128x128 of 64x32 warps with the cheap copies: 304-364; checked kernel: 337-362.
// Then the epilogue of the tile-divisible kernel went through shared memory (f32
// staging, row-wide 8/16-byte stores): same day, cuBLAS timed alternately with it:
// bf16 4096^3 475 TFLOP/s (59.7%), 8192^3 426 (57.3%); f16 460 (60.0%), 402 (57.2%).
// Other calls on sm_90 (edges, tf32) keep the 128x128 tile of 64x32 warps, 4 stages,
// checked kernel: tf32 4096^3 123-130 TFLOP/s (31-32% of cuBLAS tf32), as before.
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {

/// Block tile kBlockM x kBlockN, one K block of 128 bytes per operand row per stage
/// (64 f16/bf16 or 32 tf32 elements), warps in a kWarpsM x kWarpsN grid.
template <int kBlockM_, int kBlockN_, int kWarpsM_, int kWarpsN_, int kStages_, int kArch_, int kMinBlocks_ = 1,
          bool kPersistent_ = false, int kGroupM_ = 8>
struct MmaMultistageConfig {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kWarpTileM = kBlockM / kWarpsM, kWarpTileN = kBlockN / kWarpsN;
  static constexpr int kMmaTilesM = kWarpTileM / 16, kMmaTilesN = kWarpTileN / 8;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kStages = kStages_;
  static constexpr int kRowBytes = 128;  // one K block of a K-major row
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kRowBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kGroupM = kGroupM_;
  static constexpr int kMinBlocks = kMinBlocks_;  // blocks per SM (__launch_bounds__)
  /// One block per SM slot walks tiles blockIdx.x, + gridDim.x, ...; its cp.async
  /// pipeline runs on across tile boundaries, so the next tile's first K blocks (and
  /// its first fragments) load while the current tile's epilogue stores C.
  static constexpr bool kPersistent = kPersistent_;
  /// The device passes that compile this config's body (0 = every pass not claimed by
  /// another config), so each architecture carries only the kernels it runs.
  __host__ __device__ static constexpr bool compiled_for(int device_arch) {
    return kArch_ != 0 ? device_arch == kArch_ : device_arch != 800 && device_arch != 900;
  }
  static_assert(kWarpTileM % 16 == 0 && kWarpTileN % 16 == 0,
                "a warp tile is whole m16 tiles and whole pairs of n8 tiles (one ldmatrix.x4 each)");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert((kBlockM * kRowBytes / 16) % kThreads == 0 && (kBlockN * kRowBytes / 16) % kThreads == 0,
                "every thread copies the same number of 16-byte chunks per stage");
};

// Per-architecture table (shared memory per block: A100 164 KB, H100 227 KB,
// sm_86/89/120 ~99 KB). The launcher picks by ctx.arch. 8 warps of 64x32 where the
// kernel keeps its bounds-checked copy path: a 64x64 warp tile with double-buffered
// fragments needs ~200 registers of accumulators and fragments alone, and with the
// checked path's addresses it spills at the 255-register limit (136 bytes). Without
// that path (MmaConfigSm90Wide, tile-divisible problems) it fits: 240-254 registers.
using MmaConfigSm90 = MmaMultistageConfig<128, 128, 2, 4, 4, 900>;       // 128 KB
using MmaConfigSm90Wide = MmaMultistageConfig<256, 128, 4, 2, 4, 900>;   // 192 KB, f16/bf16, unchecked
using MmaConfigSm80 = MmaMultistageConfig<128, 128, 2, 4, 4, 800>;   // 128 KB
using MmaConfigSmall = MmaMultistageConfig<128, 128, 2, 4, 3, 0>;    // 96 KB

namespace {

/// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile.
__device__ __forceinline__ uint32_t swizzle(int row, int row_bytes, int chunk) {
  return row * row_bytes + ((chunk ^ (row & 7)) << 4);
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
/// A copy known to be in bounds: all 16 bytes, no zero fill.
__device__ __forceinline__ void cp_async_16_full(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

template <bool kTrans>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}

__device__ __forceinline__ uint32_t round_tf32(uint32_t bits) {
  uint32_t t;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(__uint_as_float(bits)));
  return t;
}

/// D(16x8) += A(16xK) * B(Kx8): K = 16 for f16/bf16, 8 for tf32.
template <class T>
__device__ __forceinline__ void mma_16x8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, gpu::half_t>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (std::is_same_v<T, gpu::bf16_t>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Issues the cp.async copies of one operand tile: kRows rows of kRowBytes, from
/// storage rows row0.. and columns col0.. of a rows x cols matrix. Chunks past the
/// matrix copy 0 source bytes (all zeros); a chunk straddling the edge copies the part
/// inside.
template <class Cfg, class T, int kRows, int kRowBytes>
__device__ __forceinline__ void copy_tile(uint32_t dst, const T* src, int64_t ld, int row0, int col0,
                                          int rows, int cols) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunksPerRow = kRowBytes / 16;
  constexpr int kRounds = kRows * kChunksPerRow / Cfg::kThreads;
  static_assert(kRows * kChunksPerRow % Cfg::kThreads == 0, "whole rounds of chunks per thread");
#pragma unroll
  for (int i = 0; i < kRounds; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
    const int r = idx / kChunksPerRow, chunk = idx % kChunksPerRow;
    const int row = row0 + r, col = col0 + chunk * kPerChunk;
    const int valid = row < rows ? max(0, min(kPerChunk, cols - col)) : 0;
    const T* g = valid > 0 ? src + static_cast<int64_t>(row) * ld + col : src;
    cp_async_16(dst + swizzle(r, kRowBytes, chunk), g, valid * static_cast<int>(sizeof(T)));
  }
}

/// The copy of one operand tile of a block whose tile lies wholly inside the matrix
/// (interior tiles, full K blocks; the common case): each thread keeps one global
/// pointer and steps it by a fixed stride per round, instead of recomputing row, column
/// and bounds per chunk (~25 instructions per cp.async in copy_tile). Every thread
/// copies the same chunk column of kRounds rows kRowStep apart.
template <class Cfg, class T, int kRows, int kRowBytes, bool kKMajor>
struct InteriorCopy {
  static constexpr int kChunksPerRow = kRowBytes / 16;
  static constexpr int kRowStep = Cfg::kThreads / kChunksPerRow;
  static constexpr int kRounds = kRows / kRowStep;
  static_assert(Cfg::kThreads % kChunksPerRow == 0 && kRows % kRowStep == 0,
                "threads cover whole rows, rounds cover the tile");
  const char* base;  // this thread's first chunk in K block 0 (strides come from ld)
  uint32_t dst0;     // its swizzled offset (rounds add kRowStep rows)

  /// The tile at stored rows r0.. and columns c0.. in K block 0.
  __device__ __forceinline__ InteriorCopy(const T* src, int64_t ld, int r0, int c0) {
    const int tid = static_cast<int>(threadIdx.x);
    const int row0 = tid / kChunksPerRow, chunk = tid % kChunksPerRow;
    base = reinterpret_cast<const char*>(src + (r0 + row0) * ld + c0 + chunk * (16 / static_cast<int>(sizeof(T))));
    dst0 = swizzle(row0, kRowBytes, chunk);
  }
  /// Copies K block kt; K advances along stored columns (K-major) or rows (MN-major).
  __device__ __forceinline__ void copy(uint32_t dst, int kt, int64_t ld) const {
    constexpr int kBK = Cfg::kRowBytes / static_cast<int>(sizeof(T));
    const int64_t kblock_bytes = (kKMajor ? kBK : kBK * ld) * static_cast<int64_t>(sizeof(T));
    const int64_t round_bytes = kRowStep * ld * static_cast<int64_t>(sizeof(T));
    const char* g = base + kt * kblock_bytes;
#pragma unroll
    for (int i = 0; i < kRounds; ++i) {
      uint32_t d;
      if constexpr (kRowStep % 8 == 0) {
        d = dst0 + i * kRowStep * kRowBytes;
      } else {
        const int tid = static_cast<int>(threadIdx.x);
        d = swizzle(tid / kChunksPerRow + i * kRowStep, kRowBytes, tid % kChunksPerRow);
      }
      cp_async_16_full(dst + d, g);
      g += round_bytes;
    }
  }
};

template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kChecked = true>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) mma_multistage_kernel(TcProblem p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (Cfg::compiled_for(kTcDeviceArch)) {
    constexpr bool kTf32 = sizeof(T) == 4;
    constexpr int kBK = Cfg::kRowBytes / static_cast<int>(sizeof(T));  // K elements per stage
    constexpr int kMmaK = kTf32 ? 8 : 16;
    constexpr int kKSteps = kBK / kMmaK;
    constexpr int BM = Cfg::kBlockM, BN = Cfg::kBlockN;
    // Storage of each operand tile: rows of the stored matrix, bytes per row.
    constexpr int kARows = kAKMajor ? BM : kBK, kARowBytes = kAKMajor ? Cfg::kRowBytes : BM * sizeof(T);
    constexpr int kBRows = kBKMajor ? BN : kBK, kBRowBytes = kBKMajor ? Cfg::kRowBytes : BN * sizeof(T);
    constexpr int kABytes = kARows * kARowBytes;
    static_assert(kABytes + kBRows * kBRowBytes == Cfg::kStageBytes, "stage layout and config agree");
    static_assert(kKSteps % 2 == 0 || kKSteps == 1, "fragment double buffering alternates per K step");

    extern __shared__ uint4 smem_u4[];
    const uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(smem_u4));
    auto a_stage = [&](int s) { return smem + s * Cfg::kStageBytes; };
    auto b_stage = [&](int s) { return smem + s * Cfg::kStageBytes + kABytes; };

    static_assert(!(Cfg::kPersistent && kChecked), "the persistent loop is for tile-divisible problems");
    const int num_tiles = p.tiles_m * p.tiles_n;
    int c_tile = static_cast<int>(blockIdx.x);  // the tile whose MMAs run (consumer)
    TileCoord tile = tile_coords(c_tile, p.tiles_m, p.tiles_n, Cfg::kGroupM);
    int m0 = tile.m * BM, n0 = tile.n * BN;
    const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
    const int wm0 = (warp / Cfg::kWarpsN) * Cfg::kWarpTileM, wn0 = (warp % Cfg::kWarpsN) * Cfg::kWarpTileN;
    const int group = lane >> 2, quad = lane & 3;  // mma fragment coordinates
    const T* a = static_cast<const T*>(p.a);
    const T* b = static_cast<const T*>(p.b);

    // Interior blocks copy full K blocks without bounds checks; edge blocks and the
    // last, partial K block take copy_tile's checked path.
    const bool interior = m0 + BM <= p.m && n0 + BN <= p.n;
    const int full_k_tiles = p.k / kBK;
    using ACopy = InteriorCopy<Cfg, T, kARows, kARowBytes, kAKMajor>;
    using BCopy = InteriorCopy<Cfg, T, kBRows, kBRowBytes, kBKMajor>;
    auto make_a_copy = [&](int mm0) { return kAKMajor ? ACopy(a, p.lda, mm0, 0) : ACopy(a, p.lda, 0, mm0); };
    auto make_b_copy = [&](int nn0) { return kBKMajor ? BCopy(b, p.ldb, nn0, 0) : BCopy(b, p.ldb, 0, nn0); };
    ACopy a_copy = make_a_copy(m0);  // the producer's tile
    BCopy b_copy = make_b_copy(n0);
    auto load_stage = [&](int s, int kt) {
      // (tf32 keeps the checked path alone: its MN-major fragment loads leave no room
      // for the second path's registers.)
      if (!kChecked || (!kTf32 && interior && kt < full_k_tiles)) {
        a_copy.copy(a_stage(s), kt, p.lda);
        b_copy.copy(b_stage(s), kt, p.ldb);
      } else if constexpr (kChecked) {
        const int k0 = kt * kBK;
        if constexpr (kAKMajor) copy_tile<Cfg, T, kARows, kARowBytes>(a_stage(s), a, p.lda, m0, k0, p.m, p.k);
        else copy_tile<Cfg, T, kARows, kARowBytes>(a_stage(s), a, p.lda, k0, m0, p.k, p.m);
        if constexpr (kBKMajor) copy_tile<Cfg, T, kBRows, kBRowBytes>(b_stage(s), b, p.ldb, n0, k0, p.n, p.k);
        else copy_tile<Cfg, T, kBRows, kBRowBytes>(b_stage(s), b, p.ldb, k0, n0, p.k, p.n);
      }
    };

    // Fragments of one K step. A: per m16 tile 4 registers; B: per n8 tile 2.
    uint32_t a_frag[2][Cfg::kMmaTilesM][4];
    uint32_t b_frag[2][Cfg::kMmaTilesN][2];
    auto load_frags = [&](int buf, int s, int kk) {
      const uint32_t as = a_stage(s), bs = b_stage(s);
#pragma unroll
      for (int i = 0; i < Cfg::kMmaTilesM; ++i) {
        const int mm = wm0 + 16 * i;
        if constexpr (kAKMajor) {
          // Matrices (rows 0-7 | 8-15) x (K chunk 0 | 1): lane l addresses row l % 16, chunk l / 16.
          const int row = mm + (lane & 15);
          ldmatrix_x4<false>(a_frag[buf][i], as + swizzle(row, kARowBytes, 2 * kk + (lane >> 4)));
        } else if constexpr (!kTf32) {
          // Stored (k, m): matrix j = lane / 8 covers k rows 8*(j/2).., m chunk j % 2.
          const int j = lane >> 3;
          const int krow = kk * 16 + (j >> 1) * 8 + (lane & 7);
          ldmatrix_x4<true>(a_frag[buf][i], as + swizzle(krow, kARowBytes, mm / 8 + (j & 1)));
        } else {
          // tf32, stored (k, m): a0 = A(g, q), a1 = A(g+8, q), a2 = A(g, q+4), a3 = A(g+8, q+4).
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int m = mm + group + (e & 1) * 8, k = kk * 8 + quad + (e >> 1) * 4;
            a_frag[buf][i][e] = lds32(as + swizzle(k, kARowBytes, m / 4) + (m % 4) * 4);
          }
        }
        if constexpr (kTf32)
#pragma unroll
          for (int e = 0; e < 4; ++e) a_frag[buf][i][e] = round_tf32(a_frag[buf][i][e]);
      }
#pragma unroll
      for (int jp = 0; jp < Cfg::kMmaTilesN / 2; ++jp) {
        const int nn = wn0 + 16 * jp;
        const int j = lane >> 3;
        uint32_t r[4];
        if constexpr (kBKMajor) {
          // Stored (n, k): matrices (n 0-7, chunk 0), (n 0-7, chunk 1), (n 8-15, chunk 0), (n 8-15, chunk 1).
          const int nrow = nn + (j >> 1) * 8 + (lane & 7);
          ldmatrix_x4<false>(r, bs + swizzle(nrow, kBRowBytes, 2 * kk + (j & 1)));
        } else if constexpr (!kTf32) {
          // Stored (k, n): matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
          const int krow = kk * 16 + (j & 1) * 8 + (lane & 7);
          ldmatrix_x4<true>(r, bs + swizzle(krow, kBRowBytes, nn / 8 + (j >> 1)));
        } else {
          // tf32, stored (k, n): b0 = B(q, g), b1 = B(q+4, g) for n tiles nn and nn + 8.
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int n = nn + group + (e >> 1) * 8, k = kk * 8 + quad + (e & 1) * 4;
            r[e] = lds32(bs + swizzle(k, kBRowBytes, n / 4) + (n % 4) * 4);
          }
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const uint32_t v = kTf32 ? round_tf32(r[e]) : r[e];
          b_frag[buf][2 * jp + (e >> 1)][e & 1] = v;
        }
      }
    };

    float acc[Cfg::kMmaTilesM][Cfg::kMmaTilesN][4];
    auto clear_acc = [&] {
#pragma unroll
      for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kMmaTilesN; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    };
    clear_acc();

    const int k_tiles = p.k_tiles;
    // K blocks this block computes, over all its tiles, and the producer's position:
    // the next K block to load is p_kt of tile p_tile.
    const int items = Cfg::kPersistent
                          ? (num_tiles - static_cast<int>(blockIdx.x) + static_cast<int>(gridDim.x) - 1) /
                                static_cast<int>(gridDim.x) * k_tiles
                          : k_tiles;
    int p_item = 0, p_kt = 0, p_tile = c_tile;
    auto produce = [&](int s) {
      if (p_item < items) load_stage(s, p_kt);
      cp_async_commit();
      ++p_item;
      if constexpr (Cfg::kPersistent) {
        if (++p_kt == k_tiles && p_item < items) {
          p_kt = 0;
          p_tile += static_cast<int>(gridDim.x);
          const TileCoord t = tile_coords(p_tile, p.tiles_m, p.tiles_n, Cfg::kGroupM);
          a_copy = make_a_copy(t.m * BM);
          b_copy = make_b_copy(t.n * BN);
        }
      } else {
        ++p_kt;
      }
    };
    auto epilogue = [&]() {
      // c0,c1 = C(g, 2q..2q+1), c2,c3 = C(g+8, 2q..2q+1) of each 16x8 tile.
#pragma unroll
      for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kMmaTilesN; ++j) {
          const int row = m0 + wm0 + 16 * i + group, col = n0 + wn0 + 8 * j + 2 * quad;
          store_c_pair<T>(p, row, col, acc[i][j][0], acc[i][j][1]);
          store_c_pair<T>(p, row + 8, col, acc[i][j][2], acc[i][j][3]);
        }
    };
    // Prologue: kStages - 1 K blocks in flight (empty commit groups past the end keep
    // the group count, and so the wait arithmetic, uniform).
#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s) produce(s);
    cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();

    int read_stage = 0, write_stage = Cfg::kStages - 1, c_kt = 0;
    load_frags(0, read_stage, 0);
    for (int it = 0; it < items; ++it) {
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        if (kk == kKSteps - 1) {
          // The next K block must have landed, and every warp must be done with this
          // one before its stage is refilled (next iteration, kk == 0).
          cp_async_wait<Cfg::kStages - 2>();
          __syncthreads();
          read_stage = read_stage + 1 == Cfg::kStages ? 0 : read_stage + 1;
        }
        load_frags((kk + 1) & 1, read_stage, (kk + 1) % kKSteps);
        if (kk == 0) {
          produce(write_stage);
          write_stage = write_stage + 1 == Cfg::kStages ? 0 : write_stage + 1;
        }
#pragma unroll
        for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
          for (int j = 0; j < Cfg::kMmaTilesN; ++j) mma_16x8<T>(acc[i][j], a_frag[kk & 1][i], b_frag[kk & 1][j]);
      }
      if constexpr (Cfg::kPersistent) {
        if (++c_kt == k_tiles) {
          // Tile done: store it while the next tile's first K blocks are in flight.
          c_kt = 0;
          epilogue();
          clear_acc();
          c_tile += static_cast<int>(gridDim.x);
          tile = tile_coords(c_tile, p.tiles_m, p.tiles_n, Cfg::kGroupM);
          m0 = tile.m * BM;
          n0 = tile.n * BN;
        }
      }
    }
    cp_async_wait<0>();
    if constexpr (!kChecked && !Cfg::kPersistent) {
      // Whole tiles: stage the f32 accumulators in the (now idle) pipeline memory and
      // write each C row with full-width coalesced accesses (8 or 16 bytes a lane)
      // instead of 4-byte pieces of 8 rows per warp instruction. The rows are padded by
      // 8 floats, which puts the 8 rows of one fragment store in 4 bank groups twice
      // (two wavefronts, the minimum for 256 bytes). alpha and beta apply in f32 with
      // one rounding; beta == 0 never reads C.
      constexpr int kPitch = BN + 8;
      static_assert(BM * kPitch * 4 <= Cfg::kSmemBytes, "the staged tile fits the pipeline's shared memory");
      const std::size_t out_bytes = p.c_f32 ? 4 : sizeof(T);
      const bool vec_ok = reinterpret_cast<uintptr_t>(p.c) % (4 * out_bytes) == 0 &&
                          (p.ldc * static_cast<int64_t>(out_bytes)) % (4 * static_cast<int64_t>(out_bytes)) == 0;
      if (!vec_ok) {
        epilogue();
      } else {
        __syncthreads();  // every warp is done reading the last stage
        float* staged = reinterpret_cast<float*>(smem_u4);
#pragma unroll
        for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
          for (int j = 0; j < Cfg::kMmaTilesN; ++j) {
            const int row = wm0 + 16 * i + group, col = wn0 + 8 * j + 2 * quad;
            *reinterpret_cast<float2*>(&staged[row * kPitch + col]) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(&staged[(row + 8) * kPitch + col]) = make_float2(acc[i][j][2], acc[i][j][3]);
          }
        __syncthreads();
        constexpr int kWarps = Cfg::kThreads / 32;
        for (int r = warp; r < BM; r += kWarps) {
          for (int c = 4 * lane; c < BN; c += 128) {
            const float4 v = *reinterpret_cast<const float4*>(&staged[r * kPitch + c]);
            float o[4] = {p.alpha * v.x, p.alpha * v.y, p.alpha * v.z, p.alpha * v.w};
            const int64_t offset = static_cast<int64_t>(m0 + r) * p.ldc + n0 + c;
            if (p.c_f32 || kTf32) {
              float4* dst = reinterpret_cast<float4*>(static_cast<float*>(p.c) + offset);
              if (p.beta != 0.0f) {
                const float4 old = *dst;
                o[0] += p.beta * old.x; o[1] += p.beta * old.y; o[2] += p.beta * old.z; o[3] += p.beta * old.w;
              }
              *dst = make_float4(o[0], o[1], o[2], o[3]);
            } else {
              using Out16 = std::conditional_t<sizeof(T) == 2, T, gpu::half_t>;
              uint2* dst = reinterpret_cast<uint2*>(static_cast<Out16*>(p.c) + offset);
              if (p.beta != 0.0f) {
                const uint2 old = *dst;
                const float2 lo = unpack_pair<Out16>(old.x), hi = unpack_pair<Out16>(old.y);
                o[0] += p.beta * lo.x; o[1] += p.beta * lo.y; o[2] += p.beta * hi.x; o[3] += p.beta * hi.y;
              }
              *dst = make_uint2(pack_pair<Out16>(o[0], o[1]), pack_pair<Out16>(o[2], o[3]));
            }
          }
        }
      }
    } else if constexpr (!Cfg::kPersistent) {
      epilogue();
    }
  }
#endif
}

template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kChecked = true>
void launch_mma(const core::GemmArgs& args, const CudaContext& ctx) {
  auto kernel = mma_multistage_kernel<Cfg, T, kAKMajor, kBKMajor, kChecked>;
  TcProblem p = make_tc_problem(args);
  p.tiles_m = ceil_div(p.m, Cfg::kBlockM);
  p.tiles_n = ceil_div(p.n, Cfg::kBlockN);
  p.k_tiles = ceil_div(p.k, Cfg::kRowBytes / static_cast<int>(sizeof(T)));
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const int tiles = p.tiles_m * p.tiles_n;
  const int grid = Cfg::kPersistent ? std::min(tiles, std::max(1, ctx.sm_count) * Cfg::kMinBlocks) : tiles;
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, ctx.stream>>>(p);
  GK_LAUNCH_CHECK();
}

template <class Cfg, class T, bool kChecked = true>
void launch_mma_layout(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if (ak && bk) launch_mma<Cfg, T, true, true, kChecked>(args, ctx);
  else if (ak) launch_mma<Cfg, T, true, false, kChecked>(args, ctx);
  else if (bk) launch_mma<Cfg, T, false, true, kChecked>(args, ctx);
  else launch_mma<Cfg, T, false, false, kChecked>(args, ctx);
}

/// True when Cfg's block tiles and K blocks cover the problem exactly (no bounds checks needed).
template <class Cfg, class T>
bool tiles_exactly(const core::GemmArgs& args) {
  return args.m % Cfg::kBlockM == 0 && args.n % Cfg::kBlockN == 0 &&
         args.k % (Cfg::kRowBytes / static_cast<int64_t>(sizeof(T))) == 0;
}

template <class T>
void launch_mma_typed(const core::GemmArgs& args, const CudaContext& ctx) {
  if (ctx.arch.cc == 90) {
    if constexpr (sizeof(T) == 2)
      if (tiles_exactly<MmaConfigSm90Wide, T>(args)) return launch_mma_layout<MmaConfigSm90Wide, T, false>(args, ctx);
    launch_mma_layout<MmaConfigSm90, T>(args, ctx);
  } else if (ctx.arch.cc == 80) {
    launch_mma_layout<MmaConfigSm80, T>(args, ctx);
  } else {
    launch_mma_layout<MmaConfigSmall, T>(args, ctx);
  }
}

std::size_t mma_smem_needed(int arch) {
  return arch == 90 ? std::max(MmaConfigSm90::kSmemBytes, MmaConfigSm90Wide::kSmemBytes)
         : arch == 80 ? MmaConfigSm80::kSmemBytes
                      : MmaConfigSmall::kSmemBytes;
}

}  // namespace

core::Verdict mma_multistage_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.type() == core::GemmType::F32) return {core::Decline::Dtype, "f32 needs allow_tf32 (tensor cores)"};
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  const std::size_t elem = core::dtype_size(args.ab_type);
  for (auto v : {row_alignment_reason("A", args.a, args.lda, elem, 16), row_alignment_reason("B", args.b, args.ldb, elem, 16)})
    if (!v.accepted()) return {v.reason, v.detail + " (cp.async copies 16-byte chunks)"};
  if (ctx.smem_per_block_optin < mma_smem_needed(ctx.arch.cc))
    return {core::Decline::Resource,
            "needs " + std::to_string(mma_smem_needed(ctx.arch.cc) / 1024) + " KB of shared memory per block"};
  return {};
}

void mma_multistage_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx)) return;
  gpu::with_storage_type(args.ab_type, [&](auto t) { launch_mma_typed<decltype(t)>(args, ctx); });
}

}  // namespace gpukern::cuda::gemm
