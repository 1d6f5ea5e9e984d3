// Rung 02 `coalesced`: the naive loop with the thread mapping turned around.
//
// Change from 01: threadIdx.x now walks the columns of C. A warp's 32 lanes read 32
// consecutive floats of a row of B (one 128-byte transaction instead of 32 sectors),
// all read the same element of A (a broadcast), and write 32 consecutive floats of C.
// Same arithmetic, a fraction of the memory transactions.
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// For a warp of kWarp lanes (the device's: gpu::with_warp_size).
template <int kWarp>
struct CoalescedConfig {
  /// One warp spans consecutive columns, so its loads of B and stores of C coalesce.
  static constexpr int kBlockCols = kWarp;
  static constexpr int kBlockRows = 1024 / kWarp;
  static_assert(kBlockRows * kBlockCols <= 1024, "a thread block holds at most 1024 threads");
};

template <int kWarp, bool kTransA, bool kTransB>
__global__ void coalesced_kernel(SgemmProblem p) {
  if constexpr (!gpu::warp_size_compiled<kWarp>()) return;  // never launched on this target
  using Cfg = CoalescedConfig<kWarp>;
  const int col = static_cast<int>(blockIdx.x) * Cfg::kBlockCols + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * Cfg::kBlockRows + static_cast<int>(threadIdx.y);
  if (row >= p.m || col >= p.n) return;
  float acc = 0.0f;
  for (int kk = 0; kk < p.k; ++kk) acc += load_a<kTransA>(p, row, kk) * load_b<kTransB>(p, kk, col);
  store_c(p, row, col, acc);
}

}  // namespace

core::Verdict coalesced_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  core::Verdict why;
  gpu::with_warp_size(ctx.warp_size, [&](auto warp) {
    using Cfg = CoalescedConfig<decltype(warp)::value>;
    why = check_grid(ceil_div<int64_t>(args.n, Cfg::kBlockCols), ceil_div<int64_t>(args.m, Cfg::kBlockRows));
  });
  return why;
}

void coalesced_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  gpu::with_warp_size(ctx.warp_size, [&](auto warp) {
    constexpr int kWarp = decltype(warp)::value;
    using Cfg = CoalescedConfig<kWarp>;
    const dim3 block(Cfg::kBlockCols, Cfg::kBlockRows);
    const dim3 grid(ceil_div(p.n, Cfg::kBlockCols), ceil_div(p.m, Cfg::kBlockRows));
    dispatch_layout(p.trans_a, p.trans_b, [&](auto ta, auto tb) {
      coalesced_kernel<kWarp, decltype(ta)::value, decltype(tb)::value><<<grid, block, 0, ctx.stream>>>(p);
    });
  });
  GK_LAUNCH_CHECK();
}

}  // namespace gpukern::cuda::gemm
