// Helpers of the softmax row-kernel tests (tests/cpu/softmax_*_test.cpp): the per-thread
// scratch row a kernel needs, and the arguments of a single-row call.
#pragma once

#include "core/types.hpp"
#include "cpu/softmax/kernel.hpp"

#include <cstdlib>

namespace gpukern::cpu::test {

/// The per-thread scratch row a kernel needs (kSoftmaxScratch floats, 64-byte aligned).
inline float* softmax_scratch_row() {
  static float* row = static_cast<float*>(std::aligned_alloc(64, kSoftmaxScratch * sizeof(float)));
  return row;
}

/// One row of `cols` elements of `type`, from x to y (y == x: in place).
inline core::SoftmaxArgs one_row(const void* x, void* y, int64_t cols, core::DType type, bool log) {
  core::SoftmaxArgs s;
  s.rows = 1;
  s.cols = cols;
  s.x = x;
  s.ldx = cols;
  s.y = y;
  s.ldy = cols;
  s.dtype = type;
  s.log = log;
  return s;
}

}  // namespace gpukern::cpu::test
