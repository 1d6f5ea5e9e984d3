// AVX-512 row kernel of `omp_simd` softmax (algorithm in kernel.hpp; compiled with the
// AVX-512 flags, called only when cpuid and the OS allow AVX-512). 16 lanes per vector,
// two vectors per step so the max and the exp sums run as two independent chains;
// tails with masked loads (masked-off lanes read as -inf, whose exp is 0).
#include "cpu/simd/avx512.hpp"
#include "cpu/softmax/kernel.hpp"

#include <float.h>
#include <math.h>

#include <cstdint>

namespace gpukern::cpu {
namespace {

using avx512::first_lanes;

/// y[0, n) = value.
template <class T>
void fill(T* y, int64_t n, float value) {
  for (int64_t j = 0; j < n; j += 16) avx512::store16(y + j, _mm512_set1_ps(value), first_lanes(n - j));
}
template <class T>
void fill_nan(T* y, int64_t n) {
  fill(y, n, NAN);
}

/// Prefetches the next row at the pace of the current one's first pass: one call per
/// vector of that pass, so the whole next row is asked for by the end of it, without a
/// burst, and the second pass (mostly the writes of y) leaves the memory to those.
/// Into L1 (prefetcht0; the lines land in L2 too). On Zen 5 at one thread, 16384x8192
/// f32: prefetcht0 instead of t1 took softmax from 74-76% to 79-82% of a copy (rows of
/// 128 KiB, which L1 cannot hold, lost nothing); the whole row during the first pass
/// instead of half in each pass, from 79% to 83-85%.
class NextRowPrefetch {
 public:
  NextRowPrefetch(const void* next, int64_t bytes) : next_(static_cast<const char*>(next)), bytes_(next ? bytes : 0) {}
  template <class T>
  void step() {
    constexpr int64_t kBytesPerStep = 16 * sizeof(T);  // 16 elements per step, one step each
    if (offset_ < bytes_ && offset_ % 64 == 0) _mm_prefetch(next_ + offset_, _MM_HINT_T0);
    offset_ += kBytesPerStep;
  }

 private:
  const char* next_;
  int64_t bytes_, offset_ = 0;
};

/// Writes y[0, n) from value(j, mask) (16 elements from j), with non-temporal stores when
/// `stream`: those need y + j aligned to a whole vector, so the head goes through a masked
/// ordinary store (and if y is not even element-aligned, nothing is streamed).
template <class T, class Value>
void store_row(T* y, int64_t n, bool stream, Value value) {
  constexpr __mmask16 kAll = 0xffff;
  int64_t j = 0;
  if (stream) {
    constexpr uintptr_t kVectorBytes = 16 * sizeof(T);
    const uintptr_t address = reinterpret_cast<uintptr_t>(y);
    if (address % sizeof(T) == 0) {
      const int64_t head = static_cast<int64_t>(((kVectorBytes - address % kVectorBytes) % kVectorBytes) / sizeof(T));
      if (head > 0) {
        const __mmask16 mask = first_lanes(head < n ? head : n);
        avx512::store16(y, value(0, mask), mask);
        j = head;
      }
      for (; j + 16 <= n; j += 16) avx512::stream16(y + j, value(j, kAll));
    }
  }
  for (; j + 16 <= n; j += 16) avx512::store16(y + j, value(j, kAll), kAll);
  if (j < n) {
    const __mmask16 mask = first_lanes(n - j);
    avx512::store16(y + j, value(j, mask), mask);
  }
}

/// Softmax of scale * x[0, n).
template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, bool stream, float scale, float* scratch,
                 NextRowPrefetch& next_row) {
  constexpr __mmask16 kAll = 0xffff;
  const __m512 vscale = _mm512_set1_ps(scale);
  // 16 elements times the scale (masked-off lanes 0).
  auto load16 = [&](const T* p, __mmask16 mask) { return _mm512_mul_ps(avx512::load16(p, mask), vscale); };
  // A local copy: the vector stores below (may_alias types) could otherwise alias the
  // caller's object, which made the compiler load and store its offset at every step.
  NextRowPrefetch prefetch = next_row;
  // Keep each block's exponentials (softmax only; log-softmax needs none) when they fit.
  const bool keep = !log && n <= kSoftmaxScratch;
  // f16/bf16 kept rows: the first read also stores the converted f32 values in the
  // scratch row, so the second read converts nothing (the exponentials overwrite them).
  const bool convert_once = keep && sizeof(T) != sizeof(float);
  // Per kept block: the reference its exponentials were taken against, and its maximum
  // (above the reference when the block raised the running max by up to kSlack).
  float block_ref[kSoftmaxScratch / kSoftmaxBlock], block_top[kSoftmaxScratch / kSoftmaxBlock];
  float max = -INFINITY;
  double sum = 0.0;  // the row's sum of exp(x - max): f32 within a block, f64 across blocks

  // Sum of exp(source(j) - ref) over a block of len elements, storing the exponentials
  // at sb when the row is kept.
  auto exp_block = [&](auto source, int64_t len, float* sb, float ref) {
    const __m512 vref = _mm512_set1_ps(ref);
    __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
      const __m512 e0 = avx512::exp(_mm512_sub_ps(source(j, kAll), vref));
      const __m512 e1 = avx512::exp(_mm512_sub_ps(source(j + 16, kAll), vref));
      sum0 = _mm512_add_ps(sum0, e0);
      sum1 = _mm512_add_ps(sum1, e1);
      if (keep) {
        _mm512_store_ps(sb + j, e0);
        _mm512_store_ps(sb + j + 16, e1);
      }
      prefetch.step<T>();
      prefetch.step<T>();
    }
    for (; j < len; j += 16) {
      const __m512 e = avx512::exp(_mm512_sub_ps(source(j, first_lanes(len - j)), vref));
      sum0 = _mm512_add_ps(sum0, e);
      if (keep) _mm512_store_ps(sb + j, e);
      prefetch.step<T>();
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
  };

  // ---- pass 1: online max and sum of exp, one block of the row at a time ----
  for (int64_t first = 0, block = 0; first < n; first += kSoftmaxBlock, ++block) {
    const T* xb = x + first;
    const int64_t len = n - first < kSoftmaxBlock ? n - first : kSoftmaxBlock;
    float* sb = scratch + first;  // this block's scratch (kept rows only)
    // Lanes past `mask` are -inf (set after the scale), so they neither raise the max nor add to a sum.
    auto from_x = [&](int64_t at, __mmask16 mask) {
      return _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), mask, load16(xb + at, mask));
    };
    __m512 max0 = _mm512_set1_ps(-INFINITY), max1 = max0;
    __mmask16 nan = 0;  // maxps drops NaN, so NaN is tracked on the side

    if (max != -INFINITY) {
      // One read: exponentials against the running max, the block's max on the side.
      // Values up to kSlack above the running max are fine (exp(64) ~ 6e27, far from
      // overflow even summed); a larger jump redoes the block against its own max.
      constexpr float kSlack = 64.0f;
      const __m512 vref = _mm512_set1_ps(max);
      __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
      int64_t j = 0;
      for (; j + 32 <= len; j += 32) {
        const __m512 v0 = load16(xb + j, kAll), v1 = load16(xb + j + 16, kAll);
        max0 = _mm512_max_ps(max0, v0);
        max1 = _mm512_max_ps(max1, v1);
        nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);  // unordered: a NaN in either
        const __m512 e0 = avx512::exp(_mm512_sub_ps(v0, vref)), e1 = avx512::exp(_mm512_sub_ps(v1, vref));
        sum0 = _mm512_add_ps(sum0, e0);
        sum1 = _mm512_add_ps(sum1, e1);
        if (keep) {
          _mm512_store_ps(sb + j, e0);
          _mm512_store_ps(sb + j + 16, e1);
        }
        prefetch.step<T>();
        prefetch.step<T>();
      }
      for (; j < len; j += 16) {
        const __m512 v = from_x(j, first_lanes(len - j));
        max0 = _mm512_max_ps(max0, v);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        const __m512 e = avx512::exp(_mm512_sub_ps(v, vref));
        sum0 = _mm512_add_ps(sum0, e);
        if (keep) _mm512_store_ps(sb + j, e);
        prefetch.step<T>();
      }
      if (nan) return fill_nan(y, n);  // NaN anywhere makes the whole row NaN
      const float block_max = _mm512_reduce_max_ps(_mm512_max_ps(max0, max1));
      if (keep) block_top[block] = block_max;
      if (block_max <= max + kSlack) {
        if (keep) block_ref[block] = max;
        sum += _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
        if (block_max > max) {  // rescale to the new maximum
          sum *= ::expf(max - block_max);
          max = block_max;
        }
      } else {
        if (keep) block_ref[block] = block_max;
        sum = sum * ::expf(max - block_max) + exp_block(from_x, len, sb, block_max);
        max = block_max;
      }
      continue;
    }

    // No finite maximum yet: the block's max first (one read), then its exponentials (a
    // second read, from L1; f16/bf16 kept rows read the f32 copy the first read stored).
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
      const __m512 v0 = load16(xb + j, kAll), v1 = load16(xb + j + 16, kAll);
      max0 = _mm512_max_ps(max0, v0);
      max1 = _mm512_max_ps(max1, v1);
      nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);
      if (convert_once) {
        _mm512_store_ps(sb + j, v0);
        _mm512_store_ps(sb + j + 16, v1);
      }
    }
    for (; j < len; j += 16) {
      const __m512 v = from_x(j, first_lanes(len - j));
      max0 = _mm512_max_ps(max0, v);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      if (convert_once) _mm512_store_ps(sb + j, v);  // -inf past the row: exp gives 0
    }
    if (nan) return fill_nan(y, n);
    const float block_max = _mm512_reduce_max_ps(_mm512_max_ps(max0, max1));
    if (keep) block_ref[block] = block_top[block] = block_max;
    if (block_max == -INFINITY) {  // all -inf so far: exp(-inf) adds nothing
      if (keep)
        for (j = 0; j < len; j += 16) _mm512_store_ps(sb + j, _mm512_setzero_ps());
      for (j = 0; j < len; j += 16) prefetch.step<T>();
      continue;
    }
    max = block_max;  // the sum so far is 0: nothing to rescale
    auto from_copy = [&](int64_t at, __mmask16) { return _mm512_load_ps(sb + at); };
    sum = convert_once ? exp_block(from_copy, len, sb, max) : exp_block(from_x, len, sb, max);
  }
  if (max == -INFINITY) return fill_nan(y, n);  // a row of all -inf is NaN, as in PyTorch

  // ---- pass 2: the output ----
  const __m512 vmax = _mm512_set1_ps(max);
  const float log_total = log ? static_cast<float>(::log(sum)) : 0.0f;
  const float inverse = static_cast<float>(1.0 / sum);
  // Kept exponentials become outputs by one factor per block: exp(block ref - max) / sum.
  float factor[kSoftmaxScratch / kSoftmaxBlock + 1] = {};
  if (keep)
    for (int64_t b = 0; b * kSoftmaxBlock < n; ++b) {
      if (block_ref[b] == max || block_ref[b] == -INFINITY) {
        factor[b] = block_ref[b] == max ? inverse : 0.0f;
        continue;
      }
      factor[b] = ::expf(block_ref[b] - max) * inverse;
      // A factor below the normal range loses its precision, and products with it: that
      // loses only outputs below the normal range too, unless the block's kept values
      // exceed 1 (it raised the running max, up to e^kSlack). Those are first brought down
      // to the block's own maximum (kernel.hpp: "Kept exponentials").
      if (factor[b] < FLT_MIN && block_top[b] > block_ref[b]) {
        const __m512 down = _mm512_set1_ps(::expf(block_ref[b] - block_top[b]));  // >= e^-kSlack
        float* kept = scratch + b * kSoftmaxBlock;
        const int64_t len = n - b * kSoftmaxBlock < kSoftmaxBlock ? n - b * kSoftmaxBlock : kSoftmaxBlock;
        for (int64_t j = 0; j < len; j += 16) _mm512_store_ps(kept + j, _mm512_mul_ps(_mm512_load_ps(kept + j), down));
        factor[b] = ::expf(block_top[b] - max) * inverse;
      }
    }
  // The factors of the 16 elements from j (a vector may straddle two blocks when the
  // streaming head shifted the vectors).
  auto factors = [&](int64_t j) {
    const int64_t b = j / kSoftmaxBlock, boundary = (b + 1) * kSoftmaxBlock;
    if (j + 16 <= boundary) return _mm512_set1_ps(factor[b]);
    return _mm512_mask_blend_ps(first_lanes(boundary - j), _mm512_set1_ps(factor[b + 1]), _mm512_set1_ps(factor[b]));
  };
  // Output vector j (16 elements from element j) under `mask`, one loop per mode.
  if (keep) {
    // The factor vector is recomputed only where a vector starts past the current block's
    // last whole vector (once per block; every vector near a straddled boundary).
    __m512 vfactor = factors(0);
    int64_t reuse_until = kSoftmaxBlock - 16;  // vectors starting at or before it share vfactor
    store_row(y, n, stream, [&](int64_t j, __mmask16 mask) {
      if (j > reuse_until) {
        vfactor = factors(j);
        const int64_t last_whole = (j / kSoftmaxBlock + 1) * kSoftmaxBlock - 16;
        reuse_until = j <= last_whole ? last_whole : j;  // straddling: this vector only
      }
      return _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, scratch + j), vfactor);
    });
  } else if (log) {
    const __m512 vlog = _mm512_set1_ps(log_total);
    store_row(y, n, stream,
              [&](int64_t j, __mmask16 mask) { return _mm512_sub_ps(_mm512_sub_ps(load16(x + j, mask), vmax), vlog); });
  } else {
    const __m512 vinverse = _mm512_set1_ps(inverse);
    store_row(y, n, stream, [&](int64_t j, __mmask16 mask) {
      return _mm512_mul_ps(avx512::exp(_mm512_sub_ps(load16(x + j, mask), vmax)), vinverse);
    });
  }
}

template <class T>
void rows_typed(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream, float* scratch) {
  const float masked = s.log ? -INFINITY : 0.0f;
  SoftmaxRowRef<T> row = softmax_row_at<T>(s, first);
  for (int64_t g = first; g < last; ++g) {
    const SoftmaxRowRef<T> next = g + 1 < last ? softmax_row_at<T>(s, g + 1) : SoftmaxRowRef<T>{nullptr, nullptr, 0};
    // The next row's kept columns, the only ones it reads.
    NextRowPrefetch prefetch(next.kept > 0 ? next.x : nullptr, next.kept * static_cast<int64_t>(sizeof(T)));
    if (row.kept > 0) softmax_row(row.x, row.y, row.kept, s.log, stream, s.scale, scratch, prefetch);
    fill(row.y + row.kept, s.cols - row.kept, masked);  // masked columns
    row = next;
  }
  if (stream) _mm_sfence();  // order the non-temporal stores before anything that follows
}

void rows(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream, float* scratch) {
  switch (s.dtype) {
    case core::DType::F16:
      return rows_typed<Half>(s, first, last, stream, scratch);
    case core::DType::BF16:
      return rows_typed<BFloat16>(s, first, last, stream, scratch);
    default:
      return rows_typed<float>(s, first, last, stream, scratch);
  }
}

void exp_array(const float* x, float* y, int64_t n) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = first_lanes(n - j);
    _mm512_mask_storeu_ps(y + j, mask, avx512::exp(_mm512_maskz_loadu_ps(mask, x + j)));
  }
}

}  // namespace

const SoftmaxKernel& softmax_kernel_avx512() {
  static constexpr SoftmaxKernel kernel = {"avx512", rows, exp_array};
  return kernel;
}

}  // namespace gpukern::cpu
