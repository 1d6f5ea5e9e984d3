// Calls from several threads at once on one Device (docs/design.md, "Interop"): every
// thread's results are right, whatever rungs the other threads run.
#include "core/rejection.hpp"
#include "support/reference.hpp"

#include <atomic>
#include <thread>

namespace gpukern::test {
namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 6;

/// The rungs of `op` that run here and take f32, plus "auto".
std::vector<std::string> f32_rungs(Device& dev, gk_op op) {
  std::vector<std::string> out{"auto"};
  for (const auto& r : dev.variants(op))
    if (r.runs_here && contains_word(r.dtypes, "f32")) out.push_back(r.name);
  return out;
}

/// One thread's gemm: its own shape, rung and buffers; returns "" or what went wrong.
std::string threaded_gemm(Device& dev, const std::string& rung, int64_t m, int64_t n, int64_t k) {
  Random rng;
  const Window wa = make_window(m, k, k, 0), wb = make_window(k, n, n, 0);
  const Window wc = make_window(m, n, n, 8);
  HostArray a(GK_F32, wa.total), b(GK_F32, wb.total), c(GK_F32, wc.total);
  auto random = [&](int64_t, int64_t) { return rng.uniform(-1, 1); };
  fill_window(a, wa, Pattern::Padding, random);
  fill_window(b, wb, Pattern::Padding, random);
  fill_window(c, wc, Pattern::Guard, random);
  DeviceArray da(dev, a), db(dev, b), dc(dev, c);
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a = da.data();
  d.lda = k;
  d.b = db.data();
  d.ldb = n;
  d.c = static_cast<float*>(dc.data()) + wc.offset;
  d.ldc = n;
  d.alpha = -1.5f;
  d.beta = 0.5f;
  d.variant = rung.c_str();
  const gk_status status = gk_gemm_ex(dev.handle(), &d);
  if (status == GK_UNSUPPORTED && rung != "auto") return {};  // a decline is not a race
  if (status != GK_SUCCESS) return std::string("gemm ") + rung + ": " + gk_last_error();
  const HostArray after = dc.read(GK_F32, wc.total);
  if (!changes_outside(c, after, wc).empty()) return "gemm " + rung + " wrote outside C";
  const MatrixView va{&a, wa}, vb{&b, wb}, vc{&c, wc};
  const auto ref = reference_gemm(false, false, m, n, k, -1.5, va, vb, 0.5, &vc);
  const Comparison cmp = compare(read_window(after, wc), ref, n);
  if (!cmp.passes(1e-5))
    return "gemm " + rung + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           ": relative error " + std::to_string(cmp.relative_error);
  return {};
}

std::string threaded_softmax(Device& dev, const std::string& rung, int64_t rows, int64_t cols) {
  Random rng;
  const Window w = make_window(rows, cols, cols, 8);
  HostArray x(GK_F32, w.total), y(GK_F32, w.total);
  fill_window(x, w, Pattern::Padding, [&](int64_t, int64_t) { return rng.uniform(-4, 4); });
  fill_window(y, w, Pattern::Guard, [](int64_t, int64_t) { return 0.0; });
  DeviceArray dx(dev, x), dy(dev, y);
  SoftmaxDesc d;
  d.rows = rows;
  d.cols = cols;
  d.x = static_cast<float*>(dx.data()) + w.offset;
  d.ldx = cols;
  d.y = static_cast<float*>(dy.data()) + w.offset;
  d.ldy = cols;
  d.variant = rung.c_str();
  const gk_status status = gk_softmax_ex(dev.handle(), &d);
  if (status == GK_UNSUPPORTED && rung != "auto") return {};
  if (status != GK_SUCCESS) return std::string("softmax ") + rung + ": " + gk_last_error();
  const HostArray after = dy.read(GK_F32, w.total);
  if (!changes_outside(y, after, w).empty()) return "softmax " + rung + " wrote outside y";
  const Comparison cmp = compare(read_window(after, w), reference_softmax({&x, w}, false), cols);
  if (!cmp.passes(1e-5)) return "softmax " + rung + ": relative error " + std::to_string(cmp.relative_error);
  return {};
}

class Threads : public ::testing::TestWithParam<std::string> {};

TEST_P(Threads, ConcurrentCallsOnOneDeviceAreCorrect) {
  Device& dev = shared_device(GetParam());
  const auto gemm_rungs = f32_rungs(dev, GK_OP_GEMM);
  const auto softmax_rungs = f32_rungs(dev, GK_OP_SOFTMAX);
  std::vector<std::string> problems(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (int i = 0; i < kIterations && problems[t].empty(); ++i) {
        const std::size_t pick = static_cast<std::size_t>(t + i);
        problems[t] = threaded_gemm(dev, gemm_rungs[pick % gemm_rungs.size()], 33 + 16 * t, 65 - 8 * t, 47 + i);
        if (problems[t].empty())
          problems[t] = threaded_softmax(dev, softmax_rungs[pick % softmax_rungs.size()], 17 + t, 129 + 64 * i);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(problems[t], "") << "thread " << t;
}

INSTANTIATE_TEST_SUITE_P(Api, Threads, ::testing::ValuesIn(available_backend_names()), BackendName());

// Backends are probed at first need: many threads opening and listing at once all see
// the same registry (auto opens the same backend for each, the list is the same).
TEST(Registry, ConcurrentOpenAndListAgree) {
  constexpr int kOpeners = 8;
  std::vector<std::string> opened(kOpeners), listed(kOpeners), problems(kOpeners);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kOpeners; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kOpeners) std::this_thread::yield();
      gk_handle handle = nullptr;
      const char* spec = t % 2 ? "auto" : "cpu";
      if (gk_open(spec, &handle) != GK_SUCCESS) {
        problems[t] = std::string("gk_open(") + spec + "): " + gk_last_error();
        return;
      }
      gk_device_info info{};
      gk_get_device_info(handle, &info);
      opened[t] = info.backend;
      gk_close(handle);
      int count = 0;
      gk_backend_count(&count);
      for (int b = 0; b < count; ++b) {
        gk_backend_info backend{};
        gk_get_backend_info(b, &backend);
        listed[t] += std::string(backend.name) + (backend.available ? "+" : "-") + " ";
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kOpeners; ++t) {
    EXPECT_EQ(problems[t], "") << "thread " << t;
    EXPECT_EQ(listed[t], listed[0]) << "thread " << t;
    EXPECT_EQ(opened[t], opened[t % 2]) << "thread " << t;
  }
  EXPECT_EQ(opened[0], "cpu");
}

}  // namespace
}  // namespace gpukern::test
