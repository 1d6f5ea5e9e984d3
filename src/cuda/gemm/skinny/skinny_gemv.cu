// The CUDA-core GEMV path of rung 14 `skinny` (skinny_gemv.cuh; see 14_skinny.cu), in a unit
// of its own: the kernels for every element type (tf32 and exact f32 calls alike run as f32
// FMAs; f16 and bf16 elements are widened to f32 as they are loaded).
#include "cuda/gemm/skinny/skinny_launch.cuh"

namespace gpukern::cuda::gemm {

template <class T>
bool try_skinny_gemv(const SkinnyCall& call, const CudaContext& ctx) {
  if (call.gemv_mode == SkinnyTmaMode::kOff) return false;
  const std::string refusal = skinny_gemv_refusal(call);
  if (call.gemv_mode == SkinnyTmaMode::kForce) {
    if (!refusal.empty())
      throw core::Error(core::Status::InvalidArgument, "skinny: the GEMV path cannot run this call: " + refusal);
    launch_skinny_gemv<T>(call, call.gemv_splits, ctx, call.gemv_evict_first);
    return true;
  }
  if (!refusal.empty() || call.tma_mode != SkinnyTmaMode::kAuto) return false;
  const SkinnyGemvSetting setting = skinny_gemv_setting();
  if (setting.off || (!setting.all && !skinny_gemv_policy(call, gpu::storage_dtype<T>(), ctx.arch.mem_gbps)))
    return false;
  launch_skinny_gemv<T>(call, setting.splits, ctx);
  return true;
}

template bool try_skinny_gemv<float>(const SkinnyCall&, const CudaContext&);
template bool try_skinny_gemv<gpu::half_t>(const SkinnyCall&, const CudaContext&);
template bool try_skinny_gemv<gpu::bf16_t>(const SkinnyCall&, const CudaContext&);

}  // namespace gpukern::cuda::gemm
