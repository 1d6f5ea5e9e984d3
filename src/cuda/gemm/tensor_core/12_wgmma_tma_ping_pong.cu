// Rung 12 `wgmma_tma`, the ping-pong configurations (sm90::WgmmaTmaPingPong and its
// clusters of 4; see 12_wgmma_tma.cu for when the rung picks them), in their own
// translation unit so their kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_ping_pong(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaPingPong>>(args, ctx, ways);
}

void launch_wgmma_ping_pong_c4(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaPingPongC4>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
