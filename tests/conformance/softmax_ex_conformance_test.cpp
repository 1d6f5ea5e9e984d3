// Softmax conformance of the extended call (gk_softmax_ex): every (backend, rung, dtype)
// over strided batches (broadcast x included), the input scale, the causal mask with
// negative, zero and positive offsets (rows that keep no column among them), log-softmax
// and in place, against the double reference. A rung without the scale or the mask must
// decline them (Feature), and auto must then find one that runs them.
#include "conformance/params.hpp"
#include "conformance/softmax_runner.hpp"

#include <gtest/gtest.h>

namespace gpukern::test {
namespace {

class SoftmaxExConformance : public LadderTest {};

SoftmaxCase batched(SoftmaxCase c, int64_t batch, int64_t gap, bool broadcast_x = false) {
  c.batch = batch;
  c.gap = gap;
  c.broadcast_x = broadcast_x;
  return c;
}

SoftmaxCase causal(SoftmaxCase c, int64_t offset) {
  c.causal = true;
  c.causal_offset = offset;
  return c;
}

SoftmaxCase logged(SoftmaxCase c, bool log_softmax) {
  c.log_softmax = log_softmax;
  return c;
}

TEST_P(SoftmaxExConformance, Batches) {
  const SoftmaxCase shapes[] = {shape(5, 7), shape(33, 127), shape(7, 2049), shape(16, 64)};
  std::vector<SoftmaxCase> cases;
  int i = 0;
  for (int64_t batch : {1, 3, 17})
    for (int64_t gap : {0, 3})
      for (bool broadcast : {false, true}) {
        cases.push_back(logged(batched(shapes[i % 4], batch, gap, broadcast), i % 3 == 2));
        ++i;
      }
  SoftmaxCase aligned = batched(shape(16, 64), 3, 8);  // every item 16-byte aligned
  aligned.pad_x = aligned.pad_y = 8;
  cases.push_back(aligned);
  if (on_gpu())
    for (auto c :
         {batched(shape(64, 1024), 17, 0), batched(shape(4, 4097), 3, 5), batched(shape(1024, 128), 3, 0, true)})
      cases.push_back(c);
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxExConformance, Scale) {
  std::vector<SoftmaxCase> cases;
  int i = 0;
  for (float scale : {0.125f, 3.0f})
    for (auto c : {shape(33, 127), shape(7, 2049), shape(1, 1), shape(64, 256)})
      for (bool log_softmax : {false, true}) {
        // No values near 1000 here: rounding scale * x to f32 moves it by up to 2^-24 |scale * x|,
        // which at 3000 exceeds the f32 bound on its own (the unscaled group checks overflow).
        c.scale = scale;
        if (i % 3 == 0) c.special = Special::SomeNegativeInfinity;
        cases.push_back(logged(c, log_softmax));
        ++i;
      }
  SoftmaxCase batch = batched(shape(13, 40), 3, 2);
  batch.scale = 0.125f;
  cases.push_back(batch);
  if (on_gpu()) {
    SoftmaxCase big = shape(8, 32769);
    big.scale = 3.0f;
    cases.push_back(big);
  }
  run_softmax_cases(GetParam(), cases);
}

// Offsets -2 (the first two rows keep no column), 0 (the square attention mask) and 5;
// more rows than columns, a row of -inf among the kept columns (NaN row) and a NaN that
// may fall in the masked part (which is never read).
TEST_P(SoftmaxExConformance, CausalMask) {
  std::vector<SoftmaxCase> cases;
  int i = 0;
  for (int64_t offset : {-2, 0, 5})
    for (auto c : {shape(7, 7), shape(33, 17), shape(5, 40), shape(17, 2049)})
      for (bool log_softmax : {false, true}) {
        SoftmaxCase m = logged(causal(c, offset), log_softmax);
        if (i % 4 == 3) m.special = Special::RowWithNan;
        if (i % 6 == 1) m.special = Special::SomeNegativeInfinity;
        cases.push_back(m);
        ++i;
      }
  cases.push_back(causal(shape(3, 4), -5));  // no row keeps a column
  // Attention's softmax: batch x heads items, scaled and masked.
  SoftmaxCase attention = causal(batched(shape(24, 24), 17, 0), 0);
  attention.scale = 0.125f;
  cases.push_back(attention);
  cases.push_back(logged(causal(batched(shape(9, 20), 3, 4, true), -2), true));
  if (on_gpu()) {
    SoftmaxCase big = causal(batched(shape(512, 512), 3, 0), 0);
    big.scale = 0.125f;
    cases.push_back(big);
    cases.push_back(causal(shape(4, 40000), 20000));
  }
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxExConformance, InPlace) {
  std::vector<SoftmaxCase> cases;
  int i = 0;
  for (auto c : {shape(33, 127), shape(7, 2049), shape(16, 16)})
    for (bool log_softmax : {false, true}) {
      SoftmaxCase m = logged(batched(c, 3, i % 2 ? 3 : 0), log_softmax);
      m.in_place = true;
      m.pad_x = i % 3;
      if (i % 2) m = causal(m, i - 3);
      m.scale = i % 3 ? 0.125f : 1.0f;
      cases.push_back(m);
      ++i;
    }
  run_softmax_cases(GetParam(), cases);
}

INSTANTIATE_TEST_SUITE_P(Ladders, SoftmaxExConformance, ::testing::ValuesIn(softmax_params()), ParamName());

}  // namespace
}  // namespace gpukern::test
