// Internal GEMM calls for tests (a call's arguments as the core hands them to rungs) and
// their public descriptors, for tests that drive a rung through the C API.
#pragma once

#include "core/types.hpp"

#include <gpukern/gpukern.h>

namespace gpukern::test {

/// A call without transposes, f32, alpha 1, beta 0, on the given storage.
inline core::GemmArgs gemm_args(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
                                void* c, int64_t ldc) {
  core::GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.c = c;
  g.ldc = ldc;
  return g;
}

/// `g` as a gk_gemm_desc with `variant` forced (nullptr: auto). gk_dtype and core::DType
/// share their values.
inline gk_gemm_desc gemm_desc(const core::GemmArgs& g, const char* variant) {
  auto type = [](core::DType t) { return static_cast<gk_dtype>(static_cast<int>(t)); };
  gk_gemm_desc d{};
  d.trans_a = g.trans_a ? GK_TRANS : GK_NO_TRANS;
  d.trans_b = g.trans_b ? GK_TRANS : GK_NO_TRANS;
  d.m = g.m;
  d.n = g.n;
  d.k = g.k;
  d.alpha = g.alpha;
  d.a = g.a;
  d.lda = g.lda;
  d.b = g.b;
  d.ldb = g.ldb;
  d.beta = g.beta;
  d.c = g.c;
  d.ldc = g.ldc;
  d.ab_type = type(g.ab_type);
  d.c_type = type(g.c_type);
  d.allow_tf32 = g.allow_tf32 ? 1 : 0;
  d.variant = variant;
  return d;
}

/// `g` as a gk_gemm_ex_desc, batches and epilogue included, with `variant` forced (nullptr:
/// auto): the plain fields of gemm_desc plus the extended ones.
inline gk_gemm_ex_desc gemm_ex_desc(const core::GemmArgs& g, const char* variant) {
  auto type = [](core::DType t) { return static_cast<gk_dtype>(static_cast<int>(t)); };
  const gk_gemm_desc plain = gemm_desc(g, variant);
  gk_gemm_ex_desc d;
  gk_gemm_ex_desc_init(&d);
  d.trans_a = plain.trans_a;
  d.trans_b = plain.trans_b;
  d.m = plain.m;
  d.n = plain.n;
  d.k = plain.k;
  d.alpha = plain.alpha;
  d.a = plain.a;
  d.lda = plain.lda;
  d.b = plain.b;
  d.ldb = plain.ldb;
  d.beta = plain.beta;
  d.c = plain.c;
  d.ldc = plain.ldc;
  d.ab_type = plain.ab_type;
  d.c_type = plain.c_type;
  d.allow_tf32 = plain.allow_tf32;
  d.variant = plain.variant;
  d.batch_count = g.batch;
  d.stride_a = g.stride_a;
  d.stride_b = g.stride_b;
  d.stride_c = g.stride_c;
  d.bias = g.bias;
  d.bias_length = g.bias ? g.n : 0;
  d.bias_type = type(g.bias_type);
  d.stride_bias = g.stride_bias;
  d.activation = static_cast<gk_activation>(static_cast<int>(g.act));
  return d;
}

}  // namespace gpukern::test
