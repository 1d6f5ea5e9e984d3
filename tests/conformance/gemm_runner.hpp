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

  // Strided batches and the fused epilogue (gk_gemm_ex; a case without them is a plain
  // gk_gemm call). Item b of A, B, C and the bias starts b strides after item 0.
  int64_t batch = 1;
  /// Elements between one item's last cell and the next item's first (padded strides).
  int64_t gap = 0;
  bool broadcast_a = false, broadcast_b = false;  ///< stride 0: one A (B) for every item
  /// The items' rows interleaved in C: stride_c = n, ldc = batch * n + pad_c.
  bool interleaved_c = false;
  enum class Bias { None, F32, CType } bias = Bias::None;
  bool bias_per_item = false;  ///< stride_bias = n + gap; else 0 (one bias for every item)
  gk_activation act = GK_ACT_NONE;

  bool extended() const {
    return batch != 1 || gap != 0 || broadcast_a || broadcast_b || interleaved_c || bias != Bias::None ||
           act != GK_ACT_NONE;
  }
  std::string describe() const;
};

/// Runs `c` with `param`; failures are reported through gtest (EXPECT/ADD_FAILURE)
/// with the case and the seed. A declined case is printed.
/// A plain m x n x k case (NN, alpha 1, beta 0), for the test groups to vary.
inline GemmCase shape(int64_t m, int64_t n, int64_t k) {
  GemmCase c;
  c.m = m;
  c.n = n;
  c.k = k;
  return c;
}

Outcome run_gemm_case(const RungParam& param, const GemmCase& c);

/// Runs every case and prints how many passed and were declined.
void run_gemm_cases(const RungParam& param, const std::vector<GemmCase>& cases);

/// A forced rung called with a dtype it does not list must decline: GK_UNSUPPORTED,
/// a non-empty message, C untouched.
void expect_gemm_declined(const RungParam& param, const GemmCase& c);

}  // namespace gpukern::test
