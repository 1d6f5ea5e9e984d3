// GPUKERN_LOG (src/core/log.cpp): `info` writes exactly one line per gemm/softmax call
// naming the backend, rung, shape, dtype and time; at `warn` (the default) good calls
// write no info lines.
#include "core/rejection.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace gpukern::test {
namespace {

/// Redirects this process's stderr (fd 2) into a temporary file while alive.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() { restore(); }
  /// Stops capturing and returns what was written.
  std::string finish() {
    restore();
    std::rewind(file_);
    std::ostringstream text;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) text.write(buffer, static_cast<std::streamsize>(n));
    return text.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

/// The info-level lines ("[gpukern info] ...", src/core/log.hpp); warnings (e.g. about
/// the OpenBLAS core) may come and go and are not counted.
std::vector<std::string> info_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find("[gpukern info]") != std::string::npos) out.push_back(line);
  return out;
}

class Logging : public ::testing::Test {
 protected:
  void TearDown() override { gk_set_option("GPUKERN_LOG", nullptr); }

  /// Three gemm calls (naive) and two softmax calls (naive) on the CPU.
  static void make_calls() {
    Device& dev = shared_device("cpu");
    std::vector<float> a(33 * 17, 0.5f), b(17 * 9, -0.25f), c(33 * 9);
    GemmDesc g;
    g.m = 33;
    g.n = 9;
    g.k = 17;
    g.a = a.data();
    g.lda = 17;
    g.b = b.data();
    g.ldb = 9;
    g.c = c.data();
    g.ldc = 9;
    g.variant = "naive";
    for (int i = 0; i < 3; ++i) dev.gemm(g);
    SoftmaxDesc s;
    s.rows = 33;
    s.cols = 17;
    s.x = a.data();
    s.ldx = 17;
    s.y = a.data();
    s.ldy = 17;
    s.variant = "naive";
    for (int i = 0; i < 2; ++i) dev.softmax(s);
    dev.synchronize();
  }
};

TEST_F(Logging, InfoWritesOneLinePerCall) {
  shared_device("cpu");  // opened before capturing: the open itself may log
  ASSERT_EQ(gk_set_option("GPUKERN_LOG", "info"), GK_SUCCESS);
  StderrCapture capture;
  make_calls();
  const auto lines = info_lines(capture.finish());
  ASSERT_EQ(lines.size(), 5u) << "expected one line for each of 5 calls, got:\n" << ::testing::PrintToString(lines);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    SCOPED_TRACE(line);
    EXPECT_TRUE(contains_text(line, i < 3 ? "gemm" : "softmax"));
    EXPECT_TRUE(contains_word(line, "cpu") || contains_text(line, "cpu:"));
    EXPECT_TRUE(contains_text(line, "naive")) << "rung not named";
    EXPECT_TRUE(contains_text(line, "f32")) << "dtype not named";
    EXPECT_TRUE(contains_text(line, "33")) << "shape not named";
    EXPECT_TRUE(contains_text(line, "ms")) << "time not given";
  }
}

TEST_F(Logging, WarnWritesNoCallLines) {
  shared_device("cpu");
  ASSERT_EQ(gk_set_option("GPUKERN_LOG", "warn"), GK_SUCCESS);
  StderrCapture capture;
  make_calls();
  const std::string text = capture.finish();
  EXPECT_TRUE(info_lines(text).empty()) << text;
}

}  // namespace
}  // namespace gpukern::test
