// Rung 08 `warptile`: warp tiles with interleaved 4 x 4 sub-tiles per lane.
//
// Change from 06/07: back to the 128 x 128 block tile with 8 x 8 outputs per thread,
// but the outputs are placed by warp (warp_tiling.cuh): each warp owns a 32 x 64 tile
// of C and each lane four 4 x 4 sub-tiles spread across it. In 06 a lane's 8 columns
// were contiguous, so lanes 4 apart hit the same banks (2-way conflicts on every B
// fragment load) and a warp touched 256 bytes of B per kk; here one 16-byte load phase
// covers 128 consecutive bytes of B and a single broadcast float4 of A. Warps also
// become the unit of locality: a warp's fragments come from a 32-row and a 64-column
// strip of the shared tiles. The K step grows to 16 (half the barriers of 06).
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/simt/warp_tiling.cuh"

namespace gpukern::cuda::gemm {
namespace {

struct WarptileConfig {
  /// For a warp of kWarp lanes (32: 32 x 64 warp tiles; 64 on CDNA: 64 x 64).
  template <int kWarp>
  using Tiling = WarpTiling</*warps_m=*/4, /*warps_n=*/2, /*thread_m=*/8, /*thread_n=*/8, kWarp>;
  static constexpr int kBlockK = 16;
  static constexpr int kPad = 4;  // floats: keeps shared rows 16-byte aligned, spreads transposing stores
  static_assert(Tiling<32>::kBlockM % 4 == 0 && Tiling<32>::kBlockN % 4 == 0 && Tiling<64>::kBlockM % 4 == 0 &&
                    Tiling<64>::kBlockN % 4 == 0,
                "tiles are copied in float4s");
};

template <int kWarp, bool kTransA, bool kTransB>
__global__ void __launch_bounds__(WarptileConfig::Tiling<kWarp>::kThreads) warptile_kernel(SgemmProblem p, bool c_vec) {
  if constexpr (!gpu::warp_size_compiled<kWarp>()) return;  // never launched on this target
  using T = WarptileConfig::Tiling<kWarp>;
  constexpr int kBlockK = WarptileConfig::kBlockK;
  constexpr int kLdA = T::kBlockM + WarptileConfig::kPad, kLdB = T::kBlockN + WarptileConfig::kPad;
  __shared__ __align__(16) float a_tile[kBlockK * kLdA];  // (kk, row)
  __shared__ __align__(16) float b_tile[kBlockK * kLdB];  // (kk, col)

  const int row0 = static_cast<int>(blockIdx.y) * T::kBlockM, col0 = static_cast<int>(blockIdx.x) * T::kBlockN;
  const int r_base = T::row_base(), c_base = T::col_base();

  float acc[T::kThreadM][T::kThreadN] = {};
  float a_reg[T::kThreadM], b_reg[T::kThreadN];
  for (int k0 = 0; k0 < p.k; k0 += kBlockK) {
    load_tile_vec4_kmajor<T::kBlockM, kBlockK, T::kThreads, a_is_k_contiguous<kTransA>>(p.a, p.lda, row0, k0, p.m, p.k,
                                                                                        a_tile, kLdA);
    load_tile_vec4_kmajor<T::kBlockN, kBlockK, T::kThreads, b_is_k_contiguous<kTransB>>(p.b, p.ldb, col0, k0, p.n, p.k,
                                                                                        b_tile, kLdB);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBlockK; ++kk) {
#pragma unroll
      for (int i = 0; i < T::kSubM; ++i)
        *reinterpret_cast<float4*>(&a_reg[4 * i]) =
            *reinterpret_cast<const float4*>(&a_tile[kk * kLdA + r_base + i * T::kSubStrideM]);
#pragma unroll
      for (int j = 0; j < T::kSubN; ++j)
        *reinterpret_cast<float4*>(&b_reg[4 * j]) =
            *reinterpret_cast<const float4*>(&b_tile[kk * kLdB + c_base + j * T::kSubStrideN]);
#pragma unroll
      for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < T::kThreadN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < T::kThreadM; ++i) {
    const int row = row0 + r_base + (i / 4) * T::kSubStrideM + i % 4;
#pragma unroll
    for (int j = 0; j < T::kSubN; ++j)
      store_c4(p, row, col0 + c_base + j * T::kSubStrideN,
               make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]), c_vec);
  }
}

}  // namespace

core::Verdict warptile_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  if (core::Verdict v = check_vec4_operands(args); !v.accepted()) return v;
  core::Verdict why;
  gpu::with_warp_size(ctx.warp_size, [&](auto warp) {
    why = check_block_tile_grid<WarptileConfig::Tiling<decltype(warp)::value>>(args);
  });
  return why;
}

void warptile_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  const bool c_vec = c_vector_ok(p);
  gpu::with_warp_size(ctx.warp_size, [&](auto warp) {
    constexpr int kWarp = decltype(warp)::value;
    launch_block_tiles<WarptileConfig::Tiling<kWarp>>(
        p, ctx, [](auto ta, auto tb) { return warptile_kernel<kWarp, decltype(ta)::value, decltype(tb)::value>; },
        c_vec);
  });
}

}  // namespace gpukern::cuda::gemm
