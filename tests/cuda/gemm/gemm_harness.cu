// The harness of the CUDA GEMM internals tests; see gemm_harness.cuh. Everything large
// happens on the device (filling, the double reference, the comparison), so shapes of a
// few thousand per side stay quick.
#include "gemm_harness.cuh"

#include "support/backends.hpp"
#include "support/cuda_check.hpp"
#include "support/device_random.cuh"
#include "support/gemm_desc.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace gpukern::test::cuda_gemm {
namespace {

/// Every element of `count` raw 16- or 32-bit words set to `bits` (NaN patterns).
template <class Word>
__global__ void fill_bits(Word* p, int64_t count, Word bits) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = bits;
}

template <class T>
__device__ double load(const void* p, int64_t i) {
  return static_cast<double>(gpu::to_float(static_cast<const T*>(p)[i]));
}

/// ref(row, col) = alpha * sum_k op(A)(row, k) op(B)(k, col) + beta * C0(row, col), in
/// double, from the stored values; beta == 0 never reads C0.
template <class T, class CT>
__global__ void reference_gemm(core::GemmArgs g, const void* c0, double* ref) {
  const int64_t col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  double s = 0;
  for (int64_t k = 0; k < g.k; ++k)
    s += load<T>(g.a, g.trans_a ? k * g.lda + row : row * g.lda + k) *
         load<T>(g.b, g.trans_b ? col * g.ldb + k : k * g.ldb + col);
  double out = static_cast<double>(g.alpha) * s;
  if (g.beta != 0.0f) out += static_cast<double>(g.beta) * load<CT>(c0, row * g.ldc + col);
  ref[row * g.n + col] = out;
}

/// sums = (sum (C - ref)^2, sum ref^2); counts = (non-finite outputs, guard cells that
/// differ from C0). C has m + 1 rows of ldc (the last one a guard row).
template <class CT>
__global__ void compare(const void* c, const void* c0, const double* ref, int64_t m, int64_t n, int64_t ldc,
                        double* sums, unsigned long long* counts) {
  double d2 = 0, r2 = 0;
  unsigned long long bad = 0, guard = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (m + 1) * ldc;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ldc, col = i % ldc;
    if (row >= m || col >= n) {
      using Word = std::conditional_t<sizeof(CT) == 2, uint16_t, uint32_t>;  // compared bit for bit
      if (static_cast<const Word*>(c)[i] != static_cast<const Word*>(c0)[i]) ++guard;
      continue;
    }
    const double v = load<CT>(c, i), r = ref[row * n + col];
    if (!isfinite(v)) {
      ++bad;
      continue;
    }
    d2 += (v - r) * (v - r);
    r2 += r * r;
  }
  atomicAdd(&sums[0], d2);
  atomicAdd(&sums[1], r2);
  atomicAdd(&counts[0], bad);
  atomicAdd(&counts[1], guard);
}

/// Calls f(T{}, CT{}) with the input and output storage types of the case.
template <class F>
void with_types(DType ab, DType c, F&& f) {
  gpu::with_storage_type(ab, [&](auto in) {
    if (c == DType::F32)
      f(in, float{});
    else
      f(in, in);
  });
}

template <class T>
void fill_nan(void* p, int64_t count, cudaStream_t s) {
  if constexpr (sizeof(T) == 2)
    fill_bits<uint16_t><<<256, 256, 0, s>>>(static_cast<uint16_t*>(p), count, 0x7E01);
  else
    fill_bits<uint32_t><<<256, 256, 0, s>>>(static_cast<uint32_t*>(p), count, 0x7FC00001u);
}

gk_dtype public_type(DType t) { return static_cast<gk_dtype>(static_cast<int>(t)); }

}  // namespace

std::string Case::describe() const {
  std::ostringstream s;
  s << arithmetic() << (c == DType::F32 && ab != DType::F32 ? ">f32" : "") << ' ' << (trans_a ? 'T' : 'N')
    << (trans_b ? 'T' : 'N') << ' ' << m << 'x' << n << 'x' << k << " alpha=" << alpha << " beta=" << beta
    << " pad a/b/c=" << pad_a << '/' << pad_b << '/' << pad_c;
  if (offset_a) s << " A+" << offset_a;
  return s.str();
}

std::string Case::arithmetic() const {
  if (ab == DType::F16) return "f16";
  if (ab == DType::BF16) return "bf16";
  return tf32 ? "tf32" : "f32";
}

double error_bound(const Case& c) { return test::error_bound(c.arithmetic(), public_type(c.c)); }

std::string Outcome::describe() const {
  std::ostringstream s;
  s << "error " << error << ", non-finite outputs " << nonfinite << ", guard cells changed " << guard_changed;
  return s.str();
}

Problem::Problem(const Case& c, cudaStream_t stream, uint64_t seed) : case_(c), stream_(stream) {
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  args_.trans_a = c.trans_a;
  args_.trans_b = c.trans_b;
  args_.m = c.m;
  args_.n = c.n;
  args_.k = c.k;
  args_.alpha = c.alpha;
  args_.beta = c.beta;
  args_.lda = std::max<int64_t>(1, a_cols) + c.pad_a;
  args_.ldb = std::max<int64_t>(1, b_cols) + c.pad_b;
  args_.ldc = std::max<int64_t>(1, c.n) + c.pad_c;
  args_.ab_type = c.ab;
  args_.c_type = c.c;
  args_.allow_tf32 = c.tf32;
  const int64_t a_elems = std::max<int64_t>(1, a_rows) * args_.lda + c.offset_a;
  const int64_t b_elems = std::max<int64_t>(1, b_rows) * args_.ldb;
  const int64_t c_elems = (c.m + 1) * args_.ldc;  // a guard row below C
  const size_t es = core::dtype_size(c.ab), cs = core::dtype_size(c.c);
  c_bytes_ = static_cast<size_t>(c_elems) * cs;
  GK_TEST_CUDA_OK(cudaMalloc(&a_, a_elems * es));
  GK_TEST_CUDA_OK(cudaMalloc(&b_, b_elems * es));
  GK_TEST_CUDA_OK(cudaMalloc(&c_, c_bytes_));
  GK_TEST_CUDA_OK(cudaMalloc(&c0_, c_bytes_));
  GK_TEST_CUDA_OK(cudaMalloc(&ref_, std::max<int64_t>(1, c.m * c.n) * sizeof(double)));
  args_.a = static_cast<char*>(a_) + c.offset_a * es;
  args_.b = b_;
  args_.c = c_;
  with_types(c.ab, c.c, [&](auto in, auto out) {
    using T = decltype(in);
    using CT = decltype(out);
    // NaN everywhere, then random values in the windows the call reads: a rung reading a
    // padding cell, or C when beta == 0, poisons its result.
    fill_nan<T>(a_, a_elems, stream_);
    fill_nan<T>(b_, b_elems, stream_);
    fill_nan<CT>(c0_, c_elems, stream_);
    const auto a = static_cast<T*>(const_cast<void*>(args_.a));
    if (a_rows * a_cols > 0)
      fill_random_window<T><<<1024, 256, 0, stream_>>>(a, a_rows, a_cols, args_.lda, seed * 4 + 1);
    if (b_rows * b_cols > 0)
      fill_random_window<T><<<1024, 256, 0, stream_>>>(static_cast<T*>(b_), b_rows, b_cols, args_.ldb, seed * 4 + 2);
    if (c.beta != 0.0f && c.m * c.n > 0)
      fill_random_window<CT><<<1024, 256, 0, stream_>>>(static_cast<CT*>(c0_), c.m, c.n, args_.ldc, seed * 4 + 3);
    if (c.m * c.n > 0) {
      const dim3 block(16, 16), grid(static_cast<unsigned>((c.n + 15) / 16), static_cast<unsigned>((c.m + 15) / 16));
      reference_gemm<T, CT><<<grid, block, 0, stream_>>>(args_, c0_, ref_);
    }
  });
  GK_TEST_CUDA_OK(cudaGetLastError());
  reset_c();
}

Problem::~Problem() {
  cudaStreamSynchronize(stream_);
  cudaFree(a_);
  cudaFree(b_);
  cudaFree(c_);
  cudaFree(c0_);
  cudaFree(ref_);
}

void Problem::reset_c() { GK_TEST_CUDA_OK(cudaMemcpyAsync(c_, c0_, c_bytes_, cudaMemcpyDeviceToDevice, stream_)); }

Outcome Problem::check() {
  double* sums = nullptr;
  unsigned long long* counts = nullptr;
  GK_TEST_CUDA_OK(cudaMalloc(&sums, 2 * sizeof(double)));
  GK_TEST_CUDA_OK(cudaMalloc(&counts, 2 * sizeof(unsigned long long)));
  GK_TEST_CUDA_OK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), stream_));
  GK_TEST_CUDA_OK(cudaMemsetAsync(counts, 0, 2 * sizeof(unsigned long long), stream_));
  with_types(case_.ab, case_.c, [&](auto, auto out) {
    compare<decltype(out)><<<256, 256, 0, stream_>>>(c_, c0_, ref_, case_.m, case_.n, args_.ldc, sums, counts);
  });
  double h_sums[2];
  unsigned long long h_counts[2];
  GK_TEST_CUDA_OK(cudaMemcpyAsync(h_sums, sums, sizeof h_sums, cudaMemcpyDeviceToHost, stream_));
  GK_TEST_CUDA_OK(cudaMemcpyAsync(h_counts, counts, sizeof h_counts, cudaMemcpyDeviceToHost, stream_));
  GK_TEST_CUDA_OK(cudaStreamSynchronize(stream_));
  cudaFree(sums);
  cudaFree(counts);
  Outcome o;
  o.error = h_sums[1] > 0 ? std::sqrt(h_sums[0] / h_sums[1]) : std::sqrt(h_sums[0]);
  o.nonfinite = static_cast<int64_t>(h_counts[0]);
  o.guard_changed = static_cast<int64_t>(h_counts[1]);
  return o;
}

bool cuda_device_present(std::string* why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count > 0) return true;
  (void)cudaGetLastError();
  *why_not = std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  return false;
}

const CudaContext* device_context(cudaStream_t stream, std::string* why_not) {
  static std::mutex mutex;
  static CudaContext ctx;
  static std::string reason;
  static bool done = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done) {
    done = true;
    if (!cuda_device_present(&reason)) {
      // no device: `reason` says why
    } else {
      try {
        ctx = cuda::make_context(0, cuda::vendor::describe_device(0), nullptr);
      } catch (const std::exception& e) {
        reason = std::string("no CUDA device: cannot describe device 0: ") + e.what();
      }
    }
  }
  if (!reason.empty()) {
    *why_not = reason;
    return nullptr;
  }
  ctx.stream = stream;
  return &ctx;
}

gk_status run_rung(const std::string& name, const core::GemmArgs& args, cudaStream_t stream, std::string* message) {
  Device& dev = shared_device("cuda");
  gk_status status = gk_set_stream(dev.handle(), stream);
  if (status == GK_SUCCESS) {
    const gk_gemm_desc d = test::gemm_desc(args, name.c_str());
    status = gk_gemm(dev.handle(), &d);
  }
  if (status != GK_SUCCESS) *message = gk_last_error();
  gk_set_stream(dev.handle(), nullptr);
  return status;
}

bool rung_runs_here(const std::string& name, std::string* why_not) {
  for (const auto& b : known_backends())
    if (b.name == "cuda" && !b.available) {
      *why_not = unavailable_message(b);
      return false;
    }
  for (const auto& v : shared_device("cuda").variants(GK_OP_GEMM))
    if (v.name == name) {
      if (!v.runs_here) *why_not = name + " does not run here: " + v.reason;
      return v.runs_here != 0;
    }
  *why_not = "the CUDA GEMM ladder has no rung " + name;
  return false;
}

namespace {

/// Checks the result of a run; a failure is reported with `label` and the case.
bool check_result(Problem& problem, const std::string& label) {
  const Outcome o = problem.check();
  const double bound = error_bound(problem.spec());
  if (!o.passes(bound)) {
    ADD_FAILURE() << label << ", " << problem.spec().describe() << ": " << o.describe() << " (bound " << bound << ")";
    return false;
  }
  return true;
}

}  // namespace

bool run_and_check(Problem& problem, const std::string& label, const std::function<void(const core::GemmArgs&)>& run) {
  problem.reset_c();
  try {
    run(problem.args());
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ", " << problem.spec().describe() << ": threw " << e.what();
    return false;
  }
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    ADD_FAILURE() << label << ", " << problem.spec().describe() << ": " << cudaGetErrorString(launch);
    return false;
  }
  return check_result(problem, label);
}

bool check_rung(Problem& problem, const std::string& rung, cudaStream_t stream, int* declined) {
  problem.reset_c();
  std::string message;
  const gk_status status = run_rung(rung, problem.args(), stream, &message);
  if (status == GK_UNSUPPORTED) {
    ++*declined;
    const Outcome o = problem.check();
    EXPECT_FALSE(message.empty()) << rung << " declined " << problem.spec().describe() << " without a reason";
    // Declined: C must be as it was (guards intact; a beta == 0 C still all NaN).
    EXPECT_EQ(o.guard_changed, 0) << rung << " declined " << problem.spec().describe() << " but wrote outside C";
    return true;
  }
  if (status != GK_SUCCESS) {
    ADD_FAILURE() << rung << ", " << problem.spec().describe() << ": " << gk_status_name(status) << ": " << message;
    return false;
  }
  return check_result(problem, rung);
}

void check_rung_cases(const std::string& rung, const std::vector<Case>& cases, cudaStream_t stream) {
  int declined = 0, passed = 0;
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Problem problem(c, stream, ++seed);
    const int before = declined;
    if (check_rung(problem, rung, stream, &declined) && declined == before) ++passed;
  }
  std::printf("%s: %d of %zu cases passed, %d declined\n", rung.c_str(), passed, cases.size(), declined);
  EXPECT_GT(passed, 0) << rung << " ran no case";
}

}  // namespace gpukern::test::cuda_gemm
