// Bad softmax arguments (src/core/validate.cpp), on every available backend: the named
// status, a message naming the argument, and every buffer untouched.
#include "core/rejection.hpp"
#include "support/reference.hpp"

#include <cmath>
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
  std::vector<const char*> words;  // the message names at least one
  const char* also = nullptr;      // a second argument the message must name as well
};

/// gtest prints the case by its name.
void PrintTo(const BadSoftmax& bad, std::ostream* out) { *out << bad.name; }

const std::vector<BadSoftmax>& bad_softmax_cases() {
  static const std::vector<BadSoftmax> cases = {
      {"negative_rows", [](SoftmaxDesc& d) { d.rows = -1; }, GK_INVALID_ARGUMENT, {"rows"}},
      {"negative_cols", [](SoftmaxDesc& d) { d.cols = -2; }, GK_INVALID_ARGUMENT, {"cols"}},
      {"rows_times_cols_overflows_int64",
       [](SoftmaxDesc& d) {
         d.rows = kHuge;
         d.cols = kHuge;
         d.ldx = kHuge;
         d.ldy = kHuge;
       },
       GK_INVALID_ARGUMENT,
       {"rows", "cols", "x", "ldx"}},
      {"x_bytes_overflow",  // elements fit in int64, bytes do not fit in 64 bits
       [](SoftmaxDesc& d) {
         d.rows = kTwo31;
         d.cols = 1;
         d.ldx = kTwo31;
         d.ldy = 1;
       },
       GK_INVALID_ARGUMENT,
       {"x", "ldx", "rows"}},
      {"y_bytes_overflow",
       [](SoftmaxDesc& d) {
         d.rows = kTwo31;
         d.cols = 1;
         d.ldx = 1;
         d.ldy = kTwo31;
       },
       GK_INVALID_ARGUMENT,
       {"y", "ldy", "rows"}},
      {"ldx_below_cols", [](SoftmaxDesc& d) { d.ldx = kCols - 1; }, GK_INVALID_ARGUMENT, {"ldx"}},
      {"ldy_below_cols", [](SoftmaxDesc& d) { d.ldy = kCols - 1; }, GK_INVALID_ARGUMENT, {"ldy"}},
      {"ldx_zero", [](SoftmaxDesc& d) { d.ldx = 0; }, GK_INVALID_ARGUMENT, {"ldx"}},
      {"ldy_negative", [](SoftmaxDesc& d) { d.ldy = -7; }, GK_INVALID_ARGUMENT, {"ldy"}},
      {"null_x", [](SoftmaxDesc& d) { d.x = nullptr; }, GK_INVALID_ARGUMENT, {"x"}},
      {"null_y", [](SoftmaxDesc& d) { d.y = nullptr; }, GK_INVALID_ARGUMENT, {"y"}},
      {"unknown_dtype", [](SoftmaxDesc& d) { set_raw(d.dtype, 9); }, GK_INVALID_ARGUMENT, {"dtype"}},
      {"negative_dtype", [](SoftmaxDesc& d) { set_raw(d.dtype, -1); }, GK_INVALID_ARGUMENT, {"dtype"}},
      {"in_place_with_different_strides",
       [](SoftmaxDesc& d) {
         d.y = const_cast<void*>(d.x);
         d.ldy = d.ldx + 1;
       },
       GK_INVALID_ARGUMENT,
       {"ldx", "ldy"}},
      {"variant_with_bad_characters",
       [](SoftmaxDesc& d) { d.variant = "naive softmax"; },
       GK_INVALID_ARGUMENT,
       {"variant"}},
      // y may be x exactly (in place), never overlap it otherwise (it used to run and
      // return garbage).
      {"y_is_x_shifted_by_one_element",
       [](SoftmaxDesc& d) { d.y = byte_offset(d.x, 4); },
       GK_INVALID_ARGUMENT,
       {"y"},
       "x"},
      {"y_is_x_shifted_by_one_row",
       [](SoftmaxDesc& d) { d.y = byte_offset(d.x, kCols * 4); },
       GK_INVALID_ARGUMENT,
       {"y"},
       "x"},
      {"y_one_element_before_x", [](SoftmaxDesc& d) { d.y = byte_offset(d.x, -4); }, GK_INVALID_ARGUMENT, {"y"}, "x"},
      {"y_overlaps_x_with_another_stride",
       [](SoftmaxDesc& d) {
         d.ldy = 2 * kCols;
         d.y = byte_offset(d.x, 2 * 4);
       },
       GK_INVALID_ARGUMENT,
       {"y"},
       "x"},
      // Pointers must be aligned to their element size.
      {"x_misaligned_f32", [](SoftmaxDesc& d) { d.x = byte_offset(d.x, 1); }, GK_INVALID_ARGUMENT, {"x"}},
      {"y_misaligned_f16",
       [](SoftmaxDesc& d) {
         d.dtype = GK_F16;
         d.y = byte_offset(d.y, 1);
       },
       GK_INVALID_ARGUMENT,
       {"y"}},
      {"x_misaligned_bf16",
       [](SoftmaxDesc& d) {
         d.dtype = GK_BF16;
         d.x = byte_offset(d.x, 3);
       },
       GK_INVALID_ARGUMENT,
       {"x"}},
      // Strided batches, scale and mask (gk_softmax_ex_desc).
      {"negative_batch_count", [](SoftmaxDesc& d) { d.batch_count = -2; }, GK_INVALID_ARGUMENT, {"batch_count"}},
      {"negative_stride_x",
       [](SoftmaxDesc& d) {
         d.batch_count = 2;
         d.stride_x = -1;
       },
       GK_INVALID_ARGUMENT,
       {"stride_x"}},
      {"batch_items_of_y_overlap",
       [](SoftmaxDesc& d) {
         d.batch_count = 2;
         d.stride_x = kRows * kCols;
         d.stride_y = kCols;  // item 1 starts at item 0's row 1
       },
       GK_INVALID_ARGUMENT,
       {"stride_y"}},
      {"batched_y_reaches_into_x",  // y right after x's item 0: inside x's item 1
       [](SoftmaxDesc& d) {
         d.batch_count = 2;
         d.stride_x = d.stride_y = kRows * kCols;
         d.y = byte_offset(d.x, 4 * kRows * kCols);
       },
       GK_INVALID_ARGUMENT,
       {"y"},
       "x"},
      {"in_place_with_other_strides",
       [](SoftmaxDesc& d) {
         d.y = const_cast<void*>(d.x);
         d.batch_count = 2;
         d.stride_x = kRows * kCols;
         d.stride_y = 2 * kRows * kCols;
       },
       GK_INVALID_ARGUMENT,
       {"stride_y"}},
      {"scale_nan", [](SoftmaxDesc& d) { d.scale = std::nanf(""); }, GK_INVALID_ARGUMENT, {"scale"}},
      {"scale_infinite", [](SoftmaxDesc& d) { d.scale = INFINITY; }, GK_INVALID_ARGUMENT, {"scale"}},
      {"size_of_an_older_smaller_struct",
       [](SoftmaxDesc& d) { d.size = sizeof(gk_softmax_ex_desc) - 8; },
       GK_INVALID_ARGUMENT,
       {"size"}},
      {"size_zero", [](SoftmaxDesc& d) { d.size = 0; }, GK_INVALID_ARGUMENT, {"size"}},
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

class SoftmaxBadArgument : public ::testing::TestWithParam<std::tuple<std::string, BadSoftmax>> {};

TEST_P(SoftmaxBadArgument, IsRejectedAndTouchesNothing) {
  const auto& [backend, bad] = GetParam();
  Device& dev = shared_device(backend);
  SoftmaxBuffers buffers(dev);
  bad.mutate(buffers.desc);
  const std::string message = expect_status(gk_softmax_ex(dev.handle(), &buffers.desc), bad.expected, bad.words);
  if (bad.also) {
    EXPECT_TRUE(contains_word(message, bad.also)) << message << " does not name " << bad.also;
  }
  buffers.expect_untouched();
  char name[GK_NAME_LEN] = {};
  EXPECT_EQ(gk_softmax_ex_select(dev.handle(), &buffers.desc, name, sizeof name), bad.expected);
}

std::string bad_softmax_name(const ::testing::TestParamInfo<std::tuple<std::string, BadSoftmax>>& info) {
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
  expect_unknown_rung_rejected(gk_softmax_ex(dev.handle(), &buffers.desc), dev, GK_OP_SOFTMAX, "no_such_rung");
  buffers.expect_untouched();
}

TEST_P(SoftmaxArguments, NullDescriptorAndHandle) {
  Device& dev = shared_device(GetParam());
  SoftmaxBuffers buffers(dev);
  const std::string message = expect_status(gk_softmax(dev.handle(), nullptr), GK_INVALID_ARGUMENT, {});
  EXPECT_TRUE(contains_text(message, "desc")) << message;
  expect_status(gk_softmax_ex(nullptr, &buffers.desc), GK_INVALID_ARGUMENT, {"handle"});
  buffers.expect_untouched();
}

// A default SoftmaxDesc is an empty call with ldx = ldy = 1 (ld >= max(1, cols), as in
// BLAS); a C descriptor left at zero breaks that rule and is rejected by name.
TEST_P(SoftmaxArguments, DefaultDescriptorIsAValidEmptyCall) {
  Device& dev = shared_device(GetParam());
  SoftmaxDesc d;
  EXPECT_EQ(d.ldx, 1);
  EXPECT_EQ(d.ldy, 1);
  expect_status(gk_softmax_ex(dev.handle(), &d), GK_SUCCESS, {});
  const gk_softmax_desc zero{};
  expect_status(gk_softmax(dev.handle(), &zero), GK_INVALID_ARGUMENT, {"ldx"});
}

/// Runs softmax with x and y as windows of one parent buffer (y may equal x) and checks
/// the result and that nothing outside y changed.
void expect_softmax_accepted(Device& dev, const Window& wx, const Window& wy) {
  Random rng;
  HostArray parent(GK_F32, std::max(wx.total, wy.total));
  fill_window(parent, wx, Pattern::Guard, [&](int64_t, int64_t) { return rng.uniform(-4, 4); });
  DeviceArray device_parent(dev, parent);
  float* base = static_cast<float*>(device_parent.data());
  SoftmaxDesc d;
  d.rows = wx.rows;
  d.cols = wx.cols;
  d.x = base + wx.offset;
  d.ldx = wx.ld;
  d.y = base + wy.offset;
  d.ldy = wy.ld;
  expect_status(gk_softmax_ex(dev.handle(), &d), GK_SUCCESS, {});
  const HostArray after = device_parent.read(GK_F32, parent.size());
  EXPECT_EQ(changes_outside(parent, after, wy), "") << "x or the guard cells changed";
  const auto ref = reference_softmax(MatrixView{&parent, wx}, false);
  EXPECT_TRUE(compare(read_window(after, wy), ref, wx.cols).passes(1e-5));
}

TEST_P(SoftmaxArguments, ExactInPlaceIsAccepted) {
  const Window w = make_window(kRows, kCols, kCols + 3, 8);
  expect_softmax_accepted(shared_device(GetParam()), w, w);
}

// x in columns [0, cols) and y in columns [cols, 2 cols) of one matrix: the same row
// stride, no shared element.
TEST_P(SoftmaxArguments, SideBySideHalvesAreAccepted) {
  const Window wx = make_window(kRows, kCols, 2 * kCols, 8);
  Window wy = wx;
  wy.offset += kCols;
  expect_softmax_accepted(shared_device(GetParam()), wx, wy);
}

INSTANTIATE_TEST_SUITE_P(Validation, SoftmaxArguments, ::testing::ValuesIn(available_backend_names()), BackendName());

}  // namespace
}  // namespace gpukern::test
