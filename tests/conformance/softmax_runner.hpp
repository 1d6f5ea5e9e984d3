// Runs one softmax case on one (backend, rung, dtype) through device buffers: result
// against the double reference (NaN rows where PyTorch gives them), every output cell
// written, guard cells untouched, x unchanged (unless in place), the forced rung used,
// and declines handled as for gemm.
#pragma once

#include "conformance/params.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpukern::test {

/// Special values written into x.
enum class Special {
  None,
  SomeNegativeInfinity,    // about a quarter of each row is -inf (never a whole row)
  RowAllNegativeInfinity,  // one row entirely -inf: that row's result is NaN
  RowWithNan,              // one row holds a NaN: that row's result is NaN
  LargeValues,             // values near 1000: exp overflows unless the max is subtracted
};

struct SoftmaxCase {
  int64_t rows = 1, cols = 1;
  int64_t pad_x = 0, pad_y = 0;  // elements added to ldx / ldy beyond cols
  bool in_place = false;         // y == x (then ldy == ldx, pad_y ignored)
  bool log_softmax = false;
  Special special = Special::None;
  int64_t guard = 32;  // as for gemm: 32 keeps x and y aligned, an odd count does not

  // gk_softmax_ex (a case without these is a plain gk_softmax call): batch items of
  // rows x cols `gap` cells apart (broadcast_x: stride_x 0), softmax(scale * x), and the
  // causal mask (row r keeps columns c <= r + causal_offset).
  int64_t batch = 1;
  int64_t gap = 0;
  bool broadcast_x = false;
  float scale = 1.0f;
  bool causal = false;
  int64_t causal_offset = 0;

  bool extended() const { return batch != 1 || gap != 0 || broadcast_x || scale != 1.0f || causal; }
  std::string describe() const;
};

/// A plain rows x cols case (softmax, no padding), for the test groups to vary.
inline SoftmaxCase shape(int64_t rows, int64_t cols) {
  SoftmaxCase c;
  c.rows = rows;
  c.cols = cols;
  return c;
}

Outcome run_softmax_case(const RungParam& param, const SoftmaxCase& c);
void run_softmax_cases(const RungParam& param, const std::vector<SoftmaxCase>& cases);
void expect_softmax_declined(const RungParam& param, const SoftmaxCase& c);

}  // namespace gpukern::test
