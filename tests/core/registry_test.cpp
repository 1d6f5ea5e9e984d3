// Backend registry and gk_open (src/core/registry.cpp): the known backends, unknown
// names (listing the valid ones), unavailable backends (the reason, never a silent
// fallback), device indices, and what `auto` picks.
#include "core/rejection.hpp"

#include <algorithm>

namespace gpukern::test {
namespace {

TEST(Registry, KnowsCpuCudaAndHip) {
  const auto backends = list_backends();
  std::vector<std::string> names;
  for (const auto& b : backends) {
    names.push_back(b.name);
    if (b.available) {
      EXPECT_GT(b.device_count, 0) << b.name;
      EXPECT_STREQ(b.reason, "") << b.name;
    } else {
      EXPECT_EQ(b.device_count, 0) << b.name;
      EXPECT_STRNE(b.reason, "") << b.name << " is unavailable without a reason";
    }
  }
  for (const char* name : {"cpu", "cuda", "hip"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " not listed";
  for (const auto& b : backends) {
    if (std::string(b.name) == "cpu") {
      EXPECT_TRUE(b.available) << "the CPU backend is always available";
    }
  }
}

TEST(Registry, BackendInfoIndexOutOfRange) {
  int count = 0;
  ASSERT_EQ(gk_backend_count(&count), GK_SUCCESS);
  gk_backend_info info{};
  expect_status(gk_get_backend_info(count, &info), GK_INVALID_ARGUMENT, {"index"});
  expect_status(gk_get_backend_info(-1, &info), GK_INVALID_ARGUMENT, {"index"});
  expect_status(gk_get_backend_info(0, nullptr), GK_INVALID_ARGUMENT, {"info"});
  expect_status(gk_backend_count(nullptr), GK_INVALID_ARGUMENT, {"count"});
}

TEST(Registry, UnknownBackendListsTheValidOnes) {
  gk_handle handle = nullptr;
  const std::string message = expect_status(gk_open("bogus", &handle), GK_INVALID_ARGUMENT, {});
  EXPECT_EQ(handle, nullptr);
  EXPECT_TRUE(contains_text(message, "bogus")) << message;
  for (const char* name : {"cpu", "cuda", "hip"})
    EXPECT_TRUE(contains_word(message, name)) << "valid backend " << name << " not listed: " << message;
  try {
    Device dev("bogus");
    ADD_FAILURE() << "Device(\"bogus\") did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_TRUE(contains_text(e.what(), "cpu")) << e.what();
  }
}

TEST(Registry, BadDeviceIndex) {
  gk_handle handle = nullptr;
  // A device index is digits only, like every integer option (no sign, no spaces).
  for (const char* spec : {"cpu:1", "cpu:x", "cpu:", "cpu:-1", "cpu: 0", "cpu:0 ", "cpu:+0"}) {
    SCOPED_TRACE(spec);
    const gk_status status = gk_open(spec, &handle);
    EXPECT_EQ(status, GK_INVALID_ARGUMENT) << gk_last_error();
    EXPECT_EQ(handle, nullptr);
    if (status != GK_SUCCESS) {
      EXPECT_TRUE(contains_text(gk_last_error(), "index")) << gk_last_error();
    }
    if (handle) gk_close(handle);
  }
}

TEST(Registry, NullHandlePointer) { expect_status(gk_open("cpu", nullptr), GK_INVALID_ARGUMENT, {"handle"}); }

class UnavailableBackend : public ::testing::TestWithParam<std::string> {};

// An explicit request for a backend that cannot run here is GK_UNAVAILABLE with the
// reason (and what is available), never a fallback to another backend.
TEST_P(UnavailableBackend, ExplicitRequestFailsWithTheReason) {
  for (const auto& b : known_backends()) {
    if (b.name != GetParam()) continue;
    if (b.available) GTEST_SKIP() << b.name << " is available here; its unavailable path is not testable";
    for (const std::string& spec : {b.name, b.name + ":0"}) {
      SCOPED_TRACE(spec);
      gk_handle handle = nullptr;
      const std::string message = expect_status(gk_open(spec.c_str(), &handle), GK_UNAVAILABLE, {});
      EXPECT_EQ(handle, nullptr);
      EXPECT_TRUE(contains_text(message, b.reason))
          << "message \"" << message << "\" lacks the reason \"" << b.reason << "\"";
      EXPECT_TRUE(contains_word(message, "cpu")) << "message does not say what is available";
    }
    return;
  }
  FAIL() << GetParam() << " is not a known backend";
}

INSTANTIATE_TEST_SUITE_P(Registry, UnavailableBackend, ::testing::Values("cuda", "hip"), BackendName());

class AvailableBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(AvailableBackend, OpensAndDescribesItself) {
  Device dev(GetParam());
  const DeviceInfo info = dev.info();
  EXPECT_EQ(std::string(info.backend), GetParam());
  EXPECT_EQ(info.index, 0);
  EXPECT_STRNE(info.name, "");
  EXPECT_STRNE(info.arch, "");
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.memory_bytes, 0u);
  for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX}) {
    const auto rungs = dev.variants(op);
    ASSERT_FALSE(rungs.empty());
    int references = 0;
    for (const auto& r : rungs) {
      EXPECT_STRNE(r.name, "");
      EXPECT_STRNE(r.description, "") << r.name;
      EXPECT_STRNE(r.dtypes, "") << r.name;
      if (!r.runs_here) {
        EXPECT_STRNE(r.reason, "") << r.name << " cannot run here without a reason";
      }
      references += r.is_reference;
    }
    // Ladder order: the textbook rung first, the vendor references (e.g. OpenBLAS sgemm and
    // sgemv) last, together.
    EXPECT_STREQ(rungs.front().name, "naive");
    for (int i = static_cast<int>(rungs.size()) - references; i < static_cast<int>(rungs.size()); ++i)
      EXPECT_TRUE(rungs[static_cast<std::size_t>(i)].is_reference)
          << rungs[static_cast<std::size_t>(i)].name << ": the reference rungs are not last";
  }
  // Index past the device count.
  gk_handle handle = nullptr;
  expect_status(gk_open((GetParam() + ":4096").c_str(), &handle), GK_INVALID_ARGUMENT, {"index"});
  EXPECT_EQ(handle, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Registry, AvailableBackend, ::testing::ValuesIn(available_backend_names()), BackendName());

TEST(Registry, AutoPicksFirstAvailableOfCudaHipCpu) {
  std::string expected;
  for (const char* name : {"cuda", "hip", "cpu"})
    for (const auto& b : list_backends())
      if (expected.empty() && b.available && std::string(b.name) == name) expected = name;
  Device dev("auto");
  EXPECT_EQ(dev.backend(), expected);
}

TEST(Registry, CpuReportsItsIsa) {
  const auto extra = parse_extra(shared_device("cpu").info().extra);
  ASSERT_TRUE(extra.count("cpu_isa")) << "no cpu_isa in the CPU device info";
  ASSERT_TRUE(extra.count("cpu_isa_supported")) << "no cpu_isa_supported in the CPU device info";
  const auto supported = split_list(extra.at("cpu_isa_supported"));
  EXPECT_NE(std::find(supported.begin(), supported.end(), extra.at("cpu_isa")), supported.end());
  EXPECT_NE(std::find(supported.begin(), supported.end(), "scalar"), supported.end())
      << "the scalar path is always supported";
}

}  // namespace
}  // namespace gpukern::test
