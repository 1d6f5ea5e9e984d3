// GEMM conformance of the extended call (gk_gemm_ex): every (backend, rung, dtype) over
// strided batches (1, 3, 17 items; padded strides, a broadcast A or B, C rows of the items
// interleaved) and the fused epilogue (every activation, bias in f32 and in C's type, one
// bias for every item or one per item), against the double reference, with guard cells
// between the items. A rung runs what it fuses itself and the core decomposes the rest, so
// every rung must give the same answers. The cross product is sampled: each value of each
// dimension appears, cycled against the others, on small shapes.
#include "conformance/gemm_runner.hpp"
#include "conformance/params.hpp"

#include <gtest/gtest.h>

namespace gpukern::test {
namespace {

class GemmExConformance : public LadderTest {};

using Bias = GemmCase::Bias;

const bool kTransposes[4][2] = {{false, false}, {false, true}, {true, false}, {true, true}};

GemmCase transposed(GemmCase c, int which) {
  c.trans_a = kTransposes[which % 4][0];
  c.trans_b = kTransposes[which % 4][1];
  return c;
}

/// How the batch items lie in memory.
enum class Layout { Padded, BroadcastA, BroadcastB, InterleavedC };

GemmCase batched(GemmCase c, int64_t batch, Layout layout) {
  c.batch = batch;
  c.gap = layout == Layout::Padded ? 3 : layout == Layout::BroadcastB ? 5 : 0;
  c.broadcast_a = layout == Layout::BroadcastA;
  c.broadcast_b = layout == Layout::BroadcastB;
  c.interleaved_c = layout == Layout::InterleavedC;
  return c;
}

GemmCase scaled(GemmCase c, float alpha, float beta) {
  c.alpha = alpha;
  c.beta = beta;
  return c;
}

GemmCase with_epilogue(GemmCase c, Bias bias, bool per_item, gk_activation act) {
  c.bias = bias;
  c.bias_per_item = per_item;
  c.act = act;
  return c;
}

const Layout kLayouts[] = {Layout::Padded, Layout::BroadcastA, Layout::BroadcastB, Layout::InterleavedC};
const gk_activation kActivations[] = {GK_ACT_NONE, GK_ACT_RELU, GK_ACT_GELU_TANH, GK_ACT_GELU_ERF, GK_ACT_SILU};

// Batch counts 1, 3, 17 over every layout, transposes and alpha/beta cycled; beta = 0 cases
// start with NaN in every item of C.
TEST_P(GemmExConformance, Batches) {
  const GemmCase shapes[] = {shape(5, 7, 3), shape(13, 9, 11), shape(33, 17, 12), shape(8, 16, 8)};
  const float betas[] = {0.5f, 0.0f, -1.0f};
  std::vector<GemmCase> cases;
  int i = 0;
  for (int64_t batch : {1, 3, 17})
    for (Layout layout : kLayouts) {
      cases.push_back(scaled(transposed(batched(shapes[i % 4], batch, layout), i), -1.5f, betas[i % 3]));
      ++i;
    }
  // Items whose strides keep every item 16-byte aligned (what vectorized and tensor-core
  // rungs need), so the fusing rungs run rather than decline.
  GemmCase aligned = batched(shape(8, 16, 8), 3, Layout::Padded);
  aligned.gap = 8;
  cases.push_back(aligned);
  if (on_gpu()) {  // tiles and pipelines: more than one tile per item
    for (auto c :
         {batched(shape(64, 64, 32), 17, Layout::BroadcastB), batched(shape(128, 96, 64), 3, Layout::Padded),
          batched(shape(130, 70, 33), 17, Layout::InterleavedC), batched(shape(256, 128, 72), 3, Layout::BroadcastA)})
      for (int t : {0, 1}) {
        GemmCase g = transposed(c, t);
        if (g.gap) g.gap = 8;
        cases.push_back(scaled(g, 0.75f, t == 0 ? 0.0f : 1.0f));
      }
  }
  run_gemm_cases(GetParam(), cases);
}

// Every activation with every bias kind (none, f32, C's type; shared or per item), beta and
// the batch count cycled.
TEST_P(GemmExConformance, Epilogue) {
  const GemmCase shapes[] = {shape(13, 9, 11), shape(33, 17, 12), shape(8, 16, 8), shape(1, 33, 7)};
  struct BiasKind {
    Bias bias;
    bool per_item;
  };
  const BiasKind biases[] = {
      {Bias::None, false}, {Bias::F32, false}, {Bias::CType, true}, {Bias::F32, true}, {Bias::CType, false}};
  const float betas[] = {0.0f, 0.5f, -1.0f};
  std::vector<GemmCase> cases;
  int i = 0;
  for (gk_activation act : kActivations)
    for (const BiasKind& b : biases) {
      if (act == GK_ACT_NONE && b.bias == Bias::None) continue;  // the plain call
      GemmCase c = with_epilogue(transposed(shapes[i % 4], i), b.bias, b.per_item, act);
      c.batch = (i % 2 == 0) ? 1 : 3;
      cases.push_back(scaled(c, i % 3 == 0 ? 1.0f : -1.5f, betas[i % 3]));
      ++i;
    }
  // K = 0: C = act(beta * C + bias), and act(bias) alone at beta = 0.
  for (float beta : {0.5f, 0.0f}) {
    GemmCase c = with_epilogue(shape(7, 9, 0), Bias::F32, false, GK_ACT_SILU);
    c.beta = beta;
    cases.push_back(c);
  }
  if (on_gpu()) {
    for (gk_activation act : kActivations) {
      GemmCase c = with_epilogue(shape(256, 128, 64), Bias::F32, false, act);
      cases.push_back(scaled(transposed(c, 1), 1.0f, 0.0f));
      GemmCase d = with_epilogue(shape(136, 264, 72), Bias::CType, true, act);
      d.batch = 3;
      cases.push_back(scaled(d, -1.5f, 0.5f));
    }
  }
  run_gemm_cases(GetParam(), cases);
}

// The epilogue on every batch layout at 17 items: the bias must follow its item (or stay
// put), the output of one item must never reach another's.
TEST_P(GemmExConformance, EpilogueOverBatchLayouts) {
  std::vector<GemmCase> cases;
  int i = 0;
  for (Layout layout : kLayouts) {
    GemmCase c = batched(shape(13, 9, 11), 17, layout);
    c = with_epilogue(c, i % 2 ? Bias::CType : Bias::F32, i % 3 != 1, kActivations[1 + i % 4]);
    cases.push_back(scaled(transposed(c, i), 0.75f, i % 2 ? 0.0f : 1.0f));
    ++i;
  }
  if (on_gpu()) {
    GemmCase c = with_epilogue(batched(shape(128, 64, 40), 17, Layout::BroadcastB), Bias::F32, true, GK_ACT_GELU_TANH);
    c.gap = 8;
    cases.push_back(transposed(c, 1));
  }
  run_gemm_cases(GetParam(), cases);
}

// beta = +-0 must not read C in any item, decomposed or fused: every item starts as NaN.
TEST_P(GemmExConformance, BetaZeroIgnoresNanInEveryItem) {
  std::vector<GemmCase> cases;
  int i = 0;
  for (int64_t batch : {3, 17})
    for (float beta : {0.0f, -0.0f})
      for (bool epilogue : {false, true}) {
        GemmCase c = transposed(batched(shape(13, 9, 11), batch, kLayouts[i % 4]), i);
        if (epilogue) c = with_epilogue(c, Bias::CType, true, GK_ACT_RELU);
        cases.push_back(scaled(c, -1.5f, beta));
        ++i;
      }
  run_gemm_cases(GetParam(), cases);
}

INSTANTIATE_TEST_SUITE_P(Ladders, GemmExConformance, ::testing::ValuesIn(gemm_params()), ParamName());

}  // namespace
}  // namespace gpukern::test
