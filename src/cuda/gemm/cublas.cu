// Reference rung `cublas`: cuBLAS's cublasGemmEx_64 for every dtype (f32, tf32, f16, bf16;
// C in the input type or f32), and cublasGemmStridedBatchedEx_64 for strided batches (a
// batch stride of 0 broadcasts that operand; interleaved items of C are fine for cuBLAS).
// It is the yardstick of the ladder: the benchmark reports every rung as a percentage of
// it, measured in the same run. It has no epilogue: the core adds its separate pass.
//
// Row-major to column-major: cuBLAS sees our row-major C (m x n, ldc) as its
// column-major C^T (n x m, ldc), and C^T = op(B)^T * op(A)^T. Our row-major B (k x n
// stored, ldb) is, to cuBLAS, the column-major n x k matrix B^T, which is exactly
// op(B)^T when B is not transposed (CUBLAS_OP_N) and needs CUBLAS_OP_T when it is;
// likewise for A. So we call gemm(opB, opA, n, m, k, B, ldb, A, lda, C, ldc), through
// the 64-bit API so that no valid call is declined. Batch strides carry over unchanged
// (item b of our C is item b of cuBLAS's C^T).
#include "cuda/backend.cuh"
#include "cuda/gemm/cublas_common.cuh"
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {

core::Verdict cublas_supports(const core::GemmArgs&, const CudaContext&) {
  return {};  // the 64-bit API takes every valid call
}

void cublas_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const cublasOperation_t op_a = args.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = args.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // cuBLAS tests beta's bits (with -0.0 it reads C); validation stores any zero beta as
  // +0.0, so beta == 0 never reads C here either.
  const float alpha = args.alpha, beta = args.beta;
  // With k == 0 the operands are never read, but cuBLAS still wants ld >= 1.
  const auto ld = [](int64_t v) { return v < 1 ? int64_t(1) : v; };
  const cudaDataType_t ab_type = cuda_type(args.ab_type), c_type = cuda_type(args.c_type);
  with_cublas(ctx, [&](cublasHandle_t handle) {
    // 64-bit sizes: dimensions and leading dimensions beyond 2^31 - 1 are valid calls too.
    const cublasStatus_t s =
        args.batched() ? cublasGemmStridedBatchedEx_64(
                             handle, op_b, op_a, args.n, args.m, args.k, &alpha, args.b, ab_type, ld(args.ldb),
                             args.stride_b, args.a, ab_type, ld(args.lda), args.stride_a, &beta, args.c, c_type,
                             ld(args.ldc), args.stride_c, args.batch, compute_type(args), CUBLAS_GEMM_DEFAULT)
                       : cublasGemmEx_64(handle, op_b, op_a, args.n, args.m, args.k, &alpha, args.b, ab_type,
                                         ld(args.ldb), args.a, ab_type, ld(args.lda), &beta, args.c, c_type,
                                         ld(args.ldc), compute_type(args), CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      throw core::Error(s == CUBLAS_STATUS_NOT_SUPPORTED ? core::Status::Unsupported : core::Status::DeviceError,
                        std::string(args.batched() ? "cublasGemmStridedBatchedEx" : "cublasGemmEx") +
                            " failed: " + cublasGetStatusString(s));
  });
}

}  // namespace gpukern::cuda::gemm
