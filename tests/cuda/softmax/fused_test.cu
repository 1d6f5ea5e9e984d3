// Batches, the input scale and the causal mask through every CUDA softmax rung that fuses
// them (rungs 1-6, rows.cuh) and every split_row plan forced, against the double
// reference (tests/cpu/softmax_fused_reference.hpp): batch items with padded, broadcast
// (0) and odd (scalar path) strides; scales 1, 1/8, 0 and a negative one; causal offsets
// that mask part of each row, none of it, or all of it; in place; long rows (32K-1M
// columns) with the mask ending early, mid-row and near the end; special rows (a NaN, all
// -inf, a +inf) whose masked columns stay exactly 0 (log: -inf); every cell outside the
// outputs bit-identical. cuDNN's batches where the library is present, and its decline
// of the scale and the mask, which it does not fuse.
#include "softmax_harness.cuh"

#include "support/cuda_check.hpp"

#include "../../cpu/softmax_fused_reference.hpp"
#include "cuda/softmax/06_split_row.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <gpukern/half.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gpukern::test::cuda_softmax {
namespace {

using cuda::CudaContext;
using cuda::softmax::SplitLayout;
using cuda::softmax::SplitPlan;
namespace ref = softmax_fused_test;

/// How the batch sits in memory. Items: rows one after another (Contiguous), padded
/// between items (Padded), x broadcast (stride_x 0), an item stride that is not a whole
/// 16-byte vector (OddItemStride: scalar path with aligned pointers), a misaligned
/// pointer (Misaligned: scalar path), in place.
enum class Batching { Contiguous, Padded, Broadcast, OddItemStride, Misaligned, InPlace };

const char* batching_name(Batching b) {
  switch (b) {
    case Batching::Contiguous:
      return "contiguous";
    case Batching::Padded:
      return "padded";
    case Batching::Broadcast:
      return "broadcast";
    case Batching::OddItemStride:
      return "odd-item-stride";
    case Batching::Misaligned:
      return "misaligned";
    case Batching::InPlace:
      return "in-place";
  }
  return "?";
}

struct FusedCase {
  DType dtype = DType::F32;
  int64_t batch = 1, rows = 1, cols = 1;
  float scale = 1.0f;
  bool causal = false;
  int64_t offset = 0;
  bool log = false;
  Batching batching = Batching::Contiguous;
  std::string describe() const {
    std::ostringstream s;
    s << core::dtype_name(dtype) << " batch " << batch << " " << rows << "x" << cols << " scale " << scale;
    if (causal) s << " causal " << offset;
    s << (log ? " log " : " ") << batching_name(batching);
    return s.str();
  }
};

/// A fused call prepared on the device: x and y in guarded buffers, y poisoned, the
/// reference computed once.
class FusedProblem {
 public:
  FusedProblem(const FusedCase& c, const CudaContext& ctx, uint64_t seed) : case_(c), ctx_(ctx) {
    const gk_dtype type = static_cast<gk_dtype>(c.dtype);
    const int64_t padded = (c.cols + 7) / 8 * 8 + 8;
    int64_t ldx = c.cols, ldy = c.cols, guard = 64;
    int64_t stride_x = c.rows * ldx, stride_y = c.rows * ldy;
    switch (c.batching) {
      case Batching::Contiguous:
      case Batching::Broadcast:
        break;
      case Batching::Padded:
        ldx = padded, ldy = padded + 8;
        stride_x = c.rows * ldx + 16, stride_y = c.rows * ldy + 8;
        break;
      case Batching::OddItemStride:
        stride_x = c.rows * ldx + 1, stride_y = c.rows * ldy + 3;
        break;
      case Batching::Misaligned:
        guard = 65;
        break;
      case Batching::InPlace:
        ldx = ldy = padded;
        stride_x = stride_y = c.rows * padded + 8;
        break;
    }
    if (c.batching == Batching::Broadcast) stride_x = 0;
    const int64_t x_items = stride_x == 0 ? 1 : c.batch;
    x_offset_ = guard;
    y_offset_ = guard;
    x_ = HostArray(type, static_cast<std::size_t>(guard + (x_items - 1) * stride_x + c.rows * ldx + 64));
    y_ = HostArray(type, static_cast<std::size_t>(guard + (c.batch - 1) * stride_y + c.rows * ldy + 64));
    Random rng(seed);
    x_.fill(Pattern::Guard);
    for (int64_t b = 0; b < x_items; ++b)
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t j = 0; j < c.cols; ++j) x_.set(x_at(b, r, j, stride_x, ldx), rng.uniform(-8, 8));
    if (c.rows >= 4) {  // special rows, in the last item x holds (softmax_common.cuh)
      const double inf = std::numeric_limits<double>::infinity();
      const int64_t b = x_items - 1;
      x_.set(x_at(b, 1, 0, stride_x, ldx), std::numeric_limits<double>::quiet_NaN());
      for (int64_t j = 0; j < c.cols; ++j) x_.set(x_at(b, 2, j, stride_x, ldx), -inf);
      x_.set(x_at(b, 3, c.cols - 1, stride_x, ldx), inf);
    }
    y_.fill(Pattern::Guard);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t j = 0; j < c.cols; ++j)
          y_.set_bits(y_offset_ + b * stride_y + r * ldy + j, pattern_bits(type, Pattern::Poison));

    const bool in_place = c.batching == Batching::InPlace;
    check_cuda(cudaMalloc(&x_dev_, x_.bytes()), "cudaMalloc x");
    if (!in_place) check_cuda(cudaMalloc(&y_dev_, y_.bytes()), "cudaMalloc y");
    const size_t es = core::dtype_size(c.dtype);
    args_.rows = c.rows;
    args_.cols = c.cols;
    args_.dtype = c.dtype;
    args_.log = c.log;
    args_.x = static_cast<char*>(x_dev_) + x_offset_ * es;
    args_.ldx = ldx;
    args_.y = static_cast<char*>(in_place ? x_dev_ : y_dev_) + y_offset_ * es;
    args_.ldy = ldy;
    args_.batch = c.batch;
    args_.stride_x = stride_x;
    args_.stride_y = stride_y;
    args_.scale = c.scale;
    args_.causal = c.causal;
    args_.causal_offset = c.offset;
  }
  ~FusedProblem() {
    cudaStreamSynchronize(ctx_.stream);
    cudaFree(x_dev_);
    cudaFree(y_dev_);
  }
  FusedProblem(const FusedProblem&) = delete;
  FusedProblem& operator=(const FusedProblem&) = delete;

  /// Runs `run` on fresh buffers and checks the result: "" when it passes, "declined: ..."
  /// when the runner declined, else what is wrong.
  std::string run_and_check(const Runner& run) {
    check_cuda(cudaMemcpyAsync(x_dev_, x_.data(), x_.bytes(), cudaMemcpyHostToDevice, ctx_.stream), "copy x");
    if (y_dev_)
      check_cuda(cudaMemcpyAsync(y_dev_, y_.data(), y_.bytes(), cudaMemcpyHostToDevice, ctx_.stream), "copy y");
    check_cuda(cudaStreamSynchronize(ctx_.stream), "reset");
    if (std::string ran = run_on_device(run, args_, ctx_); !ran.empty()) return ran;
    const bool in_place = case_.batching == Batching::InPlace;
    const HostArray& before = in_place ? x_ : y_;
    HostArray after(before.type(), before.size());
    check_cuda(cudaMemcpy(after.data(), in_place ? x_dev_ : y_dev_, after.bytes(), cudaMemcpyDeviceToHost), "back");
    const std::vector<double>& reference = this->reference();
    ref::Check check;
    std::vector<bool> output(after.size(), false);
    const FusedCase& c = case_;
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t r = 0; r < c.rows; ++r) {
        const int64_t kept = ref::kept_columns(r, c.cols, c.causal, c.offset);
        for (int64_t j = 0; j < c.cols; ++j) {
          const std::size_t at = y_offset_ + b * args_.stride_y + r * args_.ldy + j;
          output[at] = true;
          check.add(after.get(at), stored(reference[(b * c.rows + r) * c.cols + j]), j >= kept, b, r, j);
        }
      }
    std::string problems = check.passes(bound()) ? "" : check.describe();
    for (std::size_t i = 0; i < after.size(); ++i)
      if (!output[i] && after.bits(i) != before.bits(i)) {
        problems += " (cell " + std::to_string(i) + " outside the outputs changed)";
        break;
      }
    return problems;
  }

 private:
  std::size_t x_at(int64_t b, int64_t r, int64_t j, int64_t stride_x, int64_t ldx) const {
    return static_cast<std::size_t>(x_offset_ + b * stride_x + r * ldx + j);
  }
  /// The reference, item by item from x as stored (computed on the first check only: most
  /// declined cases never need it).
  const std::vector<double>& reference() {
    if (!reference_.empty()) return reference_;
    const FusedCase& c = case_;
    reference_.resize(static_cast<std::size_t>(c.batch * c.rows * c.cols));
    std::vector<double> xs(static_cast<std::size_t>(c.cols));
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t r = 0; r < c.rows; ++r) {
        for (int64_t j = 0; j < c.cols; ++j)
          xs[j] = x_.get(x_at(args_.stride_x == 0 ? 0 : b, r, j, args_.stride_x, args_.ldx));
        ref::reference_row(xs.data(), c.cols, ref::kept_columns(r, c.cols, c.causal, c.offset), c.scale, c.log,
                           reference_.data() + (b * c.rows + r) * c.cols);
      }
    return reference_;
  }
  /// The reference as the output's storage type holds it: over a row of 2^18 or more
  /// columns the values of 16-bit outputs are near the subnormal range, where the storage's
  /// own rounding alone exceeds the relative bound; the rung is judged beyond that rounding.
  double stored(double v) const {
    if (case_.dtype == DType::F16) return f16_to_float(float_to_f16(static_cast<float>(v)));
    if (case_.dtype == DType::BF16) return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    return v;
  }
  double bound() const { return error_bound(core::dtype_name(case_.dtype), static_cast<gk_dtype>(case_.dtype)); }

  FusedCase case_;
  const CudaContext& ctx_;
  HostArray x_, y_;
  int64_t x_offset_ = 0, y_offset_ = 0;
  std::vector<double> reference_;
  core::SoftmaxArgs args_;
  void *x_dev_ = nullptr, *y_dev_ = nullptr;
};

// ---- the runners ----

struct NamedRunner {
  const char* name;
  Runner run;
  bool cluster_plan;  // a forced cluster plan: may decline for the reasons it was built for
};

Runner rung(void (*run)(const core::SoftmaxArgs&, const CudaContext&),
            core::Verdict (*supports)(const core::SoftmaxArgs&, const CudaContext&) = nullptr) {
  return [run, supports](const core::SoftmaxArgs& a, const CudaContext& c) -> std::string {
    if (supports) {
      const core::Verdict v = supports(a, c);
      if (!v.accepted()) return v.text();
    }
    run(a, c);
    return {};
  };
}

Runner plan(SplitLayout layout, int size) {
  return [layout, size](const core::SoftmaxArgs& a, const CudaContext& c) {
    return cuda::softmax::split_row_run_plan(a, c, SplitPlan{layout, size});
  };
}

const std::vector<NamedRunner>& runners() {
  namespace sm = cuda::softmax;
  static const std::vector<NamedRunner> all = {
      {"naive", rung(sm::naive_run), false},
      {"safe_3pass", rung(sm::safe_3pass_run), false},
      {"online", rung(sm::online_run), false},
      {"warp_row", rung(sm::warp_row_run, sm::warp_row_supports), false},
      {"block_row", rung(sm::block_row_run, sm::block_row_supports), false},
      {"split_row", rung(sm::split_row_run, sm::split_row_supports), false},
      {"split_blocks", plan(SplitLayout::Blocks, 0), false},
      {"registers512x8_c1", plan(SplitLayout::Registers512x8, 1), true},
      {"registers512x8_c8", plan(SplitLayout::Registers512x8, 8), true},
      {"registers512x16_c4", plan(SplitLayout::Registers512x16, 4), true},
      {"hybrid_f32_c1", plan(SplitLayout::HybridF32, 1), true},
      {"hybrid_f32_c4", plan(SplitLayout::HybridF32, 4), true},
      {"hybrid_f32_c16", plan(SplitLayout::HybridF32, 16), true},
      {"hybrid16_c1", plan(SplitLayout::Hybrid16, 1), true},
      {"hybrid16_c8", plan(SplitLayout::Hybrid16, 8), true},
      {"hybrid16_1sm_c1", plan(SplitLayout::Hybrid16OneSm, 1), true},
      {"hybrid16_1sm_c2", plan(SplitLayout::Hybrid16OneSm, 2), true},
      {"hybrid16_1sm_c8", plan(SplitLayout::Hybrid16OneSm, 8), true},
  };
  return all;
}

// ---- the cases ----

/// Short and medium rows: every batching, scales, masks that keep part, all or none.
std::vector<FusedCase> short_cases(DType dtype) {
  std::vector<FusedCase> out;
  const int64_t shapes[][3] = {{3, 5, 1}, {3, 7, 33}, {2, 9, 1000}, {3, 4, 4096}, {2, 5, 40000}};
  for (const auto& s : shapes) {
    const int64_t batch = s[0], rows = s[1], cols = s[2];
    for (Batching batching : {Batching::Contiguous, Batching::Padded, Batching::Broadcast, Batching::OddItemStride,
                              Batching::Misaligned, Batching::InPlace}) {
      FusedCase c{dtype, batch, rows, cols};
      c.batching = batching;
      out.push_back(c);  // the batch alone
      c.scale = 0.125f;
      c.causal = true;
      c.offset = 0;
      out.push_back(c);  // scale and the diagonal
      if (batching != Batching::Contiguous && batching != Batching::Padded) continue;
      c.log = true;
      out.push_back(c);
      c.log = false;
      c.causal = false;
      c.scale = -0.5f;
      out.push_back(c);  // a negative scale without a mask (the masked kernels: with_mask)
      c.scale = 0.0f;
      out.push_back(c);  // scale 0: uniform over the row, NaN where an inf meets it
      c.causal = true;
      c.scale = -0.5f;
      c.offset = cols / 2 - 3;
      out.push_back(c);  // a negative scale, the mask ending mid-row
      c.scale = 1.0f;
      c.offset = -rows - 2;
      out.push_back(c);  // every row fully masked
      c.offset = -2;
      c.log = true;
      out.push_back(c);  // the first rows fully masked
      c.log = false;
      c.offset = cols + 3;
      out.push_back(c);  // a mask keeping everything
    }
  }
  return out;
}

/// Long rows (the cluster and split paths), the mask ending early, mid-row, near the end.
std::vector<FusedCase> long_cases(DType dtype) {
  std::vector<FusedCase> out;
  const int64_t shapes[][3] = {{2, 3, 32768}, {1, 3, 262144}, {2, 2, int64_t(1) << 20}};
  for (const auto& s : shapes)
    for (int64_t offset : {int64_t(7), s[2] / 2 + 5, s[2] - 2})
      for (bool log : {false, true}) {
        FusedCase c{dtype, s[0], s[1], s[2], 0.25f, true, offset, log};
        out.push_back(c);
      }
  FusedCase c{dtype, 2, 3, int64_t(1) << 20, 1.0f, false, 0, false, Batching::Padded};
  out.push_back(c);  // a batch of long rows without a mask
  return out;
}

class FusedRung : public ::testing::TestWithParam<std::tuple<int, DType, bool>> {};

TEST_P(FusedRung, MatchesTheReference) {
  GK_CUDA_CONTEXT_OR_SKIP(ctx);
  const NamedRunner& runner = runners()[std::get<0>(GetParam())];
  const DType dtype = std::get<1>(GetParam());
  const bool long_rows = std::get<2>(GetParam());
  if (runner.cluster_plan && !ctx.cluster_launch) GTEST_SKIP() << "no thread-block clusters on " << ctx.arch.name;
  int ran = 0;
  std::map<std::string, int> declines;
  for (const FusedCase& c : long_rows ? long_cases(dtype) : short_cases(dtype)) {
    Random rng;
    FusedProblem problem(c, ctx, rng.seed());
    const std::string r = problem.run_and_check(runner.run);
    if (declined(r)) {
      ++declines[r];
      continue;
    }
    ++ran;
    EXPECT_EQ(r, "") << runner.name << ": " << c.describe() << ", seed " << rng.seed();
  }
  for (const auto& [why, n] : declines) std::printf("  %s: %d x %s\n", runner.name, n, why.c_str());
  // warp_row declines rows beyond its registers, block_row beyond shared memory, a forced
  // cluster plan rows it does not hold or another dtype's layout: each must run something
  // it was built for, except layouts of another dtype and register rungs on long rows.
  const bool other_dtype = (std::string(runner.name).rfind("hybrid_f32", 0) == 0 && dtype != DType::F32) ||
                           (std::string(runner.name).rfind("hybrid16", 0) == 0 && dtype == DType::F32);
  const bool too_long = long_rows && (std::string(runner.name) == "warp_row" ||
                                      std::string(runner.name) == "block_row" || runner.cluster_plan);
  if (other_dtype)
    EXPECT_EQ(ran, 0) << "a layout built for another dtype ran";
  else if (!too_long)
    EXPECT_GT(ran, 0) << runner.name << " ran no case at all";
  if (!runner.cluster_plan && std::string(runner.name) != "warp_row" && std::string(runner.name) != "block_row")
    EXPECT_TRUE(declines.empty()) << runner.name << " must take every call";
}

std::string fused_test_name(const ::testing::TestParamInfo<FusedRung::ParamType>& info) {
  return std::string(runners()[std::get<0>(info.param)].name) + "_" + core::dtype_name(std::get<1>(info.param)) +
         (std::get<2>(info.param) ? "_long" : "");
}

INSTANTIATE_TEST_SUITE_P(Fused, FusedRung,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(runners().size())),
                                            ::testing::Values(DType::F32, DType::F16, DType::BF16), ::testing::Bool()),
                         fused_test_name);

// ---- cuDNN: batches only ----

TEST(FusedCudnn, BatchesAsRowsAndItemByItem) {
  GK_CUDA_CONTEXT_OR_SKIP(ctx);
  const NamedRunner cudnn{"cudnn", rung(cuda::softmax::cudnn_run, cuda::softmax::cudnn_supports), false};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (Batching batching : {Batching::Contiguous, Batching::Padded, Batching::Broadcast, Batching::InPlace})
      for (bool log : {false, true}) {
        FusedCase c{dtype, 3, 7, 1000};
        c.batching = batching;
        c.log = log;
        Random rng;
        FusedProblem problem(c, ctx, rng.seed());
        const std::string r = problem.run_and_check(cudnn.run);
        if (declined(r)) GTEST_SKIP() << r;  // cuDNN not installed
        EXPECT_EQ(r, "") << c.describe() << ", seed " << rng.seed();
      }
  // What it does not fuse it declines (the core declines it first, by the table row).
  for (const FusedCase& c : {FusedCase{DType::F32, 2, 3, 100, 0.5f}, FusedCase{DType::F32, 2, 3, 100, 1.0f, true}}) {
    FusedProblem problem(c, ctx, 1);
    const std::string r = problem.run_and_check(cudnn.run);
    EXPECT_TRUE(declined(r) && r.find("Feature") != std::string::npos) << c.describe() << ": " << r;
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_softmax
