// The CPU backend's copy (parallel_copy, behind gk_memcpy on the CPU): every byte copied
// exactly and nothing written outside the destination, for odd sizes, unaligned source
// and destination, every store mode and thread count (chunk boundaries fall inside
// cache lines and at the ends), with the streaming loop of every ISA path the CPU has;
// overlapping ranges copied as memmove copies them.
#include "core/backend.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/parallel_copy.hpp"
#include "cpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gpukern::cpu {
namespace {

using test::supported_isas;

constexpr std::size_t kGuard = 128;  // bytes checked on each side of the destination
constexpr unsigned char kPoison = 0xA5;

// A byte pattern with no short period, so a chunk copied from the wrong offset shows.
std::vector<unsigned char> pattern(std::size_t bytes, uint32_t seed) {
  std::vector<unsigned char> out(bytes);
  uint32_t state = seed * 2654435761u + 1;
  for (auto& b : out) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(state >> 24);
  }
  return out;
}

const char* mode_name(CopyStores stores) {
  return stores == CopyStores::Auto ? "auto" : stores == CopyStores::Cached ? "cached" : "streaming";
}

// Copies `bytes` from src + src_offset to dst + dst_offset and checks the destination and
// its guard bytes.
void check_copy(std::size_t bytes, std::size_t src_offset, std::size_t dst_offset, int threads, CopyStores stores,
                Isa isa = active_isa()) {
  const auto source = pattern(src_offset + bytes, uint32_t(bytes + src_offset));
  std::vector<unsigned char> target(kGuard + dst_offset + bytes + kGuard, kPoison);
  unsigned char* dst = target.data() + kGuard + dst_offset;
  parallel_copy(dst, source.data() + src_offset, bytes, threads, stores, isa);
  SCOPED_TRACE(testing::Message() << bytes << " bytes, src offset " << src_offset << ", dst offset " << dst_offset
                                  << ", " << threads << " threads, " << mode_name(stores) << ", " << isa_name(isa));
  ASSERT_EQ(std::memcmp(dst, source.data() + src_offset, bytes), 0);
  for (std::size_t i = 0; i < kGuard + dst_offset; ++i) ASSERT_EQ(target[i], kPoison) << "before, at " << i;
  for (std::size_t i = kGuard + dst_offset + bytes; i < target.size(); ++i)
    ASSERT_EQ(target[i], kPoison) << "after, at " << i;
}

TEST(ParallelCopy, OddSizesAndOffsetsCopyExactly) {
  // Sizes around a line, a 16-byte store, one thread's least chunk (1 MiB) and beyond.
  const std::size_t sizes[] = {
      0, 1, 15, 16, 17, 63, 64, 65, 127, 4095, 4097, (1 << 20) - 1, (2 << 20) + 3, (3 << 20) + 17};
  for (std::size_t bytes : sizes)
    for (std::size_t src_offset : {0, 1, 7})
      for (std::size_t dst_offset : {0, 3, 16, 63})
        for (int threads : {1, 2, 3, 7})
          for (CopyStores stores : {CopyStores::Auto, CopyStores::Cached, CopyStores::Streaming})
            check_copy(bytes, src_offset, dst_offset, threads, stores);
}

TEST(ParallelCopy, StreamingLoopOfEveryIsaCopiesExactly) {
  // Around each path's step (64, 128 and 256 bytes a step) and its tail, every line offset
  // of the destination (the head before the first whole line) and odd source offsets.
  const std::size_t sizes[] = {63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 4096 + 191, (2 << 20) + 4095};
  for (Isa isa : supported_isas())
    for (std::size_t bytes : sizes)
      for (std::size_t src_offset : {0, 1, 32, 33})
        for (std::size_t dst_offset : {0, 1, 16, 32, 48, 63})
          for (int threads : {1, 2}) check_copy(bytes, src_offset, dst_offset, threads, CopyStores::Streaming, isa);
}

TEST(ParallelCopy, LargeCopyAboveTheStreamingThreshold) {
  // Auto streams here; a size that is not a multiple of a line or of the thread count.
  const std::size_t bytes = streaming_copy_threshold() + 4093;
  for (Isa isa : supported_isas()) check_copy(bytes, 5, 11, 3, CopyStores::Auto, isa);
}

TEST(ParallelCopy, OverlappingRangesCopyAsMemmove) {
  const std::size_t bytes = (1 << 20) + 37;  // large enough for a parallel copy if allowed
  for (std::ptrdiff_t shift : {-4096, -65, -1, 1, 63, 4096}) {
    for (CopyStores stores : {CopyStores::Auto, CopyStores::Streaming}) {
      auto buffer = pattern(bytes + 8192, uint32_t(shift + 9000));
      auto expected = buffer;
      const std::size_t src = 4096, dst = std::size_t(std::ptrdiff_t(src) + shift);
      std::memmove(expected.data() + dst, expected.data() + src, bytes);
      parallel_copy(buffer.data() + dst, buffer.data() + src, bytes, 4, stores);
      EXPECT_EQ(buffer, expected) << "shift " << shift << ", " << mode_name(stores);
    }
  }
}

// parallel_byte_sum (gk_memread on the CPU): the exact byte sum for odd sizes and
// offsets, with chunk boundaries of several thread counts inside words, and bytes of
// 0xff that would overflow a 16-bit lane emptied too late.
TEST(ParallelCopy, ByteSumIsExact) {
  const std::size_t large = (5 << 20) + 7;
  const auto source = pattern(large + 16, 11);
  std::vector<unsigned char> ones(large, 0xff);
  for (std::size_t offset : {0, 1, 3, 7, 8, 13}) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                              std::size_t{1023}, std::size_t{1025}, (std::size_t{2} << 20) + 5, large}) {
      uint64_t expected = 0;
      for (std::size_t i = 0; i < bytes; ++i) expected += source[offset + i];
      for (int threads : {1, 2, 3, 8}) {
        SCOPED_TRACE(::testing::Message() << "offset " << offset << ", bytes " << bytes << ", threads " << threads);
        EXPECT_EQ(parallel_byte_sum(source.data() + offset, bytes, threads), expected);
      }
    }
  }
  EXPECT_EQ(parallel_byte_sum(ones.data(), large, 3), uint64_t{255} * large);
}

TEST(ParallelCopy, BackendCopyUsesItForEveryKind) {
  // Through the backend's copy (gk_memcpy on the CPU): exact, odd size, unaligned ends.
  auto backend = create_backend();
  const std::size_t bytes = (3 << 20) + 3;
  const auto source = pattern(bytes + 1, 77);
  for (auto kind : {core::CopyKind::HostToDevice, core::CopyKind::DeviceToHost, core::CopyKind::DeviceToDevice}) {
    std::vector<unsigned char> target(bytes + 2, kPoison);
    backend->copy(target.data() + 1, source.data() + 1, bytes, kind);
    EXPECT_EQ(std::memcmp(target.data() + 1, source.data() + 1, bytes), 0);
    EXPECT_EQ(target.front(), kPoison);
    EXPECT_EQ(target.back(), kPoison);
  }
}

}  // namespace
}  // namespace gpukern::cpu
