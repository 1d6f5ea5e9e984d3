// Runs one gemm case on one (backend, rung, dtype) through device buffers and checks
// everything the design promises: the result against the double reference, every
// output cell written (poisoned before a beta = 0 call), nothing outside C touched
// (guard cells), inputs unchanged, the forced rung actually used, and, when a rung
// declines, a message, an untouched C, and `auto` accepting the same call.
#pragma once

#include "conformance/params.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpukern::test {

struct GemmCase {
  int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  /// Elements added to the minimum leading dimension of A, B, C (row padding).
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;
  /// Guard cells before and after each buffer. 32 keeps the operands as aligned as the
  /// allocation (128 bytes for f32); an odd count makes every operand misaligned.
  int64_t guard = 32;

  std::string describe() const;
};

/// Runs `c` with `param`; failures are reported through gtest (EXPECT/ADD_FAILURE)
/// with the case and the seed. A declined case is printed.
Outcome run_gemm_case(const RungParam& param, const GemmCase& c);

/// Runs every case and prints how many passed and were declined.
void run_gemm_cases(const RungParam& param, const std::vector<GemmCase>& cases);

/// A forced rung called with a dtype it does not list must decline: GK_UNSUPPORTED,
/// a non-empty message, C untouched.
void expect_gemm_declined(const RungParam& param, const GemmCase& c);

}  // namespace gpukern::test
