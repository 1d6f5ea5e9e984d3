// Reference rung `cublaslt`: cuBLASLt's cublasLtMatmul with the epilogues it has, the
// yardstick of the fused GEMM epilogue and of strided batches:
//   act none: CUBLASLT_EPILOGUE_DEFAULT / BIAS; relu: RELU / RELU_BIAS;
//   gelu (tanh form): GELU / GELU_BIAS.
// GELU with erf and SiLU have no cuBLASLt epilogue: declined (Feature). The bias vector
// is in D's type for these (non-FP8) matmuls, so an f32 bias with f16/bf16 C is declined
// too. Batches: CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET on every layout
// and CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE on the bias.
//
// Row-major to column-major as in cublas.cu: cuBLASLt computes our C^T (n x m, ldc) =
// op(B)^T op(A)^T, so its "A" is our B and its "B" our A. Our bias over the n columns of
// C is then over the n rows of cuBLASLt's D: exactly its bias vector (one per row of D).
//
// The algorithm comes from cublasLtMatmulAlgoGetHeuristic, asked once per call shape
// (sizes, strides, types, epilogue, pointer alignments) and kept; supports() asks it, so a
// call the heuristic has no algorithm for is declined before it runs. The workspace comes
// from the device's workspace pool (workspace.cuh), stream-ordered, per call.
//
// libcublasLt ships with the toolkit and libcublas itself depends on it, so the module links
// it like cuBLAS (no new run-time requirement); a handle that cannot be created makes the
// rung decline with LibraryMissing.
#include "cuda/context.cuh"
#include "cuda/gemm/cublas_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/workspace.cuh"

#include <cublasLt.h>

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace gpukern::cuda::gemm {
namespace {

/// Workspace cuBLASLt may use: 32 MiB, what NVIDIA recommends for Hopper.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

[[noreturn]] void fail(const char* what, cublasStatus_t s) {
  throw core::Error(s == CUBLAS_STATUS_ALLOC_FAILED ? core::Status::OutOfMemory : core::Status::DeviceError,
                    std::string(what) + " failed: " + cublasGetStatusString(s));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(what, s);
}

/// The device's cuBLASLt handle (created on first use, destroyed with the device's
/// LibraryHandles). cuBLASLt takes the stream per call, so the handle is used unlocked.
cublasLtHandle_t lt_handle(const CudaContext& ctx) {
  if (ctx.libraries == nullptr)
    throw core::Error(core::Status::InternalError, "cublaslt: this context has no library handles");
  LibraryHandles& lib = *ctx.libraries;
  std::lock_guard<std::mutex> lock(lib.mutex);
  if (!lib.cublaslt) {
    cublasLtHandle_t handle = nullptr;
    check(cublasLtCreate(&handle), "cublasLtCreate");
    lib.cublaslt = handle;
    lib.destroy_cublaslt = [](void* h) { cublasLtDestroy(static_cast<cublasLtHandle_t>(h)); };
  }
  return static_cast<cublasLtHandle_t>(lib.cublaslt);
}

/// The cuBLASLt epilogue of a call; false for an activation cuBLASLt lacks.
bool lt_epilogue(const core::GemmArgs& g, cublasLtEpilogue_t* out) {
  const bool bias = g.bias != nullptr;
  switch (g.act) {
    case core::Activation::None:
      *out = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      return true;
    case core::Activation::Relu:
      *out = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      return true;
    case core::Activation::GeluTanh:
      *out = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      return true;
    default:
      return false;
  }
}

/// The largest power of two (up to 256) that divides the address of every batch item of
/// an operand (base + item * stride elements of `type`): what the heuristic must assume of
/// its pointers (its default assumption is 256 bytes).
uint32_t alignment(const void* p, const core::GemmArgs& g, int64_t stride, core::DType type) {
  auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  if (g.batched()) v |= static_cast<uint64_t>(stride) * core::dtype_size(type);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

/// Owners of the per-call descriptors (host objects; created and destroyed in microseconds).
struct MatmulDescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* d) const { cublasLtMatrixLayoutDestroy(d); }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* d) const { cublasLtMatmulPreferenceDestroy(d); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, MatmulDescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

template <class Desc, class Attr, class T>
void set(cublasStatus_t (*setter)(Desc, Attr, const void*, size_t), Desc d, Attr attr, const T& value,
         const char* what) {
  check(setter(d, attr, &value, sizeof value), what);
}

/// A column-major rows x cols layout of `type` (leading dimension ld), `batch` items
/// `stride` elements apart.
Layout make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t raw = nullptr;
  check(cublasLtMatrixLayoutCreate(&raw, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  Layout layout(raw);
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    set(cublasLtMatrixLayoutSetAttribute, raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count,
        "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    set(cublasLtMatrixLayoutSetAttribute, raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride,
        "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return layout;
}

/// The descriptors of one call (cuBLASLt's view: D = C^T, its A = our B, its B = our A).
struct Call {
  MatmulDesc desc;
  Layout a, b, c;
};

Call describe(const core::GemmArgs& g, cublasLtEpilogue_t epilogue) {
  Call call;
  cublasLtMatmulDesc_t desc = nullptr;
  check(cublasLtMatmulDescCreate(&desc, compute_type(g), CUDA_R_32F), "cublasLtMatmulDescCreate");
  call.desc.reset(desc);
  const cublasOperation_t op_lt_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // our B
  const cublasOperation_t op_lt_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // our A
  set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_TRANSA, op_lt_a, "TRANSA");
  set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_TRANSB, op_lt_b, "TRANSB");
  set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE");
  if (g.bias != nullptr) {
    const int32_t bias_type = cuda_type(g.bias_type);
    set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias, "BIAS_POINTER");
    set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type, "BIAS_DATA_TYPE");
    if (g.batched())
      set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, g.stride_bias,
          "BIAS_BATCH_STRIDE");
  }
  const cudaDataType_t ab = cuda_type(g.ab_type), c = cuda_type(g.c_type);
  // Stored shapes, column-major: our row-major B (k x n, or n x k transposed) is n x k
  // (k x n); our A (m x k, or k x m) is k x m (m x k); our C (m x n) is n x m.
  call.a = g.trans_b ? make_layout(ab, g.k, g.n, g.ldb, g.batch, g.stride_b)
                     : make_layout(ab, g.n, g.k, g.ldb, g.batch, g.stride_b);
  call.b = g.trans_a ? make_layout(ab, g.m, g.k, g.lda, g.batch, g.stride_a)
                     : make_layout(ab, g.k, g.m, g.lda, g.batch, g.stride_a);
  call.c = make_layout(c, g.n, g.m, g.ldc, g.batch, g.stride_c);
  return call;
}

/// What the heuristic's answer depends on: sizes, strides, types, epilogue, alignments.
using PlanKey = std::array<int64_t, 21>;

PlanKey plan_key(const core::GemmArgs& g, cublasLtEpilogue_t epilogue, int device) {
  return {device,
          static_cast<int64_t>(g.type()),
          static_cast<int64_t>(g.c_type),
          (g.trans_a ? 1 : 0) | (g.trans_b ? 2 : 0),
          g.m,
          g.n,
          g.k,
          g.lda,
          g.ldb,
          g.ldc,
          g.batch,
          g.batched() ? g.stride_a : 0,
          g.batched() ? g.stride_b : 0,
          g.batched() ? g.stride_c : 0,
          static_cast<int64_t>(epilogue),
          g.bias ? static_cast<int64_t>(g.bias_type) : -1,
          g.batched() && g.bias ? g.stride_bias : 0,
          alignment(g.a, g, g.stride_a, g.ab_type),
          alignment(g.b, g, g.stride_b, g.ab_type),
          alignment(g.c, g, g.stride_c, g.c_type),
          g.bias ? alignment(g.bias, g, g.stride_bias, g.bias_type) : 0};
}

/// The heuristic's first algorithm for the call, or false when it has none. Asked once
/// per PlanKey (the answer for a key never changes on a device), kept for the process.
bool find_algorithm(const core::GemmArgs& g, cublasLtEpilogue_t epilogue, const CudaContext& ctx,
                    cublasLtMatmulAlgo_t* algo, std::string* why_not) {
  struct Plan {
    bool found = false;
    cublasLtMatmulAlgo_t algo{};
    std::string why_not;
  };
  static std::mutex mutex;
  static std::map<PlanKey, Plan> plans;
  const PlanKey key = plan_key(g, epilogue, ctx.device);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = plans.find(key); it != plans.end()) {
      *algo = it->second.algo;
      *why_not = it->second.why_not;
      return it->second.found;
    }
  }
  const cublasLtHandle_t handle = lt_handle(ctx);
  const Call call = describe(g, epilogue);
  cublasLtMatmulPreference_t raw = nullptr;
  check(cublasLtMatmulPreferenceCreate(&raw), "cublasLtMatmulPreferenceCreate");
  const Preference preference(raw);
  set(cublasLtMatmulPreferenceSetAttribute, raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kWorkspaceBytes,
      "MAX_WORKSPACE_BYTES");
  // cuBLASLt's A is our B and its B our A; C and D are our C.
  const uint32_t align_a = alignment(g.b, g, g.stride_b, g.ab_type), align_b = alignment(g.a, g, g.stride_a, g.ab_type);
  const uint32_t align_c = alignment(g.c, g, g.stride_c, g.c_type);
  set(cublasLtMatmulPreferenceSetAttribute, raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a,
      "MIN_ALIGNMENT_A_BYTES");
  set(cublasLtMatmulPreferenceSetAttribute, raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b,
      "MIN_ALIGNMENT_B_BYTES");
  set(cublasLtMatmulPreferenceSetAttribute, raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c,
      "MIN_ALIGNMENT_C_BYTES");
  set(cublasLtMatmulPreferenceSetAttribute, raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c,
      "MIN_ALIGNMENT_D_BYTES");
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, call.desc.get(), call.a.get(), call.b.get(),
                                                          call.c.get(), call.c.get(), raw, 1, &result, &returned);
  Plan plan;
  if (s == CUBLAS_STATUS_SUCCESS && returned > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
    plan.found = true;
    plan.algo = result.algo;
  } else if (s == CUBLAS_STATUS_SUCCESS || s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE) {
    plan.why_not = std::string("cublasLtMatmulAlgoGetHeuristic has no algorithm for this call (") +
                   cublasGetStatusString(s == CUBLAS_STATUS_SUCCESS ? result.state : s) + ")";
  } else {
    fail("cublasLtMatmulAlgoGetHeuristic", s);  // not an answer about the call: not kept
  }
  std::lock_guard<std::mutex> lock(mutex);
  const Plan& kept = plans.emplace(key, plan).first->second;
  *algo = kept.algo;
  *why_not = kept.why_not;
  return kept.found;
}

}  // namespace

core::Verdict cublaslt_supports(const core::GemmArgs& g, const CudaContext& ctx) {
  cublasLtEpilogue_t epilogue;
  if (!lt_epilogue(g, &epilogue))
    return {core::Decline::Feature, std::string("cuBLASLt has no ") +
                                        (g.act == core::Activation::GeluErf ? "erf-form GELU" : "SiLU") +
                                        " epilogue (it has relu and tanh-form gelu)"};
  if (g.bias != nullptr && g.bias_type != g.c_type)
    return {core::Decline::Feature, std::string("cuBLASLt takes the bias in C's type (") + core::dtype_name(g.c_type) +
                                        "), not " + core::dtype_name(g.bias_type)};
  if (g.k == 0) return {core::Decline::ShapeLimit, "k = 0 (cuBLASLt matmuls need k >= 1)"};
  if (g.batch > INT_MAX)
    return {core::Decline::ShapeLimit,
            "batch " + std::to_string(g.batch) + " exceeds 2^31-1 (cuBLASLt's batch count is an int32)"};
  try {
    lt_handle(ctx);
  } catch (const core::Error& e) {
    return {core::Decline::LibraryMissing, e.what()};
  }
  cublasLtMatmulAlgo_t algo;
  std::string why_not;
  if (!find_algorithm(g, epilogue, ctx, &algo, &why_not)) return {core::Decline::Layout, why_not};
  return {};
}

void cublaslt_run(const core::GemmArgs& g, const CudaContext& ctx) {
  cublasLtEpilogue_t epilogue;
  if (!lt_epilogue(g, &epilogue)) throw core::Error(core::Status::InternalError, "cublaslt: unsupported epilogue");
  cublasLtMatmulAlgo_t algo;
  std::string why_not;
  if (!find_algorithm(g, epilogue, ctx, &algo, &why_not)) throw core::Error(core::Status::InternalError, why_not);
  const cublasLtHandle_t handle = lt_handle(ctx);
  const Call call = describe(g, epilogue);
  // Validation stores a zero beta as +0.0: cuBLASLt then never reads C.
  const float alpha = g.alpha, beta = g.beta;
  void* workspace = workspace_alloc(kWorkspaceBytes, ctx);
  const cublasStatus_t s =
      cublasLtMatmul(handle, call.desc.get(), &alpha, g.b, call.a.get(), g.a, call.b.get(), &beta, g.c, call.c.get(),
                     g.c, call.c.get(), &algo, workspace, kWorkspaceBytes, ctx.stream);
  GK_GPU_CHECK(cudaFreeAsync(workspace, ctx.stream));
  if (s != CUBLAS_STATUS_SUCCESS) fail("cublasLtMatmul", s);
}

}  // namespace gpukern::cuda::gemm
