// The fused epilogue's arithmetic, defined once for every backend: host code (CPU rungs,
// the core's tests) and device code (CUDA and HIP kernels) include this header.
//   out = act(acc + bias), acc = alpha * op(A) op(B) + beta * C, all in f32.
#pragma once

#include "core/types.hpp"

#include <cmath>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define GK_HOST_DEVICE __host__ __device__
#else
#define GK_HOST_DEVICE
#endif

namespace gpukern::core {

/// act(v) in f32 for the activation's integer value (Activation / gk_activation).
GK_HOST_DEVICE inline float activate(float v, int act) {
  switch (act) {
    case GK_ACT_RELU:
      return v <= 0.0f ? 0.0f : v;  // NaN propagates (as torch.relu), unlike fmaxf(v, 0)
    case GK_ACT_GELU_TANH: {
      const float kSqrt2OverPi = 0.7978845608028654f;
      return 0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
    }
    case GK_ACT_GELU_ERF:
      return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
    case GK_ACT_SILU:
      return v / (1.0f + expf(-v));
    default:
      return v;
  }
}

/// The same in double, for references (tests, checks).
inline double activate_ref(double v, int act) {
  switch (act) {
    case GK_ACT_RELU:
      return v <= 0.0 ? 0.0 : v;
    case GK_ACT_GELU_TANH:
      return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case GK_ACT_GELU_ERF:
      return 0.5 * v * (1.0 + std::erf(v * 0.7071067811865476));
    case GK_ACT_SILU:
      return v / (1.0 + std::exp(-v));
    default:
      return v;
  }
}

}  // namespace gpukern::core
