// Entry points of the SIMT CUDA GEMM rungs (one file each in simt/) and the cuBLAS
// references (cublas.cu, cublaslt.cu); ladder.cu puts them into the table. The naming every backend
// uses: `<rung>_supports` (accepts, or a typed reason to decline a core-validated call)
// and `<rung>_run` (launches an accepted call on ctx.stream).
#pragma once

#include "cuda/context.cuh"

#include <string>

namespace gpukern::cuda::gemm {

#define GK_DECLARE_GEMM_RUNG(name)                                                   \
  core::Verdict name##_supports(const core::GemmArgs& args, const CudaContext& ctx); \
  void name##_run(const core::GemmArgs& args, const CudaContext& ctx)

GK_DECLARE_GEMM_RUNG(naive);          // simt/01_naive.cu
GK_DECLARE_GEMM_RUNG(coalesced);      // simt/02_coalesced.cu
GK_DECLARE_GEMM_RUNG(smem_tiled);     // simt/03_smem_tiled.cu
GK_DECLARE_GEMM_RUNG(blocktile_1d);   // simt/04_blocktile_1d.cu
GK_DECLARE_GEMM_RUNG(blocktile_2d);   // simt/05_blocktile_2d.cu
GK_DECLARE_GEMM_RUNG(vectorized);     // simt/06_vectorized.cu
GK_DECLARE_GEMM_RUNG(rect_tile);      // simt/07_rect_tile.cu
GK_DECLARE_GEMM_RUNG(warptile);       // simt/08_warptile.cu
GK_DECLARE_GEMM_RUNG(double_buffer);  // simt/09_double_buffer.cu
GK_DECLARE_GEMM_RUNG(cublas);         // cublas.cu (the reference)
GK_DECLARE_GEMM_RUNG(cublaslt);       // cublaslt.cu (the epilogue reference)

#undef GK_DECLARE_GEMM_RUNG

}  // namespace gpukern::cuda::gemm
