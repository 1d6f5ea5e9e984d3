// Tensors of more than 2^31 elements (ctest label "large"): every rung that takes the
// shape, and split_row's plans forced, must index rows past element 2^31 right (64-bit
// offsets). f16, two shapes: (2^22 + 1) x 512 (short rows, 4 GiB a buffer) and
// 8193 x 262144 (long rows). The input is one random chunk of rows tiled over the
// tensor; rows on both sides of element 2^31 and the last row are checked against the
// double reference. Needs about 9 GB of device memory; skips with the reason without a
// CUDA device or with less free memory.
#include "softmax_harness.cuh"

#include "cuda/softmax/06_split_row.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace gpukern::test::cuda_softmax {
namespace {

using cuda::CudaContext;
using cuda::softmax::SplitLayout;
using cuda::softmax::SplitPlan;

struct Shape {
  int64_t rows, cols;
  int64_t chunk_rows;  // rows of distinct random data, tiled over the tensor
};
constexpr Shape kShortRows{(int64_t(1) << 22) + 1, 512, 65536};
constexpr Shape kLongRows{8193, 262144, 64};

/// A rung's run function, or a forced split_row plan.
struct Runner {
  const char* name;
  void (*rung)(const core::SoftmaxArgs&, const CudaContext&);
  SplitPlan plan;
};

/// The device buffers of one shape (made on first use, kept for the suite).
class LargeTensor {
 public:
  static LargeTensor& get(const Shape& s, const CudaContext& ctx, std::string* why_not) {
    static std::vector<std::unique_ptr<LargeTensor>> made;
    for (auto& t : made)
      if (t->shape_.rows == s.rows && t->shape_.cols == s.cols) return *t;
    made.clear();  // one shape at a time: both would need 17 GB
    made.push_back(std::unique_ptr<LargeTensor>(new LargeTensor(s, ctx)));
    if (!made.back()->ok_) *why_not = made.back()->why_not_;
    return *made.back();
  }
  ~LargeTensor() {
    cudaFree(x_);
    cudaFree(y_);
  }
  bool ok() const { return ok_; }

  /// Runs `r` and checks the rows around element 2^31 and the last; "" when right.
  std::string run_and_check(const Runner& r, const CudaContext& ctx) {
    const size_t bytes = static_cast<size_t>(shape_.rows * shape_.cols) * 2;
    if (cudaMemsetAsync(y_, 0xff, bytes, ctx.stream) != cudaSuccess) return "memset failed";
    core::SoftmaxArgs a;
    a.rows = shape_.rows;
    a.cols = shape_.cols;
    a.x = x_;
    a.y = y_;
    a.ldx = a.ldy = shape_.cols;
    a.dtype = DType::F16;
    try {
      if (r.rung) {
        r.rung(a, ctx);
      } else if (std::string why = cuda::softmax::split_row_run_plan(a, ctx, r.plan); !why.empty()) {
        return "declined: " + why;
      }
    } catch (const core::Error& e) {
      return std::string("threw: ") + e.what();
    }
    if (const cudaError_t e = cudaStreamSynchronize(ctx.stream); e != cudaSuccess)
      return std::string("device error: ") + cudaGetErrorString(e);
    const int64_t past = (int64_t(1) << 31) / shape_.cols;  // the first row at or past element 2^31
    std::vector<int64_t> rows = {0, shape_.chunk_rows - 1, shape_.chunk_rows, past - 1, past, shape_.rows - 1};
    const double bound = error_bound("f16", GK_F16);
    for (int64_t row : rows) {
      HostArray out(GK_F16, static_cast<size_t>(shape_.cols));
      if (cudaMemcpy(out.data(), static_cast<char*>(y_) + row * shape_.cols * 2, out.bytes(), cudaMemcpyDeviceToHost) !=
          cudaSuccess)
        return "copy back failed";
      const int64_t source = row % shape_.chunk_rows;
      const Window w{1, shape_.cols, shape_.cols, source * shape_.cols, chunk_.size()};
      const std::vector<double> ref = reference_softmax(MatrixView{&chunk_, w}, false);
      const Comparison c = compare(read_window(out, make_window(1, shape_.cols, shape_.cols, 0)), ref, shape_.cols);
      if (!c.passes(bound))
        return "row " + std::to_string(row) + ": error " + std::to_string(c.relative_error) + ", " +
               std::to_string(c.special_mismatches) + " special mismatches " + c.first_problem;
    }
    return {};
  }

 private:
  LargeTensor(const Shape& s, const CudaContext& ctx) : shape_(s) {
    const size_t bytes = static_cast<size_t>(s.rows * s.cols) * 2;
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    if (free_bytes < 2 * bytes + (size_t(512) << 20)) {
      why_not_ = "needs " + std::to_string(2 * bytes >> 20) + " MiB of device memory, " +
                 std::to_string(free_bytes >> 20) + " MiB free";
      return;
    }
    if (cudaMalloc(&x_, bytes) != cudaSuccess || cudaMalloc(&y_, bytes) != cudaSuccess) {
      cudaGetLastError();
      why_not_ = "cudaMalloc of two " + std::to_string(bytes >> 20) + " MiB buffers failed";
      return;
    }
    chunk_ = HostArray(GK_F16, static_cast<size_t>(s.chunk_rows * s.cols));
    Random rng;
    seed_ = rng.seed();
    for (size_t i = 0; i < chunk_.size(); ++i) chunk_.set(i, rng.uniform(-8, 8));
    const size_t chunk_bytes = chunk_.bytes();
    cudaMemcpyAsync(x_, chunk_.data(), chunk_bytes, cudaMemcpyHostToDevice, ctx.stream);
    for (size_t off = chunk_bytes; off < bytes; off += chunk_bytes)
      cudaMemcpyAsync(static_cast<char*>(x_) + off, x_, std::min(chunk_bytes, bytes - off), cudaMemcpyDeviceToDevice,
                      ctx.stream);
    ok_ = cudaStreamSynchronize(ctx.stream) == cudaSuccess;
    if (!ok_) why_not_ = "filling the input failed";
  }

  Shape shape_;
  HostArray chunk_;
  uint64_t seed_ = 0;
  void *x_ = nullptr, *y_ = nullptr;
  bool ok_ = false;
  std::string why_not_;
};

class LargeTensors : public ::testing::TestWithParam<std::tuple<Shape, Runner>> {};

TEST_P(LargeTensors, RowsPastElementTwoToThe31) {
  GK_CUDA_CONTEXT_OR_SKIP(ctx);
  const auto& [shape, runner] = GetParam();
  const bool forced_cluster = !runner.rung && runner.plan.layout != SplitLayout::Blocks;
  if (forced_cluster && !ctx.cluster_launch) GTEST_SKIP() << "no thread-block clusters before sm_90";
  std::string why_not;
  LargeTensor& t = LargeTensor::get(shape, ctx, &why_not);
  if (!t.ok()) GTEST_SKIP() << why_not;
  const std::string r = t.run_and_check(runner, ctx);
  EXPECT_EQ(r, "") << shape.rows << "x" << shape.cols << " f16, " << runner.name;
}

const Runner kShortRowRunners[] = {
    {"naive", cuda::softmax::naive_run, {}},
    {"safe_3pass", cuda::softmax::safe_3pass_run, {}},
    {"online", cuda::softmax::online_run, {}},
    {"warp_row", cuda::softmax::warp_row_run, {}},
    {"block_row", cuda::softmax::block_row_run, {}},
    {"split_row", cuda::softmax::split_row_run, {}},
    {"split_row_blocks", nullptr, {SplitLayout::Blocks, 0}},
    {"split_row_registers512x8_c1", nullptr, {SplitLayout::Registers512x8, 1}},
    {"split_row_hybrid16_c1", nullptr, {SplitLayout::Hybrid16, 1}},
};
const Runner kLongRowRunners[] = {
    {"safe_3pass", cuda::softmax::safe_3pass_run, {}},
    {"online", cuda::softmax::online_run, {}},
    {"split_row", cuda::softmax::split_row_run, {}},
    {"split_row_blocks", nullptr, {SplitLayout::Blocks, 0}},
    {"split_row_registers512x16_c4", nullptr, {SplitLayout::Registers512x16, 4}},
    {"split_row_hybrid16_c8", nullptr, {SplitLayout::Hybrid16, 8}},
    {"split_row_hybrid16_1sm_c2", nullptr, {SplitLayout::Hybrid16OneSm, 2}},
};

std::string large_test_name(const ::testing::TestParamInfo<LargeTensors::ParamType>& info) {
  return std::string(std::get<0>(info.param).cols == kShortRows.cols ? "short_rows_" : "long_rows_") +
         std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(ShortRows, LargeTensors,
                         ::testing::Combine(::testing::Values(kShortRows), ::testing::ValuesIn(kShortRowRunners)),
                         large_test_name);
INSTANTIATE_TEST_SUITE_P(LongRows, LargeTensors,
                         ::testing::Combine(::testing::Values(kLongRows), ::testing::ValuesIn(kLongRowRunners)),
                         large_test_name);

}  // namespace
}  // namespace gpukern::test::cuda_softmax
