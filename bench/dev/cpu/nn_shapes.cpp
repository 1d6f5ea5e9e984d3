// Development probe (not shipped): ways to walk the NN form of the CPU skinny GEMM
// (C(t, j) = sum_p S(t, p) W(p, j), W stored K x N row-major, f32, AVX-512) on the
// backend's threads, timed call by call in rotation with a read stream of W, each after the
// same cache flush (a store to every line of 64 MiB). Decides the NN pass shape of
// src/cpu/gemm/skinny_simd.hpp.
//
//   nn_shapes CALLS T N K [VARIANT ...]
//
// Variants (names as printed): colsplit-U[-pf|-nopf]: threads take column strips (one per
// thread), U rows of W per pass over the strip, the f32 T x strip accumulator in L2, with or
// without a prefetch of the next pass's rows into L2 (the shipped shape);
// ksplit-U: threads take contiguous ranges of rows (depth), each a private T x N
// accumulator over all columns, added at the end; panel-C-U: column strips cut into panels
// of C columns whose accumulator stays in L1, U rows a pass.
#include "probe_common.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using probe::flush_caches;
using probe::lanes_sum;
using probe::read_stream;
using probe::seconds;

// HUGE=1: 2 MiB aligned and madvise(MADV_HUGEPAGE) (transparent huge pages on request).
float* aligned_floats(int64_t n) {
  return probe::aligned_floats(n, std::getenv("HUGE") && std::atoi(std::getenv("HUGE")));
}

// One pass of U rows of W over `cols` columns (a multiple of 16): acc[t * ld_acc + j] +=
// sum_u s[u * T + t] * w[u * ldw + j]. Tiles of V vectors; Prefetch: the rows of the next
// pass at the same columns, into L2.
template <int T, int V, int U, bool Prefetch, int Ahead = 0, int Loc = 1, int PfRows = 0>
__attribute__((target("avx512f"))) void nn_pass(const float* s, const float* w, int64_t ldw, int64_t cols, float* acc,
                                                int64_t ld_acc) {
  int64_t j = 0;
  for (; j + 16 * V <= cols; j += 16 * V) {
    __m512 c[T][V];
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < V; ++v) c[t][v] = _mm512_loadu_ps(acc + t * ld_acc + j + 16 * v);
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) {
      __m512 b[V];
      for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_ps(w + u * ldw + j + 16 * v);
      if (Prefetch)
        for (int v = 0; v < V; ++v) __builtin_prefetch(w + (u + U) * ldw + j + 16 * v, 0, 1);
      if (Ahead)
        for (int v = 0; v < V; ++v) __builtin_prefetch(w + u * ldw + j + 16 * v + Ahead, 0, Loc);
      if (PfRows)
        for (int v = 0; v < V; ++v) __builtin_prefetch(w + (u + PfRows) * ldw + j + 16 * v, 0, Loc);
      for (int t = 0; t < T; ++t) {
        __m512 a = _mm512_set1_ps(s[u * T + t]);
        asm("" : "+v"(a));
        for (int v = 0; v < V; ++v) c[t][v] = _mm512_fmadd_ps(a, b[v], c[t][v]);
      }
    }
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < V; ++v) _mm512_storeu_ps(acc + t * ld_acc + j + 16 * v, c[t][v]);
  }
  for (; j < cols; j += 16) {
    __m512 c[T];
    for (int t = 0; t < T; ++t) c[t] = _mm512_loadu_ps(acc + t * ld_acc + j);
    for (int u = 0; u < U; ++u) {
      const __m512 b = _mm512_loadu_ps(w + u * ldw + j);
      for (int t = 0; t < T; ++t) c[t] = _mm512_fmadd_ps(_mm512_set1_ps(s[u * T + t]), b, c[t]);
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(acc + t * ld_acc + j, c[t]);
  }
}

constexpr int vectors(int t) { return std::min(4, std::max(1, 31 / (t + 1))); }

struct Problem {
  int64_t t, n, k;
  const float* s;  // packed s[p * T + t]
  const float* w;
  float* c;                 // T x N
  std::vector<float*> acc;  // per thread
};

// Rows [p0, p1) of W over columns [j0, j1) into acc (ld_acc), U rows a pass.
template <int T, int U, bool Prefetch, int Ahead = 0, int Loc = 1, int VV = 0>
void rows_into(const Problem& pr, int64_t p0, int64_t p1, int64_t j0, int64_t j1, float* acc, int64_t ld_acc) {
  constexpr int V = VV ? VV : vectors(T);
  int64_t p = p0;
  for (; p + U <= p1; p += U)
    nn_pass<T, V, U, Prefetch, Ahead, Loc>(pr.s + p * T, pr.w + p * pr.n + j0, pr.n, j1 - j0, acc, ld_acc);
  for (; p < p1; ++p) nn_pass<T, V, 1, false>(pr.s + p * T, pr.w + p * pr.n + j0, pr.n, j1 - j0, acc, ld_acc);
}

template <int T, int U, bool Prefetch, int Ahead = 0, int Loc = 1, int VV = 0>
void colsplit(Problem& pr) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t strip = (pr.n / threads + 15) / 16 * 16, j0 = std::min(pr.n, id * strip),
                  j1 = std::min(pr.n, j0 + strip);
    float* acc = pr.acc[id];
    std::fill(acc, acc + T * (j1 - j0), 0.0f);
    rows_into<T, U, Prefetch, Ahead, Loc, VV>(pr, 0, pr.k, j0, j1, acc, j1 - j0);
    for (int t = 0; t < T; ++t) std::copy(acc + t * (j1 - j0), acc + (t + 1) * (j1 - j0), pr.c + t * pr.n + j0);
  }
}

template <int T, int U, bool Prefetch>
void ksplit(Problem& pr) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t rows = (pr.k + threads - 1) / threads, p0 = std::min(pr.k, id * rows), p1 = std::min(pr.k, p0 + rows);
    float* acc = pr.acc[id];
    std::fill(acc, acc + T * pr.n, 0.0f);
    rows_into<T, U, Prefetch>(pr, p0, p1, 0, pr.n, acc, pr.n);
#pragma omp barrier
    // Sum of the threads' accumulators, each thread a range of columns.
    const int64_t strip = (pr.n / threads + 15) / 16 * 16, j0 = std::min(pr.n, id * strip),
                  j1 = std::min(pr.n, j0 + strip);
    for (int t = 0; t < T; ++t)
      for (int64_t j = j0; j < j1; ++j) {
        float sum = 0;
        for (int64_t th = 0; th < threads; ++th) sum += pr.acc[th][t * pr.n + j];
        pr.c[t * pr.n + j] = sum;
      }
  }
}

template <int T, int C, int U, int PfRows = 0, int Loc = 1>
void panel(Problem& pr) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t strip = (pr.n / threads + 15) / 16 * 16, j0 = std::min(pr.n, id * strip),
                  j1 = std::min(pr.n, j0 + strip);
    float* acc = pr.acc[id];
    for (int64_t c0 = j0; c0 < j1; c0 += C) {
      const int64_t c1 = std::min(j1, c0 + C);
      std::fill(acc, acc + T * C, 0.0f);
      constexpr int V = vectors(T);
      int64_t p = 0;
      for (; p + U <= pr.k; p += U)
        nn_pass<T, V, U, false, 0, Loc, PfRows>(pr.s + p * T, pr.w + p * pr.n + c0, pr.n, c1 - c0, acc, C);
      for (; p < pr.k; ++p) nn_pass<T, V, 1, false>(pr.s + p * T, pr.w + p * pr.n + c0, pr.n, c1 - c0, acc, C);
      for (int t = 0; t < T; ++t) std::copy(acc + t * C, acc + t * C + (c1 - c0), pr.c + t * pr.n + c0);
    }
  }
}

template <int T>
std::vector<std::pair<std::string, std::function<void(Problem&)>>> variants() {
  return {
      {"colsplit-8-pf", colsplit<T, 8, true>},
      {"colsplit-16-pf", colsplit<T, 16, true>},
      {"colsplit-32-pf", colsplit<T, 32, true>},
      {"colsplit-16-nopf", colsplit<T, 16, false>},
      {"colsplit-8-nopf", colsplit<T, 8, false>},
      {"colsplit-12-nopf", colsplit<T, 12, false>},
      {"colsplit-24-nopf", colsplit<T, 24, false>},
      {"colsplit-32-nopf", colsplit<T, 32, false>},
      {"ksplit-8", ksplit<T, 8, false>},
      {"ksplit-16", ksplit<T, 16, false>},
      {"ksplit-32", ksplit<T, 32, false>},
      {"ksplit-16-pf", ksplit<T, 16, true>},
      {"ksplit-32-pf", ksplit<T, 32, true>},
      {"panel-256-32", panel<T, 256, 32>},
      {"panel-512-16", panel<T, 512, 16>},
      {"panel-1024-16", panel<T, 1024, 16>},
      {"panel-1024-4", panel<T, 1024, 4>},
      {"panel-1024-2", panel<T, 1024, 2>},
      {"panel-2048-4", panel<T, 2048, 4>},
      {"panel-512-4", panel<T, 512, 4>},
      {"panel-1024-1-pf4", panel<T, 1024, 1, 4>},
      {"panel-1024-2-pf4", panel<T, 1024, 2, 4>},
      {"panel-1024-2-pf8", panel<T, 1024, 2, 8>},
      {"panel-1024-4-pf8", panel<T, 1024, 4, 8>},
      {"panel-2048-2-pf4", panel<T, 2048, 2, 4>},
      {"panel-1024-2-pf4-L1", panel<T, 1024, 2, 4, 3>},
      {"panel-512-2-pf8", panel<T, 512, 2, 8>},
      {"panel-1024-1-pf8", panel<T, 1024, 1, 8>},
      {"panel-1024-1-pf4-L1", panel<T, 1024, 1, 4, 3>},
      {"panel-1024-1-pf2-L1", panel<T, 1024, 1, 2, 3>},
      {"panel-512-1-pf8", panel<T, 512, 1, 8>},
      {"panel-2048-1-pf4", panel<T, 2048, 1, 4>},
      {"panel-1024-2-pf2-L1", panel<T, 1024, 2, 2, 3>},
      {"panel-1024-1-pf16", panel<T, 1024, 1, 16>},
      {"panel-512-8", panel<T, 512, 8>},
      {"colsplit-4-nopf", colsplit<T, 4, false>},
      {"row-16-256-L2", colsplit<T, 16, false, 64, 1>},
      {"row-16-1k-L2", colsplit<T, 16, false, 256, 1>},
      {"row-16-2k-L2", colsplit<T, 16, false, 512, 1>},
      {"row-16-4k-L2", colsplit<T, 16, false, 1024, 1>},
      {"row-16-1k-L1", colsplit<T, 16, false, 256, 3>},
      {"row-8-1k-L2", colsplit<T, 8, false, 256, 1>},
      {"row-8-2k-L2", colsplit<T, 8, false, 512, 1>},
      {"row-16-512-L1", colsplit<T, 16, false, 128, 3>},
      {"row-16-2k-L1", colsplit<T, 16, false, 512, 3>},
      {"row-8-1k-L1", colsplit<T, 8, false, 256, 3>},
      {"row-16-1k-L1-pf", colsplit<T, 16, true, 256, 3>},
      {"row-32-1k-L1", colsplit<T, 32, false, 256, 3>},
      {"colsplit-16-pf-v2", colsplit<T, 16, true, 0, 1, 2>},
      {"colsplit-16-nopf-v2", colsplit<T, 16, false, 0, 1, 2>},
      {"colsplit-16-pf-v1", colsplit<T, 16, true, 0, 1, 1>},
      {"colsplit-2-nopf", colsplit<T, 2, false>},
      {"panel-512-4-pf4-L1", panel<T, 512, 4, 4, 3>},
      {"panel-512-4-pf4", panel<T, 512, 4, 4>},
      {"panel-1024-2-pf2", panel<T, 1024, 2, 2>},
      {"panel-512-4-pf8", panel<T, 512, 4, 8>},
      {"panel-256-4-pf4-L1", panel<T, 256, 4, 4, 3>},
      {"panel-512-2-pf2-L1", panel<T, 512, 2, 2, 3>},
      {"panel-1024-4-pf4", panel<T, 1024, 4, 4>},
      {"panel-1024-8-pf8", panel<T, 1024, 8, 8>},
      {"panel-2048-4-pf8", panel<T, 2048, 4, 8>},
      {"panel-2048-8-pf8", panel<T, 2048, 8, 8>},
      {"panel-1024-4-pf16", panel<T, 1024, 4, 16>},
  };
}

template <int T>
int run(int calls, int64_t n, int64_t k, const std::vector<std::string>& chosen) {
  auto all = variants<T>();
  decltype(all) vs;
  for (auto& v : all)
    if (chosen.empty() || std::find(chosen.begin(), chosen.end(), v.first) != chosen.end()) vs.push_back(v);
  Problem pr{T, n, k, nullptr, nullptr, nullptr, {}};
  float* s = aligned_floats(T * k);
  for (int64_t i = 0; i < T * k; ++i) s[i] = float(i % 97) / 97.0f - 0.5f;
  float* w = aligned_floats(n * k);
#pragma omp parallel for
  for (int64_t i = 0; i < n * k; ++i) w[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  pr.s = s;
  pr.w = w;
  pr.c = aligned_floats(T * n);
  for (int th = 0; th < omp_get_max_threads(); ++th) pr.acc.push_back(aligned_floats(T * n + 64));
  std::vector<float> ref(std::size_t(T * n));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += double(s[p * T + t]) * double(w[p * n + j]);
      ref[std::size_t(t * n + j)] = float(sum);
    }
  std::vector<char> flush(std::size_t(64) << 20);
  const bool warm = std::getenv("WARM") && std::atoi(std::getenv("WARM"));  // no flush
  volatile float sink = 0;
  for (const double start = seconds(); seconds() - start < 1.0;) sink = sink + read_stream(w, n * k);
  const std::size_t slots = vs.size() + 1;
  std::vector<std::vector<double>> ms(slots);
  for (int call = -1; call < calls; ++call)
    for (std::size_t i = 0; i < slots; ++i) {
      const std::size_t slot = (i + std::size_t(call + 1)) % slots;
      if (!warm) flush_caches(flush, call + int(slot));
      const double start = seconds();
      if (slot == vs.size())
        sink = sink + read_stream(w, n * k);
      else
        vs[slot].second(pr);
      const double elapsed = seconds() - start;
      if (call >= 0) ms[slot].push_back(1e3 * elapsed);
      if (call == -1 && slot < vs.size()) {
        double worst = 0;
        for (int64_t j = 0; j < T * n; ++j) worst = std::max(worst, double(std::fabs(pr.c[j] - ref[std::size_t(j)])));
        if (worst > 1e-2) std::printf("%s: WRONG (max |diff| %.3g)\n", vs[slot].first.c_str(), worst);
      }
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  const auto& read = ms.back();
  std::printf("NN T %d, N %lld, K %lld, %d calls, %d threads: read min %.3f ms (%.1f GB/s), median %.3f ms\n", T,
              (long long)n, (long long)k, calls, omp_get_max_threads(), read[0], 4.0 * double(n * k) / read[0] / 1e6,
              read[read.size() / 2]);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const auto& v = ms[i];
    std::printf("  %-18s min %.3f ms (%3.0f%% of read)  median %.3f ms (%3.0f%%)\n", vs[i].first.c_str(), v[0],
                100 * read[0] / v[0], v[v.size() / 2], 100 * read[read.size() / 2] / v[v.size() / 2]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s CALLS T N K [VARIANT ...]\n", argv[0]);
    return 2;
  }
  const int calls = std::atoi(argv[1]), t = std::atoi(argv[2]);
  const int64_t n = std::atoll(argv[3]), k = std::atoll(argv[4]);
  const std::vector<std::string> chosen(argv + 5, argv + argc);
  switch (t) {
    case 1:
      return run<1>(calls, n, k, chosen);
    case 2:
      return run<2>(calls, n, k, chosen);
    case 4:
      return run<4>(calls, n, k, chosen);
    case 6:
      return run<6>(calls, n, k, chosen);
    case 8:
      return run<8>(calls, n, k, chosen);
    default:
      std::fprintf(stderr, "T: 2, 4, 6 or 8\n");
      return 2;
  }
}
