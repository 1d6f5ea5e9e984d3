// EXPERIMENT: tiles with two consumers side by side along N.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_short_pair(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaShortPair>>(args, ctx, ways);
}
void launch_wgmma_short_pair_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaShortPairC2>>(args, ctx, ways);
}
void launch_wgmma_mid_quad(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaMidQuad>>(args, ctx, ways);
}
void launch_wgmma_mid_quad_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaMidQuadC2>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
