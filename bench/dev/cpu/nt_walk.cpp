// Development probe (not shipped): ways to walk the NT form of the CPU skinny GEMM (W stored
// N x K row-major, f32, AVX-512; src/cpu/gemm/skinny_simd.hpp) with F FMAs per vector of W,
// timed call by call in rotation with a read stream of W, each after the same cache flush (a
// store to every line of 64 MiB; FLUSH_MB overrides, 0: warm). Separates what the walk over W
// costs from what the arithmetic costs: F = 0 reads W with one add per vector, F = 4 or 8 does
// the FMAs of T = 4 or 8 with the T rows of S loaded from a packed block (as the kernel does)
// or held in registers.
//
//   nt_walk CALLS N K SPEC [SPEC ...]
//
// SPEC = R,F,KC,AHEAD,INROW,LOC,SREG: R rows of W side by side (1-6), F FMAs per vector of W
// (0, 4 or 8; R x F accumulators), depth blocks of KC floats (0: whole rows), a prefetch of the
// rows about AHEAD bytes further down at the same depth (whole tiles of R rows, as the kernel's;
// 0: none), a prefetch INROW bytes further along each row (0: none), prefetch locality LOC (0,
// 1 or 3: __builtin_prefetch's), SREG 1: S in registers instead of loaded. Threads:
// OMP_NUM_THREADS, each taking strips of rows (two per thread, dynamic, as the kernel's).
// HUGE=1: W in 2 MiB pages (madvise). Prints the median time of each walk and its GB/s and %
// of the read stream's.
#include "probe_common.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using probe::flush_caches;
using probe::lanes_sum;
using probe::read_stream;
using probe::seconds;

struct Walk {
  int64_t kc = 0, ahead_bytes = 0, in_row_bytes = 0;
};

/// Sum over rows of W, walked as the NT kernel walks them: per strip, per depth block, tiles of
/// R rows read side by side; F FMAs per vector of W (each with one of F rows of S).
template <int R, int F, int Loc, bool SInRegisters>
__attribute__((target("avx512f"))) float walk(const float* w_all, int64_t n, int64_t k, Walk wk) {
  float total = 0;
  const int64_t kc = wk.kc > 0 ? std::min(wk.kc, k) : k;
  const int64_t strips = 2 * int64_t(omp_get_max_threads());
  const int64_t strip = (n / strips + R - 1) / R * R;
  const int64_t tile_bytes = R * kc * 4;
  const int64_t ahead = wk.ahead_bytes ? R * std::max<int64_t>(1, (wk.ahead_bytes + tile_bytes - 1) / tile_bytes) : 0;
  const int64_t in_row = wk.in_row_bytes / 4, lds = kc + 16;
#pragma omp parallel reduction(+ : total)
  {
    std::vector<float> s_block(std::size_t((F > 0 ? F : 1) * lds), 0.001f);  // packed S block (F x kc)
    const float* s = s_block.data();
    __m512 acc[R][F > 0 ? F : 1];
    for (auto& row : acc)
      for (auto& v : row) v = _mm512_setzero_ps();
#pragma omp for schedule(dynamic, 1)
    for (int64_t index = 0; index < strips; ++index) {
      const int64_t j0 = index * strip, j1 = std::min(n, j0 + strip);
      for (int64_t p0 = 0; p0 < k; p0 += kc) {
        const int64_t p1 = std::min(k, p0 + kc);
        for (int64_t j = j0; j + R <= j1; j += R) {
          const float* w = w_all + j * k;
          for (int64_t p = p0; p + 16 <= p1; p += 16) {
            __m512 b[R];
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) b[r] = _mm512_loadu_ps(w + r * k + p);
            if (ahead)
#pragma GCC unroll 8
              for (int r = 0; r < R; ++r) __builtin_prefetch(w + (r + ahead) * k + p, 0, Loc);
            if (in_row)
#pragma GCC unroll 8
              for (int r = 0; r < R; ++r) __builtin_prefetch(w + r * k + p + in_row, 0, Loc);
            if (F == 0)
#pragma GCC unroll 8
              for (int r = 0; r < R; ++r) acc[r][0] = _mm512_add_ps(acc[r][0], b[r]);
#pragma GCC unroll 8
            for (int f = 0; f < F; ++f) {
              __m512 a = SInRegisters ? _mm512_set1_ps(1.0001f) : _mm512_loadu_ps(s + f * lds + (p - p0));
              asm("" : "+v"(a));  // one load (or register) per row of S, as the kernel
#pragma GCC unroll 8
              for (int r = 0; r < R; ++r) acc[r][f] = _mm512_fmadd_ps(b[r], a, acc[r][f]);
            }
          }
        }
      }
    }
    __m512 sum = _mm512_setzero_ps();
    for (auto& row : acc)
      for (auto& v : row) sum = _mm512_add_ps(sum, v);
    total += lanes_sum(sum);
  }
  return total;
}

using WalkFn = float (*)(const float*, int64_t, int64_t, Walk);

template <int R, int F, int Loc>
WalkFn pick_s(bool s_in_registers) {
  return s_in_registers ? walk<R, F, Loc, true> : walk<R, F, Loc, false>;
}
template <int R, int F>
WalkFn pick_loc(int loc, bool s_in_registers) {
  return loc == 3   ? pick_s<R, F, 3>(s_in_registers)
         : loc == 1 ? pick_s<R, F, 1>(s_in_registers)
                    : pick_s<R, F, 0>(s_in_registers);
}
template <int R>
WalkFn pick_f(int f, int loc, bool s_in_registers) {
  return f == 8   ? pick_loc<R, 8>(loc, s_in_registers)
         : f == 4 ? pick_loc<R, 4>(loc, s_in_registers)
                  : pick_loc<R, 0>(loc, s_in_registers);
}
WalkFn pick(int r, int f, int loc, bool s_in_registers) {
  switch (r) {
    case 1:
      return pick_f<1>(f, loc, s_in_registers);
    case 2:
      return pick_f<2>(f, loc, s_in_registers);
    case 3:
      return pick_f<3>(f, loc, s_in_registers);
    case 4:
      return pick_f<4>(f, loc, s_in_registers);
    case 5:
      return pick_f<5>(f, loc, s_in_registers);
    default:
      return pick_f<6>(f, loc, s_in_registers);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s CALLS N K R,F,KC,AHEAD,INROW,LOC,SREG [...]\n", argv[0]);
    return 2;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    std::fprintf(stderr, "nt_walk: needs AVX-512\n");
    return 77;
  }
  const int calls = std::atoi(argv[1]);
  const int64_t n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const bool huge = std::getenv("HUGE") && std::atoi(std::getenv("HUGE"));
  const int64_t flush_mb = std::getenv("FLUSH_MB") ? std::atoll(std::getenv("FLUSH_MB")) : 64;
  float* w = probe::aligned_floats(n * k, huge);
#pragma omp parallel for
  for (int64_t i = 0; i < n * k; ++i) w[i] = 1e-6f * float(i % 1000);

  std::vector<std::string> names{"read stream"};
  std::vector<std::function<float()>> runs{[&] { return read_stream(w, n * k); }};
  for (int i = 4; i < argc; ++i) {
    int r = 0, f = 0, loc = 3, s_in_registers = 0;
    long kc = 0, ahead = 0, in_row = 0;
    if (std::sscanf(argv[i], "%d,%d,%ld,%ld,%ld,%d,%d", &r, &f, &kc, &ahead, &in_row, &loc, &s_in_registers) != 7 ||
        r < 1 || r > 6 || (f != 0 && f != 4 && f != 8) || (f == 8 && r > 3)) {
      std::fprintf(stderr, "nt_walk: bad SPEC '%s' (R 1-6, F 0/4/8, R <= 3 at F = 8)\n", argv[i]);
      return 2;
    }
    const WalkFn fn = pick(r, f, loc, s_in_registers != 0);
    const Walk wk{kc, ahead, in_row};
    names.push_back(argv[i]);
    runs.push_back([=] { return fn(w, n, k, wk); });
  }

  std::vector<char> flush(std::size_t(flush_mb) << 20);
  volatile float sink = 0;
  // 1 s of the read stream first: on a VM whose vCPUs were idle, the first few hundred
  // milliseconds of work run slower.
  for (const double start = seconds(); seconds() - start < 1.0;) sink = sink + read_stream(w, n * k);
  std::vector<std::vector<double>> ms(runs.size());
  for (int call = -1; call < calls; ++call)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::size_t slot = (i + std::size_t(call + 1)) % runs.size();  // rotate the order
      if (!flush.empty()) flush_caches(flush, call + int(slot));
      const double start = seconds();
      sink = sink + runs[slot]();
      if (call >= 0) ms[slot].push_back(1e3 * (seconds() - start));
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  const double read = ms[0][ms[0].size() / 2];
  std::printf("N %lld, K %lld, %d calls, %d threads (medians)\n", (long long)n, (long long)k, calls,
              omp_get_max_threads());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double median = ms[i][ms[i].size() / 2];
    std::printf("  %-24s %.3f ms  %6.1f GB/s  %4.0f%% of read\n", names[i].c_str(), median,
                4.0 * double(n * k) / median / 1e6, 100 * read / median);
  }
  return 0;
}
