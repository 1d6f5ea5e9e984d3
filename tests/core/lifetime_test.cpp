// Handles, memory blocks and timers of the C API and the C++ wrapper (src/core/api.cpp,
// src/core/api_objects.hpp, include/gpukern/gpukern.hpp): a closed, destroyed, freed or
// foreign object and an impossible size are named errors, never a crash, a foreign free
// or a garbage result; the wrapper's Buffers and Timers keep their Device's handle open.
#include "core/rejection.hpp"

#include <atomic>
#include <memory>
#include <cstdint>
#include <limits>
#include <thread>

namespace gpukern::test {
namespace {

/// A handle of its own (not the shared Device), so a test may close it.
gk_handle open_handle(const std::string& backend) {
  gk_handle h = nullptr;
  EXPECT_EQ(gk_open(backend.c_str(), &h), GK_SUCCESS) << gk_last_error();
  return h;
}

/// Expects InvalidArgument with a message naming `word` and containing `text`.
void expect_rejected(gk_status status, const char* word, const char* text) {
  const std::string message = expect_status(status, GK_INVALID_ARGUMENT, {word});
  EXPECT_TRUE(contains_text(message, text)) << "\"" << message << "\" does not say '" << text << "'";
}

/// Every call that takes a handle, with `h`, expecting InvalidArgument naming the handle
/// and containing `text`.
void expect_every_call_rejects(gk_handle h, const char* text) {
  void* ptr = nullptr;
  int count = 0;
  float cell = 0;
  char name[GK_NAME_LEN] = {};
  gk_device_info info{};
  gk_variant_info variant{};
  gk_timer timer = nullptr;
  GemmDesc gemm;
  SoftmaxDesc softmax;
  expect_rejected(gk_get_device_info(h, &info), "handle", text);
  expect_rejected(gk_malloc(h, 64, &ptr), "handle", text);
  EXPECT_EQ(ptr, nullptr);
  expect_rejected(gk_free(h, &cell), "handle", text);
  expect_rejected(gk_memcpy(h, &cell, &count, 4, GK_HOST_TO_DEVICE), "handle", text);
  expect_rejected(gk_memset(h, &cell, 0, 4), "handle", text);
  expect_rejected(gk_memread(h, &cell, 4, nullptr), "handle", text);
  expect_rejected(gk_synchronize(h), "handle", text);
  expect_rejected(gk_set_stream(h, nullptr), "handle", text);
  expect_rejected(gk_gemm_ex(h, &gemm), "handle", text);
  expect_rejected(gk_softmax_ex(h, &softmax), "handle", text);
  expect_rejected(gk_gemm_ex_select(h, &gemm, name, sizeof name), "handle", text);
  expect_rejected(gk_softmax_ex_select(h, &softmax, name, sizeof name), "handle", text);
  expect_rejected(gk_variant_count(h, GK_OP_GEMM, &count), "handle", text);
  expect_rejected(gk_get_variant_info(h, GK_OP_GEMM, 0, &variant), "handle", text);
  expect_rejected(gk_last_variant(h, GK_OP_GEMM, name, sizeof name), "handle", text);
  expect_rejected(gk_timer_create(h, &timer), "handle", text);
  EXPECT_EQ(timer, nullptr);
  expect_rejected(gk_close(h), "handle", text);
}

class Lifetime : public ::testing::TestWithParam<std::string> {};

// The CPU backend rounded sizes up to 64 bytes, so the top 63 size_t values wrapped to a
// 0-byte block returned with Success.
TEST_P(Lifetime, ImpossibleAllocationSizesFail) {
  gk_handle h = open_handle(GetParam());
  const std::size_t top = std::numeric_limits<std::size_t>::max();
  for (std::size_t bytes :
       {top, top - 1, top - 62, top - 63, top / 2 + 1, std::size_t{PTRDIFF_MAX}, std::size_t{1} << 62}) {
    SCOPED_TRACE("bytes = " + std::to_string(bytes));
    void* ptr = &ptr;  // must come back null
    const gk_status status = gk_malloc(h, bytes, &ptr);
    EXPECT_TRUE(status == GK_OUT_OF_MEMORY || status == GK_INVALID_ARGUMENT) << gk_status_name(status);
    if (status != GK_SUCCESS) {
      EXPECT_TRUE(contains_word(gk_last_error(), "bytes")) << gk_last_error();
    }
    EXPECT_EQ(ptr, nullptr);
    if (status == GK_SUCCESS) gk_free(h, ptr);
  }
  // The handle keeps working.
  void* ptr = nullptr;
  ASSERT_EQ(gk_malloc(h, 64, &ptr), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(gk_memset(h, ptr, 0, 64), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(gk_free(h, ptr), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
}

TEST_P(Lifetime, ClosedHandleIsRejectedEverywhere) {
  gk_handle h = open_handle(GetParam());
  ASSERT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
  expect_every_call_rejects(h, "closed");  // gk_close last: a double close
}

TEST_P(Lifetime, ValuesThatAreNotHandlesAreRejected) {
  gk_handle h = open_handle(GetParam());
  gk_timer timer = nullptr;
  ASSERT_EQ(gk_timer_create(h, &timer), GK_SUCCESS) << gk_last_error();
  unsigned char bytes[256] = {};
  {
    SCOPED_TRACE("a small integer");
    expect_every_call_rejects(reinterpret_cast<gk_handle>(std::uintptr_t{0x1000}), "gk_open");
  }
  {
    SCOPED_TRACE("the address of an application object");
    expect_every_call_rejects(reinterpret_cast<gk_handle>(bytes), "gk_open");
  }
  {
    SCOPED_TRACE("a timer");
    expect_every_call_rejects(reinterpret_cast<gk_handle>(timer), "gk_open");
  }
  // ... and a handle is not a timer.
  expect_rejected(gk_timer_start(reinterpret_cast<gk_timer>(h)), "timer", "gk_timer_create");
  EXPECT_EQ(gk_timer_destroy(timer), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
}

// gk_free takes only the start of a live block that this handle's gk_malloc returned.
TEST_P(Lifetime, FreeOfAForeignPointerIsRejected) {
  gk_handle h = open_handle(GetParam()), other = open_handle(GetParam());
  void* block = nullptr;
  ASSERT_EQ(gk_malloc(h, 256, &block), GK_SUCCESS) << gk_last_error();
  int on_stack = 0;
  std::vector<float> on_heap(16);
  expect_rejected(gk_free(h, &on_stack), "ptr", "gk_malloc");
  expect_rejected(gk_free(h, on_heap.data()), "ptr", "gk_malloc");
  expect_rejected(gk_free(h, static_cast<char*>(block) + 64), "ptr", "inside");
  expect_rejected(gk_free(other, block), "ptr", "another handle");
  EXPECT_EQ(gk_free(h, block), GK_SUCCESS) << gk_last_error();
  expect_rejected(gk_free(h, block), "ptr", "freed");
  EXPECT_EQ(gk_free(h, nullptr), GK_SUCCESS) << "gk_free(NULL) is a no-op, like free(NULL)";
  EXPECT_EQ(gk_close(other), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
}

// Closing a handle frees the blocks it still owns and destroys its timers.
TEST_P(Lifetime, CloseEndsItsTimersAndBlocks) {
  gk_handle h = open_handle(GetParam());
  void* block = nullptr;
  gk_timer timer = nullptr;
  ASSERT_EQ(gk_malloc(h, 4096, &block), GK_SUCCESS) << gk_last_error();
  ASSERT_EQ(gk_timer_create(h, &timer), GK_SUCCESS) << gk_last_error();
  ASSERT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
  double ms = -1;
  expect_rejected(gk_timer_start(timer), "timer", "destroyed");
  expect_rejected(gk_timer_elapsed_ms(timer, &ms), "timer", "destroyed");
  EXPECT_EQ(ms, -1) << "a failed call wrote its output";
  expect_rejected(gk_timer_destroy(timer), "timer", "destroyed");
  expect_rejected(gk_free(h, block), "handle", "closed");
}

// elapsed_ms needs a start followed by a stop; anything else used to return Success
// with a time made from an unset clock (about +-1.3e6 ms).
TEST_P(Lifetime, TimerMisuseIsANamedError) {
  gk_handle h = open_handle(GetParam());
  gk_timer timer = nullptr;
  ASSERT_EQ(gk_timer_create(h, &timer), GK_SUCCESS) << gk_last_error();
  double ms = -1;
  expect_rejected(gk_timer_elapsed_ms(timer, &ms), "timer", "never started");
  expect_rejected(gk_timer_stop(timer), "timer", "before");
  expect_rejected(gk_timer_elapsed_ms(timer, &ms), "timer", "never started");
  ASSERT_EQ(gk_timer_start(timer), GK_SUCCESS) << gk_last_error();
  expect_rejected(gk_timer_elapsed_ms(timer, &ms), "timer", "not stopped");
  EXPECT_EQ(ms, -1) << "a failed call wrote its output";
  ASSERT_EQ(gk_timer_stop(timer), GK_SUCCESS) << gk_last_error();
  ASSERT_EQ(gk_timer_elapsed_ms(timer, &ms), GK_SUCCESS) << gk_last_error();
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60e3);
  // A restarted timer needs a new stop.
  ASSERT_EQ(gk_timer_start(timer), GK_SUCCESS) << gk_last_error();
  expect_rejected(gk_timer_elapsed_ms(timer, &ms), "timer", "not stopped");
  expect_rejected(gk_timer_elapsed_ms(timer, nullptr), "ms", "null");
  EXPECT_EQ(gk_timer_destroy(timer), GK_SUCCESS) << gk_last_error();
  expect_rejected(gk_timer_start(timer), "timer", "destroyed");
  expect_rejected(gk_timer_stop(timer), "timer", "destroyed");
  expect_rejected(gk_timer_destroy(timer), "timer", "destroyed");
  expect_rejected(gk_timer_destroy(nullptr), "timer", "null");
  EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
}

// Calls racing a gk_close of their handle end with Success or the named error, never a crash.
TEST_P(Lifetime, CallsRacingACloseFailCleanly) {
  for (int round = 0; round < 20; ++round) {
    gk_handle h = open_handle(GetParam());
    std::atomic<bool> go{false};
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        while (!go) std::this_thread::yield();
        for (int i = 0; i < 50; ++i) {
          void* ptr = nullptr;
          gk_status s = gk_malloc(h, 128, &ptr);
          if (s == GK_SUCCESS) s = gk_free(h, ptr);
          gk_device_info info{};
          const gk_status t2 = gk_get_device_info(h, &info);
          for (gk_status x : {s, t2}) bad += x != GK_SUCCESS && x != GK_INVALID_ARGUMENT;
        }
      });
    go = true;
    EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
    for (auto& t : threads) t.join();
    EXPECT_EQ(bad.load(), 0) << "a call racing gk_close failed with another status";
  }
}

// Several threads freeing the same block: exactly one frees it.
TEST_P(Lifetime, ConcurrentDoubleFreeFreesOnce) {
  gk_handle h = open_handle(GetParam());
  for (int round = 0; round < 20; ++round) {
    void* block = nullptr;
    ASSERT_EQ(gk_malloc(h, 512, &block), GK_SUCCESS) << gk_last_error();
    std::atomic<bool> go{false};
    std::atomic<int> freed{0}, rejected{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        while (!go) std::this_thread::yield();
        const gk_status s = gk_free(h, block);
        (s == GK_SUCCESS ? freed : rejected) += 1;
      });
    go = true;
    for (auto& t : threads) t.join();
    EXPECT_EQ(freed.load(), 1);
    EXPECT_EQ(rejected.load(), 3);
  }
  EXPECT_EQ(gk_close(h), GK_SUCCESS) << gk_last_error();
}

// A Buffer or Timer that outlives its Device keeps the handle open (it used to free
// through, or time on, a closed handle); the last of them closes it.
TEST_P(Lifetime, BuffersAndTimersKeepTheirDeviceOpen) {
  gk_handle raw = nullptr;
  Buffer buffer;
  {
    Device dev(GetParam());
    raw = dev.handle();
    buffer = dev.alloc(256);
    Timer timer = dev.timer();
    timer.start();
    timer.stop();
    EXPECT_GE(timer.elapsed_ms(), 0.0);
  }
  gk_device_info info{};
  EXPECT_EQ(gk_get_device_info(raw, &info), GK_SUCCESS)
      << "the Buffer's handle was closed with its Device: " << gk_last_error();
  EXPECT_EQ(gk_memset(raw, buffer.data(), 0x11, buffer.size()), GK_SUCCESS) << gk_last_error();
  buffer = Buffer();  // frees the block, then closes the handle
  expect_rejected(gk_get_device_info(raw, &info), "handle", "closed");

  {
    auto dev = std::make_unique<Device>(GetParam());
    raw = dev->handle();
    Timer timer = dev->timer();
    dev.reset();
    timer.start();
    timer.stop();
    EXPECT_GE(timer.elapsed_ms(), 0.0);
    EXPECT_EQ(gk_get_device_info(raw, &info), GK_SUCCESS)
        << "the Timer's handle was closed with its Device: " << gk_last_error();
  }
  expect_rejected(gk_get_device_info(raw, &info), "handle", "closed");
}

/// Runs `call`, expecting gpukern::Error with InvalidArgument naming `word`.
template <class Call>
void expect_throws_invalid(Call call, const char* word) {
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument) << e.what();
    EXPECT_TRUE(contains_word(e.what(), word)) << e.what();
  }
}

// Device::upload / download into a Buffer used to copy any byte count (heap overflow).
TEST_P(Lifetime, BufferCopiesAreBoundedByItsSize) {
  Device& dev = shared_device(GetParam());
  Buffer small = dev.alloc(16), none;
  std::vector<unsigned char> host(4096, 0x5a);
  expect_throws_invalid([&] { dev.upload(small, host.data(), 17); }, "bytes");
  expect_throws_invalid([&] { dev.download(host.data(), small, 4096); }, "bytes");
  expect_throws_invalid([&] { dev.upload(none, host.data(), 1); }, "bytes");
  dev.upload(small, host.data(), 16);
  std::vector<unsigned char> back(16);
  dev.synchronize();
  dev.download(back.data(), small, 16);
  for (unsigned char v : back) EXPECT_EQ(v, 0x5a);
}

/// `count` bytes of a linear congruential sequence from `seed` (no short period).
std::vector<unsigned char> pseudo_random_bytes(std::size_t count, uint32_t seed) {
  std::vector<unsigned char> bytes(count);
  for (auto& b : bytes) {
    seed = seed * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(seed >> 24);
  }
  return bytes;
}

// gk_memread: the sum of exactly the bytes asked for (odd offsets and lengths: unaligned
// heads and tails, a range past the device's many blocks), the memory unchanged, a null
// source named, nothing read for 0 bytes.
TEST_P(Lifetime, MemreadSumsExactlyItsBytesAndWritesNothing) {
  Device& dev = shared_device(GetParam());
  const std::size_t total = (std::size_t{64} << 20) + 64;
  const std::vector<unsigned char> host = pseudo_random_bytes(total, 12345);
  Buffer buffer = dev.alloc(total);
  dev.upload(buffer, host.data(), total);
  const auto* base = static_cast<const unsigned char*>(buffer.data());
  for (std::size_t offset : {0, 1, 8, 15, 16, 17, 33}) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17},
                              std::size_t{255}, std::size_t{4101}, (std::size_t{1} << 20) + 13, total - offset}) {
      SCOPED_TRACE(::testing::Message() << "offset " << offset << ", bytes " << bytes);
      uint64_t expected = 0;
      for (std::size_t i = 0; i < bytes; ++i) expected += host[offset + i];
      EXPECT_EQ(dev.memread_sum(base + offset, bytes), expected);
    }
  }
  dev.memread(base + 3, total - 3);  // queued, no sum
  uint64_t sum = 1;
  expect_rejected(gk_memread(dev.handle(), nullptr, 16, &sum), "src", "null");
  EXPECT_EQ(gk_memread(dev.handle(), nullptr, 0, &sum), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(sum, 0u);
  std::vector<unsigned char> back(total);
  dev.synchronize();
  dev.download(back.data(), buffer, total);
  EXPECT_TRUE(back == host) << "gk_memread changed the memory it read";
}

// A range of more than eight times the L2 (GPUs read it with plain loads, not evict_first:
// src/cuda/memread.cu), at an odd offset and length.
TEST_P(Lifetime, MemreadSumsARangeBeyondTheL2) {
  Device& dev = shared_device(GetParam());
  const std::string extra = dev.info().extra;
  const auto at = extra.find("l2_bytes=");
  if (at == std::string::npos) GTEST_SKIP() << "the device names no L2 size (" << extra << ")";
  const std::size_t l2 = std::stoull(extra.substr(at + 9));
  const std::size_t total = 9 * l2 + 4099;
  const std::vector<unsigned char> host = pseudo_random_bytes(total, 777);
  Buffer buffer = dev.alloc(total);
  dev.upload(buffer, host.data(), total);
  uint64_t expected = 0;
  for (std::size_t i = 5; i < total - 2; ++i) expected += host[i];
  EXPECT_EQ(dev.memread_sum(static_cast<const unsigned char*>(buffer.data()) + 5, total - 7), expected);
}

INSTANTIATE_TEST_SUITE_P(Api, Lifetime, ::testing::ValuesIn(available_backend_names()), BackendName());

}  // namespace
}  // namespace gpukern::test
