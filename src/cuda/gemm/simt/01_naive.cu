// Rung 01 `naive`: one thread per element of C, the textbook triple loop.
//
// threadIdx.x walks the rows of C, so the 32 lanes of a warp read 32 different rows
// of A (a stride of lda floats apart: one 32-byte sector per lane per k) and write 32
// different rows of C. Every operand is re-read from global memory (through L1/L2) for
// every output: no reuse is arranged at all. This is the baseline the ladder climbs from.
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// Threads per block along each grid dimension (a square block of 32 x 32 threads).
struct NaiveConfig {
  static constexpr int kBlockRows = 32;
  static constexpr int kBlockCols = 32;
  static_assert(kBlockRows * kBlockCols <= 1024, "a thread block holds at most 1024 threads");
};

template <bool kTransA, bool kTransB>
__global__ void naive_kernel(SgemmProblem p) {
  // x -> row: neighbouring lanes touch neighbouring rows (the uncoalesced choice).
  const int row = static_cast<int>(blockIdx.x) * NaiveConfig::kBlockRows + static_cast<int>(threadIdx.x);
  const int col = static_cast<int>(blockIdx.y) * NaiveConfig::kBlockCols + static_cast<int>(threadIdx.y);
  if (row >= p.m || col >= p.n) return;
  float acc = 0.0f;
  for (int kk = 0; kk < p.k; ++kk) acc += load_a<kTransA>(p, row, kk) * load_b<kTransB>(p, kk, col);
  store_c(p, row, col, acc);
}

}  // namespace

core::Verdict naive_supports(const core::GemmArgs& args, const CudaContext&) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  return check_grid(ceil_div<int64_t>(args.m, NaiveConfig::kBlockRows),
                    ceil_div<int64_t>(args.n, NaiveConfig::kBlockCols));
}

void naive_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  const dim3 block(NaiveConfig::kBlockRows, NaiveConfig::kBlockCols);
  const dim3 grid(ceil_div(p.m, NaiveConfig::kBlockRows), ceil_div(p.n, NaiveConfig::kBlockCols));
  dispatch_layout(p.trans_a, p.trans_b, [&](auto ta, auto tb) {
    naive_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, block, 0, ctx.stream>>>(p);
  });
  GK_LAUNCH_CHECK();
}

}  // namespace gpukern::cuda::gemm
