// The CUDA-core GEMV path of rung 14 `skinny` (skinny_gemv.cuh; see 14_skinny.cu), in a unit
// of its own: the kernels for tf32 and exact f32 calls alike (both run as f32 FMAs).
#include "cuda/gemm/skinny/skinny_launch.cuh"

namespace gpukern::cuda::gemm {

bool try_skinny_gemv(const SkinnyCall& call, std::size_t elem_bytes, const CudaContext& ctx) {
  if (call.gemv_mode == SkinnyTmaMode::kOff) return false;
  const std::string refusal = skinny_gemv_refusal(call, elem_bytes);
  if (call.gemv_mode == SkinnyTmaMode::kForce) {
    if (!refusal.empty())
      throw core::Error(core::Status::InvalidArgument, "skinny: the GEMV path cannot run this call: " + refusal);
    launch_skinny_gemv(call, call.gemv_splits, ctx);
    return true;
  }
  if (!refusal.empty() || call.tma_mode != SkinnyTmaMode::kAuto) return false;
  const SkinnyGemvSetting setting = skinny_gemv_setting();
  if (setting.off) return false;
  launch_skinny_gemv(call, setting.splits, ctx);
  return true;
}

}  // namespace gpukern::cuda::gemm
