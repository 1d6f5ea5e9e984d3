// GPUKERN_* options through gk_set_option (src/core/config.cpp): bad values are
// GK_INVALID_ARGUMENT naming the variable; good values are accepted and take effect;
// "" removes the override.
#include "core/rejection.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ostream>
#include <tuple>

namespace gpukern::test {
namespace {

const char* const kOptions[] = {"GPUKERN_BACKEND",     "GPUKERN_GEMM_VARIANT", "GPUKERN_SOFTMAX_VARIANT", "GPUKERN_LOG",
                                "GPUKERN_NUM_THREADS", "GPUKERN_CPU_ISA",      "GPUKERN_MODULE_PATH"};

void clear_options() {
  for (const char* name : kOptions) gk_set_option(name, nullptr);
}

class Options : public ::testing::Test {
 protected:
  void SetUp() override { clear_options(); }
  void TearDown() override { clear_options(); }
};

struct BadOption {
  const char* name;
  const char* value;
};

/// gtest prints the option as NAME=value.
void PrintTo(const BadOption& option, std::ostream* out) { *out << option.name << "=" << option.value; }

// Values the library can reject when they are set (their syntax is wrong).
const BadOption kBadValues[] = {
    {"GPUKERN_LOG", "loud"},
    {"GPUKERN_LOG", "2"},
    {"GPUKERN_NUM_THREADS", "-3"},
    {"GPUKERN_NUM_THREADS", "abc"},
    {"GPUKERN_NUM_THREADS", "4x"},
    {"GPUKERN_NUM_THREADS", "99999999999999999999"},
    {"GPUKERN_NUM_THREADS", "0"},
    {"GPUKERN_NUM_THREADS", "4096"},
    // Integer options are digits only: no sign, no spaces on either side.
    {"GPUKERN_NUM_THREADS", " 3"},
    {"GPUKERN_NUM_THREADS", "3 "},
    {"GPUKERN_NUM_THREADS", "\t3"},
    {"GPUKERN_NUM_THREADS", "+3"},
    {"GPUKERN_CPU_ISA", "sse9"},
    {"GPUKERN_CPU_ISA", "avx"},
    {"GPUKERN_GEMM_VARIANT", "bad name!"},
    {"GPUKERN_SOFTMAX_VARIANT", "a/b"},
};

class BadOptionValue : public Options, public ::testing::WithParamInterface<BadOption> {};

TEST_P(BadOptionValue, IsRejectedNamingTheVariable) {
  const BadOption& bad = GetParam();
  expect_status(gk_set_option(bad.name, bad.value), GK_INVALID_ARGUMENT, {bad.name});
  // The rejected value did not become the override: a CPU call still works.
  Device& dev = shared_device("cpu");
  float x[3] = {1, 2, 3}, y[3] = {};
  SoftmaxDesc d;
  d.rows = 1;
  d.cols = 3;
  d.x = x;
  d.ldx = 3;
  d.y = y;
  d.ldy = 3;
  expect_status(gk_softmax_ex(dev.handle(), &d), GK_SUCCESS, {});
}

INSTANTIATE_TEST_SUITE_P(Config, BadOptionValue, ::testing::ValuesIn(kBadValues),
                         [](const ::testing::TestParamInfo<BadOption>& info) {
                           return std::string(info.param.name) + "_" + std::to_string(info.index);
                         });

/// The GPUKERN_NUM_THREADS limit: 4 threads per online CPU (src/core/config.hpp).
int thread_limit() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return 4 * static_cast<int>(online > 0 ? online : 1);
}

/// A small f32 gemm on the CPU with the omp_simd rung (the one that starts threads).
gk_status cpu_gemm() {
  Device& dev = shared_device("cpu");
  std::vector<float> a(64 * 64, 0.5f), b(64 * 64, 0.25f), c(64 * 64);
  GemmDesc d;
  d.m = d.n = d.k = 64;
  d.a = a.data();
  d.b = b.data();
  d.c = c.data();
  d.lda = d.ldb = d.ldc = 64;
  d.variant = "omp_simd";
  const gk_status status = gk_gemm_ex(dev.handle(), &d);
  if (status == GK_SUCCESS) {
    EXPECT_EQ(c[0], 64 * 0.5f * 0.25f);
  }
  return status;
}

// The OpenMP runtime ends the process when it cannot start the threads it is asked for,
// so the thread count is bounded, and the error names the bound.
TEST_F(Options, ThreadCountIsBoundedByTheMachine) {
  const int limit = thread_limit();
  const std::string over = std::to_string(limit + 1);
  const std::string message =
      expect_status(gk_set_option("GPUKERN_NUM_THREADS", over.c_str()), GK_INVALID_ARGUMENT, {"GPUKERN_NUM_THREADS"});
  EXPECT_TRUE(contains_word(message, std::to_string(limit))) << "the limit is not named: " << message;
  ASSERT_EQ(gk_set_option("GPUKERN_NUM_THREADS", std::to_string(limit).c_str()), GK_SUCCESS) << gk_last_error();
  EXPECT_EQ(cpu_gemm(), GK_SUCCESS) << gk_last_error();
}

// The environment goes through the same parser as gk_set_option: a call with a value
// over the limit, or with spaces around it, fails naming the variable; none starts threads.
TEST_F(Options, ThreadCountFromTheEnvironmentIsCheckedAlike) {
  const char* saved = std::getenv("GPUKERN_NUM_THREADS");
  const std::string restore = saved ? saved : "";
  const std::string values[] = {std::to_string(thread_limit() + 1), " 2", "2 "};
  for (const std::string& value : values) {
    SCOPED_TRACE("GPUKERN_NUM_THREADS='" + value + "'");
    setenv("GPUKERN_NUM_THREADS", value.c_str(), 1);
    expect_status(cpu_gemm(), GK_INVALID_ARGUMENT, {"GPUKERN_NUM_THREADS"});
  }
  setenv("GPUKERN_NUM_THREADS", "2", 1);
  EXPECT_EQ(cpu_gemm(), GK_SUCCESS) << gk_last_error();
  if (saved)
    setenv("GPUKERN_NUM_THREADS", restore.c_str(), 1);
  else
    unsetenv("GPUKERN_NUM_THREADS");
}

TEST_F(Options, UnknownOptionIsRejectedNamingIt) {
  const std::string message =
      expect_status(gk_set_option("GPUKERN_NO_SUCH_OPTION", "1"), GK_INVALID_ARGUMENT, {"GPUKERN_NO_SUCH_OPTION"});
  for (const char* name : kOptions) EXPECT_TRUE(contains_word(message, name)) << "the message does not list " << name;
  expect_status(gk_set_option(nullptr, "1"), GK_INVALID_ARGUMENT, {"name"});
}

TEST_F(Options, GoodValuesAreAccepted) {
  const BadOption good[] = {
      {"GPUKERN_LOG", "warn"},          {"GPUKERN_LOG", "info"},           {"GPUKERN_LOG", "debug"},
      {"GPUKERN_NUM_THREADS", "1"},     {"GPUKERN_NUM_THREADS", "2"},      {"GPUKERN_CPU_ISA", "auto"},
      {"GPUKERN_CPU_ISA", "scalar"},    {"GPUKERN_CPU_ISA", "avx2"},       {"GPUKERN_CPU_ISA", "avx512"},
      {"GPUKERN_GEMM_VARIANT", "auto"}, {"GPUKERN_GEMM_VARIANT", "naive"}, {"GPUKERN_SOFTMAX_VARIANT", "naive"},
      {"GPUKERN_BACKEND", "cpu"},       {"GPUKERN_BACKEND", "auto"},
  };
  // GPUKERN_MODULE_PATH is accepted only until a module has loaded (which depends on what
  // this process did before): module_loading_test.cpp checks it in fresh processes.
  for (const auto& option : good) {
    SCOPED_TRACE(std::string(option.name) + "=" + option.value);
    expect_status(gk_set_option(option.name, option.value), GK_SUCCESS, {});
    expect_status(gk_set_option(option.name, ""), GK_SUCCESS, {});
  }
}

// A backend name is only known to be wrong once something opens it: then the error
// must say where the bad name came from.
TEST_F(Options, UnknownBackendNamesTheVariable) {
  for (const char* value : {"bogus", "cuda:x", "cpu:-1"}) {
    SCOPED_TRACE(std::string("GPUKERN_BACKEND=") + value);
    const gk_status set = gk_set_option("GPUKERN_BACKEND", value);
    if (set != GK_SUCCESS) {
      expect_status(set, GK_INVALID_ARGUMENT, {"GPUKERN_BACKEND"});
      continue;
    }
    gk_handle handle = nullptr;
    const std::string message = expect_status(gk_open(nullptr, &handle), GK_INVALID_ARGUMENT, {"GPUKERN_BACKEND"});
    EXPECT_EQ(handle, nullptr);
    if (std::string(value) == "bogus") {
      for (const char* name : {"cpu", "cuda", "hip"})
        EXPECT_TRUE(contains_word(message, name)) << "valid backend " << name << " not listed";
    }
  }
}

TEST_F(Options, UnknownRungNameNamesTheVariable) {
  for (const char* option : {"GPUKERN_GEMM_VARIANT", "GPUKERN_SOFTMAX_VARIANT"}) {
    SCOPED_TRACE(option);
    const gk_status set = gk_set_option(option, "no_such_rung");
    if (set != GK_SUCCESS) {
      expect_status(set, GK_INVALID_ARGUMENT, {option});
      continue;
    }
    Device& dev = shared_device("cpu");
    PatternedBuffer out(dev, 4096);
    float in[64] = {};
    for (int i = 0; i < 64; ++i) in[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
    gk_status status;
    if (std::string(option) == "GPUKERN_GEMM_VARIANT") {
      GemmDesc d;
      d.m = d.n = d.k = 4;
      d.a = in;
      d.b = in;
      d.lda = d.ldb = d.ldc = 4;
      d.c = out.at(16, 4);
      status = gk_gemm_ex(dev.handle(), &d);
    } else {
      SoftmaxDesc d;
      d.rows = 4;
      d.cols = 4;
      d.x = in;
      d.ldx = d.ldy = 4;
      d.y = out.at(16, 4);
      status = gk_softmax_ex(dev.handle(), &d);
    }
    const std::string message = expect_status(status, GK_INVALID_ARGUMENT, {option});
    EXPECT_TRUE(contains_text(message, "naive")) << "valid rungs not listed: " << message;
    EXPECT_EQ(out.changes(), "");
    gk_set_option(option, "");
  }
}

TEST_F(Options, OverridesTakeEffect) {
  Device& dev = shared_device("cpu");
  float a[16], b[16], c[16];
  for (int i = 0; i < 16; ++i) a[i] = b[i] = 0.125f * static_cast<float>(i) - 1.0f;
  GemmDesc d;
  d.m = d.n = d.k = 4;
  d.a = a;
  d.b = b;
  d.c = c;
  d.lda = d.ldb = d.ldc = 4;
  ASSERT_EQ(gk_set_option("GPUKERN_GEMM_VARIANT", "naive"), GK_SUCCESS);
  expect_status(gk_gemm_ex(dev.handle(), &d), GK_SUCCESS, {});
  EXPECT_EQ(dev.last_variant(GK_OP_GEMM), "naive") << "GPUKERN_GEMM_VARIANT=naive was ignored";
  EXPECT_EQ(dev.select(d), "naive");
  // The descriptor's own variant wins over the option.
  d.variant = "auto";
  EXPECT_EQ(dev.select(d), "naive") << "variant \"auto\" means: the option, else auto";

  ASSERT_EQ(gk_set_option("GPUKERN_CPU_ISA", "scalar"), GK_SUCCESS);
  const auto extra = parse_extra(dev.info().extra);
  ASSERT_TRUE(extra.count("cpu_isa")) << "CPU device info has no cpu_isa: " << dev.info().extra;
  EXPECT_EQ(extra.at("cpu_isa"), "scalar") << "GPUKERN_CPU_ISA=scalar set at run time is ignored";

  ASSERT_EQ(gk_set_option("GPUKERN_BACKEND", "cpu"), GK_SUCCESS);
  Device chosen;  // GPUKERN_BACKEND
  EXPECT_EQ(chosen.backend(), "cpu");
}

}  // namespace
}  // namespace gpukern::test
