// The public descriptor of an internal GEMM call, for tests that drive a rung through the
// C API with arguments built as the core hands them to rungs.
#pragma once

#include "core/types.hpp"

#include <gpukern/gpukern.h>

namespace gpukern::test {

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

}  // namespace gpukern::test
