// Rung 12 `wgmma_tma`, the C^T kernel of tf32 with N-contiguous B on its three tiles of C
// (256, 128 or 64 rows by 128 columns: sm90::WgmmaTf32NN, WgmmaTf32NNMid,
// WgmmaTf32NNShort; see 12_wgmma_tma.cu for when the rung picks each), in its own
// translation unit so its kernels compile beside the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_tf32_nn_large(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaTf32NN>>(args, ctx, ways);
}

void launch_wgmma_tf32_nn_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaTf32NNMid>>(args, ctx, ways);
}

void launch_wgmma_tf32_nn_short(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaTf32NNShort>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
