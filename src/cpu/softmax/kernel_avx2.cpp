// AVX2 row kernel of `omp_simd` softmax (algorithm in kernel.hpp; compiled with the AVX2
// flags, called only when cpuid and the OS allow AVX2). 8 lanes per vector, two vectors
// per step; AVX2 has no masked 16-bit loads, so a row's tail (< 8 elements) goes through
// a small f32 buffer padded with -inf.
#include "cpu/simd/avx2.hpp"
#include "cpu/softmax/kernel.hpp"

#include <math.h>

#include <cstdint>

namespace gpukern::cpu {
namespace {

float stored_to_float(float v) { return v; }
float stored_to_float(Half v) { return _cvtsh_ss(v.bits); }
float stored_to_float(BFloat16 v) {
  const std::uint32_t u = static_cast<std::uint32_t>(v.bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

/// The last `count` (< 8) elements times `scale` as a vector, -inf in the unused lanes.
template <class T>
__m256 avx2_tail(const T* src, int64_t count, float scale) {
  alignas(32) float buffer[8];
  for (int i = 0; i < 8; ++i) buffer[i] = i < count ? stored_to_float(src[i]) * scale : -INFINITY;
  return _mm256_load_ps(buffer);
}

template <class T>
void store_tail(T* dst, __m256 v, int64_t count) {
  alignas(32) T buffer[8];
  avx2::store8(buffer, v);
  for (int64_t i = 0; i < count; ++i) dst[i] = buffer[i];
}

float reduce_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
float reduce_add(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

/// y[0, n) = value.
template <class T>
void fill(T* y, int64_t n, float value) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) avx2::store8(y + j, _mm256_set1_ps(value));
  if (j < n) store_tail(y + j, _mm256_set1_ps(value), n - j);
}
template <class T>
void fill_nan(T* y, int64_t n) {
  fill(y, n, NAN);
}

/// Softmax of scale * x[0, n).
template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, bool stream, float scale) {
  const __m256 vscale = _mm256_set1_ps(scale);
  auto load8 = [&](const T* p) { return _mm256_mul_ps(avx2::load8(p), vscale); };
  auto load_tail = [&](const T* p, int64_t count) { return avx2_tail(p, count, scale); };
  float max = -INFINITY;
  double sum = 0.0;  // the row's sum against `max`: f32 within a block, f64 across blocks (kernel.hpp)
  // ---- pass 1: online max and sum of exp, one block of the row at a time ----
  for (int64_t first = 0; first < n; first += kSoftmaxBlock) {
    const T* xb = x + first;
    const int64_t len = n - first < kSoftmaxBlock ? n - first : kSoftmaxBlock;
    __m256 max0 = _mm256_set1_ps(-INFINITY), max1 = max0;
    __m256 nan = _mm256_setzero_ps();  // maxps drops NaN, so NaN is tracked on the side
    int64_t j = 0;
    for (; j + 16 <= len; j += 16) {
      const __m256 v0 = load8(xb + j), v1 = load8(xb + j + 8);
      max0 = _mm256_max_ps(max0, v0);
      max1 = _mm256_max_ps(max1, v1);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));  // a NaN in either
    }
    for (; j + 8 <= len; j += 8) {
      const __m256 v = load8(xb + j);
      max0 = _mm256_max_ps(max0, v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    const int64_t tail = len - j;
    if (tail > 0) {
      const __m256 v = load_tail(xb + j, tail);
      max0 = _mm256_max_ps(max0, v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(nan) != 0) return fill_nan(y, n);  // NaN anywhere: the whole row NaN
    const float block_max = reduce_max(_mm256_max_ps(max0, max1));
    if (block_max == -INFINITY) continue;  // all -inf so far: exp(-inf) adds nothing
    if (block_max > max) {                 // rescale what was summed against the old maximum
      sum *= ::expf(max - block_max);
      max = block_max;
    }
    const __m256 vmax = _mm256_set1_ps(max);  // second read of the block, from L1
    __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
    for (j = 0; j + 16 <= len; j += 16) {
      sum0 = _mm256_add_ps(sum0, avx2::exp(_mm256_sub_ps(load8(xb + j), vmax)));
      sum1 = _mm256_add_ps(sum1, avx2::exp(_mm256_sub_ps(load8(xb + j + 8), vmax)));
    }
    for (; j + 8 <= len; j += 8) sum0 = _mm256_add_ps(sum0, avx2::exp(_mm256_sub_ps(load8(xb + j), vmax)));
    if (tail > 0) sum1 = _mm256_add_ps(sum1, avx2::exp(_mm256_sub_ps(load_tail(xb + j, tail), vmax)));
    sum += reduce_add(_mm256_add_ps(sum0, sum1));
  }
  if (max == -INFINITY) return fill_nan(y, n);  // a row of all -inf is NaN, as in PyTorch

  // ---- pass 2: the output ----
  const __m256 vmax = _mm256_set1_ps(max);
  const __m256 norm = _mm256_set1_ps(static_cast<float>(log ? ::log(sum) : 1.0 / sum));  // log(sum), or 1 / sum
  auto value = [&](__m256 v) {
    const __m256 shifted = _mm256_sub_ps(v, vmax);
    return log ? _mm256_sub_ps(shifted, norm) : _mm256_mul_ps(avx2::exp(shifted), norm);
  };
  int64_t j = 0;
  if (stream) {
    // Non-temporal stores need y + j aligned to a whole vector: the head (< 8 elements)
    // goes through the tail path; if y is not even element-aligned, stream nothing.
    constexpr uintptr_t kVectorBytes = 8 * sizeof(T);
    const uintptr_t address = reinterpret_cast<uintptr_t>(y);
    if (address % sizeof(T) == 0) {
      int64_t head = static_cast<int64_t>(((kVectorBytes - address % kVectorBytes) % kVectorBytes) / sizeof(T));
      head = head < n ? head : n;
      if (head > 0) store_tail(y, value(load_tail(x, head)), head);
      for (j = head; j + 8 <= n; j += 8) avx2::stream8(y + j, value(load8(x + j)));
      _mm_sfence();  // order the non-temporal stores before anything that follows
    }
  }
  for (; j + 8 <= n; j += 8) avx2::store8(y + j, value(load8(x + j)));
  if (j < n) store_tail(y + j, value(load_tail(x + j, n - j)), n - j);
}

template <class T>
void rows_typed(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream) {
  const float masked = s.log ? -INFINITY : 0.0f;
  for (int64_t g = first; g < last; ++g) {
    const SoftmaxRowRef<T> row = softmax_row_at<T>(s, g);
    if (row.kept > 0) softmax_row(row.x, row.y, row.kept, s.log, stream, s.scale);
    fill(row.y + row.kept, s.cols - row.kept, masked);  // masked columns
  }
}

void rows(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream, float* /*scratch: recomputes*/) {
  switch (s.dtype) {
    case core::DType::F16:
      return rows_typed<Half>(s, first, last, stream);
    case core::DType::BF16:
      return rows_typed<BFloat16>(s, first, last, stream);
    default:
      return rows_typed<float>(s, first, last, stream);
  }
}

void exp_array(const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, avx2::exp(_mm256_loadu_ps(x + j)));
  if (j < n) store_tail(y + j, avx2::exp(avx2_tail(x + j, n - j, 1.0f)), n - j);
}

}  // namespace

const SoftmaxKernel& softmax_kernel_avx2() {
  static constexpr SoftmaxKernel kernel = {"avx2", rows, exp_array};
  return kernel;
}

}  // namespace gpukern::cpu
