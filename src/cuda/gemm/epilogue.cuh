// The fused GEMM epilogue and batch addressing as kernels see them, shared by every CUDA
// (and HIP) rung that fuses them: C = act(alpha*acc + beta*C + bias) computed in f32,
// rounded once to C's type; batch item b's operands at base + b * stride.
#pragma once

#include "core/activation.hpp"
#include "cuda/arch/fast_math.cuh"
#include "cuda/portable.cuh"

#include <cstdint>
#include <type_traits>

namespace gpukern::cuda::gemm {

/// Passed by value to kernels: the bias (nullptr = none) and the activation.
struct Epilogue {
  const void* bias = nullptr;
  int64_t stride_bias = 0;  ///< elements between batch items' bias vectors (0 = shared)
  int bias_type = GK_F32;   ///< gk_dtype of the bias
  int act = GK_ACT_NONE;    ///< gk_activation

  __host__ __device__ bool active() const { return bias != nullptr || act != GK_ACT_NONE; }

  /// bias[col] of batch item `batch` in f32 (0 without a bias).
  __device__ __forceinline__ float bias_at(int64_t batch, int64_t col) const {
    if (bias == nullptr) return 0.0f;
    const int64_t i = batch * stride_bias + col;
    if (bias_type == GK_F16) return gpu::to_float(static_cast<const gpu::half_t*>(bias)[i]);
    if (bias_type == GK_BF16) return gpu::to_float(static_cast<const gpu::bf16_t*>(bias)[i]);
    return static_cast<const float*>(bias)[i];
  }

  /// act(v + bias[col]) for a value that already holds alpha*acc + beta*C.
  __device__ __forceinline__ float apply(float v, int64_t batch, int64_t col) const {
    return core::activate(v + bias_at(batch, col), act);
  }
};

/// Calls f(std::integral_constant<int, act>{}) for the runtime activation `act`: the one
/// switch wherever code is specialized per activation (the epilogue pass's kernels,
/// wgmma_tma's unrolled epilogue), so each specialization carries no branch per value.
template <class F>
__host__ __device__ __forceinline__ void with_activation(int act, F&& f) {
  switch (act) {
    case GK_ACT_RELU:
      f(std::integral_constant<int, GK_ACT_RELU>{});
      break;
    case GK_ACT_GELU_TANH:
      f(std::integral_constant<int, GK_ACT_GELU_TANH>{});
      break;
    case GK_ACT_GELU_ERF:
      f(std::integral_constant<int, GK_ACT_GELU_ERF>{});
      break;
    case GK_ACT_SILU:
      f(std::integral_constant<int, GK_ACT_SILU>{});
      break;
    default:
      f(std::integral_constant<int, GK_ACT_NONE>{});
  }
}

/// act(v) (activation `kAct`, known at compile time) for the tensor-core rungs, whose
/// products are tf32 or 16-bit: the same formulas as core::activate with the hardware
/// approximations of the special-function unit, each well below tf32's rounding (2^-11)
/// and the 16-bit types': GELU (tanh) with one MUFU.TANH (relative error about 2^-11
/// on the tanh, at most 2^-12 of the result); SiLU dividing by 1 + exp(-v) with the fast
/// exp and reciprocal; GELU (erf) with the erf of Abramowitz and Stegun 7.1.26 (absolute
/// error at most 1.5e-7), one reciprocal and one exp. No branch; a handful of
/// instructions a value, so an epilogue over a whole tile stays short.
template <int kAct>
__device__ __forceinline__ float activate_tc(float v) {
  if constexpr (kAct == GK_ACT_RELU) {
    return v <= 0.0f ? 0.0f : v;  // NaN propagates
  } else if constexpr (kAct == GK_ACT_GELU_TANH) {
    const float half = 0.5f * v;
    const float u = v * (0.7978845608028654f + 0.0356774081363001f * v * v);  // sqrt(2/pi) (v + 0.044715 v^3)
    return fmaf(half, arch::tanh_approx(u), half);
  } else if constexpr (kAct == GK_ACT_GELU_ERF) {
    const float x = fabsf(v) * 0.7071067811865476f;  // |v| / sqrt(2)
    const float t = __fdividef(1.0f, fmaf(0.3275911f, x, 1.0f));
    const float poly =
        t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 1.061405429f, -1.453152027f), 1.421413741f), -0.284496736f), 0.254829592f);
    const float erf_abs = fmaf(-poly, __expf(-x * x), 1.0f);  // erf(|v| / sqrt(2))
    const float half = 0.5f * v;
    return fmaf(half, copysignf(erf_abs, v), half);  // 0.5 v (1 + erf(v / sqrt(2)))
  } else if constexpr (kAct == GK_ACT_SILU) {
    return __fdividef(v, 1.0f + __expf(-v));  // v / inf = 0 for very negative v
  } else {
    return v;
  }
}

/// The epilogue of a validated call (empty when it has none).
inline Epilogue epilogue_of(const core::GemmArgs& a) {
  Epilogue e;
  e.bias = a.bias;
  e.stride_bias = a.stride_bias;
  e.bias_type = static_cast<int>(a.bias_type);
  e.act = static_cast<int>(a.act);
  return e;
}

/// Batch strides in elements, passed by value to kernels (all 0 for an unbatched call).
struct BatchStrides {
  int64_t a = 0, b = 0, c = 0;
};
inline BatchStrides batch_strides_of(const core::GemmArgs& g) { return {g.stride_a, g.stride_b, g.stride_c}; }

}  // namespace gpukern::cuda::gemm
