// What the CPU development probes (skinny_ab, nn_shapes, read_fma, copy_walks) share: the
// wall clock, the AVX-512 lane sum, the threaded read stream they time kernels against, the
// cache flush and aligned buffers. Development code, not shipped.
#pragma once

#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace probe {

inline double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Sum of a vector's lanes (GCC 12's _mm512_reduce_add_ps warns about its own temporaries).
__attribute__((target("avx512f"))) inline float lanes_sum(__m512 v) {
  float lanes[16];
  _mm512_storeu_ps(lanes, v);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  return sum;
}

/// Sums n floats with 512-bit loads, each thread a contiguous range.
__attribute__((target("avx512f"))) inline float read_stream(const float* p, int64_t n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t chunk = (n / threads + 63) / 64 * 64, begin = std::min(n, id * chunk),
                  end = std::min(n, begin + chunk);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = begin;
    for (; i + 64 <= end; i += 64) {
      s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p + i));
      s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + i + 16));
      s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + i + 32));
      s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + i + 48));
    }
    total += lanes_sum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    for (; i < end; ++i) total += p[i];
  }
  return total;
}

/// A store to every cache line of `buffer` (ordinary stores: a large memset may stream past
/// the caches and evict nothing).
inline void flush_caches(std::vector<char>& buffer, int value) {
  volatile char* lines = buffer.data();
  const int64_t count = int64_t(buffer.size() / 64);
#pragma omp parallel for schedule(static)
  for (int64_t line = 0; line < count; ++line) lines[line * 64] = char(value);
}

/// n floats, 64-byte aligned; `huge`: 2 MiB aligned and madvise(MADV_HUGEPAGE).
inline float* aligned_floats(int64_t n, bool huge = false) {
  const std::size_t align = huge ? std::size_t(2) << 20 : 64;
  const std::size_t bytes = (std::size_t(n) * 4 + align - 1) / align * align;
  void* p = std::aligned_alloc(align, bytes);
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<float*>(p);
}

}  // namespace probe
