// EXPERIMENT: taller tiles over a 128-wide B (attention's P V at d = 128).
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_tall128_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<WgmmaConfig<sm90::WgmmaTmaTall128C2>>(args, ctx, ways);
}

}  // namespace gpukern::cuda::gemm
