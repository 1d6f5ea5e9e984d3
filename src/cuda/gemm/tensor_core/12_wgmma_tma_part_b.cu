// Rung 12 `wgmma_tma`, the tiles whose B is not whole 64-row boxes, in their own
// translation unit so their kernels compile beside the others' (see 12_wgmma_tma.cu for
// when the rung picks them): 128x168 in clusters of 2 along M (sm90::WgmmaTmaWave168C2)
// and 64x32 (sm90::WgmmaTmaThin). Both take 16-bit calls with K-major B (a linear
// layer's N x K weight) only (wgmma_k_major_b_fits).
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_wave_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaWave168C2>>(args, ctx, ways);
}

void launch_wgmma_thin(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaThin>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
