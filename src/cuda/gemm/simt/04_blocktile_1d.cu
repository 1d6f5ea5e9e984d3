// Rung 04 `blocktile_1d`: each thread computes a column of kThreadM outputs.
//
// Change from 03: instead of one output per thread, a thread owns kThreadM vertically
// adjacent outputs of one column. For each kk it reads its one B value once into a
// register and reuses it for kThreadM FMAs against kThreadM values of A, so shared-memory
// loads per FMA fall from 2 to (1 + kThreadM) / kThreadM. The block tile is rectangular
// in K (kBlockK = 8) so the shared tiles stay small and a block's copy is one element
// per thread.
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

struct Blocktile1dConfig {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 8;
  static constexpr int kThreadM = 8;  // outputs per thread, one column
  static constexpr int kThreads = kBlockM * kBlockN / kThreadM;
  static_assert(kBlockM % kThreadM == 0, "a thread's column of outputs must fit the block tile");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
  static_assert(kBlockM * kBlockK == kThreads && kBlockN * kBlockK == kThreads,
                "the copy assumes one element of each operand tile per thread");
};

template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(Blocktile1dConfig::kThreads) blocktile_1d_kernel(SgemmProblem p) {
  using Cfg = Blocktile1dConfig;
  __shared__ float a_tile[Cfg::kBlockM][Cfg::kBlockK];  // (row, kk)
  __shared__ float b_tile[Cfg::kBlockK][Cfg::kBlockN];  // (kk, col)

  const int tx = static_cast<int>(threadIdx.x) % Cfg::kBlockN;  // column in the tile
  const int ty = static_cast<int>(threadIdx.x) / Cfg::kBlockN;  // which group of kThreadM rows
  const int row0 = static_cast<int>(blockIdx.y) * Cfg::kBlockM, col0 = static_cast<int>(blockIdx.x) * Cfg::kBlockN;

  float acc[Cfg::kThreadM] = {};
  for (int k0 = 0; k0 < p.k; k0 += Cfg::kBlockK) {
    load_tile_scalar<Cfg::kBlockM, Cfg::kBlockK, Cfg::kThreads, a_is_k_contiguous<kTransA>>(
        p.a, p.lda, row0, k0, p.m, p.k, [&](int mn, int kk, float v) { a_tile[mn][kk] = v; });
    load_tile_scalar<Cfg::kBlockN, Cfg::kBlockK, Cfg::kThreads, b_is_k_contiguous<kTransB>>(
        p.b, p.ldb, col0, k0, p.n, p.k, [&](int mn, int kk, float v) { b_tile[kk][mn] = v; });
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockK; ++kk) {
      const float b = b_tile[kk][tx];  // reused for kThreadM FMAs
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; ++i) acc[i] += a_tile[ty * Cfg::kThreadM + i][kk] * b;
    }
    __syncthreads();
  }
  const int col = col0 + tx;
  if (col >= p.n) return;
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i) {
    const int row = row0 + ty * Cfg::kThreadM + i;
    if (row < p.m) store_c(p, row, col, acc[i]);
  }
}

}  // namespace

core::Verdict blocktile_1d_supports(const core::GemmArgs& args, const CudaContext&) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  return check_block_tile_grid<Blocktile1dConfig>(args);
}

void blocktile_1d_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  launch_block_tiles<Blocktile1dConfig>(
      p, ctx, [](auto ta, auto tb) { return blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value>; });
}

}  // namespace gpukern::cuda::gemm
