// Rung 12 `wgmma_tma`, the 192x96 tiles in clusters of 2 along M, in their own translation
// unit so their kernels compile beside the others' (see 12_wgmma_tma.cu for when the rung
// picks them): sm90::WgmmaTmaTall96C2, B as two whole boxes (every call), and
// sm90::WgmmaTmaTall96KC2, B as its 96 rows (16-bit calls with K-major B only,
// wgmma_k_major_b_fits).
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_tall96_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaTall96C2>>(args, ctx, ways);
}

void launch_wgmma_tall96_kc2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaTall96KC2>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
