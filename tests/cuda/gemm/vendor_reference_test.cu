// The vendor references of the CUDA GEMM ladder over strided batches and the fused
// epilogue, run directly (their supports/run on a context with its own library handles):
//  * `cublas` (cublasGemmStridedBatchedEx_64): batches 1, 3, 17 with padded, broadcast
//    (stride 0) and transposed operands and interleaved items of C, every dtype;
//  * `cublaslt` (cublasLtMatmul): the same batches with every epilogue it has (bias,
//    relu, tanh-form gelu, with and without bias, shared and per-item bias), every dtype;
//  * cublaslt's typed declines: erf-form GELU and SiLU (Feature), an f32 bias with 16-bit C
//    (Feature), k = 0 (ShapeLimit).
// Inputs are random on the host, the reference is act(alpha op(A_b) op(B_b) + beta C_b +
// bias_b) in double; C is poisoned with NaN when beta == 0 and every cell of C's buffer
// outside the items must come back unchanged.
#include "gemm_harness.cuh"

#include "core/activation.hpp"
#include "core/half.hpp"
#include "cuda/gemm/gemm_rungs.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

using core::Activation;

/// Host storage of one operand as raw words, with float views.
struct HostMatrix {
  DType type = DType::F32;
  std::vector<uint32_t> words;  // one word per element (16-bit types use the low half)

  HostMatrix(DType t, int64_t count) : type(t), words(static_cast<std::size_t>(count)) {}
  float get(int64_t i) const {
    const uint32_t w = words[static_cast<std::size_t>(i)];
    if (type == DType::F16) return core::f16_to_float(static_cast<uint16_t>(w));
    if (type == DType::BF16) return core::bf16_to_float(static_cast<uint16_t>(w));
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  void set(int64_t i, float v) {
    uint32_t w;
    if (type == DType::F16)
      w = core::float_to_f16(v);
    else if (type == DType::BF16)
      w = core::float_to_bf16(v);
    else
      std::memcpy(&w, &v, 4);
    words[static_cast<std::size_t>(i)] = w;
  }
  void fill(std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < static_cast<int64_t>(words.size()); ++i) set(i, dist(rng));
  }
  void fill_nan() {
    for (auto& w : words) w = type == DType::F32 ? 0x7fc00001u : type == DType::F16 ? 0x7e01u : 0x7fc1u;
  }
  std::size_t bytes() const { return words.size() * core::dtype_size(type); }
  /// The elements as stored (2 or 4 bytes each).
  std::vector<char> packed() const {
    std::vector<char> out(bytes());
    const std::size_t es = core::dtype_size(type);
    for (std::size_t i = 0; i < words.size(); ++i) std::memcpy(out.data() + i * es, &words[i], es);
    return out;
  }
  void unpack(const std::vector<char>& in) {
    const std::size_t es = core::dtype_size(type);
    for (std::size_t i = 0; i < words.size(); ++i) {
      words[i] = 0;
      std::memcpy(&words[i], in.data() + i * es, es);
    }
  }
};

/// A device copy of a host matrix (freed by the destructor).
struct DeviceCopy {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceCopy(const HostMatrix& m) : bytes(m.bytes()) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, m.packed().data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(ptr); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
};

struct BatchCase {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool ta = false, tb = false;
  DType ab = DType::F32, c = DType::F32;
  bool tf32 = false;
  float alpha = 1.0f, beta = 0.0f;
  bool a_shared = false, b_shared = false, c_interleaved = false;
  int bias = 0;  ///< 0 none, 1 f32, 2 C's type
  bool bias_per_item = false;
  Activation act = Activation::None;

  std::string describe() const {
    return "batch " + std::to_string(batch) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + (ta ? " T" : " N") + (tb ? "T " : "N ") + (tf32 ? "tf32" : core::dtype_name(ab)) + "->" +
           core::dtype_name(c) + " beta " + std::to_string(beta) + (a_shared ? " A shared" : "") +
           (b_shared ? " B shared" : "") + (c_interleaved ? " C interleaved" : "") +
           (bias == 0   ? ""
            : bias == 1 ? " bias f32"
                        : " bias c_type") +
           (bias_per_item ? " per item" : "") + " act " + std::to_string(static_cast<int>(act));
  }
  double bound() const {
    if (ab == DType::BF16 || c == DType::BF16) return 1e-2;
    if (ab == DType::F16 || c == DType::F16 || tf32) return 2e-3;
    return 1e-5;
  }
};

/// The device's context with library handles of its own (the harness's has none).
const CudaContext* lib_context(cudaStream_t stream, std::string* why_not) {
  static cuda::LibraryHandles handles;
  static CudaContext ctx;
  const CudaContext* base = device_context(stream, why_not);
  if (!base) return nullptr;
  ctx = *base;
  ctx.libraries = &handles;
  return &ctx;
}

/// A prepared call: host data, device copies, the arguments.
class BatchProblem {
 public:
  explicit BatchProblem(const BatchCase& t)
      : t_(t),
        a_rows_(t.ta ? t.k : t.m),
        a_cols_(t.ta ? t.m : t.k),
        b_rows_(t.tb ? t.n : t.k),
        b_cols_(t.tb ? t.k : t.n),
        lda_(a_cols_ + 8),
        ldb_(b_cols_ + 8),
        stride_a_(t.a_shared ? 0 : a_rows_ * lda_ + 16),
        stride_b_(t.b_shared ? 0 : b_rows_ * ldb_ + 8),
        stride_c_(t.c_interleaved ? t.n + 8 : t.m * (t.n + 8) + 24),
        ldc_(t.c_interleaved ? (t.batch - 1) * stride_c_ + t.n + 8 : t.n + 8),
        c_size_((t.batch - 1) * stride_c_ + t.m * ldc_ + ldc_),
        stride_bias_(t.bias_per_item ? t.n + 8 : 0),
        a_(t.ab, (t.a_shared ? 1 : t.batch) * (a_rows_ * lda_ + 16)),
        b_(t.ab, (t.b_shared ? 1 : t.batch) * (b_rows_ * ldb_ + 8)),
        c0_(t.c, c_size_),
        bias_(t.bias == 1 ? DType::F32 : t.c, (t.bias_per_item ? t.batch : 1) * (t.n + 8)) {
    std::mt19937 rng(static_cast<unsigned>(t.batch * 7919 + t.m * 131 + t.n * 17 + t.k));
    a_.fill(rng, -1.0f, 1.0f);
    b_.fill(rng, -1.0f, 1.0f);
    bias_.fill(rng, -0.5f, 0.5f);
    if (t.beta == 0.0f)
      c0_.fill_nan();
    else
      c0_.fill(rng, -1.0f, 1.0f);
    da_ = std::make_unique<DeviceCopy>(a_);
    db_ = std::make_unique<DeviceCopy>(b_);
    dc_ = std::make_unique<DeviceCopy>(c0_);
    dbias_ = std::make_unique<DeviceCopy>(bias_);
    g_.trans_a = t.ta;
    g_.trans_b = t.tb;
    g_.m = t.m;
    g_.n = t.n;
    g_.k = t.k;
    g_.alpha = t.alpha;
    g_.beta = t.beta;
    g_.a = da_->ptr;
    g_.lda = lda_;
    g_.b = db_->ptr;
    g_.ldb = ldb_;
    g_.c = dc_->ptr;
    g_.ldc = ldc_;
    g_.ab_type = t.ab;
    g_.c_type = t.c;
    g_.allow_tf32 = t.tf32;
    g_.batch = t.batch;
    g_.stride_a = stride_a_;
    g_.stride_b = stride_b_;
    g_.stride_c = stride_c_;
    g_.bias = t.bias ? dbias_->ptr : nullptr;
    g_.bias_type = bias_.type;
    g_.stride_bias = stride_bias_;
    g_.act = t.act;
  }

  const core::GemmArgs& args() const { return g_; }

  /// Compares C with the reference and every other cell of C's buffer with its start.
  void check(const std::string& label) {
    HostMatrix c(t_.c, c_size_);
    std::vector<char> raw(c.bytes());
    ASSERT_EQ(cudaMemcpy(raw.data(), dc_->ptr, raw.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    c.unpack(raw);
    const std::string where = label + " " + t_.describe();
    std::vector<bool> item_cell(static_cast<std::size_t>(c_size_), false);
    double num = 0, den = 0;
    int64_t nonfinite = 0;
    for (int64_t item = 0; item < t_.batch; ++item)
      for (int64_t i = 0; i < t_.m; ++i)
        for (int64_t j = 0; j < t_.n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < t_.k; ++p)
            acc += double(a_.get(item * stride_a_ + (t_.ta ? p * lda_ + i : i * lda_ + p))) *
                   b_.get(item * stride_b_ + (t_.tb ? j * ldb_ + p : p * ldb_ + j));
          const int64_t at = item * stride_c_ + i * ldc_ + j;
          item_cell[static_cast<std::size_t>(at)] = true;
          double v = t_.alpha * acc + (t_.beta == 0.0f ? 0.0 : t_.beta * double(c0_.get(at)));
          if (t_.bias) v += bias_.get(item * stride_bias_ + j);
          const double ref = core::activate_ref(v, static_cast<int>(t_.act));
          const double out = c.get(at);
          if (!std::isfinite(out)) ++nonfinite;
          num += (out - ref) * (out - ref);
          den += ref * ref;
        }
    const double error = den == 0 ? std::sqrt(num) : std::sqrt(num / den);
    EXPECT_EQ(nonfinite, 0) << where;
    EXPECT_LE(error, t_.bound()) << where;
    for (int64_t at = 0; at < c_size_; ++at)
      if (!item_cell[static_cast<std::size_t>(at)])
        ASSERT_EQ(c.words[static_cast<std::size_t>(at)], c0_.words[static_cast<std::size_t>(at)])
            << where << ": cell " << at << " outside every item of C written";
  }

 private:
  BatchCase t_;
  int64_t a_rows_, a_cols_, b_rows_, b_cols_, lda_, ldb_, stride_a_, stride_b_, stride_c_, ldc_, c_size_, stride_bias_;
  HostMatrix a_, b_, c0_, bias_;
  std::unique_ptr<DeviceCopy> da_, db_, dc_, dbias_;
  core::GemmArgs g_;
};

struct TypeCase {
  DType ab, c;
  bool tf32;
};
constexpr TypeCase kTypes[] = {{DType::F32, DType::F32, false},   {DType::F32, DType::F32, true},
                               {DType::F16, DType::F16, false},   {DType::F16, DType::F32, false},
                               {DType::BF16, DType::BF16, false}, {DType::BF16, DType::F32, false}};

/// Runs the case through the rung (its supports first); returns false when it declined
/// (only `may_decline` reasons are allowed).
bool run_case(const BatchCase& t, const char* rung, const CudaContext& ctx, cudaStream_t stream,
              core::Decline may_decline = core::Decline::None) {
  BatchProblem problem(t);
  const bool lt = std::string(rung) == "cublaslt";
  const core::Verdict v =
      lt ? cuda::gemm::cublaslt_supports(problem.args(), ctx) : cuda::gemm::cublas_supports(problem.args(), ctx);
  if (!v.accepted()) {
    EXPECT_EQ(v.reason, may_decline) << rung << " declined " << t.describe() << ": " << v.text();
    return false;
  }
  try {
    if (lt)
      cuda::gemm::cublaslt_run(problem.args(), ctx);
    else
      cuda::gemm::cublas_run(problem.args(), ctx);
  } catch (const std::exception& e) {
    ADD_FAILURE() << rung << " " << t.describe() << " threw: " << e.what();
    return false;
  }
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  problem.check(rung);
  return true;
}

/// The batch layouts: batch count, shared A, shared B, interleaved C.
struct Layout {
  int64_t batch;
  bool a_shared, b_shared, c_interleaved;
};
constexpr Layout kLayouts[] = {{1, false, false, false}, {3, false, false, false}, {17, false, false, false},
                               {3, true, false, false},  {17, false, true, false}, {3, false, false, true}};

class VendorReference : public OnStream {};

TEST_F(VendorReference, CublasStridedBatches) {
  std::string why_not;
  const CudaContext* ctx = lib_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  int ran = 0;
  for (const TypeCase& type : kTypes)
    for (int trans = 0; trans < 4; ++trans)
      for (const Layout& layout : kLayouts) {
        BatchCase t;
        t.batch = layout.batch;
        t.m = 67;
        t.n = 45;
        t.k = 93;
        t.ta = trans & 1;
        t.tb = trans & 2;
        t.ab = type.ab;
        t.c = type.c;
        t.tf32 = type.tf32;
        t.a_shared = layout.a_shared;
        t.b_shared = layout.b_shared;
        t.c_interleaved = layout.c_interleaved;
        t.alpha = trans == 2 ? -0.5f : 1.0f;
        t.beta = trans == 1 ? 0.75f : 0.0f;
        ran += run_case(t, "cublas", *ctx, stream_);
      }
  EXPECT_GT(ran, 0);
}

TEST_F(VendorReference, CublasLtEpiloguesAndBatches) {
  std::string why_not;
  const CudaContext* ctx = lib_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  int ran = 0, declined = 0;
  const Activation acts[] = {Activation::None, Activation::Relu, Activation::GeluTanh};
  for (const TypeCase& type : kTypes)
    for (int trans = 0; trans < 4; ++trans)
      for (const Layout& layout : kLayouts)
        for (int e = 0; e < 6; ++e) {
          BatchCase t;
          t.batch = layout.batch;
          t.m = 64 + trans;
          t.n = 40 + 8 * e + (trans == 3 ? 1 : 0);  // odd n: odd ldc, C and bias strides
          t.k = 72 + layout.batch;
          t.ta = trans & 1;
          t.tb = trans & 2;
          t.ab = type.ab;
          t.c = type.c;
          t.tf32 = type.tf32;
          t.a_shared = layout.a_shared;
          t.b_shared = layout.b_shared;
          t.c_interleaved = layout.c_interleaved;
          t.act = acts[e % 3];
          t.bias = e < 3 ? 0 : 2;  // cuBLASLt takes the bias in C's type
          t.bias_per_item = e == 4;
          t.beta = (e + trans) % 2 ? -1.5f : 0.0f;
          // Interleaved items of C are not a layout cuBLASLt promises: a Layout decline is
          // allowed there (and counted), nowhere else.
          const core::Decline allowed = layout.c_interleaved ? core::Decline::Layout : core::Decline::None;
          if (run_case(t, "cublaslt", *ctx, stream_, allowed))
            ++ran;
          else
            ++declined;
        }
  std::printf("[ cublaslt ] %d cases ran, %d declined (interleaved C)\n", ran, declined);
  EXPECT_GT(ran, 0);
}

TEST_F(VendorReference, CublasLtDeclinesTyped) {
  std::string why_not;
  const CudaContext* ctx = lib_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  BatchCase base;
  base.m = 32;
  base.n = 48;
  base.k = 64;
  base.ab = base.c = DType::BF16;
  struct Expect {
    BatchCase t;
    core::Decline reason;
  };
  std::vector<Expect> expects;
  for (Activation act : {Activation::GeluErf, Activation::Silu}) {
    BatchCase t = base;
    t.act = act;
    expects.push_back({t, core::Decline::Feature});
  }
  BatchCase f32_bias = base;
  f32_bias.bias = 1;  // f32 bias, bf16 C
  expects.push_back({f32_bias, core::Decline::Feature});
  BatchCase depth0 = base;
  depth0.k = 0;
  expects.push_back({depth0, core::Decline::ShapeLimit});
  for (const Expect& e : expects) {
    BatchProblem problem(e.t);
    const core::Verdict v = cuda::gemm::cublaslt_supports(problem.args(), *ctx);
    EXPECT_EQ(v.reason, e.reason) << e.t.describe() << ": " << v.text();
    EXPECT_FALSE(v.detail.empty());
  }
  // And the same calls in a form cuBLASLt has: accepted.
  BatchCase gelu = base;
  gelu.act = Activation::GeluTanh;
  gelu.bias = 2;
  EXPECT_TRUE(run_case(gelu, "cublaslt", *ctx, stream_));
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
