// Development probe (not shipped): ways to copy memory on the CPU with the backend's threads,
// each timed call by call in rotation after the same cache flush, so that a shared machine's
// drift falls on all of them alike. Decides which walk gk_memcpy (src/cpu/parallel_copy.cpp)
// streams with.
//
//   copy_walks CALLS MB [MB ...]
//
// Per size MB (the bytes copied; traffic = 2 x MB): every walk CALLS times, interleaved,
// each call after a 64 MiB memset (FLUSH_MB overrides; 0: warm). Threads: OMP_NUM_THREADS
// (default: all). FLUSH_LOOP=1 flushes by an ordinary store to every line instead of memset. Each thread copies one
// contiguous share, 4 KiB aligned on the destination, as parallel_copy does. Prints the min and median GB/s of read +
// write traffic per walk, and checks every walk's output.
//
// Walks:
//   groups16   a line of each of four pages in turn, 16-byte streaming stores, prefetch 4 lines
//              ahead (parallel_copy's walk before this probe)
//   seq16      address order, 16-byte loads and streaming stores
//   seq32      address order, 32-byte loads and streaming stores (AVX)
//   seq64      address order, 64-byte loads and streaming stores (AVX-512)
//   seq64pf    seq64 with a software prefetch 1 KiB ahead
//   memcpy     glibc's memcpy per share (its own choice of stores)
//   cached64   address order, 64-byte loads and ordinary stores
#include "probe_common.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kLine = 64, kPage = 4096;

void groups16(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  constexpr std::size_t kGroup = 4 * kPage;
  std::size_t done = 0;
  for (; done + kGroup <= bytes; done += kGroup)
    for (std::size_t offset = 0; offset < kPage; offset += kLine)
      for (std::size_t page = 0; page < 4; ++page) {
        const std::size_t at = done + page * kPage + offset;
        _mm_prefetch(reinterpret_cast<const char*>(src + at + 4 * kLine), _MM_HINT_T0);
        for (int i = 0; i < 4; ++i)
          _mm_stream_si128(reinterpret_cast<__m128i*>(dst + at + 16 * i),
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at + 16 * i)));
      }
  std::memcpy(dst + done, src + done, bytes - done);
}

void seq16(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  for (; done + kLine <= bytes; done += kLine)
    for (int i = 0; i < 4; ++i)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done + 16 * i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 16 * i)));
  std::memcpy(dst + done, src + done, bytes - done);
}

__attribute__((target("avx"))) void seq32(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  for (; done + 2 * kLine <= bytes; done += 2 * kLine)
    for (int i = 0; i < 4; ++i)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + done + 32 * i),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + done + 32 * i)));
  std::memcpy(dst + done, src + done, bytes - done);
}

template <bool kPrefetch>
__attribute__((target("avx512f"))) void seq64(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  for (; done + 4 * kLine <= bytes; done += 4 * kLine) {
    if (kPrefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(src + done + 1024), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(src + done + 1024 + 128), _MM_HINT_T0);
    }
    const __m512i v0 = _mm512_loadu_si512(src + done), v1 = _mm512_loadu_si512(src + done + 64),
                  v2 = _mm512_loadu_si512(src + done + 128), v3 = _mm512_loadu_si512(src + done + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done), v0);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 64), v1);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 128), v2);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 192), v3);
  }
  std::memcpy(dst + done, src + done, bytes - done);
}

__attribute__((target("avx512f"))) void cached64(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  for (; done + 4 * kLine <= bytes; done += 4 * kLine)
    for (int i = 0; i < 4; ++i) _mm512_storeu_si512(dst + done + 64 * i, _mm512_loadu_si512(src + done + 64 * i));
  std::memcpy(dst + done, src + done, bytes - done);
}

void plain_memcpy(unsigned char* dst, const unsigned char* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

using Walk = void (*)(unsigned char*, const unsigned char*, std::size_t);

// Each thread its share in whole destination pages (dst is page aligned here).
void threaded(Walk walk, unsigned char* dst, const unsigned char* src, std::size_t bytes) {
#pragma omp parallel
  {
    const std::size_t threads = std::size_t(omp_get_num_threads()), id = std::size_t(omp_get_thread_num());
    const std::size_t pages = (bytes + kPage - 1) / kPage, per = (pages + threads - 1) / threads;
    const std::size_t begin = std::min(bytes, id * per * kPage), end = std::min(bytes, (id + 1) * per * kPage);
    if (end > begin) walk(dst + begin, src + begin, end - begin);
    _mm_sfence();
  }
}

using probe::seconds;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CALLS MB [MB ...]\n", argv[0]);
    return 2;
  }
  const int calls = std::atoi(argv[1]);
  const std::size_t flush_bytes = std::size_t(getenv("FLUSH_MB") ? std::atoi(getenv("FLUSH_MB")) : 64) << 20;
  const struct {
    const char* name;
    Walk walk;
  } walks[] = {{"groups16", groups16},   {"seq16", seq16},         {"seq32", seq32},      {"seq64", seq64<false>},
               {"seq64pf", seq64<true>}, {"memcpy", plain_memcpy}, {"cached64", cached64}};
  constexpr int kWalks = sizeof(walks) / sizeof(walks[0]);
  const bool loop_flush = getenv("FLUSH_LOOP") && std::atoi(getenv("FLUSH_LOOP"));
  std::vector<unsigned char> flush(std::max<std::size_t>(flush_bytes, 1));
  std::printf("threads %d, flush %zu MiB, %d calls; GB/s of read + write, min time | median time\n",
              omp_get_max_threads(), flush_bytes >> 20, calls);
  for (int a = 2; a < argc; ++a) {
    const std::size_t bytes = std::size_t(std::atof(argv[a]) * double(1 << 20));
    auto* src = static_cast<unsigned char*>(std::aligned_alloc(kPage, (bytes + kPage) / kPage * kPage));
    auto* dst = static_cast<unsigned char*>(std::aligned_alloc(kPage, (bytes + kPage) / kPage * kPage));
    for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 131 + (i >> 12));
    std::memset(dst, 0, bytes);
    std::vector<std::vector<double>> times(kWalks);
    for (int c = -1; c < calls; ++c)
      for (int w = 0; w < kWalks; ++w) {
        if (flush_bytes && loop_flush) {
          // Ordinary stores of every line (glibc's memset may stream past the caches).
          volatile unsigned char* f = flush.data();
          for (std::size_t i = 0; i < flush_bytes; i += kLine) f[i] = static_cast<unsigned char>(f[i] + 1);
        } else if (flush_bytes) {
          std::memset(flush.data(), c & 0xff, flush_bytes);
        }
        const double start = seconds();
        threaded(walks[w].walk, dst, src, bytes);
        const double t = seconds() - start;
        if (c >= 0) times[w].push_back(t);
        if (c == -1 && std::memcmp(dst, src, bytes) != 0) std::printf("%s: WRONG\n", walks[w].name);
      }
    std::printf("%8.1f MiB:", double(bytes) / double(1 << 20));
    for (int w = 0; w < kWalks; ++w) {
      auto& t = times[w];
      std::sort(t.begin(), t.end());
      std::printf("  %s %.0f|%.0f", walks[w].name, 2e-9 * double(bytes) / t.front(),
                  2e-9 * double(bytes) / t[t.size() / 2]);
    }
    std::printf("\n");
    std::fflush(stdout);
    std::free(src);
    std::free(dst);
  }
}
