// Rung 12 `wgmma_tma`, the C^T configuration (sm90::WgmmaTmaTransposed: the call's
// transposed call on the large tile, C written transposed; see 12_wgmma_tma.cu for when
// the rung picks it), in its own translation unit so its kernels compile beside the
// others'.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_transposed(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaTransposed>, WgmmaTmaPolicy, true>(wgmma_transposed_call(args), ctx, ways);
}

}  // namespace gpukern::cuda::gemm
