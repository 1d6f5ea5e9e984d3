// gpukern-info and gpukern-bench run as subprocesses with GPUKERN_* set (docs/design.md,
// "Command line"): the exit status and what they print.
#include "support/backends.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace gpukern::test {
namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

/// Runs `command` through the shell with a clean GPUKERN_* environment plus `env`.
ProcessResult run_tool(const std::string& env, const std::string& command) {
  const std::string line =
      "env -u GPUKERN_BACKEND -u GPUKERN_GEMM_VARIANT -u GPUKERN_SOFTMAX_VARIANT "
      "-u GPUKERN_LOG -u GPUKERN_CPU_ISA " +
      env + " " + command + " 2>&1";
  ProcessResult result;
  std::FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string quoted(const char* path) { return std::string("'") + path + "'"; }

const BackendState* find_backend(const std::vector<BackendState>& all, const std::string& name) {
  for (const auto& b : all)
    if (b.name == name) return &b;
  return nullptr;
}

TEST(GpukernInfo, CpuBackendListsItsRungs) {
  const ProcessResult r = run_tool("GPUKERN_BACKEND=cpu", quoted(GPUKERN_INFO_PATH));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains_word(r.output, "cpu")) << r.output;
  Device& cpu = shared_device("cpu");
  for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX})
    for (const auto& rung : cpu.variants(op))
      EXPECT_TRUE(contains_word(r.output, rung.name)) << "rung " << rung.name << " not printed";
  const auto extra = parse_extra(cpu.info().extra);
  if (extra.count("cpu_isa")) {
    EXPECT_TRUE(contains_text(r.output, extra.at("cpu_isa"))) << "the CPU ISA in use is not printed";
  }
  EXPECT_TRUE(contains_text(r.output, "openblas")) << "which core OpenBLAS uses is not printed";
}

TEST(GpukernInfo, ListsEveryBackendWithItsState) {
  const ProcessResult r = run_tool("", quoted(GPUKERN_INFO_PATH));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const auto& b : known_backends()) {
    EXPECT_TRUE(contains_word(r.output, b.name)) << b.name << " not printed";
    if (!b.available) {
      EXPECT_TRUE(contains_text(r.output, b.reason)) << "reason for " << b.name << " not printed";
    }
  }
}

class GpuBackendChoice : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuBackendChoice, UnavailableGpuIsAnErrorWithTheReason) {
  const auto all = known_backends();
  const BackendState* b = find_backend(all, GetParam());
  ASSERT_NE(b, nullptr);
  const ProcessResult r = run_tool("GPUKERN_BACKEND=" + GetParam(), quoted(GPUKERN_INFO_PATH));
  if (b->available) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    GTEST_SKIP() << b->name << " is available here (gpukern-info exit " << r.exit_code
                 << "); the unavailable path is not testable";
  }
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains_text(r.output, b->reason)) << "the reason is not printed:\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cli, GpuBackendChoice, ::testing::Values("cuda", "hip"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(GpukernInfo, UnknownBackendListsTheValidOnes) {
  const ProcessResult r = run_tool("GPUKERN_BACKEND=bogus", quoted(GPUKERN_INFO_PATH));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains_text(r.output, "bogus")) << r.output;
  // The valid names must appear in the error itself, not only in the listing above it.
  const std::size_t at = r.output.find("bogus");
  const std::string error = at == std::string::npos ? r.output : r.output.substr(at);
  for (const char* name : {"cpu", "cuda", "hip"})
    EXPECT_TRUE(contains_word(error, name)) << name << " not listed after the error:\n" << r.output;
}

// A malformed option is never silently ignored: the output names the variable.
TEST(GpukernInfo, BadOptionValueIsReported) {
  const ProcessResult r = run_tool("GPUKERN_BACKEND=cpu GPUKERN_CPU_ISA=sse9", quoted(GPUKERN_INFO_PATH));
  EXPECT_TRUE(contains_text(r.output, "GPUKERN_CPU_ISA")) << r.output;
}

// The device line shows only the versions a backend reports: the CPU has an OpenMP
// runtime and no driver, which once printed as "driver , runtime OpenMP ...".
bool has_empty_version_field(const std::string& output) {
  const std::string text = output + "\n";
  for (const char* empty : {"driver ,", "driver \n", "runtime ,", "runtime \n"})
    if (contains_text(text, empty)) return true;
  return false;
}

TEST(GpukernInfo, DeviceVersionsHaveNoEmptyFields) {
  const ProcessResult r = run_tool("GPUKERN_BACKEND=cpu", quoted(GPUKERN_INFO_PATH));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has_empty_version_field(r.output)) << r.output;
  const DeviceInfo info = shared_device("cpu").info();
  if (info.runtime_version[0]) {
    EXPECT_TRUE(contains_text(r.output, std::string("runtime ") + info.runtime_version)) << r.output;
  }
  if (info.driver_version[0]) {
    EXPECT_TRUE(contains_text(r.output, std::string("driver ") + info.driver_version)) << r.output;
  }
}

#ifdef GPUKERN_BENCH_PATH
// A small, deterministic run: 1 warm-up and 3 timed calls of one rung, no cache flush.
const char* const kSmallBench =
    " --backend cpu --op gemm --dtype f32 --sizes 48 --variants naive --no-reference"
    " --warmup 1 --repeats 3 --min-time 0 --flush-mb 0";

TEST(GpukernBench, InfoLogPrintsOneLinePerCall) {
  const ProcessResult r = run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) + kSmallBench);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int call_lines = 0;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    if (!contains_text(line, "[gpukern info]") || !contains_text(line, "gemm")) continue;
    if (contains_text(line, "opened")) continue;
    ++call_lines;
    EXPECT_TRUE(contains_text(line, "naive")) << line;
    EXPECT_TRUE(contains_text(line, "48")) << line;
    EXPECT_TRUE(contains_text(line, "ms")) << line;
  }
  EXPECT_EQ(call_lines, 5) << "not one log line a call (1 warm-up, 3 timed, 1 checked):\n" << r.output;
}

TEST(GpukernBench, ChainTimesItsCallsBackToBack) {
  // --chain 3: every warm-up, timed and checked call is three calls (each on its own copy
  // of B), and the case is labelled with its chain.
  const ProcessResult r = run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) + kSmallBench + " --chain 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int call_lines = 0;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (contains_text(line, "[gpukern info]") && contains_text(line, "rung=naive")) ++call_lines;
  EXPECT_EQ(call_lines, 15) << "not three calls for each of 1 warm-up, 3 timed and 1 checked:\n" << r.output;
  EXPECT_TRUE(contains_text(r.output, "chain 3")) << r.output;
}

/// One letter per "[gpukern info]" call line of `output` that `keep` accepts, `letter(line)`:
/// the order in which the bench made its calls.
template <class Keep, class Letter>
std::string call_order(const std::string& output, Keep keep, Letter letter) {
  std::string order;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (contains_text(line, "[gpukern info]") && keep(line)) order += letter(line);
  return order;
}

TEST(GpukernBench, EpilogueIsTimedAlternatingWithItsPlainCall) {
  // An epilogue case's pct_of_plain comes from the same rung's plain call timed in the
  // same loop, plain and fused alternating (a b, b a, a b): no plain case needs to run;
  // then the fused call once more on poisoned memory, whose result is the one checked.
  const ProcessResult r =
      run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) + kSmallBench + " --bias f32 --act relu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string order =  // p: plain call, f: fused
      call_order(
          r.output, [](const std::string& line) { return contains_text(line, "rung=naive"); },
          [](const std::string& line) { return contains_text(line, "act=relu") ? 'f' : 'p'; });
  EXPECT_EQ(order, "pfpffppff") << "1 warm-up pair, 3 alternating pairs, the checked call:\n" << r.output;
  EXPECT_TRUE(contains_text(r.output, "% of plain")) << r.output;
}

TEST(GpukernBench, PairedRungIsTimedAlternatingWithTheReference) {
  // --paired on (the default on GPUs) on the CPU: the reference (OpenBLAS) alone first (1
  // warm-up, 3 timed, 1 checked), then naive in one loop with it (1 warm-up pair, 3
  // alternating pairs, then naive once more on poisoned memory: the checked result). The
  // CPU's second reference (openblas_gemv) declines this shape after its loop's first call.
  const ProcessResult r =
      run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) +
                                       " --backend cpu --op gemm --dtype f32 --sizes 48 --variants naive --paired on"
                                       " --warmup 1 --repeats 3 --min-time 0 --flush-mb 0 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string order =  // n: naive, r: the reference
      call_order(
          r.output, [](const std::string& line) { return contains_text(line, "rung="); },
          [](const std::string& line) { return contains_text(line, "rung=naive") ? 'n' : 'r'; });
  EXPECT_EQ(order.substr(0, 14), "rrrrrrnrnnrrnn") << r.output;
  EXPECT_EQ(order.find('n', 14), std::string::npos) << r.output;
}

TEST(GpukernBench, PairedAttentionPathsAreTimedInTurn) {
  // --op attention with --paired on: each path's passes (Q K^T, softmax, P V) warmed up
  // alone, then a pass of each in turn, the order alternating, then each path once more on
  // poisoned memory. The vendor path's GEMMs run on OpenBLAS, the library's on its own rungs.
  const ProcessResult r =
      run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) +
                                       " --backend cpu --op attention --dtype f32 --seq 64 --head-dim 16 --batch 1"
                                       " --heads 2 --paired on --warmup 1 --repeats 3 --min-time 0 --flush-mb 0 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string order =  // per GEMM call: a, the library's path; v, the vendor's
      call_order(
          r.output, [](const std::string& line) { return contains_text(line, "gemm") && contains_text(line, "rung="); },
          [](const std::string& line) { return contains_text(line, "rung=openblas") ? 'v' : 'a'; });
  EXPECT_EQ(order,
            "aavv"
            "aavv"
            "vvaa"
            "aavv"
            "aavv")
      << r.output;
}

TEST(GpukernBench, WithoutLogPrintsNoCallLines) {
  const ProcessResult r = run_tool("", quoted(GPUKERN_BENCH_PATH) + kSmallBench);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains_text(r.output, "[gpukern info]")) << r.output;
}
TEST(GpukernBench, ListHasNoEmptyVersionFields) {
  const ProcessResult r = run_tool("GPUKERN_BACKEND=cpu", quoted(GPUKERN_BENCH_PATH) + " --list --backend cpu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has_empty_version_field(r.output)) << r.output;
}

// "--flush-mb 1e30" -> "flush_mb_1e30_0" (gtest names: letters, digits, '_'; the index keeps them unique).
std::string argument_test_name(const ::testing::TestParamInfo<std::pair<std::string, std::string>>& info) {
  std::string name;
  for (char c : info.param.first.substr(0, 24)) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      name += c;
    else if (!name.empty() && name.back() != '_')
      name += '_';
  }
  return name + "_" + std::to_string(info.index);
}

// What a refused command must look like: exit 2, a short message from gpukern-bench or
// its parser naming `topic`, no crash (abort, uncaught exception) and nothing measured.
void expect_refused(const ProcessResult& r, const std::string& topic) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains_text(r.output, topic)) << "the message does not name " << topic << ":\n" << r.output;
  for (const char* crash : {"terminate called", "bad_alloc", "length_error", "what()", "Aborted", "runtime error"})
    EXPECT_FALSE(contains_text(r.output, crash)) << r.output;
  EXPECT_FALSE(contains_text(r.output, "measurements in")) << "a case ran:\n" << r.output;
  EXPECT_FALSE(contains_text(r.output, "1797693")) << "CLI11's range text:\n" << r.output;
  EXPECT_LT(r.output.size(), 700u) << r.output;
}

// Options that stop the run before it measures anything; each is refused with a message
// naming the option, never silently replaced (flush 1e30 MiB once recorded flush_bytes 0).
class BenchRefusesOption : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(BenchRefusesOption, WithAMessageAndExit2) {
  const auto& [arguments, option] = GetParam();
  const ProcessResult r = run_tool("", quoted(GPUKERN_BENCH_PATH) + " --backend cpu --sizes 8 -q " + arguments);
  expect_refused(r, option);
}

INSTANTIATE_TEST_SUITE_P(Cli, BenchRefusesOption,
                         ::testing::Values(std::pair<std::string, std::string>{"--flush-mb 1e30", "--flush-mb"},
                                           std::pair<std::string, std::string>{"--flush-mb -1", "--flush-mb"},
                                           std::pair<std::string, std::string>{"--flush-mb nan", "--flush-mb"},
                                           std::pair<std::string, std::string>{"--ref-budget -5", "--ref-budget"},
                                           std::pair<std::string, std::string>{"--ref-budget nan", "--ref-budget"},
                                           std::pair<std::string, std::string>{"--ref-budget inf", "--ref-budget"},
                                           std::pair<std::string, std::string>{"--json ''", "--json"},
                                           std::pair<std::string, std::string>{"--backend ,", "--backend"},
                                           std::pair<std::string, std::string>{"--backend cpu,,cpu", "--backend"},
                                           std::pair<std::string, std::string>{"--threads 0", "--threads"},
                                           std::pair<std::string, std::string>{"--chain 0", "--chain"},
                                           std::pair<std::string, std::string>{"--chain 65", "--chain"},
                                           std::pair<std::string, std::string>{"--threads -3", "--threads"},
                                           std::pair<std::string, std::string>{"--min-time 1e30", "--min-time"},
                                           std::pair<std::string, std::string>{"--max-time 0", "--max-time"},
                                           std::pair<std::string, std::string>{"--repeats 0", "--repeats"},
                                           std::pair<std::string, std::string>{"--warmup -1", "--warmup"},
                                           std::pair<std::string, std::string>{"--naive-max-size 0",
                                                                               "--naive-max-size"},
                                           std::pair<std::string, std::string>{"--sizes 0", "--sizes"},
                                           std::pair<std::string, std::string>{
                                               "--json " + std::string(GPUKERN_BENCH_PATH) + "/run.json", "--json"}),
                         argument_test_name);

// Cases the machine cannot hold (or whose element counts overflow int64, as 3037000500^2
// does) are refused before anything is allocated, with the case named; they once
// aborted on std::bad_alloc / std::length_error. The sizes exceed any host's memory.
class BenchRefusesSize : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(BenchRefusesSize, BeforeAllocating) {
  const auto& [sizes, shape] = GetParam();
  const ProcessResult r = run_tool("", quoted(GPUKERN_BENCH_PATH) + " --backend cpu --flush-mb 0 -q --sizes " + sizes);
  expect_refused(r, shape);
  std::istringstream in(r.output);
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    // The library's own warnings about the machine (an OPENBLAS_CORETYPE set in the
    // environment, say) are not part of the refusal.
    if (line.rfind("[gpukern warn]", 0) == 0) continue;
    ++lines;
    EXPECT_TRUE(contains_text(line, "gpukern-bench: cpu: ")) << line;
  }
  EXPECT_LE(lines, 2) << "one line per case (gemm, softmax):\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BenchRefusesSize,
    ::testing::Values(std::pair<std::string, std::string>{"1000000", "gemm f32 1000000x1000000x1000000"},
                      std::pair<std::string, std::string>{"1x99999999999", "softmax f32 1x99999999999"},
                      std::pair<std::string, std::string>{"3037000500", "overflow"},
                      std::pair<std::string, std::string>{"9223372036854775807x2", "overflow"}),
    argument_test_name);
// On a GPU, a gemm whose C alone exceeds the device's memory (while its host part, thin A
// and B and a sampled reference, is small) is refused up front by the device check,
// instead of failing with OutOfMemory midway through a run.
class BenchOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(BenchOnGpu, RefusesACaseBeyondDeviceMemory) {
  const auto all = known_backends();
  const BackendState* b = find_backend(all, GetParam());
  ASSERT_NE(b, nullptr);
  if (!b->available) GTEST_SKIP() << unavailable_message(*b);
  const uint64_t memory = shared_device(GetParam()).info().memory_bytes;
  if (memory == 0) GTEST_SKIP() << GetParam() << " reports no memory size";
  // n x n f32 outputs of 1.25x the device memory; k = 16 keeps A and B small.
  const auto n = static_cast<uint64_t>(std::ceil(std::sqrt(1.25 * double(memory) / 4.0)));
  const std::string size = std::to_string(n) + "x" + std::to_string(n) + "x16";
  const ProcessResult r = run_tool(
      "", quoted(GPUKERN_BENCH_PATH) + " --backend " + GetParam() + " --op gemm --dtype f32 -q --sizes " + size);
  expect_refused(r, "device memory");
  EXPECT_TRUE(contains_text(r.output, size)) << r.output;
}

// On a GPU the reference rung is timed first, alone, and every other rung then in one
// loop with it, the two alternating (a b, b a, a b), so that the GPU's clock states fall
// on both alike; then each rung's call once more on poisoned memory (the checked result).
TEST_P(BenchOnGpu, RungIsTimedAlternatingWithTheReference) {
  const auto all = known_backends();
  const BackendState* b = find_backend(all, GetParam());
  ASSERT_NE(b, nullptr);
  if (!b->available) GTEST_SKIP() << unavailable_message(*b);
  const ProcessResult r =
      run_tool("GPUKERN_LOG=info", quoted(GPUKERN_BENCH_PATH) + " --backend " + GetParam() +
                                       " --op gemm --dtype f32 --sizes 48 --variants naive --warmup 1 --repeats 3"
                                       " --min-time 0 --flush-mb 0 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string order =  // n: naive, r: the reference
      call_order(
          r.output, [](const std::string& line) { return contains_text(line, "rung="); },
          [](const std::string& line) { return contains_text(line, "rung=naive") ? 'n' : 'r'; });
  EXPECT_EQ(order, "rrrrrrnrnnrrnn") << "the reference alone (1 warm-up, 3 timed, 1 checked), then naive with it "
                                        "(1 warm-up pair, 3 alternating pairs, 1 checked):\n"
                                     << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cli, BenchOnGpu, ::testing::Values("cuda", "hip"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
#endif

}  // namespace
}  // namespace gpukern::test
