// Softmax conformance: every (backend, rung, dtype) over the same cases against the
// double reference: odd shapes as rows x cols, strides, in place, log-softmax, -inf
// (finite results), rows of all -inf and rows with a NaN (NaN rows, as PyTorch), and
// values large enough to overflow exp unless the row maximum is subtracted.
#include "conformance/params.hpp"
#include "conformance/softmax_runner.hpp"

#include <gtest/gtest.h>

namespace gpukern::test {
namespace {

class SoftmaxConformance : public LadderTest {};

SoftmaxCase with(SoftmaxCase c, bool log_softmax, Special special = Special::None) {
  c.log_softmax = log_softmax;
  c.special = special;
  return c;
}

std::vector<SoftmaxCase> base_shapes(bool gpu) {
  std::vector<SoftmaxCase> shapes = {shape(1, 1),     shape(7, 7),    shape(33, 33),  shape(127, 127), shape(1, 1000),
                                     shape(1000, 33), shape(3, 2049), shape(2, 4097), shape(64, 1024)};
  if (gpu)  // long rows for the split-row rungs, many rows for the row-per-warp ones
    for (auto c : {shape(2, 100003), shape(1024, 4096), shape(4097, 128), shape(8, 32769)}) shapes.push_back(c);
  return shapes;
}

TEST_P(SoftmaxConformance, SquareAndOddShapes) { run_softmax_cases(GetParam(), base_shapes(on_gpu())); }

TEST_P(SoftmaxConformance, LogSoftmax) {
  std::vector<SoftmaxCase> cases;
  for (const auto& c : base_shapes(on_gpu())) cases.push_back(with(c, true));
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, RowStrides) {
  struct Pads {
    int64_t x, y;
  };
  const Pads pads[] = {{3, 5}, {1, 0}, {0, 1}, {8, 16}, {64, 32}};
  std::vector<SoftmaxCase> cases;
  for (const auto& p : pads)
    for (auto c : {shape(33, 127), shape(64, 256), shape(5, 2049)})
      for (bool log_softmax : {false, true}) {
        c.pad_x = p.x;
        c.pad_y = p.y;
        cases.push_back(with(c, log_softmax));
      }
  // x and y that start off any alignment.
  for (auto c : {shape(33, 127), shape(64, 256)}) {
    c.guard = 1;
    cases.push_back(c);
  }
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, InPlace) {
  std::vector<SoftmaxCase> cases;
  for (int64_t pad : {0, 3, 8})
    for (auto c : {shape(33, 127), shape(64, 256), shape(7, 2049), shape(1, 1)})
      for (bool log_softmax : {false, true}) {
        c.pad_x = pad;
        c.in_place = true;
        cases.push_back(with(c, log_softmax));
      }
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, NegativeInfinityGivesFiniteResults) {
  std::vector<SoftmaxCase> cases;
  for (auto c : {shape(33, 127), shape(7, 2049), shape(64, 256), shape(16, 2)})
    for (bool log_softmax : {false, true}) cases.push_back(with(c, log_softmax, Special::SomeNegativeInfinity));
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, RowOfNegativeInfinityGivesNan) {
  // libgpukern's rungs give NaN for a row of all -inf, as PyTorch does. A vendor
  // reference keeps the vendor's own answer (cuDNN writes 0, or -inf for log-softmax).
  if (GetParam().is_reference)
    GTEST_SKIP() << GetParam().rung << " is the vendor reference: its all -inf rows follow the vendor";
  std::vector<SoftmaxCase> cases;
  for (auto c : {shape(33, 127), shape(7, 2049), shape(64, 256), shape(1, 1), shape(3, 1)})
    for (bool log_softmax : {false, true}) cases.push_back(with(c, log_softmax, Special::RowAllNegativeInfinity));
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, RowWithNanGivesNan) {
  std::vector<SoftmaxCase> cases;
  for (auto c : {shape(33, 127), shape(7, 2049), shape(64, 256), shape(1, 1)})
    for (bool log_softmax : {false, true}) cases.push_back(with(c, log_softmax, Special::RowWithNan));
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, LargeValuesAreStable) {
  std::vector<SoftmaxCase> cases;
  for (auto c : {shape(33, 127), shape(7, 2049), shape(64, 256)})
    for (bool log_softmax : {false, true}) cases.push_back(with(c, log_softmax, Special::LargeValues));
  run_softmax_cases(GetParam(), cases);
}

TEST_P(SoftmaxConformance, NoRowsTouchesNothing) {
  run_softmax_cases(GetParam(), {shape(0, 33), with(shape(0, 7), true)});
}

INSTANTIATE_TEST_SUITE_P(Ladders, SoftmaxConformance, ::testing::ValuesIn(softmax_params()), ParamName());

class SoftmaxUnlistedDtype : public SoftmaxConformance {};

TEST_P(SoftmaxUnlistedDtype, ForcedRungDeclines) { expect_softmax_declined(GetParam(), shape(33, 17)); }

INSTANTIATE_TEST_SUITE_P(Ladders, SoftmaxUnlistedDtype, ::testing::ValuesIn(softmax_unlisted_params()), ParamName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SoftmaxUnlistedDtype);

}  // namespace
}  // namespace gpukern::test
