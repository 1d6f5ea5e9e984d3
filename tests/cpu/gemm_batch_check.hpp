// One strided-batched GEMM case with the fused epilogue, for the CPU unit tests: random
// operands with padded, broadcast (stride 0) or transposed items, a bias in f32 or C's type
// (shared or per item), C poisoned with NaN when beta == 0, items of C apart or interleaved
// (rows of the items alternating), run through any entry point and checked against
// act(alpha * op(A_b) op(B_b) + beta * C_b + bias_b) in double; every cell of the C
// buffer that is no item's cell unchanged, bit for bit.
#pragma once

#include "core/activation.hpp"
#include "cpu_test_util.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace gpukern::cpu::test {

/// How an operand's items are laid out: apart with padding between them, or one item
/// shared by all (stride 0).
enum class ItemLayout { Padded, Broadcast };
/// How the items of C are laid out: apart (with padding), or row-interleaved.
enum class CLayout { Apart, Interleaved };

struct BatchCase {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool ta = false, tb = false;
  core::DType ab = core::DType::F32, c = core::DType::F32;
  float alpha = 1.0f, beta = 0.0f;
  ItemLayout a_items = ItemLayout::Padded, b_items = ItemLayout::Padded;
  CLayout c_items = CLayout::Apart;
  int bias = 0;  ///< 0: none, 1: f32, 2: C's type
  bool bias_per_item = false;
  core::Activation act = core::Activation::None;

  std::string describe() const {
    static const char* const kActs[] = {"none", "relu", "gelu_tanh", "gelu_erf", "silu"};
    return "batch " + std::to_string(batch) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + (ta ? " T" : " N") + (tb ? "T " : "N ") + core::dtype_name(ab) + "->" +
           core::dtype_name(c) + " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) +
           (a_items == ItemLayout::Broadcast ? " A shared" : "") +
           (b_items == ItemLayout::Broadcast ? " B shared" : "") +
           (c_items == CLayout::Interleaved ? " C interleaved" : "") +
           (bias == 0   ? ""
            : bias == 1 ? " bias f32"
                        : " bias c_type") +
           (bias_per_item ? " per item" : "") + " act " + kActs[static_cast<int>(act)];
  }
};

/// Runs `t` through `run` and checks it; `label` names the entry point in failures.
inline void check_batch(const BatchCase& t, const std::function<void(const core::GemmArgs&)>& run,
                        const std::string& label) {
  std::mt19937 rng(static_cast<unsigned>(t.batch * 7919 + t.m * 1000003 + t.n * 1009 + t.k));
  const int64_t a_rows = t.ta ? t.k : t.m, a_cols = t.ta ? t.m : t.k;
  const int64_t b_rows = t.tb ? t.n : t.k, b_cols = t.tb ? t.k : t.n;
  const int64_t lda = a_cols + 3, ldb = b_cols + 1;
  const int64_t stride_a = t.a_items == ItemLayout::Broadcast ? 0 : a_rows * lda + 5;
  const int64_t stride_b = t.b_items == ItemLayout::Broadcast ? 0 : b_rows * ldb + 2;
  // Apart: each item m rows of ldc = n + 2, then 7 cells; interleaved: row i of item b at
  // b * (n + 1) + i * ldc, ldc holding one row of every item plus 2 cells.
  const bool interleaved = t.c_items == CLayout::Interleaved;
  const int64_t stride_c = interleaved ? t.n + 1 : t.m * (t.n + 2) + 7;
  const int64_t ldc = interleaved ? (t.batch - 1) * stride_c + t.n + 2 : t.n + 2;
  const int64_t c_size = (t.batch - 1) * stride_c + t.m * ldc + ldc;  // + a guard row
  const int64_t items_a = t.a_items == ItemLayout::Broadcast ? 1 : t.batch;
  const int64_t items_b = t.b_items == ItemLayout::Broadcast ? 1 : t.batch;

  Stored a(t.ab, static_cast<std::size_t>(items_a * (a_rows * lda + 5)));
  Stored b(t.ab, static_cast<std::size_t>(items_b * (b_rows * ldb + 2)));
  Stored c(t.c, static_cast<std::size_t>(c_size));
  a.fill_random(rng);
  b.fill_random(rng);
  // Row padding of A and B holds NaN: a read outside an item spreads into the result.
  for (int64_t item = 0; item < items_a; ++item)
    for (int64_t r = 0; r < a_rows; ++r)
      for (int64_t j = a_cols; j < lda; ++j) a.set(item * stride_a + r * lda + j, NAN);
  for (int64_t item = 0; item < items_b; ++item)
    for (int64_t r = 0; r < b_rows; ++r)
      for (int64_t j = b_cols; j < ldb; ++j) b.set(item * stride_b + r * ldb + j, NAN);
  if (t.beta == 0.0f)
    c.fill_nan();
  else
    c.fill_random(rng);
  const Stored c_before = c;
  const core::DType bias_type = t.bias == 1 ? core::DType::F32 : t.c;
  const int64_t stride_bias = t.bias_per_item ? t.n + 3 : 0;
  Stored bias(bias_type, static_cast<std::size_t>((t.bias_per_item ? t.batch : 1) * (t.n + 3)));
  bias.fill_random(rng, -0.5f, 0.5f);

  core::GemmArgs g;
  g.trans_a = t.ta;
  g.trans_b = t.tb;
  g.m = t.m;
  g.n = t.n;
  g.k = t.k;
  g.alpha = t.alpha;
  g.beta = t.beta;
  g.a = a.data();
  g.lda = lda;
  g.b = b.data();
  g.ldb = ldb;
  g.c = c.data();
  g.ldc = ldc;
  g.ab_type = t.ab;
  g.c_type = t.c;
  g.batch = t.batch;
  g.stride_a = stride_a;
  g.stride_b = stride_b;
  g.stride_c = stride_c;
  g.bias = t.bias == 0 ? nullptr : bias.data();
  g.bias_type = bias_type;
  g.stride_bias = stride_bias;
  g.act = t.act;
  run(g);

  const std::string where = label + " " + t.describe();
  std::vector<bool> written(static_cast<std::size_t>(c_size), false);
  std::vector<double> ref, out;
  for (int64_t item = 0; item < t.batch; ++item)
    for (int64_t i = 0; i < t.m; ++i)
      for (int64_t j = 0; j < t.n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < t.k; ++p) {
          const double av = a.get(item * stride_a + (t.ta ? p * lda + i : i * lda + p));
          const double bv = b.get(item * stride_b + (t.tb ? j * ldb + p : p * ldb + j));
          acc += av * bv;
        }
        const int64_t at = item * stride_c + i * ldc + j;
        ASSERT_FALSE(written[at]) << where << ": the test's items of C overlap";
        written[at] = true;
        double v = t.alpha * acc + (t.beta == 0.0f ? 0.0 : t.beta * double(c_before.get(at)));
        if (t.bias != 0) v += bias.get(item * stride_bias + j);
        ref.push_back(core::activate_ref(v, static_cast<int>(t.act)));
        out.push_back(c.get(at));
      }
  EXPECT_LE(relative_error(ref, out), gemm_bound(t.ab, t.c)) << where;
  for (int64_t at = 0; at < c_size; ++at) {
    if (written[at]) continue;
    const bool same =
        t.c == core::DType::F32 ? c.words32[at] == c_before.words32[at] : c.words16[at] == c_before.words16[at];
    ASSERT_TRUE(same) << where << ": cell " << at << " outside every item of C written";
  }
}

}  // namespace gpukern::cpu::test
