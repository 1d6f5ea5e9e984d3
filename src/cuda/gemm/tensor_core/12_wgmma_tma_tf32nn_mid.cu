// Rung 12 `wgmma_tma`, the C^T kernel of tf32 with N-contiguous B on 128 x 128 and 64 x
// 128 tiles of C (sm90::WgmmaTf32NNMid, WgmmaTf32NNShort; see 12_wgmma_tma.cu for when the
// rung picks them), in its own translation unit so its kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_tf32_nn_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaTf32NNMid>>(args, ctx, ways);
}

void launch_wgmma_tf32_nn_short(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaTf32NNShort>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
