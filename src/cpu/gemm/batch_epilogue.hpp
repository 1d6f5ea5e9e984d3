// Strided batches and the fused epilogue as the CPU GEMM rungs take them: one batch item
// as an unbatched call, the item's bias in f32, and the epilogue over a row of f32 values
// (core/activation.hpp's arithmetic: out = act(v + bias[j]), in f32, before C is rounded).
#pragma once

#include "core/activation.hpp"
#include "core/types.hpp"
#include "cpu/element.hpp"
#include "cpu/scratch.hpp"

#include <cmath>
#include <cstdint>

namespace gpukern::cpu {

/// Batch item `item` of `g` as an unbatched call: operands at base + item * stride
/// (elements), the item's bias vector, batch = 1.
inline core::GemmArgs batch_item(const core::GemmArgs& g, int64_t item) {
  core::GemmArgs one = g;
  const auto at = [item](const void* p, int64_t stride, core::DType t) -> const char* {
    return p ? static_cast<const char*>(p) + item * stride * static_cast<int64_t>(core::dtype_size(t)) : nullptr;
  };
  one.a = at(g.a, g.stride_a, g.ab_type);
  one.b = at(g.b, g.stride_b, g.ab_type);
  one.c = const_cast<char*>(at(g.c, g.stride_c, g.c_type));
  one.bias = at(g.bias, g.stride_bias, g.bias_type);
  one.batch = 1;
  one.stride_a = one.stride_b = one.stride_c = one.stride_bias = 0;
  return one;
}

/// The bias of an unbatched call as f32 (n values): the caller's own vector when it is
/// f32, else converted into `buffer`. nullptr when the call has none.
inline const float* bias_f32(const core::GemmArgs& item, ScratchBuffer& buffer) {
  if (item.bias == nullptr) return nullptr;
  if (item.bias_type == core::DType::F32) return static_cast<const float*>(item.bias);
  float* out = buffer.get(static_cast<std::size_t>(item.n));
  with_element_type(item.bias_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(item.bias);
    for (int64_t j = 0; j < item.n; ++j) out[j] = to_float(in[j]);
  });
  return out;
}

/// The tanh-form GELU, 0.5 v (1 + tanh(u)) with u = sqrt(2/pi) (v + 0.044715 v^3), as the
/// equal v / (1 + exp(-2u)): one expf instead of tanhf, which glibc computes several times
/// slower (the epilogue runs once per element of C). Within a few ulps of
/// core::activate's form; for u -> -inf it tends to -0, for u -> +inf to v.
inline float gelu_tanh(float v) {
  const float kSqrt2OverPi = 0.7978845608028654f;
  const float u = kSqrt2OverPi * (v + 0.044715f * v * v * v);
  return v / (1.0f + std::exp(-2.0f * u));
}

/// The epilogue of one call in f32: bias (nullptr: none) and activation.
struct RowEpilogue {
  const float* bias = nullptr;  ///< bias[j] for column j of C
  core::Activation act = core::Activation::None;

  bool active() const { return bias != nullptr || act != core::Activation::None; }

  /// v[j] = act(v[j] + bias[col0 + j]) for j < count. The activation is chosen once per
  /// row, so each loop is a plain elementwise loop the compiler can vectorize.
  void apply(float* v, int64_t col0, int64_t count) const {
    if (bias != nullptr)
      for (int64_t j = 0; j < count; ++j) v[j] += bias[col0 + j];
    switch (act) {
      case core::Activation::None:
        return;
      case core::Activation::Relu:
        for (int64_t j = 0; j < count; ++j) v[j] = core::activate(v[j], GK_ACT_RELU);
        return;
      case core::Activation::GeluTanh:
        for (int64_t j = 0; j < count; ++j) v[j] = gelu_tanh(v[j]);
        return;
      default:
        for (int64_t j = 0; j < count; ++j) v[j] = core::activate(v[j], static_cast<int>(act));
        return;
    }
  }
};

/// C = act(beta * C + bias) over an unbatched call's m x n C, rounded once: what a rung
/// that fuses the epilogue computes when k == 0 (beta == 0 never reads C).
inline void scale_c_with_epilogue(const core::GemmArgs& g, const RowEpilogue& epi) {
  with_element_type(g.c_type, [&](auto tag) {
    using C = decltype(tag);
    C* c = static_cast<C*>(g.c);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        C& out = c[i * g.ldc + j];
        float v = g.beta == 0.0f ? 0.0f : g.beta * to_float(out);
        epi.apply(&v, j, 1);
        out = from_float<C>(v);
      }
  });
}

}  // namespace gpukern::cpu
