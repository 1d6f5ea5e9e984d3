// Rung 12 `wgmma_tma`, the 168-wide tile in clusters of 2 along M
// (sm90::WgmmaTmaWave168C2; see 12_wgmma_tma.cu for when the rung picks it), in its own
// translation unit so its kernels compile beside the others'. The tile takes 16-bit
// calls with K-major B (a linear layer's N x K weight) only (wgmma_wave_fits).
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {

void launch_wgmma_wave_c2(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  using Cfg = WgmmaConfig<sm90::WgmmaTmaWave168C2>;
  if (!wgmma_wave_fits(args))
    throw core::Error(core::Status::InternalError, "wgmma_tma: the 168-wide tile got a call it cannot run");
  const bool ak = a_is_k_major(args);
  gpu::with_storage_type(args.ab_type, [&](auto t) {
    using T = decltype(t);
    if constexpr (sizeof(T) == 2) {
      if (ak)
        launch_wgmma_layout<Cfg, WgmmaTmaPolicy, T, true, true>(args, ctx, ways);
      else
        launch_wgmma_layout<Cfg, WgmmaTmaPolicy, T, false, true>(args, ctx, ways);
    }
  });
}

}  // namespace gpukern::cuda::gemm
