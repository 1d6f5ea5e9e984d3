// Hardware approximations of transcendental functions (the special-function unit).
#pragma once

#include "cuda/arch/vendor.cuh"

namespace gpukern::cuda::arch {

/// 2^v by the hardware approximation, subnormals flushed: one MUFU.EX2 (relative error
/// about 2^-22). 2^-inf = 0. HIP: exp2f.
__device__ __forceinline__ float ex2_approx(float v) {
#if defined(GPUKERN_HIP)
  return exp2f(v);
#else
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
#endif
}

/// tanh(v) by the hardware approximation: one MUFU.TANH (sm_75+; maximum relative error
/// about 2^-11). tanh(+-inf) = +-1, NaN propagates. HIP and older targets: tanhf.
__device__ __forceinline__ float tanh_approx(float v) {
#if defined(GPUKERN_HIP) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750)
  return tanhf(v);
#else
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
#endif
}

}  // namespace gpukern::cuda::arch
