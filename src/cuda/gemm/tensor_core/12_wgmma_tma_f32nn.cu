// Rung 12 `wgmma_tma`, the C^T kernel in exact f32 (3xTF32) on its two tiles of C (128 or
// 64 rows by 128 columns: sm90::WgmmaF32NNMid, WgmmaF32NNShort; see 12_wgmma_tma.cu for
// when the rung picks each), in its own translation unit so its kernels compile beside
// the others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_f32_nn_mid(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaF32NNMid>>(args, ctx, ways);
}

void launch_wgmma_f32_nn_short(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma_tf32_nn<WgmmaConfig<sm90::WgmmaF32NNShort>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
