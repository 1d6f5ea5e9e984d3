// The CPU backend's memory copy; see parallel_copy.hpp.
#include "cpu/parallel_copy.hpp"

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gpukern::cpu {
namespace {

// Each thread copies at least this much: below it, waking a thread costs more than it saves.
constexpr std::size_t kMinChunkBytes = std::size_t(1) << 20;
// Chunk boundaries on cache lines of the destination, so no line is written by two threads.
constexpr std::size_t kLine = 64;

// Streaming stores of 16-byte SSE2 registers (every x86-64 has them; the store width does
// not matter to a write-combined line): head and tail by memcpy, the aligned body four
// registers (one line) at a time, then a fence so the stores are visible when the copy
// returns, as ordinary stores would be.
void stream_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  bytes -= head;
  std::size_t i = 0;
  for (; i + kLine <= bytes; i += kLine) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), v3);
  }
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
}

bool overlaps(const void* dst, const void* src, std::size_t bytes) {
  const auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  return d < s + bytes && s < d + bytes;
}

}  // namespace

std::size_t streaming_copy_threshold() {
  return std::max<std::size_t>(std::size_t(4) << 20, cpu_features().caches.l3 / 2);
}

void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads, CopyStores stores) {
  if (bytes == 0 || dst == src) return;
  if (overlaps(dst, src, bytes)) {
    std::memmove(dst, src, bytes);
    return;
  }
  const bool streaming =
      stores == CopyStores::Streaming || (stores == CopyStores::Auto && bytes >= streaming_copy_threshold());
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  // Chunks of whole destination lines, one per thread; the first and last absorb the
  // unaligned ends.
  const std::size_t misalignment = reinterpret_cast<uintptr_t>(out) % kLine;
  const std::size_t lines = (misalignment + bytes + kLine - 1) / kLine;
  const int team = static_cast<int>(std::clamp<std::size_t>(bytes / kMinChunkBytes, 1, std::max(threads, 1)));
  const std::size_t lines_per_chunk = (lines + std::size_t(team) - 1) / std::size_t(team);
  auto copy_chunk = [&](int index) {
    const std::size_t begin_line = std::size_t(index) * lines_per_chunk * kLine;
    const std::size_t begin = index == 0 ? 0 : std::min(bytes, begin_line - misalignment);
    const std::size_t end = std::min(bytes, (std::size_t(index) + 1) * lines_per_chunk * kLine - misalignment);
    if (end <= begin) return;
    if (streaming)
      stream_copy(out + begin, in + begin, end - begin);
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

}  // namespace gpukern::cpu
