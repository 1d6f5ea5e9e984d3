// Rung 12 `wgmma_tma`, the store-bound configuration (sm90::WgmmaTmaStore; see
// 12_wgmma_tma.cu for when the rung picks it), in its own translation unit so its
// kernels compile beside the others'. Only 16-bit operands with C stored by TMA: the
// float instantiation of launch_wgmma below is never called (wgmma_store_fits).
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_store(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaStore>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
