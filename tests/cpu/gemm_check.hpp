// One GEMM case of the CPU unit tests, run through any entry point (a rung's algorithm with
// a forced kernel and blocking) and checked against a double-precision reference: random
// inputs with padded leading dimensions, C poisoned with NaN when beta == 0, and every
// cell outside the m x n result (the padding between rows and a guard row after the last)
// unchanged, bit for bit.
#pragma once

#include "cpu_test_util.hpp"
#include "support/gemm_desc.hpp"

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace gpukern::cpu::test {

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  core::DType ab, c;
  float alpha, beta;
};

inline std::string describe(const GemmCase& t) {
  return std::to_string(t.m) + "x" + std::to_string(t.n) + "x" + std::to_string(t.k) + (t.ta ? " T" : " N") +
         (t.tb ? "T " : "N ") + core::dtype_name(t.ab) + "->" + core::dtype_name(t.c) + " alpha " +
         std::to_string(t.alpha) + " beta " + std::to_string(t.beta);
}

/// A call without transposes, f32, alpha 1, beta 0, on the given storage, and the same
/// call for the public C API (tests/support).
using gpukern::test::gemm_args;
using gpukern::test::gemm_desc;

/// Runs `t` through `run` and checks it; `label` names the entry point in failures.
inline void check_gemm(const GemmCase& t, const std::function<void(const core::GemmArgs&)>& run,
                       const std::string& label) {
  std::mt19937 rng(static_cast<unsigned>(t.m * 1000003 + t.n * 1009 + t.k));
  const int64_t a_rows = t.ta ? t.k : t.m, a_cols = t.ta ? t.m : t.k;
  const int64_t b_rows = t.tb ? t.n : t.k, b_cols = t.tb ? t.k : t.n;
  const int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = t.n + 2;               // strided leading dimensions
  Stored a(t.ab, a_rows * lda), b(t.ab, b_rows * ldb), c(t.c, (t.m + 1) * ldc);  // + a guard row
  a.fill_random(rng);
  b.fill_random(rng);
  if (t.beta == 0.0f)
    c.fill_nan();
  else
    c.fill_random(rng);
  const Stored c_before = c;

  core::GemmArgs g = gemm_args(t.m, t.n, t.k, a.data(), lda, b.data(), ldb, c.data(), ldc);
  g.trans_a = t.ta;
  g.trans_b = t.tb;
  g.alpha = t.alpha;
  g.beta = t.beta;
  g.ab_type = t.ab;
  g.c_type = t.c;
  run(g);

  std::vector<double> ref(t.m * t.n), out(t.m * t.n);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < t.k; ++p) {
        const double av = t.ta ? a.get(p * lda + i) : a.get(i * lda + p);
        const double bv = t.tb ? b.get(j * ldb + p) : b.get(p * ldb + j);
        acc += av * bv;
      }
      ref[i * t.n + j] = t.alpha * acc + (t.beta == 0.0f ? 0.0 : t.beta * double(c_before.get(i * ldc + j)));
      out[i * t.n + j] = c.get(i * ldc + j);
    }
  const std::string where = label + " " + describe(t);
  EXPECT_LE(relative_error(ref, out), gemm_bound(t.ab, t.c)) << where;
  // Padding between rows and the guard row: untouched.
  for (int64_t i = 0; i <= t.m; ++i)
    for (int64_t j = i < t.m ? t.n : 0; j < ldc; ++j) {
      const std::size_t idx = i * ldc + j;
      const bool same =
          t.c == core::DType::F32 ? c.words32[idx] == c_before.words32[idx] : c.words16[idx] == c_before.words16[idx];
      ASSERT_TRUE(same) << where << ": cell outside C written at " << i << "," << j;
    }
}

struct TypePair {
  core::DType ab, c;
};
/// Every storage combination of the CPU backend: C in the input type or f32.
constexpr TypePair kTypePairs[] = {{core::DType::F32, core::DType::F32},
                                   {core::DType::F16, core::DType::F16},
                                   {core::DType::F16, core::DType::F32},
                                   {core::DType::BF16, core::DType::BF16},
                                   {core::DType::BF16, core::DType::F32}};

}  // namespace gpukern::cpu::test
