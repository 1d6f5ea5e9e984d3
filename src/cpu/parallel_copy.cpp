// The CPU backend's memory copy; see parallel_copy.hpp.
#include "cpu/parallel_copy.hpp"

#include <emmintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gpukern::cpu {
namespace {

// Each thread copies at least this much: below it, waking a thread costs more than it saves.
constexpr std::size_t kMinChunkBytes = std::size_t(1) << 20;
// Chunk boundaries on pages of the destination (so no cache line is written by two
// threads), and the streaming loop's unit: one line of each of four pages in turn.
constexpr std::size_t kLine = 64;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kPagesInTurn = 4;

// One 64-byte line by streaming stores of 16-byte SSE2 registers (every x86-64 has them;
// the store width does not matter to a write-combined line), `dst` 16-byte aligned.
inline void stream_line(unsigned char* dst, const unsigned char* src) {
  const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
  const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
  const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
  _mm_stream_si128(reinterpret_cast<__m128i*>(dst), v0);
  _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), v1);
  _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), v2);
  _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), v3);
}

// Streaming copy: head and tail by memcpy, the 16-byte aligned body a line of each of four
// consecutive pages in turn with the source prefetched a few lines ahead (as glibc's large
// memcpy does: four DRAM pages open at once stream faster than one sequential run), then a
// fence so the stores are visible when the copy returns, as ordinary stores would be.
void stream_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  bytes -= head;
  constexpr std::size_t kGroup = kPagesInTurn * kPage;
  std::size_t done = 0;
  for (; done + kGroup <= bytes; done += kGroup)
    for (std::size_t offset = 0; offset < kPage; offset += kLine)
      for (std::size_t page = 0; page < kPagesInTurn; ++page) {
        const std::size_t at = done + page * kPage + offset;
        _mm_prefetch(reinterpret_cast<const char*>(src + at + 4 * kLine), _MM_HINT_T0);
        stream_line(dst + at, src + at);
      }
  for (; done + kLine <= bytes; done += kLine) stream_line(dst + done, src + done);
  for (; done + 16 <= bytes; done += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + done),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done)));
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
