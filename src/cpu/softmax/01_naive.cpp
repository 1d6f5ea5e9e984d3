// CPU softmax rung 1, `naive`: the safe three-pass softmax of the seeds, scalar, one thread:
// per row (1) the maximum, (2) the sum of exp(x - max), (3) the output. Three reads of
// each row; the baseline for `omp_simd`. Accepts every valid call.
//
// Special values, as PyTorch: a NaN anywhere in a row makes the whole row NaN (the max
// keeps NaN instead of skipping it); a row of all -inf gives NaN (-inf - -inf).
#include "cpu/element.hpp"
#include "cpu/rungs.hpp"

#include <cmath>

namespace gpukern::cpu {
namespace {

template <class T>
void naive_rows(const core::SoftmaxArgs& s) {
  const T* x = static_cast<const T*>(s.x);
  T* y = static_cast<T*>(s.y);
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* xr = x + r * s.ldx;
    T* yr = y + r * s.ldy;  // may equal xr (in place): each element is read before it is written
    float max = -INFINITY;
    for (int64_t j = 0; j < s.cols; ++j) {
      const float v = to_float(xr[j]);
      if (v > max || std::isnan(v)) max = std::isnan(max) ? max : v;
    }
    // The sum is kept in double: a plain f32 running sum drifts past the f32 error bound
    // on long rows (2.8e-5 at 32768 columns), while every exp stays f32 math.
    double sum_d = 0.0;
    for (int64_t j = 0; j < s.cols; ++j) sum_d += std::exp(to_float(xr[j]) - max);
    const float sum = static_cast<float>(sum_d);
    const float log_sum = static_cast<float>(std::log(sum_d));
    for (int64_t j = 0; j < s.cols; ++j) {
      const float shifted = to_float(xr[j]) - max;
      yr[j] = from_float<T>(s.log ? shifted - log_sum : std::exp(shifted) / sum);
    }
  }
}

}  // namespace

void softmax::naive_run(const core::SoftmaxArgs& args, const CpuContext&) {
  with_element_type(args.dtype, [&](auto tag) { naive_rows<decltype(tag)>(args); });
}

}  // namespace gpukern::cpu
