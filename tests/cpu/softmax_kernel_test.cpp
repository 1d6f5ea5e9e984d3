// The `omp_simd` softmax pieces, for every ISA path this machine supports: the vector exp
// against std::exp (relative error, -inf, NaN, underflow), and the row kernels against a
// double reference at odd lengths (tails, block edges), in place, with non-temporal
// stores at every misalignment, and with the special rows (NaN, all -inf).
#include "cpu/softmax/kernel.hpp"
#include "cpu_test_util.hpp"
#include "softmax_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

namespace gpukern::cpu::test {
namespace {

using core::DType;

TEST(SoftmaxExp, RelativeErrorAgainstStdExp) {
  // Dense sweep of the softmax domain x <= 0, down past the subnormal range.
  std::vector<float> x;
  for (float v = 0.0f; v > -110.0f; v -= 0.00731f) x.push_back(v);
  for (float v : {-0.0f, -1e-30f, -1e-7f, -0.34657359f, -0.34657362f, -0.69314718f, -1.0f, -10.0f}) x.push_back(v);
  std::vector<float> y(x.size());
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    kernel.exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    float worst_x = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      if (want < std::numeric_limits<float>::min()) {
        // Subnormal results: a path may flush them to 0 (AVX2 does); never more than FLT_MIN off.
        EXPECT_LE(std::fabs(y[i] - want), std::numeric_limits<float>::min()) << kernel.name << " x=" << x[i];
        continue;
      }
      const double rel = std::fabs(y[i] - want) / want;
      if (rel > worst) {
        worst = rel;
        worst_x = x[i];
      }
    }
    // 2 ulp of float (2^-23 = 1.19e-7; measured: 1 ulp), far inside softmax's f32 bound of 1e-5.
    EXPECT_LE(worst, 2.4e-7) << kernel.name << " worst at x = " << worst_x;
  }
}

TEST(SoftmaxExp, SpecialValues) {
  const float x[] = {-INFINITY, NAN, -200.0f, -104.0f, -88.0f, 0.0f, -0.0f};
  float y[7];
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    kernel.exp(x, y, 7);
    EXPECT_EQ(y[0], 0.0f) << kernel.name << ": exp(-inf)";
    EXPECT_TRUE(std::isnan(y[1])) << kernel.name << ": exp(NaN)";
    EXPECT_EQ(y[2], 0.0f) << kernel.name << ": exp(-200) underflows to 0";
    EXPECT_EQ(y[3], 0.0f) << kernel.name << ": exp(-104) underflows to 0";
    EXPECT_NEAR(y[4], std::exp(-88.0), 2e-38) << kernel.name;
    EXPECT_EQ(y[5], 1.0f) << kernel.name << ": exp(0)";
    EXPECT_EQ(y[6], 1.0f) << kernel.name << ": exp(-0)";
  }
}

/// Runs rows through the kernel (x and y with strides and guard cells, or in place).
struct RowCase {
  int64_t rows, cols;
  DType type;
  bool log, in_place, stream;
  int64_t y_offset;  // elements: misaligns y for the streaming head
};

void check_rows(const SoftmaxKernel& kernel, const RowCase& t, float scale = 3.0f) {
  std::mt19937 rng(static_cast<unsigned>(t.rows * 7919 + t.cols));
  const int64_t ldx = t.cols + 5, ldy = t.in_place ? ldx : t.cols + 3;
  Stored x(t.type, t.rows * ldx + 8), y(t.type, t.rows * ldy + t.y_offset + 8);
  x.fill_random(rng, -scale, scale);
  y.fill_nan();
  const Stored x_in = x;
  Stored& out = t.in_place ? x : y;
  const int64_t out_offset = t.in_place ? 0 : t.y_offset;

  core::SoftmaxArgs s;
  s.rows = t.rows;
  s.cols = t.cols;
  s.x = x.data();
  s.ldx = ldx;
  s.y = static_cast<char*>(out.data()) + out_offset * core::dtype_size(t.type);
  s.ldy = ldy;
  s.dtype = t.type;
  s.log = t.log;
  kernel.rows(s, 0, t.rows, t.stream, softmax_scratch_row());

  std::vector<double> ref, got;
  for (int64_t r = 0; r < t.rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < t.cols; ++j) max = std::max(max, double(x_in.get(r * ldx + j)));
    for (int64_t j = 0; j < t.cols; ++j) sum += std::exp(x_in.get(r * ldx + j) - max);
    for (int64_t j = 0; j < t.cols; ++j) {
      const double shifted = x_in.get(r * ldx + j) - max;
      ref.push_back(t.log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      got.push_back(out.get(out_offset + r * ldy + j));
    }
    for (int64_t j = t.cols; j < ldy; ++j) {  // guard cells between rows untouched
      const std::size_t idx = out_offset + r * ldy + j;
      if (t.in_place || idx >= out.size()) continue;
      ASSERT_TRUE(std::isnan(out.get(idx))) << kernel.name << " wrote a guard cell in row " << r;
    }
  }
  const double bound = t.type == DType::BF16 ? 1e-2 : t.type == DType::F16 ? 2e-3 : 1e-5;
  EXPECT_LE(relative_error(ref, got), bound)
      << kernel.name << " " << t.rows << "x" << t.cols << " " << core::dtype_name(t.type) << (t.log ? " log" : "")
      << (t.in_place ? " in-place" : "") << (t.stream ? " stream" : "") << " y+" << t.y_offset;
}

TEST(SoftmaxRows, OddLengthsTypesInPlaceStreaming) {
  const int64_t lengths[] = {
      1, 7, 8, 15, 16, 17, 31, 33, 100, 2047, 2048, 2049, 5000, kSoftmaxScratch, kSoftmaxScratch + 3};
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    for (DType type : {DType::F32, DType::F16, DType::BF16})
      for (int64_t cols : lengths)
        for (bool log : {false, true}) {
          check_rows(kernel, {3, cols, type, log, false, false, 0});
          check_rows(kernel, {2, cols, type, log, true, false, 0});
          for (int64_t offset : {0, 1, 5}) check_rows(kernel, {2, cols, type, log, false, true, offset});
        }
  }
}

TEST(SoftmaxRows, StreamedSpecialRowBetweenNormalRows) {
  // Several streamed rows (the next-row prefetch, non-temporal stores) with a NaN or an
  // all -inf row in the middle: the rows around it stay right, the middle one is NaN.
  const int64_t cols = 4099;
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    for (float special : {NAN, -INFINITY}) {
      std::vector<float> x(3 * cols), y(3 * cols, 12345.0f);
      for (int64_t j = 0; j < cols; ++j) {
        x[j] = x[2 * cols + j] = 0.001f * static_cast<float>(j % 97);
        x[cols + j] = std::isnan(special) ? 1.0f : special;
      }
      if (std::isnan(special)) x[cols + 2500] = special;
      core::SoftmaxArgs s;
      s.rows = 3;
      s.cols = cols;
      s.x = x.data();
      s.ldx = cols;
      s.y = y.data();
      s.ldy = cols;
      kernel.rows(s, 0, 3, true, softmax_scratch_row());
      for (int64_t r : {0, 2}) {
        double sum = 0;
        for (int64_t j = 0; j < cols; ++j) sum += y[r * cols + j];
        EXPECT_NEAR(sum, 1.0, 1e-4) << kernel.name << " row " << r;
      }
      for (int64_t j = 0; j < cols; ++j) ASSERT_TRUE(std::isnan(y[cols + j])) << kernel.name << " middle row at " << j;
    }
  }
}

TEST(SoftmaxRows, LargeMagnitudesDoNotOverflow) {
  for (Isa isa : supported_isas())
    check_rows(softmax_kernel_for(isa), {4, 3000, DType::F32, false, false, false, 0}, 80.0f);
}

/// One row with chosen values; returns the outputs as floats.
std::vector<float> run_row(const SoftmaxKernel& kernel, std::vector<float> x, bool log) {
  std::vector<float> y(x.size(), 12345.0f);
  core::SoftmaxArgs s;
  s.rows = 1;
  s.cols = static_cast<int64_t>(x.size());
  s.x = x.data();
  s.ldx = s.cols;
  s.y = y.data();
  s.ldy = s.cols;
  s.log = log;
  kernel.rows(s, 0, 1, false, softmax_scratch_row());
  return y;
}

TEST(SoftmaxRows, SpecialRows) {
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    for (bool log : {false, true}) {
      // All -inf: NaN (as PyTorch), whatever the length (tail only, whole vectors, blocks).
      for (std::size_t n : {3u, 16u, 4099u})
        for (float v : run_row(kernel, std::vector<float>(n, -INFINITY), log))
          ASSERT_TRUE(std::isnan(v)) << kernel.name << " all -inf row of " << n;
      // A NaN anywhere (first block, a later block, the tail) makes the row NaN.
      for (std::size_t at : {0u, 17u, 2500u, 4098u}) {
        std::vector<float> x(4099, 1.0f);
        x[at] = NAN;
        for (float v : run_row(kernel, x, log)) ASSERT_TRUE(std::isnan(v)) << kernel.name << " NaN at " << at;
      }
      // -inf elements next to finite ones get 0 (log: -inf); a leading all -inf block is skipped.
      std::vector<float> x(4099, -INFINITY);
      x[3000] = 2.0f;
      x[3001] = 2.0f;
      const std::vector<float> y = run_row(kernel, x, log);
      EXPECT_FLOAT_EQ(y[3000], log ? std::log(0.5f) : 0.5f) << kernel.name;
      EXPECT_FLOAT_EQ(y[3001], log ? std::log(0.5f) : 0.5f) << kernel.name;
      EXPECT_EQ(y[0], log ? -INFINITY : 0.0f) << kernel.name;
      // The maximum rising block after block rescales the running sum.
      std::vector<float> rising(6000);
      for (std::size_t i = 0; i < rising.size(); ++i) rising[i] = static_cast<float>(i) * 0.01f;
      const std::vector<float> r = run_row(kernel, rising, false);
      double total = 0;
      for (float v : r) total += v;
      EXPECT_NEAR(total, 1.0, 1e-5) << kernel.name;
      EXPECT_NEAR(r.back(), 1.0 - std::exp(-0.01), 1e-5) << kernel.name;
    }
  }
}

TEST(SoftmaxRows, MaxJumpsBetweenBlocks) {
  // Later blocks raising the max a little (rescale) or by more than exp's safe range
  // from the running max (the block is redone against its own max), and falling again.
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    for (float jump : {3.0f, 63.0f, 65.0f, 100.0f, 300.0f})
      for (bool log : {false, true}) {
        std::vector<float> x(3 * kSoftmaxBlock + 5);
        for (std::size_t i = 0; i < x.size(); ++i)
          x[i] = 0.001f * static_cast<float>(i % 97) + (i >= kSoftmaxBlock && i < 2 * kSoftmaxBlock ? jump : 0.0f);
        const std::vector<float> y = run_row(kernel, x, log);
        double max = -INFINITY, sum = 0;
        for (float v : x) max = std::max(max, double(v));
        for (float v : x) sum += std::exp(v - max);
        std::vector<double> ref, got;
        for (std::size_t i = 0; i < x.size(); ++i) {
          ref.push_back(log ? x[i] - max - std::log(sum) : std::exp(x[i] - max) / sum);
          got.push_back(y[i]);
        }
        EXPECT_LE(relative_error(ref, got), 1e-5) << kernel.name << " jump " << jump << (log ? " log" : "");
      }
  }
}

}  // namespace
}  // namespace gpukern::cpu::test
