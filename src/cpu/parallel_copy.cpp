// The CPU backend's memory copy; see parallel_copy.hpp.
#include "cpu/parallel_copy.hpp"

#include <emmintrin.h>
#include <immintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gpukern::cpu {
namespace {

// Each thread copies at least this much: below it, waking a thread costs more than it saves.
constexpr std::size_t kMinChunkBytes = std::size_t(1) << 20;
// Chunk boundaries on pages of the destination, so no cache line is written by two threads.
constexpr std::size_t kLine = 64;
constexpr std::size_t kPage = 4096;

// Streaming copy of whole lines in address order, `dst` 64-byte aligned: each thread's share
// is one sequential run, which the hardware prefetchers follow without help (a software
// prefetch ahead, or a walk over lines of several pages in turn as glibc's large memcpy does,
// read slower on the CPUs measured; bench/dev/cpu/copy_walks times the walks). The widest
// registers the path has, because wider loads keep more of the stream in flight per
// instruction; the store width does not matter to a write-combined line. Four lines a step.
// Returns the bytes copied (a multiple of a line).
std::size_t stream_lines_sse2(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  for (; done + kLine <= bytes; done += kLine) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done + 48), v3);
  }
  return done;
}

__attribute__((target("avx"))) std::size_t stream_lines_avx(unsigned char* dst, const unsigned char* src,
                                                            std::size_t bytes) {
  std::size_t done = 0;
  for (; done + 2 * kLine <= bytes; done += 2 * kLine) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + done));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + done + 32));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + done + 64));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + done + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + done), v0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + done + 32), v1);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + done + 64), v2);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + done + 96), v3);
  }
  return done;
}

__attribute__((target("avx512f"))) std::size_t stream_lines_avx512(unsigned char* dst, const unsigned char* src,
                                                                   std::size_t bytes) {
  std::size_t done = 0;
  for (; done + 4 * kLine <= bytes; done += 4 * kLine) {
    const __m512i v0 = _mm512_loadu_si512(src + done);
    const __m512i v1 = _mm512_loadu_si512(src + done + 64);
    const __m512i v2 = _mm512_loadu_si512(src + done + 128);
    const __m512i v3 = _mm512_loadu_si512(src + done + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done), v0);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 64), v1);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 128), v2);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + done + 192), v3);
  }
  return done;
}

// Streaming copy: the head up to a line boundary of `dst` by memcpy, the lines by the ISA
// path's loop (the last few by the SSE2 loop), the tail by memcpy, then a fence so that the
// stores are visible when the copy returns, as ordinary stores would be.
void stream_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes, Isa isa) {
  const std::size_t head = std::min(bytes, (kLine - reinterpret_cast<uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, head);
  std::size_t done = head;
  if (isa == Isa::Avx512)
    done += stream_lines_avx512(dst + done, src + done, bytes - done);
  else if (isa == Isa::Avx2)
    done += stream_lines_avx(dst + done, src + done, bytes - done);
  done += stream_lines_sse2(dst + done, src + done, bytes - done);
  std::memcpy(dst + done, src + done, bytes - done);
  _mm_sfence();
}

bool overlaps(const void* dst, const void* src, std::size_t bytes) {
  const auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  return d < s + bytes && s < d + bytes;
}

}  // namespace

std::size_t streaming_copy_threshold() {
  return std::max<std::size_t>(std::size_t(4) << 20, cpu_features().caches.l3 / 4);
}

void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads, CopyStores stores) {
  parallel_copy(dst, src, bytes, threads, stores, active_isa());
}

void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads, CopyStores stores, Isa isa) {
  if (bytes == 0 || dst == src) return;
  if (overlaps(dst, src, bytes)) {
    std::memmove(dst, src, bytes);
    return;
  }
  const bool streaming =
      stores == CopyStores::Streaming || (stores == CopyStores::Auto && bytes >= streaming_copy_threshold());
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  // Chunks of whole destination pages, one per thread; the first and last absorb the
  // unaligned ends.
  const std::size_t misalignment = reinterpret_cast<uintptr_t>(out) % kPage;
  const std::size_t pages = (misalignment + bytes + kPage - 1) / kPage;
  const int team = static_cast<int>(std::clamp<std::size_t>(bytes / kMinChunkBytes, 1, std::max(threads, 1)));
  const std::size_t pages_per_chunk = (pages + std::size_t(team) - 1) / std::size_t(team);
  auto copy_chunk = [&](int index) {
    const std::size_t begin_page = std::size_t(index) * pages_per_chunk * kPage;
    const std::size_t begin = index == 0 ? 0 : std::min(bytes, begin_page - misalignment);
    const std::size_t end = std::min(bytes, (std::size_t(index) + 1) * pages_per_chunk * kPage - misalignment);
    if (end <= begin) return;
    if (streaming)
      stream_copy(out + begin, in + begin, end - begin, isa);
    else
      std::memcpy(out + begin, in + begin, end - begin);
  };
  if (team == 1) {
    copy_chunk(0);
    return;
  }
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (int index = 0; index < team; ++index) copy_chunk(index);
}

namespace {

/// The sum of `bytes` bytes at `in`: eight at a time in 16-bit lanes (the even bytes of
/// each 64-bit word in one set of lanes, the odd ones in another), emptied into the total
/// before a lane can overflow.
uint64_t byte_sum(const unsigned char* in, std::size_t bytes) {
  constexpr uint64_t kEven = 0x00ff00ff00ff00ffull;
  constexpr std::size_t kWordsPerFold = 128;  // 2 * 255 * 128 < 2^16 a lane
  uint64_t total = 0;
  std::size_t i = 0;
  while (bytes - i >= 8) {
    const std::size_t words = std::min(kWordsPerFold, (bytes - i) / 8);
    uint64_t lanes = 0;
    for (std::size_t w = 0; w < words; ++w, i += 8) {
      uint64_t word;
      std::memcpy(&word, in + i, sizeof word);
      lanes += (word & kEven) + ((word >> 8) & kEven);
    }
    for (int lane = 0; lane < 4; ++lane) total += (lanes >> (16 * lane)) & 0xffff;
  }
  for (; i < bytes; ++i) total += in[i];
  return total;
}

}  // namespace

uint64_t parallel_byte_sum(const void* src, std::size_t bytes, int threads) {
  const auto* in = static_cast<const unsigned char*>(src);
  const int team = static_cast<int>(std::clamp<std::size_t>(bytes / kMinChunkBytes, 1, std::max(threads, 1)));
  const std::size_t chunk = (bytes + std::size_t(team) - 1) / std::size_t(team);
  uint64_t total = 0;
#pragma omp parallel for num_threads(team) schedule(static, 1) reduction(+ : total) if (team > 1)
  for (int index = 0; index < team; ++index) {
    const std::size_t begin = std::min(bytes, std::size_t(index) * chunk);
    total += byte_sum(in + begin, std::min(bytes, begin + chunk) - begin);
  }
  return total;
}

}  // namespace gpukern::cpu
