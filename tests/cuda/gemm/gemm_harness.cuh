// The harness of the CUDA GEMM internals tests: one call prepared on the device (random
// A and B, NaN in every cell the call must not read, C poisoned with NaN when beta == 0,
// guard columns and a guard row around C), its double-precision reference computed on
// the device from exactly the stored values, and the check of a result against it
// (relative Frobenius error within the dtype's bound, no non-finite output, every guard
// cell bit-identical). Calls run either through the public API with a forced rung
// (run_rung) or by launching a kernel configuration directly on a hand-made CudaContext
// (device_context).
#pragma once

#include "cuda/context.cuh"

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpukern::cuda::gemm {}  // namespace gpukern::cuda::gemm

namespace gpukern::test::cuda_gemm {

using core::DType;
using cuda::CudaContext;
namespace gemm = cuda::gemm;

/// One call. Leading dimensions are the compact ones plus `pad_*` elements; `offset_a`
/// shifts A that many elements into its buffer (an odd count misaligns it).
struct Case {
  int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  DType ab = DType::F32, c = DType::F32;
  bool tf32 = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad_a = 0, pad_b = 0, pad_c = 3;
  int64_t offset_a = 0;

  /// m x n x k in `layout` 0..3 (bit 0: A transposed, bit 1: B transposed), the rest default.
  static Case shape(int64_t m, int64_t n, int64_t k, int layout) {
    Case c;
    c.m = m;
    c.n = n;
    c.k = k;
    c.trans_a = layout & 1;
    c.trans_b = layout & 2;
    return c;
  }
  std::string describe() const;
  /// "f32", "tf32", "f16", "bf16": the arithmetic the call asks for.
  std::string arithmetic() const;
};

/// The bound on the relative error (docs/design.md, as the conformance suite applies it).
double error_bound(const Case& c);

/// What a result looked like against the reference.
struct Outcome {
  double error = 0;           // ||C - ref||_F / ||ref||_F (absolute when ref is 0)
  int64_t nonfinite = 0;      // NaN/inf outputs
  int64_t guard_changed = 0;  // cells outside C that changed
  bool passes(double bound) const { return nonfinite == 0 && guard_changed == 0 && error <= bound; }
  std::string describe() const;
};

/// A call prepared on the device (buffers freed by the destructor).
class Problem {
 public:
  Problem(const Case& c, cudaStream_t stream, uint64_t seed);
  ~Problem();
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  /// The call, pointing at the device buffers.
  const core::GemmArgs& args() const { return args_; }
  const Case& spec() const { return case_; }
  /// Puts C back to its initial contents (before each run of another rung).
  void reset_c();
  /// Compares C with the reference and the guard cells with their initial contents.
  Outcome check();

 private:
  Case case_;
  cudaStream_t stream_;
  core::GemmArgs args_;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *c0_ = nullptr;
  double* ref_ = nullptr;
  size_t c_bytes_ = 0;
};

/// Whether a CUDA device is there; `why_not` says why not ("no CUDA device: ...").
bool cuda_device_present(std::string* why_not);

/// A test with its own non-blocking stream; skipped with the reason without a device.
class OnStream : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

/// A CudaContext for device 0 on `stream`, or null with `why_not` set (no device).
const CudaContext* device_context(cudaStream_t stream, std::string* why_not);

/// Runs the call with the rung `name` forced, through the public API on `stream`.
/// Returns the library's status; `message` gets its error text.
gk_status run_rung(const std::string& name, const core::GemmArgs& args, cudaStream_t stream, std::string* message);

/// Whether the CUDA backend and rung `name` can run here; `why_not` says why not.
bool rung_runs_here(const std::string& name, std::string* why_not);

/// Runs `run` on `problem` (C reset first) and checks the result; failures are
/// reported through gtest with the case. Returns whether it passed.
bool run_and_check(Problem& problem, const std::string& label, const std::function<void(const core::GemmArgs&)>& run);

/// The same for a forced rung; a decline (GK_UNSUPPORTED) is counted in `*declined`
/// (not a failure) and must leave C untouched.
bool check_rung(Problem& problem, const std::string& rung, cudaStream_t stream, int* declined);

/// check_rung over `cases` (each with fresh random data); prints how many passed and
/// were declined, and fails when none ran (a check that cannot fail).
void check_rung_cases(const std::string& rung, const std::vector<Case>& cases, cudaStream_t stream);

}  // namespace gpukern::test::cuda_gemm
