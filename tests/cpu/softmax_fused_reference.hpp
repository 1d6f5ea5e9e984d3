// The double-precision reference of softmax with an input scale and a causal mask, and the
// check of an output against it, shared by the CPU and CUDA softmax tests
// (tests/cpu/softmax_fused_test.cpp, tests/cuda/softmax/fused_test.cu). Header-only and
// free of library types, so that both test trees can include it.
//
// Semantics (include/gpukern/gpukern.h, gk_softmax_ex_desc): row r of a batch item keeps
// columns c <= r + causal_offset (all without a mask); its outputs are the softmax (or
// log-softmax) of scale * x over the kept columns, 0 (log: -inf) where masked. A row that
// keeps no column is all 0 (log: all -inf). On the kept columns PyTorch's special values:
// a NaN, or every kept value -inf, makes every kept output NaN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace gpukern::softmax_fused_test {

/// Columns row r (within its batch item) keeps.
inline int64_t kept_columns(int64_t r, int64_t cols, bool causal, int64_t causal_offset) {
  if (!causal) return cols;
  return std::clamp<int64_t>(r + causal_offset + 1, 0, cols);
}

/// out[0, cols) = the expected outputs of a row with stored values x[0, cols) (read only
/// below `kept`), in double.
inline void reference_row(const double* x, int64_t cols, int64_t kept, double scale, bool log, double* out) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double max = -inf;
  bool has_nan = false;
  for (int64_t c = 0; c < kept; ++c) {
    const double v = scale * x[c];
    has_nan = has_nan || std::isnan(v);
    max = std::max(max, v);
  }
  for (int64_t c = kept; c < cols; ++c) out[c] = log ? -inf : 0.0;
  if (kept == 0) return;
  if (has_nan || max == -inf) {
    for (int64_t c = 0; c < kept; ++c) out[c] = nan;
    return;
  }
  double sum = 0;
  for (int64_t c = 0; c < kept; ++c) sum += std::exp(scale * x[c] - max);
  const double log_sum = std::log(sum);
  for (int64_t c = 0; c < kept; ++c) {
    const double shifted = scale * x[c] - max;
    out[c] = log ? shifted - log_sum : std::exp(shifted) / sum;
  }
}

/// Accumulates the comparison of outputs with the reference: masked cells (past `kept`)
/// must hold the fill exactly, NaN and +-inf must match exactly, the finite cells enter the
/// relative Frobenius error.
class Check {
 public:
  void add(double got, double want, bool masked, int64_t item, int64_t row, int64_t col) {
    bool bad = false;
    if (masked || std::isinf(want)) {
      bad = !(got == want);
    } else if (std::isnan(want)) {
      bad = !std::isnan(got);
    } else if (!std::isfinite(got)) {
      bad = true;
    } else {
      num_ += (got - want) * (got - want);
      den_ += want * want;
    }
    if (bad && mismatches_++ == 0) {
      std::ostringstream s;
      s << "item " << item << " row " << row << " col " << col << (masked ? " (masked)" : "") << ": got " << got
        << ", want " << want;
      first_ = s.str();
    }
  }
  double error() const { return den_ == 0 ? std::sqrt(num_) : std::sqrt(num_ / den_); }
  bool passes(double bound) const { return mismatches_ == 0 && error() <= bound; }
  std::string describe() const {
    std::ostringstream s;
    s << "error " << error() << ", " << mismatches_ << " exact-value mismatches";
    if (mismatches_) s << " (first: " << first_ << ")";
    return s.str();
  }

 private:
  double num_ = 0, den_ = 0;
  int64_t mismatches_ = 0;
  std::string first_;
};

}  // namespace gpukern::softmax_fused_test
