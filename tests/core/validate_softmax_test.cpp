// Bad softmax arguments (src/core/validate.cpp), on every available backend: the named
// status, a message naming the argument, and every buffer untouched.
#include "core/rejection.hpp"

#include <functional>
#include <ostream>
#include <tuple>

namespace gpukern::test {
namespace {

constexpr int64_t kRows = 7, kCols = 5;
constexpr std::size_t kElements = 4096;
constexpr int64_t kHuge = int64_t{1} << 40;
constexpr int64_t kTwo31 = int64_t{1} << 31;

struct BadSoftmax {
  const char* name;
  std::function<void(SoftmaxDesc&)> mutate;
  gk_status expected;
  std::vector<const char*> words;
};

/// gtest prints the case by its name.
void PrintTo(const BadSoftmax& bad, std::ostream* out) { *out << bad.name; }

const std::vector<BadSoftmax>& bad_softmax_cases() {
  static const std::vector<BadSoftmax> cases = {
      {"negative_rows", [](SoftmaxDesc& d) { d.rows = -1; }, GK_INVALID_ARGUMENT, {"rows"}},
      {"negative_cols", [](SoftmaxDesc& d) { d.cols = -2; }, GK_INVALID_ARGUMENT, {"cols"}},
      {"rows_times_cols_overflows_int64",
       [](SoftmaxDesc& d) { d.rows = kHuge; d.cols = kHuge; d.ldx = kHuge; d.ldy = kHuge; },
       GK_INVALID_ARGUMENT, {"rows", "cols", "x", "ldx"}},
      {"x_bytes_overflow",  // elements fit in int64, bytes do not fit in 64 bits
       [](SoftmaxDesc& d) { d.rows = kTwo31; d.cols = 1; d.ldx = kTwo31; d.ldy = 1; },
       GK_INVALID_ARGUMENT, {"x", "ldx", "rows"}},
      {"y_bytes_overflow",
       [](SoftmaxDesc& d) { d.rows = kTwo31; d.cols = 1; d.ldx = 1; d.ldy = kTwo31; },
       GK_INVALID_ARGUMENT, {"y", "ldy", "rows"}},
      {"ldx_below_cols", [](SoftmaxDesc& d) { d.ldx = kCols - 1; }, GK_INVALID_ARGUMENT, {"ldx"}},
      {"ldy_below_cols", [](SoftmaxDesc& d) { d.ldy = kCols - 1; }, GK_INVALID_ARGUMENT, {"ldy"}},
      {"ldx_zero", [](SoftmaxDesc& d) { d.ldx = 0; }, GK_INVALID_ARGUMENT, {"ldx"}},
      {"ldy_negative", [](SoftmaxDesc& d) { d.ldy = -7; }, GK_INVALID_ARGUMENT, {"ldy"}},
      {"null_x", [](SoftmaxDesc& d) { d.x = nullptr; }, GK_INVALID_ARGUMENT, {"x"}},
      {"null_y", [](SoftmaxDesc& d) { d.y = nullptr; }, GK_INVALID_ARGUMENT, {"y"}},
      {"unknown_dtype", [](SoftmaxDesc& d) { d.dtype = static_cast<gk_dtype>(9); },
       GK_INVALID_ARGUMENT, {"dtype"}},
      {"negative_dtype", [](SoftmaxDesc& d) { d.dtype = static_cast<gk_dtype>(-1); },
       GK_INVALID_ARGUMENT, {"dtype"}},
      {"in_place_with_different_strides",
       [](SoftmaxDesc& d) { d.y = const_cast<void*>(d.x); d.ldy = d.ldx + 1; },
       GK_INVALID_ARGUMENT, {"ldx", "ldy"}},
      {"variant_with_bad_characters", [](SoftmaxDesc& d) { d.variant = "naive softmax"; },
       GK_INVALID_ARGUMENT, {"variant"}},
  };
  return cases;
}

struct SoftmaxBuffers {
  explicit SoftmaxBuffers(Device& dev) : x(dev, kElements * 4), y(dev, kElements * 4) {
    desc.rows = kRows;
    desc.cols = kCols;
    desc.x = x.at(16, 4);
    desc.ldx = kCols;
    desc.y = y.at(16, 4);
    desc.ldy = kCols;
  }
  void expect_untouched() const {
    EXPECT_EQ(x.changes(), "") << "x buffer";
    EXPECT_EQ(y.changes(), "") << "y buffer (output must be untouched)";
  }
  PatternedBuffer x, y;
  SoftmaxDesc desc;
};

class SoftmaxBadArgument
    : public ::testing::TestWithParam<std::tuple<std::string, BadSoftmax>> {};

TEST_P(SoftmaxBadArgument, IsRejectedAndTouchesNothing) {
  const auto& [backend, bad] = GetParam();
  Device& dev = shared_device(backend);
  SoftmaxBuffers buffers(dev);
  bad.mutate(buffers.desc);
  expect_status(gk_softmax(dev.handle(), &buffers.desc), bad.expected, bad.words);
  buffers.expect_untouched();
  char name[GK_NAME_LEN] = {};
  EXPECT_EQ(gk_softmax_select(dev.handle(), &buffers.desc, name, sizeof name), bad.expected);
}

std::string bad_softmax_name(
    const ::testing::TestParamInfo<std::tuple<std::string, BadSoftmax>>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Validation, SoftmaxBadArgument,
                         ::testing::Combine(::testing::ValuesIn(available_backend_names()),
                                            ::testing::ValuesIn(bad_softmax_cases())),
                         bad_softmax_name);

class SoftmaxArguments : public ::testing::TestWithParam<std::string> {};

TEST_P(SoftmaxArguments, UnknownRungIsRejectedListingTheValidOnes) {
  Device& dev = shared_device(GetParam());
  SoftmaxBuffers buffers(dev);
  buffers.desc.variant = "no_such_rung";
  expect_unknown_rung_rejected(gk_softmax(dev.handle(), &buffers.desc), dev, GK_OP_SOFTMAX, "no_such_rung");
  buffers.expect_untouched();
}

TEST_P(SoftmaxArguments, NullDescriptorAndHandle) {
  Device& dev = shared_device(GetParam());
  SoftmaxBuffers buffers(dev);
  const std::string message =
      expect_status(gk_softmax(dev.handle(), nullptr), GK_INVALID_ARGUMENT, {});
  EXPECT_TRUE(contains_text(message, "desc")) << message;
  expect_status(gk_softmax(nullptr, &buffers.desc), GK_INVALID_ARGUMENT, {"handle"});
  buffers.expect_untouched();
}

INSTANTIATE_TEST_SUITE_P(Validation, SoftmaxArguments,
                         ::testing::ValuesIn(available_backend_names()),
                         BackendName());

}  // namespace
}  // namespace gpukern::test
