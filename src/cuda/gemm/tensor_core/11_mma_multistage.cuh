// The kernel of rung 11 `mma_multistage` (see 11_mma_multistage.cu) and its
// configuration template: mma.sync fed by ldmatrix from swizzled shared memory, filled
// by a multi-stage cp.async pipeline. Kept in a header so a development driver can
// instantiate other configurations of the same kernel; the rung's table of
// configurations and its launcher are in 11_mma_multistage.cu, the tile configurations
// in cuda/gemm/configs/.
#pragma once

#include "cuda/arch/mma_sm80.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {

/// The configuration of mma_multistage_kernel for a tile `Tile` with the named fields
/// kBlockM x kBlockN (the block tile), kWarpsM x kWarpsN (the warp grid), kStages
/// (shared-memory stages in flight) and kArch (the __CUDA_ARCH__ pass that compiles the
/// kernel's body; 0: every pass without a config of its own, so each architecture
/// carries only the kernels it runs). A stage holds one K block of 128 bytes per operand
/// row (64 f16/bf16 or 32 tf32 elements).
template <class Tile>
struct MmaMultistageConfig {
  static constexpr int kBlockM = Tile::kBlockM, kBlockN = Tile::kBlockN;
  static constexpr int kWarpsM = Tile::kWarpsM, kWarpsN = Tile::kWarpsN;
  static constexpr int kWarpTileM = kBlockM / kWarpsM, kWarpTileN = kBlockN / kWarpsN;
  static constexpr int kMmaTilesM = kWarpTileM / 16, kMmaTilesN = kWarpTileN / 8;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kStages = Tile::kStages;
  static constexpr int kRowBytes = 128;  // one K block of a K-major row
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kRowBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kGroupM = 8;     // tile rows per L2 raster group
  static constexpr int kMinBlocks = 1;  // blocks per SM (__launch_bounds__)
  __host__ __device__ static constexpr bool compiled_for(int device_arch) {
    return Tile::kArch != 0 ? device_arch == Tile::kArch : device_arch != 800 && device_arch != 900;
  }
  static_assert(kWarpTileM % 16 == 0 && kWarpTileN % 16 == 0,
                "a warp tile is whole m16 tiles and whole pairs of n8 tiles (one ldmatrix.x4 each)");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert((kBlockM * kRowBytes / 16) % kThreads == 0 && (kBlockN * kRowBytes / 16) % kThreads == 0,
                "every thread copies the same number of 16-byte chunks per stage");
};

/// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile.
__device__ __forceinline__ uint32_t swizzle(int row, int row_bytes, int chunk) {
  return row * row_bytes + ((chunk ^ (row & 7)) << 4);
}

/// Issues the cp.async copies of one operand tile: kRows rows of kRowBytes, from
/// storage rows row0.. and columns col0.. of a rows x cols matrix. Chunks past the
/// matrix copy 0 source bytes (all zeros); a chunk straddling the edge copies the part
/// inside.
template <class Cfg, class T, int kRows, int kRowBytes>
__device__ __forceinline__ void copy_tile(uint32_t dst, const T* src, int64_t ld, int row0, int col0, int rows,
                                          int cols) {
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
    // (cp_async_16 moves bytes: its float pointers are only portable.cuh's signature.)
    arch::cp_async_16(static_cast<float*>(arch::smem_ptr(dst + swizzle(r, kRowBytes, chunk))),
                      reinterpret_cast<const float*>(g), valid * static_cast<int>(sizeof(T)));
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
      arch::cp_async_16(arch::smem_ptr(dst + d), g);
      g += round_bytes;
    }
  }
};

/// The fused epilogue of one block tile: the f32 accumulators are staged in shared memory
/// (the pipeline's, idle by now; the caller has synchronized), and the block writes C from
/// there in a rolled loop, four consecutive columns per thread and step: C = act(alpha*acc +
/// beta*C + bias) in f32, rounded once, 16- or 8-byte accesses where C allows. One copy of
/// the activation code per kernel instead of one per fragment element (the bias and the
/// activation would otherwise be inlined 128-256 times: code size and compile time).
template <class Cfg, class T>
__device__ __forceinline__ void epilogue_from_smem(const TcProblem& p,
                                                   const float (&acc)[Cfg::kMmaTilesM][Cfg::kMmaTilesN][4],
                                                   float* staged, int m0, int n0, int wm0, int wn0, int lane,
                                                   const Epilogue& epi, int64_t item) {
  constexpr int BM = Cfg::kBlockM, BN = Cfg::kBlockN;
  constexpr int kPitch = BN + 8;  // as the plain staged store: fragment stores in 2 wavefronts
  static_assert(BM * kPitch * 4 <= Cfg::kSmemBytes, "the staged tile fits the pipeline's shared memory");
  const int group = lane >> 2, quad = lane & 3;
#pragma unroll
  for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kMmaTilesN; ++j) {
      const int row = wm0 + 16 * i + group, col = wn0 + 8 * j + 2 * quad;
      *reinterpret_cast<float2*>(&staged[row * kPitch + col]) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(&staged[(row + 8) * kPitch + col]) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  __syncthreads();
  using Out16 = std::conditional_t<sizeof(T) == 2, T, gpu::half_t>;
  const bool c32 = p.c_f32 || sizeof(T) == 4;
  const int64_t out_bytes = c32 ? 4 : 2;
  const bool vec = reinterpret_cast<uintptr_t>(p.c) % (4 * out_bytes) == 0 && p.ldc % 4 == 0;
  constexpr int kQuadsPerRow = BN / 4;
#pragma unroll 1
  for (int qd = static_cast<int>(threadIdx.x); qd < BM * kQuadsPerRow; qd += Cfg::kThreads) {
    const int r = qd / kQuadsPerRow, c = (qd % kQuadsPerRow) * 4;
    const int row = m0 + r, col = n0 + c;
    if (row >= p.m || col >= p.n) continue;
    const float4 v = *reinterpret_cast<const float4*>(&staged[r * kPitch + c]);
    const int64_t offset = static_cast<int64_t>(row) * p.ldc + col;
    const int valid = min(4, p.n - col);
    if (c32)
      store_c4_epilogue(static_cast<float*>(p.c) + offset, v, p.alpha, p.beta, valid, vec, epi, item, col);
    else
      store_c4_epilogue(static_cast<Out16*>(p.c) + offset, v, p.alpha, p.beta, valid, vec, epi, item, col);
  }
}

/// One block tile of C (blockIdx.x, in L2 raster order) of batch item batch.item()
/// (blockIdx.y). kEpilogue: C = act(alpha*acc + beta*C + bias) (`epi`) in f32 before C's
/// one rounding, written from shared memory (epilogue_from_smem); without it the plain
/// stores, unchanged.
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kChecked = true, bool kEpilogue = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    mma_multistage_kernel(TcProblem p, BatchLaunch batch, Epilogue epi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (Cfg::compiled_for(gpu::kDeviceArch)) {
    // This block's batch item: its operands (stride 0 broadcasts one over the batch).
    const int64_t item = batch.item();
    p.a = static_cast<const T*>(p.a) + item * batch.strides.a;
    p.b = static_cast<const T*>(p.b) + item * batch.strides.b;
    p.c = static_cast<char*>(p.c) + item * batch.strides.c * (p.c_f32 ? 4 : static_cast<int64_t>(sizeof(T)));
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

    const TileCoord tile = tile_coords(static_cast<int>(blockIdx.x), p.tiles_m, p.tiles_n, Cfg::kGroupM);
    const int m0 = tile.m * BM, n0 = tile.n * BN;
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
    const ACopy a_copy = kAKMajor ? ACopy(a, p.lda, m0, 0) : ACopy(a, p.lda, 0, m0);
    const BCopy b_copy = kBKMajor ? BCopy(b, p.ldb, n0, 0) : BCopy(b, p.ldb, 0, n0);
    auto load_stage = [&](int s, int kt) {
      // (tf32 keeps the checked path alone: its MN-major fragment loads leave no room
      // for the second path's registers.)
      if (!kChecked || (!kTf32 && interior && kt < full_k_tiles)) {
        a_copy.copy(a_stage(s), kt, p.lda);
        b_copy.copy(b_stage(s), kt, p.ldb);
      } else if constexpr (kChecked) {
        const int k0 = kt * kBK;
        if constexpr (kAKMajor)
          copy_tile<Cfg, T, kARows, kARowBytes>(a_stage(s), a, p.lda, m0, k0, p.m, p.k);
        else
          copy_tile<Cfg, T, kARows, kARowBytes>(a_stage(s), a, p.lda, k0, m0, p.k, p.m);
        if constexpr (kBKMajor)
          copy_tile<Cfg, T, kBRows, kBRowBytes>(b_stage(s), b, p.ldb, n0, k0, p.n, p.k);
        else
          copy_tile<Cfg, T, kBRows, kBRowBytes>(b_stage(s), b, p.ldb, k0, n0, p.k, p.n);
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
          arch::ldmatrix_x4<false>(a_frag[buf][i], as + swizzle(row, kARowBytes, 2 * kk + (lane >> 4)));
        } else if constexpr (!kTf32) {
          // Stored (k, m): matrix j = lane / 8 covers k rows 8*(j/2).., m chunk j % 2.
          const int j = lane >> 3;
          const int krow = kk * 16 + (j >> 1) * 8 + (lane & 7);
          arch::ldmatrix_x4<true>(a_frag[buf][i], as + swizzle(krow, kARowBytes, mm / 8 + (j & 1)));
        } else {
          // tf32, stored (k, m): a0 = A(g, q), a1 = A(g+8, q), a2 = A(g, q+4), a3 = A(g+8, q+4).
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int m = mm + group + (e & 1) * 8, k = kk * 8 + quad + (e >> 1) * 4;
            a_frag[buf][i][e] = arch::ld_shared_u32(as + swizzle(k, kARowBytes, m / 4) + (m % 4) * 4);
          }
        }
        if constexpr (kTf32)
#pragma unroll
          for (int e = 0; e < 4; ++e) a_frag[buf][i][e] = arch::round_tf32(a_frag[buf][i][e]);
      }
#pragma unroll
      for (int jp = 0; jp < Cfg::kMmaTilesN / 2; ++jp) {
        const int nn = wn0 + 16 * jp;
        const int j = lane >> 3;
        uint32_t r[4];
        if constexpr (kBKMajor) {
          // Stored (n, k): matrices (n 0-7, chunk 0), (n 0-7, chunk 1), (n 8-15, chunk 0), (n 8-15, chunk 1).
          const int nrow = nn + (j >> 1) * 8 + (lane & 7);
          arch::ldmatrix_x4<false>(r, bs + swizzle(nrow, kBRowBytes, 2 * kk + (j & 1)));
        } else if constexpr (!kTf32) {
          // Stored (k, n): matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
          const int krow = kk * 16 + (j & 1) * 8 + (lane & 7);
          arch::ldmatrix_x4<true>(r, bs + swizzle(krow, kBRowBytes, nn / 8 + (j >> 1)));
        } else {
          // tf32, stored (k, n): b0 = B(q, g), b1 = B(q+4, g) for n tiles nn and nn + 8.
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int n = nn + group + (e >> 1) * 8, k = kk * 8 + quad + (e & 1) * 4;
            r[e] = arch::ld_shared_u32(bs + swizzle(k, kBRowBytes, n / 4) + (n % 4) * 4);
          }
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const uint32_t v = kTf32 ? arch::round_tf32(r[e]) : r[e];
          b_frag[buf][2 * jp + (e >> 1)][e & 1] = v;
        }
      }
    };

    float acc[Cfg::kMmaTilesM][Cfg::kMmaTilesN][4];
#pragma unroll
    for (int i = 0; i < Cfg::kMmaTilesM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::kMmaTilesN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    const int k_tiles = p.k_tiles;
    int load_kt = 0;  // the next K block to load
    auto produce = [&](int s) {
      if (load_kt < k_tiles) load_stage(s, load_kt);
      arch::cp_async_commit();
      ++load_kt;
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
    arch::cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();

    int read_stage = 0, write_stage = Cfg::kStages - 1;
    load_frags(0, read_stage, 0);
    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        if (kk == kKSteps - 1) {
          // The next K block must have landed, and every warp must be done with this
          // one before its stage is refilled (next iteration, kk == 0).
          arch::cp_async_wait<Cfg::kStages - 2>();
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
          for (int j = 0; j < Cfg::kMmaTilesN; ++j) arch::mma_16x8<T>(acc[i][j], a_frag[kk & 1][i], b_frag[kk & 1][j]);
      }
    }
    arch::cp_async_wait<0>();
    if constexpr (kEpilogue) {
      __syncthreads();  // every warp is done reading the last stage
      epilogue_from_smem<Cfg, T>(p, acc, reinterpret_cast<float*>(smem_u4), m0, n0, wm0, wn0, lane, epi, item);
    } else if constexpr (!kChecked) {
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
                o[0] += p.beta * old.x;
                o[1] += p.beta * old.y;
                o[2] += p.beta * old.z;
                o[3] += p.beta * old.w;
              }
              *dst = make_float4(o[0], o[1], o[2], o[3]);
            } else {
              using Out16 = std::conditional_t<sizeof(T) == 2, T, gpu::half_t>;
              uint2* dst = reinterpret_cast<uint2*>(static_cast<Out16*>(p.c) + offset);
              if (p.beta != 0.0f) {
                const uint2 old = *dst;
                const float2 lo = unpack_pair<Out16>(old.x), hi = unpack_pair<Out16>(old.y);
                o[0] += p.beta * lo.x;
                o[1] += p.beta * lo.y;
                o[2] += p.beta * hi.x;
                o[3] += p.beta * hi.y;
              }
              *dst = make_uint2(pack_pair<Out16>(o[0], o[1]), pack_pair<Out16>(o[2], o[3]));
            }
          }
        }
      }
    } else {
      epilogue();
    }
  }
#endif
}

/// Launches the kernel over the call's tiles and batch items (the epilogue instantiation
/// when the call has one; kFusable = false instantiates none, for configurations the
/// rung never runs an epilogue with: each instantiation costs compile time).
template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kChecked = true, bool kFusable = true>
void launch_mma(const core::GemmArgs& args, const CudaContext& ctx) {
  const Epilogue epi = epilogue_of(args);
  auto kernel = mma_multistage_kernel<Cfg, T, kAKMajor, kBKMajor, kChecked, false>;
  if constexpr (kFusable) {
    if (epi.active()) kernel = mma_multistage_kernel<Cfg, T, kAKMajor, kBKMajor, kChecked, true>;
  } else if (epi.active()) {
    throw core::Error(core::Status::InternalError, "mma_multistage: this configuration has no epilogue kernel");
  }
  TcProblem p = make_tc_problem(args);
  p.tiles_m = ceil_div(p.m, Cfg::kBlockM);
  p.tiles_n = ceil_div(p.n, Cfg::kBlockN);
  p.k_tiles = ceil_div(p.k, Cfg::kRowBytes / static_cast<int>(sizeof(T)));
  allow_dynamic_smem_once(kernel, Cfg::kSmemBytes, ctx.device);
  const int tiles = p.tiles_m * p.tiles_n;
  for_batch_chunks(args.batch, batch_strides_of(args), [&](const BatchLaunch& items, unsigned count) {
    kernel<<<dim3(tiles, count), Cfg::kThreads, Cfg::kSmemBytes, ctx.stream>>>(p, items, epi);
    GK_LAUNCH_CHECK();
  });
}

template <class Cfg, class T, bool kChecked = true, bool kFusable = true>
void launch_mma_layout(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if (ak && bk)
    launch_mma<Cfg, T, true, true, kChecked, kFusable>(args, ctx);
  else if (ak)
    launch_mma<Cfg, T, true, false, kChecked, kFusable>(args, ctx);
  else if (bk)
    launch_mma<Cfg, T, false, true, kChecked, kFusable>(args, ctx);
  else
    launch_mma<Cfg, T, false, false, kChecked, kFusable>(args, ctx);
}

/// True when Cfg's block tiles and K blocks cover the problem exactly (no bounds checks needed).
template <class Cfg, class T>
bool tiles_exactly(const core::GemmArgs& args) {
  return args.m % Cfg::kBlockM == 0 && args.n % Cfg::kBlockN == 0 &&
         args.k % (Cfg::kRowBytes / static_cast<int64_t>(sizeof(T))) == 0;
}

}  // namespace gpukern::cuda::gemm
