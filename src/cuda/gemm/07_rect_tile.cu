// Rung 07 `rect_tile`: a 64 x 64 block tile with an 8 x 4 rectangular register tile.
//
// Change from 06: the seed journey's rectangular tile (RTX 3050: 8 x 4 beat 4 x 4 and
// 8 x 8 there). Each thread keeps 8 rows x 4 columns of C; per kk it loads 8 values of
// A (two float4s) and 4 of B (one float4), so each B value feeds 8 FMAs. The block tile
// shrinks to 64 x 64 with 128 threads and a deeper K step (16): four times as many
// blocks as 06, which fills all SMs on mid-sized problems and lets several blocks share
// an SM to hide each other's barrier stalls, at the price of more global and shared
// traffic per FMA than the 128 x 128 tile. Same float4 copy, K-major shared tiles and
// alignment rules as 06.
//
// Measured: 31889 GFLOP/s at 4096^3 row-major NN = 62.8% of cuBLAS SGEMM in the same run
// (H100 80GB HBM3, CUDA 13.0, 2026-11-21, scripts/cuda_gemm_device.sh).
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

struct RectTileConfig {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16;
  static constexpr int kThreadM = 8, kThreadN = 4;  // the rectangular register tile
  static constexpr int kPad = 4;
  static constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "fragments are read as float4s");
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "the per-thread tile must divide the block tile");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
};

template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(RectTileConfig::kThreads) rect_tile_kernel(SgemmProblem p, bool c_vec) {
  using Cfg = RectTileConfig;
  constexpr int kLdA = Cfg::kBlockM + Cfg::kPad, kLdB = Cfg::kBlockN + Cfg::kPad;
  __shared__ __align__(16) float a_tile[Cfg::kBlockK * kLdA];  // (kk, row)
  __shared__ __align__(16) float b_tile[Cfg::kBlockK * kLdB];  // (kk, col)

  constexpr int kThreadCols = Cfg::kBlockN / Cfg::kThreadN;
  const int tx = static_cast<int>(threadIdx.x) % kThreadCols;
  const int ty = static_cast<int>(threadIdx.x) / kThreadCols;
  const int row0 = static_cast<int>(blockIdx.y) * Cfg::kBlockM, col0 = static_cast<int>(blockIdx.x) * Cfg::kBlockN;

  float acc[Cfg::kThreadM][Cfg::kThreadN] = {};
  float a_reg[Cfg::kThreadM], b_reg[Cfg::kThreadN];
  for (int k0 = 0; k0 < p.k; k0 += Cfg::kBlockK) {
    load_tile_vec4_kmajor<Cfg::kBlockM, Cfg::kBlockK, Cfg::kThreads, a_is_k_contiguous<kTransA>>(
        p.a, p.lda, row0, k0, p.m, p.k, a_tile, kLdA);
    load_tile_vec4_kmajor<Cfg::kBlockN, Cfg::kBlockK, Cfg::kThreads, b_is_k_contiguous<kTransB>>(
        p.b, p.ldb, col0, k0, p.n, p.k, b_tile, kLdB);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockK; ++kk) {
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; i += 4)
        *reinterpret_cast<float4*>(&a_reg[i]) =
            *reinterpret_cast<const float4*>(&a_tile[kk * kLdA + ty * Cfg::kThreadM + i]);
#pragma unroll
      for (int j = 0; j < Cfg::kThreadN; j += 4)
        *reinterpret_cast<float4*>(&b_reg[j]) =
            *reinterpret_cast<const float4*>(&b_tile[kk * kLdB + tx * Cfg::kThreadN + j]);
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kThreadN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; j += 4)
      store_c4(p, row0 + ty * Cfg::kThreadM + i, col0 + tx * Cfg::kThreadN + j,
               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vec);
}

}  // namespace

std::string rect_tile_supports(const core::GemmArgs& args, const CudaContext&) {
  if (auto why = check_int_dims(args); !why.empty()) return why;
  if (auto why = check_vec4_operands(args); !why.empty()) return why;
  return check_grid(ceil_div<int64_t>(args.n, RectTileConfig::kBlockN),
                    ceil_div<int64_t>(args.m, RectTileConfig::kBlockM));
}

void rect_tile_run(const core::GemmArgs& args, const CudaContext& ctx) {
  using Cfg = RectTileConfig;
  const SgemmProblem p = make_problem(args);
  if (empty_output(p)) return;
  const dim3 grid(ceil_div(p.n, Cfg::kBlockN), ceil_div(p.m, Cfg::kBlockM));
  const bool c_vec = c_vector_ok(p);
  dispatch_layout(p.trans_a, p.trans_b, [&](auto ta, auto tb) {
    rect_tile_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, Cfg::kThreads, 0, ctx.stream>>>(p, c_vec);
  });
  GK_LAUNCH_CHECK();
}

}  // namespace gpukern::cuda::gemm
