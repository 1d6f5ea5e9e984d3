// The harness of the CUDA softmax internals tests: a CudaContext for device 0 (or the
// reason there is none), and one call prepared on the device: random inputs with
// special rows (all -inf, a NaN, half -inf, a +inf), in a guarded buffer with a chosen
// layout (contiguous, padded rows, odd row strides, misaligned pointers, in place), the
// output poisoned with NaN before the call, and the check of a result against the
// double-precision reference (relative Frobenius error within the dtype's bound, NaN
// exactly where the reference has NaN, every cell outside the output bit-identical).
#pragma once

#include "cuda/context.cuh"
#include "support/host_array.hpp"
#include "support/reference.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace gpukern::test::cuda_softmax {

using core::DType;

/// A CudaContext for device 0 on a non-blocking stream of its own (made once), or
/// nullptr with `why_not` set when there is no usable CUDA device.
const cuda::CudaContext* device_context(std::string* why_not);

/// Skips the test (GTEST_SKIP, with the reason) when there is no CUDA device; else
/// declares `ctx`, the device's context.
#define GK_CUDA_CONTEXT_OR_SKIP(ctx)                                                                               \
  std::string ctx##_why_not_;                                                                                      \
  const ::gpukern::cuda::CudaContext* ctx##_ptr_ = ::gpukern::test::cuda_softmax::device_context(&ctx##_why_not_); \
  if (!ctx##_ptr_) GTEST_SKIP() << "no CUDA device: " << ctx##_why_not_;                                           \
  const ::gpukern::cuda::CudaContext& ctx = *ctx##_ptr_

/// How x and y sit in memory. Contiguous and Padded keep the 16-byte path where the row
/// length allows it; OddStride and Misaligned force the scalar path.
enum class Layout { Contiguous, Padded, OddStride, Misaligned, InPlace };
const char* layout_name(Layout layout);

/// One call.
struct Case {
  DType dtype = DType::F32;
  int64_t rows = 1, cols = 1;
  Layout layout = Layout::Contiguous;
  bool log = false;
  std::string describe() const;
};

/// What a result looked like against the reference.
struct Outcome {
  Comparison comparison;  // error and special-value mismatches
  int64_t unwritten = 0;  // output cells still holding the poison
  std::string outside;    // "" or the cells outside the output that changed
  bool passes(double bound) const { return comparison.passes(bound) && unwritten == 0 && outside.empty(); }
  std::string describe() const;
};

/// A call prepared on the device (buffers freed by the destructor).
class Problem {
 public:
  Problem(const Case& c, const cuda::CudaContext& ctx, uint64_t seed);
  ~Problem();
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  /// The call, pointing at the device buffers.
  const core::SoftmaxArgs& args() const { return args_; }
  /// The error bound of the case's dtype (docs/design.md).
  double bound() const;
  /// Puts x and y back to their initial contents (before each run).
  void reset();
  /// Waits for the stream, then compares the output with the reference and the cells
  /// outside it with their initial contents.
  Outcome check();

 private:
  Case case_;
  const cuda::CudaContext& ctx_;
  HostArray x_, y_;
  Window wx_, wy_;
  std::vector<double> reference_;
  core::SoftmaxArgs args_;
  void *x_dev_ = nullptr, *y_dev_ = nullptr;
};

/// Runs `run` (a rung's run function, or a forced plan that returns "" or why it cannot
/// run the call) on a prepared problem; "" when it ran and passed, "declined: ..." when
/// it declined, else what went wrong.
using Runner = std::function<std::string(const core::SoftmaxArgs&, const cuda::CudaContext&)>;
std::string run_and_check(Problem& problem, const Runner& run, const cuda::CudaContext& ctx);
/// Runs `run` on `args` and waits for the stream: "" when it ran, "declined: ..." when it
/// declined, "threw: ..." or "device error: ..." when it failed.
std::string run_on_device(const Runner& run, const core::SoftmaxArgs& args, const cuda::CudaContext& ctx);

/// True when `result` (from run_and_check) says the runner declined the call.
inline bool declined(const std::string& result) { return result.rfind("declined: ", 0) == 0; }

}  // namespace gpukern::test::cuda_softmax
