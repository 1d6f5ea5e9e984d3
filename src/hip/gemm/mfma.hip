// Rung `mfma` (HIP only): f16/bf16 GEMM on the CDNA matrix cores, f32 accumulation.
//
// In place of the NVIDIA tensor-core rungs (wmma, mma_multistage, wgmma_tma): the inner
// product runs on the matrix cores through v_mfma_f32_32x32x8{f16,bf16_1k}. One
// wavefront (64 lanes) multiplies a 32x8 tile of A by an 8x32 tile of B into a 32x32 f32
// accumulator spread over its lanes (16 floats each): 8192 FMAs in one instruction,
// where the SIMT rungs issue one FMA per lane.
//
// Structure: a 128x128 block tile of C walks K in steps of 16. Four wavefronts in a 2x2
// grid own 64x64 of C each, as 2x2 accumulators of 32x32. Each K step the block copies
// a 128x16 tile of op(A) and a 16x128 tile of op(B) into LDS, both stored K-contiguous
// per row of M (A) or N (B) -- a_lds[m][k], b_lds[n][k] -- because that is how the
// instruction distributes its operands (CDNA ISA, v_mfma_f32_32x32x8, wave64):
//   A (32 x 8):   A[i][k] in lane i + 32 * (k / 4), element k % 4
//   B (8 x 32):   B[k][j] in lane j + 32 * (k / 4), element k % 4
//   D (32 x 32):  D[i][j] in lane j + 32 * ((i / 4) % 2), register 4 * (i / 8) + i % 4
// so every operand of every MFMA is one 8-byte LDS read per lane. Rows are padded by 4
// elements to 40 bytes, which spreads the 32 rows a half-wave reads over the LDS banks
// (unpadded 32-byte rows would put every fourth row on the same banks). The next
// K tile is read from global memory into registers while the matrix cores work on the
// current one.
//
// Any shape: the copy zero-fills outside op(A) and op(B) (the K tail too), the
// epilogue skips outside C. Any alignment: 16-byte global loads where an aligned group
// of 8 elements lies inside the operand, element loads elsewhere. Either transpose: a
// K-contiguous operand's group of 8 lands in one LDS row, an M- or N-contiguous one is
// scattered over 8 rows. C in f32 or the input type, alpha/beta as in every rung
// (store_one: beta == 0 never reads C); K == 0 scales C (tc_trivial_call).
//
// Built into the gfx90a and gfx940 code objects; targets without matrix cores (gfx1030,
// RDNA) get an empty kernel and supports() declines there. Compile-verified only: the
// code-object test (tests/hip) checks that the gfx90a code holds v_mfma instructions;
// the rung has not run on AMD hardware.
#include "hip/gemm/mfma.hpp"

#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>

// MFMA exists on the CDNA targets of this build; elsewhere the kernel body is empty.
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define GK_HIP_MFMA_TARGET 1
#endif

namespace gpukern::hip {
namespace {

/// True in the device passes of targets with matrix cores.
#if defined(GK_HIP_MFMA_TARGET)
constexpr bool kMfmaTarget = true;
#else
constexpr bool kMfmaTarget = false;
#endif

using cuda::gemm::TcProblem;

struct MfmaConfig {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16;
  static constexpr int kWavesM = 2, kWavesN = 2;
  static constexpr int kWave = 64;  // MFMA is a wave64 instruction (CDNA)
  static constexpr int kThreads = kWavesM * kWavesN * kWave;
  static constexpr int kMfmaMN = 32, kMfmaK = 8;  // v_mfma_f32_32x32x8: 32x32 of C, 8 of K
  static constexpr int kWaveTileM = kBlockM / kWavesM, kWaveTileN = kBlockN / kWavesN;
  static constexpr int kTilesM = kWaveTileM / kMfmaMN, kTilesN = kWaveTileN / kMfmaMN;
  static constexpr int kPad = 4;                 // elements added to every LDS row
  static constexpr int kLdsLd = kBlockK + kPad;  // LDS row: 20 elements, 40 bytes
  static constexpr int kGroup = 8;               // elements per 16-byte global load
  static constexpr int kGroupM = 8;              // tile rows per L2 raster group
  static_assert(kWaveTileM % kMfmaMN == 0 && kWaveTileN % kMfmaMN == 0,
                "a wavefront's tile must be a whole number of 32x32 accumulators");
  static_assert(kBlockK % kMfmaK == 0, "the K step must be a whole number of MFMA K steps");
  static_assert(kBlockK % kGroup == 0, "K-contiguous tile rows are copied in groups of 8");
  static_assert((kLdsLd * 2) % 8 == 0 && kPad % 4 == 0,
                "operand reads are 8 bytes: LDS rows and the 4-element K offsets must stay 8-byte aligned");
};

// Operand registers of one MFMA (4 elements of 16 bits: raw bits, f16 or bf16 view)
// and its accumulator.
using Bits4 = uint16_t __attribute__((ext_vector_type(4)));
using Half4 = _Float16 __attribute__((ext_vector_type(4)));
using Short4 = short __attribute__((ext_vector_type(4)));
using Float16 = float __attribute__((ext_vector_type(16)));

/// acc += A (32x8) * B (8x32) for 16-bit inputs of type T, raw bits in `a` and `b`.
template <class T>
__device__ __forceinline__ Float16 mfma_32x32x8(Bits4 a, Bits4 b, Float16 acc) {
#if defined(GK_HIP_MFMA_TARGET)
  if constexpr (std::is_same_v<T, gpu::bf16_t>) {
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(Short4, a), __builtin_bit_cast(Short4, b), acc,
                                                    0, 0, 0);
  } else {
    return __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(Half4, a), __builtin_bit_cast(Half4, b), acc, 0, 0,
                                                0);
  }
#else
  (void)a;
  (void)b;
  return acc;
#endif
}

/// One operand's share of a K step, in this thread's registers between the global read
/// and the LDS write. The tile covers [mn0, mn0 + kTileMN) x [k0, k0 + kBlockK) of the
/// operand; its storage is kRows rows of kContig contiguous elements (K-contiguous:
/// rows along M/N; otherwise rows along K). Consecutive threads read consecutive
/// 16-byte groups of a row, so the reads coalesce for either transpose.
template <int kTileMN, bool kKContiguous>
struct OperandCopy {
  using Cfg = MfmaConfig;
  static constexpr int kRows = kKContiguous ? kTileMN : Cfg::kBlockK;
  static constexpr int kContig = kKContiguous ? Cfg::kBlockK : kTileMN;
  static constexpr int kGroupsPerRow = kContig / Cfg::kGroup;
  static constexpr int kPerThread = kRows * kGroupsPerRow / Cfg::kThreads;
  static_assert(kContig % Cfg::kGroup == 0, "tile rows must be whole groups of 8 elements");
  static_assert((kRows * kGroupsPerRow) % Cfg::kThreads == 0, "every thread must copy the same number of groups");
  uint4 regs[kPerThread];  // 8 elements each

  /// Reads the tile at (mn0, k0) of an operand of mn_size x k_size; zeros outside it.
  /// `vector_ok`: the operand is 16-byte aligned and ld % 8 == 0.
  __device__ __forceinline__ void load(const uint16_t* x, int64_t ld, int mn0, int k0, int mn_size, int k_size,
                                       bool vector_ok) {
    const int row0 = kKContiguous ? mn0 : k0, col0 = kKContiguous ? k0 : mn0;
    const int row_size = kKContiguous ? mn_size : k_size, col_size = kKContiguous ? k_size : mn_size;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
      const int row = row0 + idx / kGroupsPerRow;
      const int col = col0 + (idx % kGroupsPerRow) * Cfg::kGroup;
      const uint16_t* src = x + static_cast<int64_t>(row) * ld + col;
      if (vector_ok && row < row_size && col + Cfg::kGroup <= col_size) {
        regs[i] = *reinterpret_cast<const uint4*>(src);
      } else {
        // Element by element, packed into 32-bit words with shifts (a local array of
        // 16-bit elements would live in scratch memory).
        uint32_t word[4] = {0, 0, 0, 0};
#pragma unroll
        for (int j = 0; j < Cfg::kGroup; ++j)
          if (row < row_size && col + j < col_size) word[j / 2] |= uint32_t(src[j]) << (16 * (j % 2));
        regs[i] = make_uint4(word[0], word[1], word[2], word[3]);
      }
    }
  }

  /// Writes the registers into lds[mn][k] (K contiguous per row of M or N).
  __device__ __forceinline__ void store(uint16_t (*lds)[Cfg::kLdsLd]) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
      const int row = idx / kGroupsPerRow;
      const int col = (idx % kGroupsPerRow) * Cfg::kGroup;
      if constexpr (kKContiguous) {
        // (mn = row, k = col..col+7): two 8-byte stores (LDS rows are 8-byte aligned).
        *reinterpret_cast<uint2*>(&lds[row][col]) = make_uint2(regs[i].x, regs[i].y);
        *reinterpret_cast<uint2*>(&lds[row][col + 4]) = make_uint2(regs[i].z, regs[i].w);
      } else {
        // (k = row, mn = col..col+7): scattered over 8 LDS rows.
        const uint32_t word[4] = {regs[i].x, regs[i].y, regs[i].z, regs[i].w};
#pragma unroll
        for (int j = 0; j < Cfg::kGroup; ++j) lds[col + j][row] = static_cast<uint16_t>(word[j / 2] >> (16 * (j % 2)));
      }
    }
  }
};

/// C(row, col) = alpha * acc + beta * C(row, col), C in f32 or the input type T.
template <class T>
__device__ __forceinline__ void store_c(const TcProblem& p, int row, int col, float acc) {
  if (row >= p.m || col >= p.n) return;
  const int64_t offset = static_cast<int64_t>(row) * p.ldc + col;
  if (p.c_f32)
    cuda::gemm::store_one(static_cast<float*>(p.c) + offset, acc, p.alpha, p.beta);
  else
    cuda::gemm::store_one(static_cast<T*>(p.c) + offset, acc, p.alpha, p.beta);
}

template <class T, bool kAKContiguous, bool kBKContiguous>
__global__ void __launch_bounds__(MfmaConfig::kThreads) mfma_kernel(TcProblem p, bool a_vector_ok, bool b_vector_ok) {
  using Cfg = MfmaConfig;
  if constexpr (!kMfmaTarget) return;  // no matrix cores here (RDNA, and the host pass)
  static_assert(!kMfmaTarget || gpu::kWarpSize == Cfg::kWave, "the MFMA operand layout is that of a 64-lane wavefront");
  __shared__ __attribute__((aligned(16))) uint16_t a_lds[Cfg::kBlockM][Cfg::kLdsLd];  // (m, k)
  __shared__ __attribute__((aligned(16))) uint16_t b_lds[Cfg::kBlockN][Cfg::kLdsLd];  // (n, k)

  const cuda::gemm::TileCoord tile =
      cuda::gemm::tile_coords(static_cast<int>(blockIdx.x), p.tiles_m, p.tiles_n, Cfg::kGroupM);
  const int m0 = tile.m * Cfg::kBlockM, n0 = tile.n * Cfg::kBlockN;
  const int wave = static_cast<int>(threadIdx.x) / Cfg::kWave, lane = static_cast<int>(threadIdx.x) % Cfg::kWave;
  const int wave_m0 = (wave / Cfg::kWavesN) * Cfg::kWaveTileM;  // this wavefront's 64x64 of the block tile
  const int wave_n0 = (wave % Cfg::kWavesN) * Cfg::kWaveTileN;
  const int lane_row = lane % 32;      // row of A / column of B this lane feeds
  const int lane_k = (lane / 32) * 4;  // its first K index within an MFMA step

  const auto* a = static_cast<const uint16_t*>(p.a);
  const auto* b = static_cast<const uint16_t*>(p.b);
  OperandCopy<Cfg::kBlockM, kAKContiguous> a_copy;
  OperandCopy<Cfg::kBlockN, kBKContiguous> b_copy;
  a_copy.load(a, p.lda, m0, 0, p.m, p.k, a_vector_ok);
  b_copy.load(b, p.ldb, n0, 0, p.n, p.k, b_vector_ok);

  Float16 acc[Cfg::kTilesM][Cfg::kTilesN];
#pragma unroll
  for (int tm = 0; tm < Cfg::kTilesM; ++tm)
#pragma unroll
    for (int tn = 0; tn < Cfg::kTilesN; ++tn)
#pragma unroll
      for (int r = 0; r < 16; ++r) acc[tm][tn][r] = 0.0f;

  for (int kt = 0; kt < p.k_tiles; ++kt) {
    __syncthreads();  // every wavefront is done reading the previous tiles
    a_copy.store(a_lds);
    b_copy.store(b_lds);
    __syncthreads();
    if (kt + 1 < p.k_tiles) {  // the next tiles' global reads overlap this step's MFMAs
      a_copy.load(a, p.lda, m0, (kt + 1) * Cfg::kBlockK, p.m, p.k, a_vector_ok);
      b_copy.load(b, p.ldb, n0, (kt + 1) * Cfg::kBlockK, p.n, p.k, b_vector_ok);
    }
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockK; kk += Cfg::kMfmaK) {
      Bits4 a_frag[Cfg::kTilesM], b_frag[Cfg::kTilesN];
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm)
        a_frag[tm] = *reinterpret_cast<const Bits4*>(&a_lds[wave_m0 + tm * Cfg::kMfmaMN + lane_row][kk + lane_k]);
#pragma unroll
      for (int tn = 0; tn < Cfg::kTilesN; ++tn)
        b_frag[tn] = *reinterpret_cast<const Bits4*>(&b_lds[wave_n0 + tn * Cfg::kMfmaMN + lane_row][kk + lane_k]);
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm)
#pragma unroll
        for (int tn = 0; tn < Cfg::kTilesN; ++tn) acc[tm][tn] = mfma_32x32x8<T>(a_frag[tm], b_frag[tn], acc[tm][tn]);
    }
  }

  // D[i][j] of an accumulator: column j = lane % 32; row i = 8 * (r / 4) + 4 * (lane / 32) + r % 4.
#pragma unroll
  for (int tm = 0; tm < Cfg::kTilesM; ++tm)
#pragma unroll
    for (int tn = 0; tn < Cfg::kTilesN; ++tn) {
      const int col = n0 + wave_n0 + tn * Cfg::kMfmaMN + lane % 32;
#pragma unroll
      for (int r = 0; r < 16; ++r) {
        const int row = m0 + wave_m0 + tm * Cfg::kMfmaMN + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
        store_c<T>(p, row, col, acc[tm][tn][r]);
      }
    }
}

bool operand_vector_ok(const void* x, int64_t ld) { return reinterpret_cast<uintptr_t>(x) % 16 == 0 && ld % 8 == 0; }

}  // namespace

/// Matrix cores: CDNA (gfx908, gfx90a, gfx94x); RDNA (gfx10xx, gfx11xx) has none.
bool has_matrix_cores(int gfx) { return gfx == 0x908 || gfx == 0x90a || (gfx >= 0x940 && gfx < 0x1000); }

core::Verdict mfma_supports(const core::GemmArgs& args, const CudaContext&) {
  if (core::Verdict v = cuda::gemm::tc_shape_reason(args); !v.accepted()) return v;
  using Cfg = MfmaConfig;
  const int64_t blocks = core::ceil_div<int64_t>(args.m, Cfg::kBlockM) * core::ceil_div<int64_t>(args.n, Cfg::kBlockN);
  // A launch holds at most 2^32 - 1 work-items on AMD.
  if (blocks * Cfg::kThreads > std::numeric_limits<uint32_t>::max())
    return {core::Decline::ShapeLimit, "the problem needs more workgroups than one launch allows"};
  return {};
}

void mfma_run(const core::GemmArgs& args, const CudaContext& ctx) {
  using Cfg = MfmaConfig;
  if (cuda::gemm::tc_trivial_call(args, ctx)) return;  // K == 0: C = beta * C
  TcProblem p = cuda::gemm::make_tc_problem(args);
  p.tiles_m = core::ceil_div(p.m, Cfg::kBlockM);
  p.tiles_n = core::ceil_div(p.n, Cfg::kBlockN);
  p.k_tiles = core::ceil_div(p.k, Cfg::kBlockK);
  const bool a_vector_ok = operand_vector_ok(args.a, args.lda), b_vector_ok = operand_vector_ok(args.b, args.ldb);
  const unsigned blocks = static_cast<unsigned>(p.tiles_m) * static_cast<unsigned>(p.tiles_n);
  // A is K-contiguous unless transposed; B is K-contiguous when transposed.
  cuda::gemm::dispatch_layout(args.trans_a, args.trans_b, [&](auto trans_a, auto trans_b) {
    constexpr bool kAK = !decltype(trans_a)::value, kBK = decltype(trans_b)::value;
    if (args.ab_type == core::DType::BF16)
      mfma_kernel<gpu::bf16_t, kAK, kBK><<<blocks, Cfg::kThreads, 0, ctx.stream>>>(p, a_vector_ok, b_vector_ok);
    else
      mfma_kernel<gpu::half_t, kAK, kBK><<<blocks, Cfg::kThreads, 0, ctx.stream>>>(p, a_vector_ok, b_vector_ok);
  });
  GK_LAUNCH_CHECK();
}

}  // namespace gpukern::hip
