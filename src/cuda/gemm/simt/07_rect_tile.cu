// Rung 07 `rect_tile`: the kernel of 06 `vectorized` (06_vectorized.cuh) with another
// configuration: a 64 x 64 block tile and an 8 x 4 rectangular register tile.
//
// Change from 06: the rectangular register tile of the seed journey. Each thread keeps
// 8 rows x 4 columns of C; per kk it loads 8 values of A (two float4s) and 4 of B (one
// float4), so each B value feeds 8 FMAs. The block tile shrinks to 64 x 64 with 128
// threads and a deeper K step (16): four times as many blocks as 06, which fills all SMs
// on mid-sized problems and lets several blocks share an SM to hide each other's
// barrier stalls, at the price of more global and shared traffic per FMA than the
// 128 x 128 tile. Same float4 copy, K-major shared tiles and alignment rules as 06.
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/simt/06_vectorized.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// 64 x 64 block tile, the rectangular 8 x 4 register tile (128 threads), K step 16.
struct RectTileConfig : RegisterTileConfig</*block_m=*/64, /*block_n=*/64, /*block_k=*/16, /*thread_m=*/8,
                                           /*thread_n=*/4, /*pad=*/4> {};

}  // namespace

core::Verdict rect_tile_supports(const core::GemmArgs& args, const CudaContext&) {
  return register_tile_supports<RectTileConfig>(args);
}

void rect_tile_run(const core::GemmArgs& args, const CudaContext& ctx) {
  launch_register_tile<RectTileConfig>(args, ctx);
}

}  // namespace gpukern::cuda::gemm
