// GPUKERN_* options through gk_set_option (src/core/config.cpp): bad values are
// GK_INVALID_ARGUMENT naming the variable; good values are accepted and take effect;
// "" removes the override.
#include "core/rejection.hpp"

#include <ostream>
#include <tuple>

namespace gpukern::test {
namespace {

const char* const kOptions[] = {"GPUKERN_BACKEND",      "GPUKERN_GEMM_VARIANT",
                                "GPUKERN_SOFTMAX_VARIANT", "GPUKERN_LOG",
                                "GPUKERN_NUM_THREADS",  "GPUKERN_CPU_ISA",
                                "GPUKERN_MODULE_PATH"};

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
void PrintTo(const BadOption& option, std::ostream* out) {
  *out << option.name << "=" << option.value;
}

// Values the library can reject when they are set (their syntax is wrong).
const BadOption kBadValues[] = {
    {"GPUKERN_LOG", "loud"},          {"GPUKERN_LOG", "2"},
    {"GPUKERN_NUM_THREADS", "-3"},    {"GPUKERN_NUM_THREADS", "abc"},
    {"GPUKERN_NUM_THREADS", "4x"},    {"GPUKERN_NUM_THREADS", "99999999999999999999"},
    {"GPUKERN_CPU_ISA", "sse9"},      {"GPUKERN_CPU_ISA", "avx"},
    {"GPUKERN_GEMM_VARIANT", "bad name!"}, {"GPUKERN_SOFTMAX_VARIANT", "a/b"},
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
  expect_status(gk_softmax(dev.handle(), &d), GK_SUCCESS, {});
}

INSTANTIATE_TEST_SUITE_P(Config, BadOptionValue, ::testing::ValuesIn(kBadValues),
                         [](const ::testing::TestParamInfo<BadOption>& info) {
                           return std::string(info.param.name) + "_" +
                                  std::to_string(info.index);
                         });

TEST_F(Options, UnknownOptionIsRejectedNamingIt) {
  const std::string message =
      expect_status(gk_set_option("GPUKERN_NO_SUCH_OPTION", "1"), GK_INVALID_ARGUMENT,
                    {"GPUKERN_NO_SUCH_OPTION"});
  for (const char* name : kOptions)
    EXPECT_TRUE(contains_word(message, name)) << "the message does not list " << name;
  expect_status(gk_set_option(nullptr, "1"), GK_INVALID_ARGUMENT, {"name"});
}

TEST_F(Options, GoodValuesAreAccepted) {
  const BadOption good[] = {
      {"GPUKERN_LOG", "warn"},         {"GPUKERN_LOG", "info"},      {"GPUKERN_LOG", "debug"},
      {"GPUKERN_NUM_THREADS", "1"},    {"GPUKERN_NUM_THREADS", "2"}, {"GPUKERN_CPU_ISA", "auto"},
      {"GPUKERN_CPU_ISA", "scalar"},   {"GPUKERN_CPU_ISA", "avx2"},  {"GPUKERN_CPU_ISA", "avx512"},
      {"GPUKERN_GEMM_VARIANT", "auto"}, {"GPUKERN_GEMM_VARIANT", "naive"},
      {"GPUKERN_SOFTMAX_VARIANT", "naive"}, {"GPUKERN_BACKEND", "cpu"},
      {"GPUKERN_BACKEND", "auto"},     {"GPUKERN_MODULE_PATH", "/nonexistent"},
  };
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
    const std::string message =
        expect_status(gk_open(nullptr, &handle), GK_INVALID_ARGUMENT, {"GPUKERN_BACKEND"});
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
      status = gk_gemm(dev.handle(), &d);
    } else {
      SoftmaxDesc d;
      d.rows = 4;
      d.cols = 4;
      d.x = in;
      d.ldx = d.ldy = 4;
      d.y = out.at(16, 4);
      status = gk_softmax(dev.handle(), &d);
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
  expect_status(gk_gemm(dev.handle(), &d), GK_SUCCESS, {});
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
