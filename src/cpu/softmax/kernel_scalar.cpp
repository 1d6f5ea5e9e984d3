// Portable row kernel of `omp_simd` softmax (baseline x86-64 flags; the path without AVX2,
// and under GPUKERN_CPU_ISA=scalar): the algorithm of kernel.hpp with one element at a
// time and the C library's expf. Same block structure and special-value rules as the
// vector kernels, so every path gives the same answers up to rounding, and the same sums
// (kernel.hpp, "The row's sum"): f32 over short runs of elements, f64 over the row.
#include "cpu/element.hpp"
#include "cpu/softmax/kernel.hpp"

#include <algorithm>
#include <cmath>

namespace gpukern::cpu {
namespace {

/// Elements summed in f32 before their sum joins the f64 row sum (as many as an AVX-512 lane sums).
constexpr int64_t kPart = 64;

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, float scale) {
  float max = -INFINITY;
  double sum = 0.0;
  bool nan = false;
  for (int64_t first = 0; first < n && !nan; first += kSoftmaxBlock) {
    const int64_t last = std::min(n, first + kSoftmaxBlock);
    float block_max = -INFINITY;
    for (int64_t j = first; j < last; ++j) {
      const float v = to_float(x[j]) * scale;
      nan |= std::isnan(v);
      block_max = v > block_max ? v : block_max;
    }
    if (nan || block_max == -INFINITY) continue;
    if (block_max > max) {
      sum *= std::exp(static_cast<double>(max) - block_max);
      max = block_max;
    }
    for (int64_t part = first; part < last; part += kPart) {
      const int64_t stop = std::min(last, part + kPart);
      float part_sum = 0.0f;
      for (int64_t j = part; j < stop; ++j) part_sum += std::exp(to_float(x[j]) * scale - max);
      sum += part_sum;
    }
  }
  if (nan || max == -INFINITY) {  // NaN anywhere, or all -inf: the row is NaN (PyTorch)
    for (int64_t j = 0; j < n; ++j) y[j] = from_float<T>(NAN);
    return;
  }
  const float norm = static_cast<float>(log ? std::log(sum) : 1.0 / sum);  // log(sum), or 1 / sum
  for (int64_t j = 0; j < n; ++j) {
    const float shifted = to_float(x[j]) * scale - max;
    y[j] = from_float<T>(log ? shifted - norm : std::exp(shifted) * norm);
  }
}

template <class T>
void rows_typed(const core::SoftmaxArgs& s, int64_t first, int64_t last) {
  const T fill = from_float<T>(s.log ? -INFINITY : 0.0f);
  for (int64_t g = first; g < last; ++g) {
    const SoftmaxRowRef<T> row = softmax_row_at<T>(s, g);
    if (row.kept > 0) softmax_row(row.x, row.y, row.kept, s.log, s.scale);
    for (int64_t j = row.kept; j < s.cols; ++j) row.y[j] = fill;  // masked columns
  }
}

void rows(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool /*stream: no portable NT store*/,
          float* /*scratch: recomputes*/) {
  with_element_type(s.dtype, [&](auto tag) { rows_typed<decltype(tag)>(s, first, last); });
}

void exp_array(const float* x, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = std::exp(x[j]);
}

}  // namespace

const SoftmaxKernel& softmax_kernel_scalar() {
  static constexpr SoftmaxKernel kernel = {"scalar", rows, exp_array};
  return kernel;
}

}  // namespace gpukern::cpu
