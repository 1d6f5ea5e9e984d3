// CUDA interop (docs/design.md, "Interop"): gemm and softmax on memory the application
// allocated itself with cudaMalloc, on a stream the application created and passed with
// gk_set_stream, checked against the double reference. Skips with the reason when the
// CUDA backend is unavailable.
#include "support/backends.hpp"
#include "support/reference.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace gpukern::test {
namespace {

#define ASSERT_CUDA(call)                                                                      \
  do {                                                                                         \
    const cudaError_t cuda_status_ = (call);                                                   \
    ASSERT_EQ(cuda_status_, cudaSuccess) << #call << ": " << cudaGetErrorString(cuda_status_); \
  } while (0)

class CudaInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& b : known_backends())
      if (b.name == "cuda" && !b.available) GTEST_SKIP() << unavailable_message(b);
    ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_) {
      gk_set_stream(shared_device("cuda").handle(), nullptr);
      cudaStreamDestroy(stream_);
    }
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaInterop, GemmOnApplicationMemoryAndStream) {
  Device& dev = shared_device("cuda");
  const int64_t m = 257, n = 129, k = 65;
  Random rng;
  const Window wa = make_window(m, k, k, 0), wb = make_window(k, n, n, 0), wc = make_window(m, n, n, 0);
  HostArray a(GK_F32, wa.total), b(GK_F32, wb.total), c(GK_F32, wc.total);
  auto random = [&](int64_t, int64_t) { return rng.uniform(-1, 1); };
  fill_window(a, wa, Pattern::Padding, random);
  fill_window(b, wb, Pattern::Padding, random);
  fill_window(c, wc, Pattern::Padding, random);
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_CUDA(cudaMalloc(&da, a.bytes()));
  ASSERT_CUDA(cudaMalloc(&db, b.bytes()));
  ASSERT_CUDA(cudaMalloc(&dc, c.bytes()));
  ASSERT_CUDA(cudaMemcpy(da, a.data(), a.bytes(), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(db, b.data(), b.bytes(), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(dc, c.data(), c.bytes(), cudaMemcpyHostToDevice));

  ASSERT_EQ(gk_set_stream(dev.handle(), stream_), GK_SUCCESS) << gk_last_error();
  for (const auto& rung : dev.variants(GK_OP_GEMM)) {
    if (!rung.runs_here || !contains_word(rung.dtypes, "f32")) continue;
    SCOPED_TRACE(rung.name);
    ASSERT_CUDA(cudaMemcpyAsync(dc, c.data(), c.bytes(), cudaMemcpyHostToDevice, stream_));
    GemmDesc d;
    d.m = m;
    d.n = n;
    d.k = k;
    d.a = da;
    d.lda = k;
    d.b = db;
    d.ldb = n;
    d.c = dc;
    d.ldc = n;
    d.alpha = -1.5f;
    d.beta = 0.5f;
    d.variant = rung.name;
    const gk_status status = gk_gemm_ex(dev.handle(), &d);
    if (status == GK_UNSUPPORTED) continue;
    ASSERT_EQ(status, GK_SUCCESS) << gk_last_error();
    // Only the application's stream is synchronized: the work must have been queued on it.
    HostArray out(GK_F32, wc.total);
    ASSERT_CUDA(cudaMemcpyAsync(out.data(), dc, out.bytes(), cudaMemcpyDeviceToHost, stream_));
    ASSERT_CUDA(cudaStreamSynchronize(stream_));
    const MatrixView va{&a, wa}, vb{&b, wb}, vc{&c, wc};
    const auto ref = reference_gemm(false, false, m, n, k, -1.5, va, vb, 0.5, &vc);
    const Comparison cmp = compare(read_window(out, wc), ref, n);
    EXPECT_TRUE(cmp.passes(1e-5)) << "relative error " << cmp.relative_error;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
}

TEST_F(CudaInterop, SoftmaxOnApplicationMemoryAndStream) {
  Device& dev = shared_device("cuda");
  const int64_t rows = 77, cols = 3001;
  Random rng;
  const Window w = make_window(rows, cols, cols, 0);
  HostArray x(GK_F32, w.total);
  fill_window(x, w, Pattern::Padding, [&](int64_t, int64_t) { return rng.uniform(-4, 4); });
  void *dx = nullptr, *dy = nullptr;
  ASSERT_CUDA(cudaMalloc(&dx, x.bytes()));
  ASSERT_CUDA(cudaMalloc(&dy, x.bytes()));
  ASSERT_CUDA(cudaMemcpy(dx, x.data(), x.bytes(), cudaMemcpyHostToDevice));
  ASSERT_EQ(gk_set_stream(dev.handle(), stream_), GK_SUCCESS) << gk_last_error();
  const auto ref = reference_softmax({&x, w}, false);
  for (const auto& rung : dev.variants(GK_OP_SOFTMAX)) {
    if (!rung.runs_here || !contains_word(rung.dtypes, "f32")) continue;
    SCOPED_TRACE(rung.name);
    ASSERT_CUDA(cudaMemsetAsync(dy, 0xff, x.bytes(), stream_));  // NaN everywhere
    SoftmaxDesc d;
    d.rows = rows;
    d.cols = cols;
    d.x = dx;
    d.ldx = cols;
    d.y = dy;
    d.ldy = cols;
    d.variant = rung.name;
    const gk_status status = gk_softmax_ex(dev.handle(), &d);
    if (status == GK_UNSUPPORTED) continue;
    ASSERT_EQ(status, GK_SUCCESS) << gk_last_error();
    HostArray out(GK_F32, w.total);
    ASSERT_CUDA(cudaMemcpyAsync(out.data(), dy, out.bytes(), cudaMemcpyDeviceToHost, stream_));
    ASSERT_CUDA(cudaStreamSynchronize(stream_));
    const Comparison cmp = compare(read_window(out, w), ref, cols);
    EXPECT_TRUE(cmp.passes(1e-5)) << "relative error " << cmp.relative_error << " " << cmp.first_problem;
  }
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace
}  // namespace gpukern::test
