// Portable row kernel of `omp_simd` softmax (baseline x86-64 flags; the path without AVX2,
// and under GPUKERN_CPU_ISA=scalar): the algorithm of kernel.hpp with one element at a
// time and the C library's expf. Same block structure and special-value rules as the
// vector kernels, so every path gives the same answers up to rounding.
#include "cpu/element.hpp"
#include "cpu/softmax/kernel.hpp"

#include <cmath>

namespace gpukern::cpu {
namespace {

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  float max = -INFINITY, sum = 0.0f;
  bool nan = false;
  for (int64_t first = 0; first < n && !nan; first += kSoftmaxBlock) {
    const int64_t last = std::min(n, first + kSoftmaxBlock);
    float block_max = -INFINITY;
    for (int64_t j = first; j < last; ++j) {
      const float v = to_float(x[j]);
      nan |= std::isnan(v);
      block_max = v > block_max ? v : block_max;
    }
    if (nan || block_max == -INFINITY) continue;
    if (block_max > max) {
      sum *= std::exp(max - block_max);
      max = block_max;
    }
    for (int64_t j = first; j < last; ++j) sum += std::exp(to_float(x[j]) - max);
  }
  if (nan || max == -INFINITY) {  // NaN anywhere, or all -inf: the row is NaN (PyTorch)
    for (int64_t j = 0; j < n; ++j) y[j] = from_float<T>(NAN);
    return;
  }
  const float scale = log ? std::log(sum) : 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) {
    const float shifted = to_float(x[j]) - max;
    y[j] = from_float<T>(log ? shifted - scale : std::exp(shifted) * scale);
  }
}

template <class T>
void rows_typed(const core::SoftmaxArgs& s, int64_t first, int64_t last) {
  const T* x = static_cast<const T*>(s.x);
  T* y = static_cast<T*>(s.y);
  for (int64_t r = first; r < last; ++r) softmax_row(x + r * s.ldx, y + r * s.ldy, s.cols, s.log);
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
