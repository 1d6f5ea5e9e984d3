// Reference rung `cublas`: cuBLAS's cublasGemmEx for every dtype (f32, tf32, f16, bf16;
// C in the input type or f32). It is the yardstick of the ladder: the benchmark
// reports every rung as a percentage of it, measured in the same run.
//
// Row-major to column-major: cuBLAS sees our row-major C (m x n, ldc) as its
// column-major C^T (n x m, ldc), and C^T = op(B)^T * op(A)^T. Our row-major B (k x n
// stored, ldb) is, to cuBLAS, the column-major n x k matrix B^T, which is exactly
// op(B)^T when B is not transposed (CUBLAS_OP_N) and needs CUBLAS_OP_T when it is;
// likewise for A. So we call gemm(opB, opA, n, m, k, B, ldb, A, lda, C, ldc).
#include "cuda/backend.cuh"
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

#include <limits>

namespace gpukern::cuda::gemm {
namespace {

cudaDataType_t cuda_type(core::DType t) {
  switch (t) {
    case core::DType::F16: return CUDA_R_16F;
    case core::DType::BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

/// f32 math everywhere; tf32 only when the call allows it (opt-in, as in cuBLAS).
cublasComputeType_t compute_type(const core::GemmArgs& args) {
  return args.type() == core::GemmType::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace

std::string cublas_supports(const core::GemmArgs& args, const CudaContext&) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (args.m > kMax || args.n > kMax || args.k > kMax || args.lda > kMax || args.ldb > kMax || args.ldc > kMax)
    return "a dimension or leading dimension exceeds cuBLAS's 32-bit int";
  return {};
}

void cublas_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.m == 0 || args.n == 0) return;
  const cublasOperation_t op_a = args.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = args.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float alpha = args.alpha, beta = args.beta;
  // With k == 0 the operands are never read, but cuBLAS still wants ld >= 1.
  const auto ld = [](int64_t v) { return static_cast<int>(v < 1 ? 1 : v); };
  with_cublas(ctx, [&](cublasHandle_t handle) {
    const cublasStatus_t s = cublasGemmEx(
        handle, op_b, op_a, static_cast<int>(args.n), static_cast<int>(args.m), static_cast<int>(args.k), &alpha,
        args.b, cuda_type(args.ab_type), ld(args.ldb), args.a, cuda_type(args.ab_type),
        ld(args.lda), &beta, args.c, cuda_type(args.c_type), ld(args.ldc),
        compute_type(args), CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      throw core::Error(s == CUBLAS_STATUS_NOT_SUPPORTED ? core::Status::Unsupported : core::Status::DeviceError,
                        std::string("cublasGemmEx failed: ") + cublasGetStatusString(s));
  });
}

}  // namespace gpukern::cuda::gemm
