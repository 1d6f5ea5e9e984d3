// Rung 12 `wgmma_tma`, the tiles in clusters of 2 along N that share A (sm90::PairedAlongN),
// in their own translation unit so their kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_mid_n2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaMidN2>>(args, ctx, ways);
}

void launch_wgmma_narrow_n2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaNarrowN2>>(args, ctx, ways);
}

void launch_wgmma_tall96_n2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaTall96N2>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
