// The `omp_simd` softmax row kernels with batches, an input scale and a causal mask, on
// every ISA path this machine supports, against the double reference
// (softmax_fused_reference.hpp): batch items with padded and broadcast (0) input strides,
// scales of 1, 1/8, 0 and negative ones, causal offsets that mask part of the rows, none of
// them, or every column of some rows; in place; odd lengths (vector tails, the kept
// length ending inside a vector, block edges); special rows (a NaN, all -inf) with their
// masked columns still exactly 0; every cell outside the outputs untouched. Then the
// `naive` and `omp_simd` rungs (threads over the rows of every item) on the same cases
// through gk_softmax_ex.
#include "cpu/softmax/kernel.hpp"
#include "cpu_test_util.hpp"
#include "gpukern/gpukern.h"
#include "softmax_fused_reference.hpp"
#include "softmax_test_util.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace gpukern::cpu::test {
namespace {

using core::DType;
namespace ref = softmax_fused_test;

/// A value no output takes (outputs are in [0, 1], log-outputs <= 0, or NaN): marks the
/// cells a kernel must not write and the outputs it has not written yet.
constexpr float kPoison = 7.0f;

struct FusedCase {
  DType type = DType::F32;
  int64_t batch = 1, rows = 1, cols = 1;
  float scale = 1.0f;
  bool causal = false;
  int64_t offset = 0;
  bool log = false;
  bool broadcast = false;  // stride_x 0: every item reads the same x
  bool in_place = false;
  std::string describe() const {
    std::ostringstream s;
    s << core::dtype_name(type) << " batch " << batch << " " << rows << "x" << cols << " scale " << scale;
    if (causal) s << " causal " << offset;
    s << (log ? " log" : "") << (broadcast ? " broadcast" : "") << (in_place ? " in-place" : "");
    return s.str();
  }
};

/// Makes the call (returns "" or why it failed).
using Call = std::function<std::string(const core::SoftmaxArgs&)>;

/// `kernel` on the call's rows, split in two calls as two threads would.
Call kernel_call(const SoftmaxKernel& kernel) {
  return [&kernel](const core::SoftmaxArgs& s) {
    const int64_t total = s.batch * s.rows, half = total / 2;
    kernel.rows(s, 0, half, false, softmax_scratch_row());
    kernel.rows(s, half, total, false, softmax_scratch_row());
    return std::string();
  };
}

/// Runs the case through `call` and checks it; "" when it passes.
std::string run_case(const Call& call, const FusedCase& t, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t ldx = t.cols + 3, ldy = t.in_place ? ldx : t.cols + 5;
  const int64_t stride_x = t.broadcast ? 0 : t.rows * ldx + 7;
  const int64_t stride_y = t.in_place ? stride_x : t.rows * ldy + 2;
  const int64_t x_items = t.broadcast ? 1 : t.batch;
  Stored x(t.type, static_cast<std::size_t>(x_items * stride_x + t.rows * ldx + 8));
  x.fill_random(rng, -4.0f, 4.0f);
  if (t.rows >= 3) {
    const int64_t last = x_items - 1;           // special rows in the last item x holds
    x.set(last * stride_x + 1 * ldx + 0, NAN);  // a NaN: the row's kept part NaN
    for (int64_t j = 0; j < t.cols; ++j) x.set(last * stride_x + 2 * ldx + j, -INFINITY);  // all -inf: NaN
  }
  const Stored x_in = x;
  Stored y(t.type, static_cast<std::size_t>(t.batch * stride_y + t.rows * ldy + 8));
  for (std::size_t i = 0; i < y.size(); ++i) y.set(i, kPoison);
  Stored& out = t.in_place ? x : y;
  const Stored before = out;

  core::SoftmaxArgs s;
  s.rows = t.rows;
  s.cols = t.cols;
  s.x = x.data();
  s.ldx = ldx;
  s.y = out.data();
  s.ldy = ldy;
  s.dtype = t.type;
  s.log = t.log;
  s.batch = t.batch;
  s.stride_x = stride_x;
  s.stride_y = stride_y;
  s.scale = t.scale;
  s.causal = t.causal;
  s.causal_offset = t.offset;
  if (const std::string failed = call(s); !failed.empty()) return "the call failed: " + failed;

  ref::Check check;
  std::vector<double> xs(static_cast<std::size_t>(t.cols)), want(static_cast<std::size_t>(t.cols));
  std::vector<bool> output(out.size(), false);
  for (int64_t b = 0; b < t.batch; ++b)
    for (int64_t r = 0; r < t.rows; ++r) {
      const int64_t kept = ref::kept_columns(r, t.cols, t.causal, t.offset);
      for (int64_t j = 0; j < t.cols; ++j) xs[j] = x_in.get(b * stride_x + r * ldx + j);
      ref::reference_row(xs.data(), t.cols, kept, t.scale, t.log, want.data());
      for (int64_t j = 0; j < t.cols; ++j) {
        const std::size_t at = b * stride_y + r * ldy + j;
        output[at] = true;
        check.add(out.get(at), want[j], j >= kept, b, r, j);
      }
    }
  const double bound = t.type == DType::BF16 ? 1e-2 : t.type == DType::F16 ? 2e-3 : 1e-5;
  std::string problems = check.passes(bound) ? "" : check.describe();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (output[i]) continue;
    const float a = before.get(i), c = out.get(i);
    if (!(a == c || (std::isnan(a) && std::isnan(c)))) {
      problems += " cell " + std::to_string(i) + " outside the outputs changed";
      break;
    }
  }
  return problems;
}

std::vector<FusedCase> cases() {
  std::vector<FusedCase> out;
  for (DType type : {DType::F32, DType::F16, DType::BF16})
    for (int64_t cols : {int64_t(1), int64_t(13), int64_t(40), int64_t(2049), int64_t(5000)})
      for (bool log : {false, true}) {
        FusedCase c;
        c.type = type;
        c.cols = cols;
        c.log = log;
        c.batch = 3;
        c.rows = 6;
        // Plain batch; scaled; causal from the diagonal; shifted masks, including rows
        // that keep nothing and an offset past the row; broadcast x; in place.
        c.scale = 1.0f;
        out.push_back(c);
        c.scale = 0.125f;
        out.push_back(c);
        c.scale = -1.5f;
        out.push_back(c);
        c.scale = 0.0f;
        out.push_back(c);
        c.scale = 0.125f;
        c.causal = true;
        for (int64_t offset : {int64_t(0), int64_t(-3), cols - 4, cols + 5, int64_t(-7)}) {
          c.offset = offset;
          out.push_back(c);
        }
        c.offset = cols / 2;
        c.scale = -0.7f;
        out.push_back(c);
        c.broadcast = true;
        out.push_back(c);
        c.broadcast = false;
        c.in_place = true;
        out.push_back(c);
        c = FusedCase{type, 1, 1, cols, 2.0f, true, 0, log};  // one row keeping one column
        out.push_back(c);
      }
  return out;
}

TEST(SoftmaxFusedRows, BatchScaleCausalEveryIsa) {
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    unsigned seed = 1;
    for (const FusedCase& c : cases()) {
      const std::string problems = run_case(kernel_call(kernel), c, ++seed);
      EXPECT_EQ(problems, "") << kernel.name << " " << c.describe() << ", seed " << seed;
    }
  }
}

TEST(SoftmaxFusedRows, LongCausalRows) {
  // Rows past the kept-exponential scratch (kSoftmaxScratch) with the mask ending inside
  // the scratch, past it, and inside a block.
  for (Isa isa : supported_isas()) {
    const SoftmaxKernel& kernel = softmax_kernel_for(isa);
    for (DType type : {DType::F32, DType::BF16})
      for (int64_t offset : {int64_t(-2), kSoftmaxScratch - 3, int64_t(70001)}) {
        FusedCase c{type, 2, 3, kSoftmaxScratch + 4099, 0.5f, true, offset, false};
        const std::string problems = run_case(kernel_call(kernel), c, 77);
        EXPECT_EQ(problems, "") << kernel.name << " " << c.describe();
      }
  }
}

/// The rungs through the public entry point (gk_softmax_ex on the CPU backend, the rung
/// forced by name): naive, and omp_simd on 3 threads, which split the rows of every item
/// (in runs, under a causal mask).
class SoftmaxFusedRungs : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gk_open("cpu", &handle_), GK_SUCCESS) << gk_last_error(); }
  void TearDown() override {
    gk_close(handle_);
    gk_set_option("GPUKERN_NUM_THREADS", nullptr);
  }
  Call api_call(const char* variant) {
    return [this, variant](const core::SoftmaxArgs& s) -> std::string {
      gk_softmax_ex_desc d;
      gk_softmax_ex_desc_init(&d);
      d.rows = s.rows;
      d.cols = s.cols;
      d.x = s.x;
      d.ldx = s.ldx;
      d.y = s.y;
      d.ldy = s.ldy;
      d.dtype = static_cast<gk_dtype>(s.dtype);
      d.log_softmax = s.log;
      d.variant = variant;
      d.batch_count = s.batch;
      d.stride_x = s.stride_x;
      d.stride_y = s.stride_y;
      d.scale = s.scale;
      d.causal = s.causal;
      d.causal_offset = s.causal_offset;
      return gk_softmax_ex(handle_, &d) == GK_SUCCESS ? std::string() : std::string(gk_last_error());
    };
  }
  gk_handle handle_ = nullptr;
};

TEST_F(SoftmaxFusedRungs, NaiveAndOmpSimd) {
  ASSERT_EQ(gk_set_option("GPUKERN_NUM_THREADS", "3"), GK_SUCCESS) << gk_last_error();
  for (const char* variant : {"naive", "omp_simd"}) {
    unsigned seed = 100;
    for (const FusedCase& c : cases()) {
      const std::string problems = run_case(api_call(variant), c, ++seed);
      EXPECT_EQ(problems, "") << variant << " " << c.describe() << ", seed " << seed;
    }
    // Many short causal rows: the runs of rows the threads take in turn.
    FusedCase c{DType::F32, 5, 333, 200, 0.5f, true, -20};
    EXPECT_EQ(run_case(api_call(variant), c, 9), "") << variant << " " << c.describe();
  }
}

}  // namespace
}  // namespace gpukern::cpu::test
