// The C API's handle functions and the C++ wrapper (src/core/api.cpp,
// include/gpukern/gpukern.hpp): null handles and pointers, status names, errors as
// exceptions with their status, memory, rung selection, timers.
#include "core/rejection.hpp"
#include "support/reference.hpp"

#include <cstring>
#include <thread>

namespace gpukern::test {
namespace {

TEST(Api, StatusNamesAndVersion) {
  EXPECT_STREQ(gk_status_name(GK_SUCCESS), "Success");
  EXPECT_STREQ(gk_status_name(GK_INVALID_ARGUMENT), "InvalidArgument");
  EXPECT_STREQ(gk_status_name(GK_UNSUPPORTED), "Unsupported");
  EXPECT_STREQ(gk_status_name(GK_UNAVAILABLE), "Unavailable");
  EXPECT_STREQ(gk_status_name(GK_OUT_OF_MEMORY), "OutOfMemory");
  EXPECT_STREQ(gk_status_name(GK_DEVICE_ERROR), "DeviceError");
  EXPECT_STREQ(gk_status_name(GK_INTERNAL_ERROR), "InternalError");
  const std::string version = std::to_string(GK_VERSION_MAJOR) + "." + std::to_string(GK_VERSION_MINOR) + "." +
                              std::to_string(GK_VERSION_PATCH);
  EXPECT_EQ(std::string(gk_version()), version);
}

TEST(Api, NullHandleIsRejectedEverywhere) {
  void* ptr = nullptr;
  int count = 0;
  char name[GK_NAME_LEN];
  gk_device_info info{};
  gk_variant_info variant{};
  gk_timer timer = nullptr;
  expect_status(gk_close(nullptr), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_get_device_info(nullptr, &info), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_malloc(nullptr, 16, &ptr), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_free(nullptr, nullptr), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_memcpy(nullptr, &count, &count, 4, GK_HOST_TO_DEVICE), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_memset(nullptr, &count, 0, 4), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_synchronize(nullptr), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_set_stream(nullptr, nullptr), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_variant_count(nullptr, GK_OP_GEMM, &count), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_get_variant_info(nullptr, GK_OP_GEMM, 0, &variant), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_last_variant(nullptr, GK_OP_GEMM, name, sizeof name), GK_INVALID_ARGUMENT, {"handle"});
  expect_status(gk_timer_create(nullptr, &timer), GK_INVALID_ARGUMENT, {"handle"});
}

TEST(Api, NullOutputPointersAndBadEnums) {
  Device& dev = shared_device("cpu");
  expect_status(gk_get_device_info(dev.handle(), nullptr), GK_INVALID_ARGUMENT, {"info"});
  expect_status(gk_malloc(dev.handle(), 16, nullptr), GK_INVALID_ARGUMENT, {"ptr"});
  expect_status(gk_variant_count(dev.handle(), GK_OP_GEMM, nullptr), GK_INVALID_ARGUMENT, {"count"});
  int count = 0;
  expect_status(gk_variant_count(dev.handle(), static_cast<gk_op>(5), &count), GK_INVALID_ARGUMENT, {"op"});
  gk_variant_info variant{};
  expect_status(gk_get_variant_info(dev.handle(), GK_OP_SOFTMAX, 1000, &variant), GK_INVALID_ARGUMENT, {"index"});
  expect_status(gk_last_variant(dev.handle(), GK_OP_GEMM, nullptr, 8), GK_INVALID_ARGUMENT, {"name"});
  int src = 1, dst = 0;
  expect_status(gk_memcpy(dev.handle(), &dst, &src, 4, static_cast<gk_copy_kind>(9)), GK_INVALID_ARGUMENT, {"kind"});
  expect_status(gk_memcpy(dev.handle(), nullptr, &src, 4, GK_HOST_TO_DEVICE), GK_INVALID_ARGUMENT, {"dst"});
  expect_status(gk_memcpy(dev.handle(), &dst, nullptr, 4, GK_HOST_TO_DEVICE), GK_INVALID_ARGUMENT, {"src"});
}

TEST(Api, ErrorsAreThreadLocal) {
  gk_handle handle = nullptr;
  ASSERT_NE(gk_open("bogus", &handle), GK_SUCCESS);
  const std::string here = gk_last_error();
  std::string there = "unset";
  std::thread other([&] { there = gk_last_error(); });
  other.join();
  EXPECT_FALSE(here.empty());
  EXPECT_EQ(there, "") << "another thread sees this thread's error";
}

class CppApi : public ::testing::TestWithParam<std::string> {};

TEST_P(CppApi, ThrowsErrorWithStatus) {
  Device& dev = shared_device(GetParam());
  GemmDesc bad;
  bad.m = -1;
  try {
    dev.gemm(bad);
    ADD_FAILURE() << "Device::gemm with m = -1 did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_TRUE(contains_text(e.what(), "InvalidArgument")) << e.what();
    EXPECT_TRUE(contains_word(e.what(), "m")) << e.what();
  }
}

TEST_P(CppApi, BuffersTimersAndSelection) {
  Device& dev = shared_device(GetParam());
  Buffer a = dev.alloc(64 * 64 * 4);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_EQ(a.size(), 64u * 64 * 4);
  Buffer moved = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_NE(moved.data(), nullptr);
  Buffer empty = dev.alloc(0);
  EXPECT_EQ(empty.data(), nullptr);

  // memset + copy + download round trip
  Buffer b = dev.alloc(256);
  dev.memset(b.data(), 0x3c, 256);
  Buffer c = dev.alloc(256);
  dev.copy(c.data(), b.data(), 256);
  unsigned char host[256] = {};
  dev.synchronize();
  dev.download(host, c, 256);
  for (unsigned char v : host) ASSERT_EQ(v, 0x3c);

  // A small gemm, timed; selection agrees with what ran.
  std::vector<float> ones(64 * 64, 1.0f);
  Buffer x = dev.alloc(ones.size() * 4), y = dev.alloc(ones.size() * 4);
  dev.upload(x, ones.data(), x.size());
  GemmDesc g;
  g.m = g.n = g.k = 64;
  g.a = x.data();
  g.b = x.data();
  g.c = y.data();
  g.lda = g.ldb = g.ldc = 64;
  const std::string chosen = dev.select(g);
  EXPECT_FALSE(chosen.empty());
  Timer timer = dev.timer();
  timer.start();
  dev.gemm(g);
  timer.stop();
  EXPECT_GE(timer.elapsed_ms(), 0.0);
  EXPECT_EQ(dev.last_variant(GK_OP_GEMM), chosen);
  std::vector<float> out(64 * 64);
  dev.synchronize();
  dev.download(out.data(), y, y.size());
  for (float v : out) ASSERT_EQ(v, 64.0f);
}

INSTANTIATE_TEST_SUITE_P(Api, CppApi, ::testing::ValuesIn(available_backend_names()), BackendName());

}  // namespace
}  // namespace gpukern::test
