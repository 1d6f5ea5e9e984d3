// Development probe (not shipped): a threaded read stream with F FMAs on registers per
// 64-byte vector read, with and without a software prefetch D bytes ahead, each variant
// timed in rotation after the same cache flush (a store to every line of 64 MiB). Shows
// whether the hardware prefetchers keep a stream ahead when the core has arithmetic to do
// per byte (as the skinny kernels do: T FMAs per vector of W), or whether the out-of-order
// window alone does.
//
//   read_fma [CALLS]     (threads: OMP_NUM_THREADS; 64 MiB of floats read per call)
#include "probe_common.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using probe::lanes_sum;
using probe::seconds;

/// Sum of n floats, each thread a contiguous share; F FMAs per vector (0: one add),
/// Ahead > 0: a prefetch that many bytes ahead with locality Loc.
template <int F, int Ahead, int Loc>
__attribute__((target("avx512f"))) float stream(const float* p, long n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const long chunk = n / omp_get_num_threads() / 64 * 64, begin = chunk * omp_get_thread_num();
    __m512 s[8];
    for (auto& v : s) v = _mm512_setzero_ps();
    const __m512 x = _mm512_set1_ps(1.0001f);
    for (long i = begin; i < begin + chunk; i += 64) {
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        if (Ahead > 0) __builtin_prefetch(p + i + 16 * v + Ahead / 4, 0, Loc);
        const __m512 w = _mm512_loadu_ps(p + i + 16 * v);
#pragma GCC unroll 16
        for (int f = 0; f < (F > 0 ? F : 1); ++f) {
          __m512& acc = s[(v * 2 + f) % 8];
          acc = F > 0 ? _mm512_fmadd_ps(w, x, acc) : _mm512_add_ps(w, acc);
        }
      }
    }
    __m512 t = s[0];
    for (int i = 1; i < 8; ++i) t = _mm512_add_ps(t, s[i]);
    total += lanes_sum(t);
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 9;
  const long n = 16L << 20;
  auto* p = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
#pragma omp parallel for
  for (long i = 0; i < n; ++i) p[i] = 1e-6f * float(i % 13);
  std::vector<char> flush(std::size_t(64) << 20);
  auto flush_caches = [&] {
    volatile char* lines = flush.data();
#pragma omp parallel for
    for (long i = 0; i < long(flush.size()); i += 64) lines[i] = char(lines[i] + 1);
  };
  volatile float sink = 0;
  // 1 s first: after idle, a VM's first few hundred milliseconds of work run slower.
  for (const double start = seconds(); seconds() - start < 1.0;) sink = sink + stream<0, 0, 0>(p, n);
  const struct {
    const char* name;
    float (*run)(const float*, long);
  } variants[] = {{"F0", stream<0, 0, 0>},
                  {"F1", stream<1, 0, 0>},
                  {"F2", stream<2, 0, 0>},
                  {"F4", stream<4, 0, 0>},
                  {"F8", stream<8, 0, 0>},
                  {"F4 +4K L2", stream<4, 4096, 1>},
                  {"F4 +8K L2", stream<4, 8192, 1>},
                  {"F4 +8K L1", stream<4, 8192, 3>},
                  {"F4 +32K L2", stream<4, 32768, 1>},
                  {"F8 +4K L2", stream<8, 4096, 1>},
                  {"F8 +8K L2", stream<8, 8192, 1>},
                  {"F8 +16K L2", stream<8, 16384, 1>},
                  {"F8 +32K L2", stream<8, 32768, 1>},
                  {"F8 +8K L1", stream<8, 8192, 3>}};
  constexpr int kVariants = sizeof(variants) / sizeof(variants[0]);
  std::vector<std::vector<double>> times(kVariants);
  for (int c = 0; c < calls; ++c)
    for (int v = 0; v < kVariants; ++v) {
      flush_caches();
      const double start = seconds();
      sink = sink + variants[v].run(p, n);
      times[v].push_back(seconds() - start);
    }
  std::printf("%d threads, %d calls, GB/s read (median)\n", omp_get_max_threads(), calls);
  for (int v = 0; v < kVariants; ++v) {
    auto& t = times[v];
    std::sort(t.begin(), t.end());
    std::printf("  %-12s %.0f\n", variants[v].name, 4e-9 * double(n) / t[t.size() / 2]);
  }
}
