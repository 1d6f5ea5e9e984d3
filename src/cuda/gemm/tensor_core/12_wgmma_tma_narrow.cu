// Rung 12 `wgmma_tma`, the narrow configuration (sm90::WgmmaTmaNarrow, 128x64 tiles; see
// 12_wgmma_tma.cu for when the rung picks it), in its own translation unit so its kernels
// compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_narrow(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaNarrow>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
