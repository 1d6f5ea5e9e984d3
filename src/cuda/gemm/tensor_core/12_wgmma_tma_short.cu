// Rung 12 `wgmma_tma`, the 64-row tile configurations (sm90::WgmmaTmaShort, 64x128,
// sm90::WgmmaTmaSmall, 64x64, and sm90::WgmmaTmaSmallC2, 64x64 in clusters of 2; see
// 12_wgmma_tma.cu for when the rung picks them), in their own translation unit so their
// kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_short(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaShort>>(args, ctx, ways);
}

void launch_wgmma_small(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaSmall>>(args, ctx, ways);
}

void launch_wgmma_small_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaSmallC2>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
