// Rung 12 `wgmma_tma`, the ping-pong configuration (sm90::WgmmaTmaPingPong; see
// 12_wgmma_tma.cu for when the rung picks it), in its own translation unit so its
// kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_pingpong(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaPingPong>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
