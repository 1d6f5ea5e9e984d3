// CPU GEMM reference rung, `openblas`: cblas_sgemm of OpenBLAS (loaded at run time, see
// cpu/openblas.hpp), with the core chosen from our cpuid so the reference is not crippled.
// f32 runs directly (row-major CBLAS; transposes passed through). f16 and bf16 have no
// OpenBLAS routine in common builds (cblas_sbgemm exists only in BUILD_BFLOAT16 builds,
// and is used for bf16 when present and it passed the load-time check), so they are
// converted to f32 copies first, in parallel, and the conversion time is part of the
// measured time: that is what an application without a 16-bit BLAS would pay.
// Strided batches: one call per item, in order (what an application without a batched
// BLAS routine would do); the epilogue is left to the core's separate pass.
//
// Second reference rung, `openblas_gemv`: cblas_sgemv for the products that are a
// matrix-vector product (m == 1 or n == 1, f32 only), the yardstick of the `skinny` rung
// next to sgemm (OpenBLAS's sgemm does not switch to its gemv kernels for these shapes).
#include "cpu/element.hpp"
#include "cpu/gemm/batch_epilogue.hpp"
#include "cpu/openblas.hpp"
#include "cpu/rungs.hpp"

#include <climits>
#include <string>
#include <memory>
#include <type_traits>
#include <vector>

namespace gpukern::cpu {
namespace {

bool fits_int(int64_t v) { return v <= INT_MAX; }

/// A stored rows x cols matrix of T (leading dimension ld) as a dense f32 copy.
template <class T>
std::vector<float> to_f32(const void* src, int64_t rows, int64_t cols, int64_t ld, int threads) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  const T* s = static_cast<const T*>(src);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = to_float(s[i * ld + j]);
  return out;
}

template <class T>
void from_f32(const std::vector<float>& src, void* dst, int64_t rows, int64_t cols, int64_t ld, int threads) {
  T* d = static_cast<T*>(dst);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) d[i * ld + j] = from_float<T>(src[i * cols + j]);
}

void set_threads(const OpenBlas& ob, int threads) {
  if (ob.set_num_threads && ob.threads_set != threads) {
    ob.set_num_threads(threads);
    ob.threads_set = threads;
  }
}

template <class AB, class C>
void run_converted(const core::GemmArgs& g, const CpuContext& ctx, const OpenBlas& ob) {
  const float beta = g.beta;  // validated: a zero beta is +0.0
  const int ta = g.trans_a ? kCblasTrans : kCblasNoTrans, tb = g.trans_b ? kCblasTrans : kCblasNoTrans;
  const int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);

  if constexpr (std::is_same_v<AB, BFloat16> && std::is_same_v<C, float>) {
    if (ob.sbgemm) {
      std::lock_guard<std::mutex> lock(ob.mutex);
      set_threads(ob, ctx.threads);
      ob.sbgemm(kCblasRowMajor, ta, tb, m, n, k, g.alpha, static_cast<const std::uint16_t*>(g.a),
                static_cast<int>(g.lda), static_cast<const std::uint16_t*>(g.b), static_cast<int>(g.ldb), beta,
                static_cast<float*>(g.c), static_cast<int>(g.ldc));
      return;
    }
  }
  const std::vector<float> a = to_f32<AB>(g.a, a_rows, a_cols, g.lda, ctx.threads);
  const std::vector<float> b = to_f32<AB>(g.b, b_rows, b_cols, g.ldb, ctx.threads);
  if constexpr (std::is_same_v<C, float>) {
    std::lock_guard<std::mutex> lock(ob.mutex);
    set_threads(ob, ctx.threads);
    ob.sgemm(kCblasRowMajor, ta, tb, m, n, k, g.alpha, a.data(), static_cast<int>(a_cols), b.data(),
             static_cast<int>(b_cols), beta, static_cast<float*>(g.c), static_cast<int>(g.ldc));
  } else {
    // beta == 0 must not read C, so the f32 copy of C is only made when beta != 0.
    std::vector<float> c = beta != 0.0f ? to_f32<C>(g.c, g.m, g.n, g.ldc, ctx.threads)
                                        : std::vector<float>(static_cast<std::size_t>(g.m * g.n));
    {
      std::lock_guard<std::mutex> lock(ob.mutex);
      set_threads(ob, ctx.threads);
      ob.sgemm(kCblasRowMajor, ta, tb, m, n, k, g.alpha, a.data(), static_cast<int>(a_cols), b.data(),
               static_cast<int>(b_cols), beta, c.data(), n);
    }
    from_f32<C>(c, g.c, g.m, g.n, g.ldc, ctx.threads);
  }
}

/// y (n_y elements, stride incy) = 0, so that sgemv with beta == 0 cannot see the NaN a
/// caller's C may hold (some OpenBLAS versions scale y by beta, and 0 * NaN is NaN).
void zero_y(float* y, int64_t n_y, int64_t incy) {
  for (int64_t i = 0; i < n_y; ++i) y[i * incy] = 0.0f;
}

}  // namespace

core::Verdict gemm::openblas_gemv_supports(const core::GemmArgs& g, const CpuContext& ctx) {
  if (core::Verdict v = openblas_supports(g, ctx); !v.accepted()) return v;
  if (!openblas().sgemv) return {core::Decline::LibraryMissing, openblas().library + " has no cblas_sgemv"};
  if (g.m != 1 && g.n != 1)
    return {core::Decline::ShapeLimit, "m = " + std::to_string(g.m) + " and n = " + std::to_string(g.n) +
                                           ": a matrix-vector product needs m == 1 or n == 1"};
  return {};
}

void gemm::openblas_gemv_run(const core::GemmArgs& g, const CpuContext& ctx) {
  if (g.k == 0) return scale_c(g);
  const OpenBlas& ob = openblas();
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b);
  float* c = static_cast<float*>(g.c);
  const int k = static_cast<int>(g.k);
  // The vector x, the matrix and its CBLAS transpose, and y (a row or a column of C).
  const float* x;
  const float* matrix;
  int x_stride, ld, trans, rows, cols;
  int64_t y_count, y_stride;
  if (g.m == 1) {
    // C row = op(A) row (1 x k) times op(B) (k x n): y = op(B)^T x.
    x = a;
    x_stride = g.trans_a ? static_cast<int>(g.lda) : 1;
    matrix = b;
    ld = static_cast<int>(g.ldb);
    trans = g.trans_b ? kCblasNoTrans : kCblasTrans;  // B stored n x k, or k x n
    rows = g.trans_b ? static_cast<int>(g.n) : k;
    cols = g.trans_b ? k : static_cast<int>(g.n);
    y_count = g.n;
    y_stride = 1;
  } else {
    // C column = op(A) (m x k) times op(B) column (k x 1): y = op(A) x.
    x = b;
    x_stride = g.trans_b ? 1 : static_cast<int>(g.ldb);
    matrix = a;
    ld = static_cast<int>(g.lda);
    trans = g.trans_a ? kCblasTrans : kCblasNoTrans;  // A stored k x m, or m x k
    rows = g.trans_a ? k : static_cast<int>(g.m);
    cols = g.trans_a ? static_cast<int>(g.m) : k;
    y_count = g.m;
    y_stride = g.ldc;
  }
  if (g.beta == 0.0f) zero_y(c, y_count, y_stride);
  std::lock_guard<std::mutex> lock(ob.mutex);
  set_threads(ob, ctx.threads);
  ob.sgemv(kCblasRowMajor, trans, rows, cols, g.alpha, matrix, ld, x, x_stride, g.beta, c, static_cast<int>(y_stride));
}

core::Verdict gemm::openblas_supports(const core::GemmArgs& g, const CpuContext&) {
  const OpenBlas& ob = openblas();
  if (!ob.loaded) return {core::Decline::LibraryMissing, ob.unavailable};
  if (!fits_int(g.m) || !fits_int(g.n) || !fits_int(g.k) || !fits_int(g.lda) || !fits_int(g.ldb) || !fits_int(g.ldc))
    return {core::Decline::ShapeLimit, "a size or leading dimension exceeds INT_MAX (CBLAS takes int)"};
  return {};
}

void gemm::openblas_run(const core::GemmArgs& args, const CpuContext& ctx) {
  if (args.batched()) {
    for (int64_t item = 0; item < args.batch; ++item) openblas_run(batch_item(args, item), ctx);
    return;
  }
  const core::GemmArgs& g = args;
  // OpenBLAS itself handles k == 0, but do it here so every rung agrees bit for bit.
  if (g.k == 0) return scale_c(g);
  const OpenBlas& ob = openblas();
  // beta == 0 must not read C: validation stores a zero beta as +0.0, so a kernel that
  // tests its bits (as cuBLAS does) cannot take -0.0 for "read C".
  const float beta = g.beta;
  if (g.ab_type == core::DType::F32 && g.c_type == core::DType::F32) {
    // allow_tf32 is a permission, not a request: f32 runs as exact f32.
    std::lock_guard<std::mutex> lock(ob.mutex);
    set_threads(ob, ctx.threads);
    ob.sgemm(kCblasRowMajor, g.trans_a ? kCblasTrans : kCblasNoTrans, g.trans_b ? kCblasTrans : kCblasNoTrans,
             static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), g.alpha,
             static_cast<const float*>(g.a), static_cast<int>(g.lda), static_cast<const float*>(g.b),
             static_cast<int>(g.ldb), beta, static_cast<float*>(g.c), static_cast<int>(g.ldc));
    return;
  }
  with_gemm_types(g, [&](auto ab, auto c) { run_converted<decltype(ab), decltype(c)>(g, ctx, ob); });
}

}  // namespace gpukern::cpu
