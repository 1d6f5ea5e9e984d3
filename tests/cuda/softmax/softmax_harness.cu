// The harness of the CUDA softmax internals tests; see softmax_harness.cuh.
#include "softmax_harness.cuh"

#include "support/cuda_check.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace gpukern::test::cuda_softmax {
namespace {

/// Elements of guard before each buffer: 64 keeps 16-byte alignment in every dtype; the
/// misaligned layout adds one element.
constexpr int64_t kGuard = 64;

int64_t round_up8(int64_t v) { return (v + 7) / 8 * 8; }

}  // namespace

const cuda::CudaContext* device_context(std::string* why_not) {
  static std::once_flag once;
  static cuda::CudaContext ctx;
  static std::string reason;
  static bool ok = false;
  std::call_once(once, [] {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      reason = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found";
      cudaGetLastError();
      return;
    }
    try {
      check_cuda(cudaSetDevice(0), "cudaSetDevice");
      const cuda::DeviceDescription d = cuda::vendor::describe_device(0);
      ctx = cuda::make_context(0, d, nullptr);
      check_cuda(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      ok = true;
    } catch (const std::exception& e) {
      reason = e.what();
    }
  });
  if (!ok && why_not) *why_not = reason;
  return ok ? &ctx : nullptr;
}

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Padded:
      return "padded";
    case Layout::OddStride:
      return "odd-stride";
    case Layout::Misaligned:
      return "misaligned";
    case Layout::InPlace:
      return "in-place";
  }
  return "?";
}

std::string Case::describe() const {
  std::ostringstream s;
  s << core::dtype_name(dtype) << " " << rows << "x" << cols << " " << layout_name(layout) << (log ? " log" : "");
  return s.str();
}

std::string Outcome::describe() const {
  std::ostringstream s;
  s << "error " << comparison.relative_error << ", " << comparison.special_mismatches << " special mismatches";
  if (!comparison.first_problem.empty()) s << " (first: " << comparison.first_problem << ")";
  if (unwritten) s << ", " << unwritten << " outputs never written";
  if (!outside.empty()) s << ", outside the output: " << outside;
  return s.str();
}

Problem::Problem(const Case& c, const cuda::CudaContext& ctx, uint64_t seed) : case_(c), ctx_(ctx) {
  const gk_dtype type = static_cast<gk_dtype>(c.dtype);
  int64_t ldx = c.cols, ldy = c.cols, guard = kGuard;
  switch (c.layout) {
    case Layout::Contiguous:
      break;
    case Layout::Padded:
      ldx = round_up8(c.cols) + 8, ldy = round_up8(c.cols) + 16;
      break;
    case Layout::OddStride:
      ldx = c.cols + 3, ldy = c.cols + 5;
      break;
    case Layout::Misaligned:
      guard = kGuard + 1;
      break;
    case Layout::InPlace:
      ldx = ldy = round_up8(c.cols) + 8;
      break;
  }
  wx_ = make_window(c.rows, c.cols, ldx, guard);
  wy_ = make_window(c.rows, c.cols, ldy, guard);
  x_ = HostArray(type, wx_.total);
  Random rng(seed);
  fill_window(x_, wx_, Pattern::Padding, [&](int64_t, int64_t) { return rng.uniform(-8, 8); });
  if (c.rows >= 4) {  // PyTorch's special values (softmax_common.cuh)
    const double inf = std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < c.cols; ++j) x_.set(wx_.index(0, j), -inf);          // all -inf: NaN row
    x_.set(wx_.index(1, c.cols / 2), std::numeric_limits<double>::quiet_NaN());  // a NaN: NaN row
    for (int64_t j = 0; j < c.cols; j += 2) x_.set(wx_.index(2, j), -inf);       // half -inf
    x_.set(wx_.index(3, 0), inf);                                                // +inf: NaN row
  }
  reference_ = reference_softmax(MatrixView{&x_, wx_}, c.log);
  y_ = HostArray(type, wy_.total);
  y_.fill(Pattern::Guard);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.cols; ++j) y_.set_bits(wy_.index(r, j), pattern_bits(type, Pattern::Poison));

  check_cuda(cudaMalloc(&x_dev_, x_.bytes()), "cudaMalloc x");
  if (c.layout != Layout::InPlace) check_cuda(cudaMalloc(&y_dev_, y_.bytes()), "cudaMalloc y");
  const size_t es = core::dtype_size(c.dtype);
  args_.rows = c.rows;
  args_.cols = c.cols;
  args_.dtype = c.dtype;
  args_.log = c.log;
  args_.x = static_cast<char*>(x_dev_) + wx_.offset * es;
  args_.ldx = ldx;
  args_.y = c.layout == Layout::InPlace ? static_cast<char*>(x_dev_) + wx_.offset * es
                                        : static_cast<char*>(y_dev_) + wy_.offset * es;
  args_.ldy = ldy;
  reset();
}

Problem::~Problem() {
  cudaStreamSynchronize(ctx_.stream);
  cudaFree(x_dev_);
  cudaFree(y_dev_);
}

double Problem::bound() const { return error_bound(core::dtype_name(case_.dtype), static_cast<gk_dtype>(case_.dtype)); }

void Problem::reset() {
  // Stream-ordered: the rungs run on ctx.stream, which does not wait for the legacy stream.
  check_cuda(cudaMemcpyAsync(x_dev_, x_.data(), x_.bytes(), cudaMemcpyHostToDevice, ctx_.stream), "copy x");
  if (y_dev_) check_cuda(cudaMemcpyAsync(y_dev_, y_.data(), y_.bytes(), cudaMemcpyHostToDevice, ctx_.stream), "copy y");
  check_cuda(cudaStreamSynchronize(ctx_.stream), "reset");
}

Outcome Problem::check() {
  check_cuda(cudaStreamSynchronize(ctx_.stream), "the call");
  const bool in_place = case_.layout == Layout::InPlace;
  const HostArray& before = in_place ? x_ : y_;
  const Window& w = in_place ? wx_ : wy_;
  HostArray after(before.type(), before.size());
  check_cuda(cudaMemcpy(after.data(), in_place ? x_dev_ : y_dev_, after.bytes(), cudaMemcpyDeviceToHost), "copy back");
  Outcome o;
  o.comparison = compare(read_window(after, w), reference_, case_.cols);
  if (!in_place) o.unwritten = count_inside(after, w, Pattern::Poison);
  o.outside = changes_outside(before, after, w);
  return o;
}

std::string run_on_device(const Runner& run, const core::SoftmaxArgs& args, const cuda::CudaContext& ctx) {
  try {
    const std::string why = run(args, ctx);
    if (!why.empty()) return "declined: " + why;
  } catch (const core::Error& e) {
    cudaGetLastError();
    return std::string("threw: ") + e.what();
  }
  const cudaError_t e = cudaStreamSynchronize(ctx.stream);
  if (e != cudaSuccess) return std::string("device error: ") + cudaGetErrorString(e);
  return {};
}

std::string run_and_check(Problem& problem, const Runner& run, const cuda::CudaContext& ctx) {
  problem.reset();
  if (std::string ran = run_on_device(run, problem.args(), ctx); !ran.empty()) return ran;
  const Outcome o = problem.check();
  return o.passes(problem.bound()) ? std::string() : o.describe();
}

}  // namespace gpukern::test::cuda_softmax
