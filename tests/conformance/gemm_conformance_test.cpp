// GEMM conformance: every (backend, rung, dtype) over the same cases against the double
// reference (docs/design.md, "Numerics and tests"). Shapes are odd on purpose (not
// multiples of any tile) and small enough for the naive rungs on two CPU cores; GPU
// backends add larger shapes.
#include "conformance/gemm_runner.hpp"
#include "conformance/params.hpp"

#include <gtest/gtest.h>

namespace gpukern::test {
namespace {

class GemmConformance : public LadderTest {};

GemmCase transposed(GemmCase c, bool trans_a, bool trans_b) {
  c.trans_a = trans_a;
  c.trans_b = trans_b;
  return c;
}

const bool kTransposes[4][2] = {{false, false}, {false, true}, {true, false}, {true, true}};

TEST_P(GemmConformance, SquareAndOddShapes) {
  std::vector<GemmCase> cases = {
      shape(1, 1, 1),
      shape(7, 7, 7),
      shape(33, 33, 33),
      shape(127, 127, 127),
      shape(1, 33, 7),
      shape(33, 1, 127),
      shape(7, 33, 1),
      shape(1000, 7, 33),
      shape(33, 1000, 7),
      shape(7, 33, 1000),
      shape(2049, 33, 65),
      shape(33, 65, 2049),
      shape(64, 64, 64),
      shape(128, 256, 32),
      // Leading dimensions that are multiples of 8 (what vectorized and tensor-core rungs
      // need) with sizes that are not multiples of any tile.
      shape(8, 8, 8),
      shape(24, 40, 56),
      shape(136, 264, 72),
      shape(33, 64, 128),
  };
  if (on_gpu()) {  // the GPU rungs' tiles and pipelines need room to show their edges
    for (auto c : {shape(1000, 1000, 1000), shape(4097, 129, 257), shape(256, 384, 4097), shape(1024, 1024, 512),
                   shape(513, 1025, 777),
                   // more tiles than an H100 has SMs, K long enough: wgmma_tma splits the last round
                   shape(1500, 2900, 1100)})
      cases.push_back(c);
  }
  run_gemm_cases(GetParam(), cases);
}

TEST_P(GemmConformance, Transposes) {
  std::vector<GemmCase> cases;
  for (const auto& t : kTransposes)
    for (auto c : {shape(33, 7, 127), shape(127, 33, 65), shape(128, 64, 96), shape(1, 1000, 7), shape(136, 264, 72),
                   shape(24, 40, 56)})
      cases.push_back(transposed(c, t[0], t[1]));
  if (on_gpu())
    for (const auto& t : kTransposes) cases.push_back(transposed(shape(1000, 513, 1031), t[0], t[1]));
  run_gemm_cases(GetParam(), cases);
}

TEST_P(GemmConformance, AlphaBeta) {
  struct Scale {
    float alpha, beta;
  };
  const Scale scales[] = {{-1.5f, 0.5f}, {2.0f, -1.0f}, {0.75f, 1.0f}, {1.0f, 1.0f}, {0.0f, 0.5f}, {-0.0f, -1.0f}};
  std::vector<GemmCase> cases;
  for (const auto& t : kTransposes)
    for (const auto& s : scales) {
      GemmCase c = transposed(shape(33, 65, 127), t[0], t[1]);
      c.alpha = s.alpha;
      c.beta = s.beta;
      cases.push_back(c);
    }
  GemmCase small = shape(7, 1, 33);
  small.alpha = -1.5f;
  small.beta = 0.5f;
  cases.push_back(small);
  run_gemm_cases(GetParam(), cases);
}

// beta = 0 must not read C, whatever the sign of the zero: every case here starts with C
// full of NaN (the poison), which must neither survive nor propagate. cuBLAS read C for
// beta = -0.0 (so did auto, which picks it), on the shapes below among others.
TEST_P(GemmConformance, BetaZeroIgnoresNanInC) {
  std::vector<GemmCase> cases;
  for (const auto& t : kTransposes)
    for (float alpha : {1.0f, -1.5f, 0.0f, -0.0f})
      for (float beta : {0.0f, -0.0f}) {
        GemmCase c = transposed(shape(127, 33, 7), t[0], t[1]);
        c.alpha = alpha;
        c.beta = beta;
        cases.push_back(c);
      }
  for (GemmCase c : {shape(165, 17, 53), transposed(shape(99, 255, 19), true, false)}) {
    c.beta = -0.0f;
    cases.push_back(c);
  }
  if (on_gpu()) {
    GemmCase c = shape(2251, 293, 1024);
    c.beta = -0.0f;
    cases.push_back(c);
  }
  run_gemm_cases(GetParam(), cases);
}

// K = 0: C = beta * C (beta = +-0 gives zeros without reading C).
TEST_P(GemmConformance, KZeroScalesC) {
  std::vector<GemmCase> cases;
  for (float beta : {0.5f, 0.0f, 1.0f, -2.0f, -0.0f})
    for (const auto& t : kTransposes) {
      GemmCase c = transposed(shape(33, 7, 0), t[0], t[1]);
      c.alpha = 1.5f;
      c.beta = beta;
      cases.push_back(c);
    }
  run_gemm_cases(GetParam(), cases);
}

// M = 0 or N = 0: nothing to write; the guard check sees any stray write.
TEST_P(GemmConformance, EmptyOutputTouchesNothing) {
  std::vector<GemmCase> cases;
  for (auto c : {shape(0, 7, 5), shape(7, 0, 5), shape(0, 0, 5), shape(0, 0, 0)})
    for (float beta : {0.0f, 0.5f}) {
      c.beta = beta;
      cases.push_back(c);
    }
  run_gemm_cases(GetParam(), cases);
}

// Leading dimensions larger than the row: odd padding (misaligned rows) on an odd shape,
// and padding that keeps rows 32-byte aligned on a tile-friendly shape (so vectorized
// rungs are exercised, not declined).
TEST_P(GemmConformance, LeadingDimensions) {
  struct Padded {
    GemmCase shape;
    int64_t a, b, c;
  };
  const Padded padded[] = {
      {shape(33, 65, 17), 3, 5, 7}, {shape(33, 65, 17), 1, 0, 0},   {shape(33, 65, 17), 0, 1, 0},
      {shape(33, 65, 17), 0, 0, 1}, {shape(128, 64, 32), 8, 16, 8}, {shape(128, 64, 32), 64, 32, 16},
  };
  std::vector<GemmCase> cases;
  for (const auto& t : kTransposes)
    for (const auto& p : padded) {
      GemmCase c = transposed(p.shape, t[0], t[1]);
      c.pad_a = p.a;
      c.pad_b = p.b;
      c.pad_c = p.c;
      c.alpha = -1.5f;
      c.beta = 0.5f;
      cases.push_back(c);
    }
  // Operands that start off any alignment (an odd number of elements into their buffers).
  for (auto c : {shape(33, 65, 17), shape(128, 64, 32)}) {
    c.guard = 1;
    c.beta = 0.5f;
    cases.push_back(c);
  }
  run_gemm_cases(GetParam(), cases);
}

// The shape classes of LLM inference at reduced size: T tokens (A = activations, T x K)
// against a weight matrix B, stored K x N (NN) or N x K (NT, a linear layer's weight);
// odd T around the n8/m16 and 64-row boundaries, K not a multiple of any K block, N not a
// multiple of any tile; the transposed orientation (C = W X^T: the short side is n) and
// TN/TT for a few; one call whose rows are not 16-byte aligned (declined or computed).
TEST_P(GemmConformance, LlmShapeClasses) {
  struct WeightShape {
    int64_t n, k;
  };
  const WeightShape weights[] = {{384, 256}, {160, 1100}, {1031, 96}};
  std::vector<GemmCase> cases;
  for (int64_t t : {1, 2, 3, 8, 13, 16})  // decode: every class (long K at a few T), NN and NT
    for (const auto& w : weights)
      for (bool trans_b : {false, true})
        if (w.k < 1000 || t % 2 == 1) cases.push_back(transposed(shape(t, w.n, w.k), false, trans_b));
  cases.push_back(transposed(shape(33, 384, 256), false, true));   // past four n8 tiles
  cases.push_back(transposed(shape(65, 1031, 96), false, false));  // past 64
  for (int64_t t : {1, 5}) {
    cases.push_back(transposed(shape(384, t, 256), false, false));  // C = W X: the short side is n
    cases.push_back(transposed(shape(1031, t, 96), true, true));
    cases.push_back(transposed(shape(t, 384, 256), true, false));  // TN, TT
  }
  cases.push_back(transposed(shape(3, 160, 1100), true, true));
  if (on_gpu()) {  // the rest of the classes: too slow for the naive CPU rungs
    for (int64_t t : {33, 64, 65, 130})
      for (const auto& w : weights)
        for (bool trans_b : {false, true}) cases.push_back(transposed(shape(t, w.n, w.k), false, trans_b));
    cases.push_back(transposed(shape(384, 64, 256), false, false));
    cases.push_back(transposed(shape(1031, 64, 96), true, true));
    cases.push_back(transposed(shape(64, 384, 256), true, false));
    cases.push_back(transposed(shape(64, 160, 1100), true, true));
  }
  GemmCase scaled = transposed(shape(13, 1031, 96), false, true);
  scaled.alpha = -1.5f;
  scaled.beta = 0.5f;
  cases.push_back(scaled);
  GemmCase unaligned = transposed(shape(8, 384, 256), false, true);
  unaligned.pad_a = 1;  // lda = K + 1: rows of A off every 16-byte boundary
  unaligned.pad_c = 3;
  unaligned.beta = 1.0f;
  cases.push_back(unaligned);
  run_gemm_cases(GetParam(), cases);
}

INSTANTIATE_TEST_SUITE_P(Ladders, GemmConformance, ::testing::ValuesIn(gemm_params()), ParamName());

// A forced rung called with a storage type its dtypes string does not list declines.
class GemmUnlistedDtype : public GemmConformance {};

TEST_P(GemmUnlistedDtype, ForcedRungDeclines) { expect_gemm_declined(GetParam(), shape(33, 17, 9)); }

INSTANTIATE_TEST_SUITE_P(Ladders, GemmUnlistedDtype, ::testing::ValuesIn(gemm_unlisted_params()), ParamName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmUnlistedDtype);

}  // namespace
}  // namespace gpukern::test
