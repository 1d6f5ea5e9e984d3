// Timing loop; see measure.hpp.
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include <omp.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <immintrin.h>
#include <xmmintrin.h>
#endif

namespace gpukern::bench {

CacheFlusher::CacheFlusher(Device& device, std::size_t bytes)
    : device_(device), buffer_(device.alloc(bytes)), host_(device.backend() == "cpu") {
  flush();  // first touch (page faults) is not representative
  device_.synchronize();
  const auto start = std::chrono::steady_clock::now();
  flush();
  device_.synchronize();
  cost_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void CacheFlusher::flush() {
  // A different byte each time, so no layer can skip the write as redundant.
  value_ = (value_ + 1) & 0xff;
  if (!host_) {
    device_.memset(buffer_.data(), value_, buffer_.size());
    return;
  }
  // One ordinary store a cache line: each line is read into the caches, written, and
  // displaces what was there. On the calling thread: an OpenMP team here would still spin
  // when the next call starts, and slow a rung with threads of its own (OpenBLAS's ran at
  // half speed after a threaded flush).
  volatile unsigned char* lines = static_cast<unsigned char*>(buffer_.data());
  const auto count = static_cast<std::ptrdiff_t>(buffer_.size() / 64);
  const auto value = static_cast<unsigned char>(value_);
  for (std::ptrdiff_t line = 0; line < count; ++line) lines[line * 64] = value;
}

namespace {

// Linear interpolation between order statistics (the usual "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * double(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double timed_call(Timer& timer, CacheFlusher* flusher, const std::function<void()>& call) {
  if (flusher) flusher->flush();
  timer.start();
  call();
  timer.stop();
  return timer.elapsed_ms();
}

#if defined(__x86_64__) && defined(__GNUC__)
/// Sum of `blocks` blocks of 256 bytes as 64-bit words with 512-bit loads: on CPUs with
/// AVX-512 the sequential walk reads faster with wide loads (Zen 5, two threads: ~15% over
/// 128-bit loads), so the stream stays the faster side of what the rungs can read.
__attribute__((target("avx512f"))) uint64_t sum_blocks_avx512(const unsigned char* in, std::size_t blocks) {
  __m512i sum0 = _mm512_setzero_si512(), sum1 = sum0, sum2 = sum0, sum3 = sum0;
  for (std::size_t b = 0; b < blocks; ++b, in += 256) {
    sum0 = _mm512_add_epi64(sum0, _mm512_loadu_si512(in));
    sum1 = _mm512_add_epi64(sum1, _mm512_loadu_si512(in + 64));
    sum2 = _mm512_add_epi64(sum2, _mm512_loadu_si512(in + 128));
    sum3 = _mm512_add_epi64(sum3, _mm512_loadu_si512(in + 192));
  }
  uint64_t lanes[8];
  _mm512_storeu_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(sum0, sum1), _mm512_add_epi64(sum2, sum3)));
  uint64_t total = 0;
  for (uint64_t lane : lanes) total += lane;
  return total;
}
#endif

}  // namespace

uint64_t read_stream(const void* data, std::size_t bytes, int threads, ReadPattern pattern) {
  const auto* in = static_cast<const unsigned char*>(data);
  // At least 1 MiB a thread, as the CPU backend's copy: waking threads for less costs more
  // than it saves.
  constexpr std::size_t kMinChunkBytes = std::size_t(1) << 20;
  const int team = int(std::clamp<std::size_t>(bytes / kMinChunkBytes, 1, std::size_t(std::max(threads, 1))));
  // PageGroups: groups of four pages read a line of each page in turn with the source
  // prefetched ahead, as the backend's streaming copy reads; Sequential: the same lines in
  // address order, left to the hardware prefetchers (with 512-bit loads where the CPU has
  // them). The bytes after the last whole group one by one.
  constexpr std::size_t kLine = 64, kPage = 4096, kPages = 4, kGroup = kPages * kPage;
  const std::size_t groups = bytes / kGroup;
#if defined(__x86_64__) && defined(__GNUC__)
  const bool wide = pattern == ReadPattern::Sequential && __builtin_cpu_supports("avx512f");
#else
  const bool wide = false;
#endif
  uint64_t total = 0;
#pragma omp parallel num_threads(team) reduction(+ : total)
  {
#if defined(__SSE2__)
    __m128i sum0 = _mm_setzero_si128(), sum1 = sum0, sum2 = sum0, sum3 = sum0;
    auto add_line = [&](const unsigned char* line) {
      sum0 = _mm_add_epi64(sum0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(line)));
      sum1 = _mm_add_epi64(sum1, _mm_loadu_si128(reinterpret_cast<const __m128i*>(line + 16)));
      sum2 = _mm_add_epi64(sum2, _mm_loadu_si128(reinterpret_cast<const __m128i*>(line + 32)));
      sum3 = _mm_add_epi64(sum3, _mm_loadu_si128(reinterpret_cast<const __m128i*>(line + 48)));
    };
    if (pattern == ReadPattern::PageGroups) {
#pragma omp for schedule(static)
      for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t offset = 0; offset < kPage; offset += kLine)
          for (std::size_t page = 0; page < kPages; ++page) {
            const unsigned char* line = in + g * kGroup + page * kPage + offset;
            _mm_prefetch(reinterpret_cast<const char*>(line + 4 * kLine), _MM_HINT_T0);
            add_line(line);
          }
    } else if (wide) {
      // This thread's contiguous share of the whole groups, in 256-byte blocks.
      const std::size_t blocks = groups * kGroup / 256,
                        share = (blocks + omp_get_num_threads() - 1) / omp_get_num_threads();
      const std::size_t first = std::min(blocks, share * omp_get_thread_num()), last = std::min(blocks, first + share);
      total += sum_blocks_avx512(in + first * 256, last - first);
    } else {
#pragma omp for schedule(static)
      for (std::size_t line = 0; line < groups * kGroup / kLine; ++line) add_line(in + line * kLine);
    }
    uint64_t lanes[2];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes),
                     _mm_add_epi64(_mm_add_epi64(sum0, sum1), _mm_add_epi64(sum2, sum3)));
    total += lanes[0] + lanes[1];
#else
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < groups * kGroup / sizeof(uint64_t); ++i) {
      uint64_t word;
      std::memcpy(&word, in + i * sizeof(uint64_t), sizeof word);
      total += word;
    }
#endif
  }
  for (std::size_t i = groups * kGroup; i < bytes; ++i) total += in[i];
  return total;
}

Timing per_call(Timing t, int calls) {
  const double n = calls;
  for (double* ms : {&t.median_ms, &t.min_ms, &t.max_ms, &t.q1_ms, &t.q3_ms}) *ms /= n;
  return t;
}

Timing summarize(std::vector<double> times_ms) {
  Timing t;
  if (times_ms.empty()) return t;
  std::sort(times_ms.begin(), times_ms.end());
  t.repeats = static_cast<int>(times_ms.size());
  t.min_ms = times_ms.front();
  t.max_ms = times_ms.back();
  t.median_ms = quantile(times_ms, 0.5);
  t.q1_ms = quantile(times_ms, 0.25);
  t.q3_ms = quantile(times_ms, 0.75);
  return t;
}

int repeat_count(const TimingPolicy& policy, double estimate_ms, double flush_ms) {
  // At least min_time of measuring (calls and flushes: for fast GPU kernels, hundreds of
  // samples), at most max_time, and never fewer than 3 (or --repeats if less) so that the
  // median means something.
  int repeats = std::max(1, policy.repeats);
  if (estimate_ms < 0) return repeats;
  const double rep_cost_ms = std::max(estimate_ms, 1e-4) + flush_ms;
  const double floor_ms = 1e3 * policy.min_time_s;
  if (rep_cost_ms * repeats < floor_ms) repeats = std::min(policy.max_repeats, int(std::ceil(floor_ms / rep_cost_ms)));
  const int affordable = int(1e3 * policy.max_time_s / rep_cost_ms);
  if (repeats > affordable) repeats = std::max(std::min(3, policy.repeats), affordable);
  return repeats;
}

/// measure() and measure_together(): the calls of `calls` in one loop, each timed run after
/// its own flush, repeat r in order when r is even and in reverse when odd; warm-up rounds
/// first, the last sizing the measurement by the slowest call. Ends on the last call.
std::vector<Timing> measure_together(Device& device, Timer& timer, CacheFlusher* flusher, const TimingPolicy& policy,
                                     const std::vector<const std::function<void()>*>& calls) {
  const int n = static_cast<int>(calls.size());
  // Warm-up; the last round is timed to size the measurement. Calls slower than the
  // whole time budget end the warm-up early (the naive rungs at large sizes).
  double estimate_ms = -1;
  double warm_total_ms = 0;
  const auto warm_start = std::chrono::steady_clock::now();
  auto warm_wall_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
  };
  for (int w = 0; w < policy.warmup || (w > 0 && warm_wall_s() < policy.min_warmup_s); ++w) {
    estimate_ms = 0;
    for (const auto* call : calls) {
      const double t = timed_call(timer, flusher, *call);
      estimate_ms = std::max(estimate_ms, t);
      warm_total_ms += t;
    }
    if (warm_total_ms > 0.5e3 * policy.max_time_s) break;
  }
  device.synchronize();

  // Each repeat times every call: the budget is shared by them.
  const int repeats = repeat_count(policy, n * estimate_ms, n * (flusher ? flusher->cost_ms() : 0.0));
  std::vector<std::vector<double>> times(calls.size());
  for (auto& t : times) t.reserve(static_cast<std::size_t>(repeats));
  for (int r = 0; r < repeats; ++r)
    for (int i = 0; i < n; ++i) {
      const int c = r % 2 == 0 ? i : n - 1 - i;
      times[static_cast<std::size_t>(c)].push_back(timed_call(timer, flusher, *calls[static_cast<std::size_t>(c)]));
    }
  if (n > 1 && repeats % 2 == 0) {  // the last repeat ran in reverse: leave the last call's result behind
    (*calls.back())();
    device.synchronize();
  }
  std::vector<Timing> out;
  for (auto& t : times) out.push_back(summarize(std::move(t)));
  return out;
}

Timing measure(Device& device, Timer& timer, CacheFlusher* flusher, const TimingPolicy& policy,
               const std::function<void()>& call) {
  return measure_together(device, timer, flusher, policy, {&call})[0];
}

}  // namespace gpukern::bench
