// Rung 05 `blocktile_2d`: each thread computes a kThreadM x kThreadN square of outputs.
//
// Change from 04: a thread now owns an 8 x 8 block of C. Per kk it loads 8 values of A
// and 8 of B from shared memory into registers and performs their outer product: 64
// FMAs for 16 shared loads (04: 8 FMAs for 9 loads). The block tile grows to 128 x 128
// so each element copied from global memory serves 128 outputs, halving global traffic
// per FMA again. The accumulators live in registers; shared memory now feeds them
// rather than bounding them.
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

struct Blocktile2dConfig {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "the per-thread tile must divide the block tile");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
};

template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(Blocktile2dConfig::kThreads) blocktile_2d_kernel(SgemmProblem p) {
  using Cfg = Blocktile2dConfig;
  __shared__ float a_tile[Cfg::kBlockM][Cfg::kBlockK];  // (row, kk)
  __shared__ float b_tile[Cfg::kBlockK][Cfg::kBlockN];  // (kk, col)

  constexpr int kThreadCols = Cfg::kBlockN / Cfg::kThreadN;
  const int tx = static_cast<int>(threadIdx.x) % kThreadCols;
  const int ty = static_cast<int>(threadIdx.x) / kThreadCols;
  const int row0 = static_cast<int>(blockIdx.y) * Cfg::kBlockM, col0 = static_cast<int>(blockIdx.x) * Cfg::kBlockN;

  float acc[Cfg::kThreadM][Cfg::kThreadN] = {};
  float a_reg[Cfg::kThreadM], b_reg[Cfg::kThreadN];
  for (int k0 = 0; k0 < p.k; k0 += Cfg::kBlockK) {
    load_tile_scalar<Cfg::kBlockM, Cfg::kBlockK, Cfg::kThreads, a_is_k_contiguous<kTransA>>(
        p.a, p.lda, row0, k0, p.m, p.k, [&](int mn, int kk, float v) { a_tile[mn][kk] = v; });
    load_tile_scalar<Cfg::kBlockN, Cfg::kBlockK, Cfg::kThreads, b_is_k_contiguous<kTransB>>(
        p.b, p.ldb, col0, k0, p.n, p.k, [&](int mn, int kk, float v) { b_tile[kk][mn] = v; });
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockK; ++kk) {
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; ++i) a_reg[i] = a_tile[ty * Cfg::kThreadM + i][kk];
#pragma unroll
      for (int j = 0; j < Cfg::kThreadN; ++j) b_reg[j] = b_tile[kk][tx * Cfg::kThreadN + j];
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kThreadN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i) {
    const int row = row0 + ty * Cfg::kThreadM + i;
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; ++j) {
      const int col = col0 + tx * Cfg::kThreadN + j;
      if (row < p.m && col < p.n) store_c(p, row, col, acc[i][j]);
    }
  }
}

}  // namespace

core::Verdict blocktile_2d_supports(const core::GemmArgs& args, const CudaContext&) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  return check_block_tile_grid<Blocktile2dConfig>(args);
}

void blocktile_2d_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  launch_block_tiles<Blocktile2dConfig>(
      p, ctx, [](auto ta, auto tb) { return blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value>; });
}

}  // namespace gpukern::cuda::gemm
