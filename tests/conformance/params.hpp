// The parameters of the conformance suite: every (backend, rung, dtype) the library
// registers, plus `auto` per backend, enumerated at run time from list_backends() and
// Device::variants(). Unavailable backends and rungs that cannot run here become
// parameters too, so that they show up as skipped with the reason instead of vanishing.
#pragma once

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

namespace gpukern::test {

struct RungParam {
  std::string backend;  // "cpu", "cuda", "hip"
  bool backend_available = true;
  std::string backend_reason;  // why unavailable
  std::string rung;            // a rung name, or "auto"
  bool runs_here = true;
  std::string rung_reason;    // why the rung cannot run on this device
  std::string dtypes;         // the rung's dtypes string, as listed
  bool is_reference = false;  // the vendor library's rung (cublas, cudnn, openblas)

  // One storage/arithmetic configuration.
  std::string arithmetic;         // "f32", "tf32", "f16", "bf16"
  gk_dtype input_type = GK_F32;   // A, B (gemm) or x, y (softmax)
  gk_dtype output_type = GK_F32;  // C (gemm); same as input for softmax
  bool allow_tf32 = false;
  /// tf32 permission given to a rung that lists f32 but not tf32: it must run exact f32.
  bool exact_f32 = false;

  bool forced() const { return rung != "auto"; }
  /// The bound from docs/design.md for this configuration.
  double bound() const;
  /// "cpu_omp_simd_f16_to_f32": unique, letters/digits/underscores only.
  std::string test_name() const;
};

/// gtest prints parameters with this (the test name instead of the bytes).
void PrintTo(const RungParam& param, std::ostream* out);

/// Why a test with this parameter cannot run (unavailable backend, rung not here, CPU ISA
/// missing), or "" when it can. Sets *fail when the reason is a failure, not a skip
/// (the CPU reports another ISA than GPUKERN_CPU_ISA requests).
std::string skip_reason(const RungParam& param, bool* fail);

/// Every runnable (backend, rung, dtype) of gemm, and of softmax.
std::vector<RungParam> gemm_params();
std::vector<RungParam> softmax_params();
/// Forced rungs with each dtype they do not list: the call must be declined.
std::vector<RungParam> gemm_unlisted_params();
std::vector<RungParam> softmax_unlisted_params();

/// How one case ended: a declined case was checked through `auto` instead.
enum class Outcome { Passed, Declined, Failed };

/// Runs every case through `run_one` (a case -> Outcome) and prints the tally.
template <class Case, class RunOne>
void run_all_cases(const RungParam& param, const std::vector<Case>& cases, RunOne run_one) {
  int passed = 0, declined = 0;
  for (const auto& c : cases) {
    const Outcome outcome = run_one(param, c);
    passed += outcome == Outcome::Passed;
    declined += outcome == Outcome::Declined;
  }
  std::cout << "[          ] " << param.test_name() << ": " << passed << " passed, " << declined
            << " declined (checked through auto), of " << cases.size() << " cases\n";
}

/// The fixture of every conformance group: skips the parameter with skip_reason's answer
/// (or fails where that answer is a failure).
class LadderTest : public ::testing::TestWithParam<RungParam> {
 protected:
  void SetUp() override {
    bool fail = false;
    const std::string why = skip_reason(GetParam(), &fail);
    if (fail) FAIL() << why;
    if (!why.empty()) GTEST_SKIP() << why;
  }
  bool on_gpu() const { return GetParam().backend != "cpu"; }
};

/// gtest's name generator for these parameters.
struct ParamName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return info.param.test_name();
  }
};

}  // namespace gpukern::test
