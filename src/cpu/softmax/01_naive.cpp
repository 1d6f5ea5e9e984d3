// CPU softmax rung 1, `naive`: the safe three-pass softmax of the seeds, scalar, one thread:
// per row (1) the maximum, (2) the sum of exp(x - max), (3) the output. Three reads of
// each row; the baseline for `omp_simd`. Accepts every valid call; fuses batches (item by
// item), the input scale (softmax of scale * x, in f32) and the causal mask (a row reads
// its kept columns only and writes 0, log-softmax -inf, to the rest).
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
  const T fill = from_float<T>(s.log ? -INFINITY : 0.0f);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t r = 0; r < s.rows; ++r) {
      const T* xr = x + b * s.stride_x + r * s.ldx;
      T* yr = y + b * s.stride_y + r * s.ldy;  // may equal xr (in place): each element is read before it is written
      const int64_t kept = s.kept_cols(r);     // the columns from `kept` on are masked: never read
      float max = -INFINITY;
      for (int64_t j = 0; j < kept; ++j) {
        const float v = to_float(xr[j]) * s.scale;
        if (v > max || std::isnan(v)) max = std::isnan(max) ? max : v;
      }
      // The sum is kept in double: a plain f32 running sum drifts past the f32 error bound
      // on long rows (2.8e-5 at 32768 columns), while every exp stays f32 math.
      double sum_d = 0.0;
      for (int64_t j = 0; j < kept; ++j) sum_d += std::exp(to_float(xr[j]) * s.scale - max);
      const float sum = static_cast<float>(sum_d);
      const float log_sum = static_cast<float>(std::log(sum_d));
      for (int64_t j = 0; j < kept; ++j) {
        const float shifted = to_float(xr[j]) * s.scale - max;
        yr[j] = from_float<T>(s.log ? shifted - log_sum : std::exp(shifted) / sum);
      }
      for (int64_t j = kept; j < s.cols; ++j) yr[j] = fill;
    }
  }
}

}  // namespace

void softmax::naive_run(const core::SoftmaxArgs& args, const CpuContext&) {
  with_element_type(args.dtype, [&](auto tag) { naive_rows<decltype(tag)>(args); });
}

}  // namespace gpukern::cpu
