// What the two vendor references (cublas.cu: cuBLAS, cublaslt.cu: cuBLASLt) share: the
// cuBLAS names of a call's types and arithmetic.
#pragma once

#include "core/types.hpp"

#include <cublas_api.h>
#include <library_types.h>

namespace gpukern::cuda::gemm {

inline cudaDataType_t cuda_type(core::DType t) {
  switch (t) {
    case core::DType::F16:
      return CUDA_R_16F;
    case core::DType::BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

/// f32 math everywhere; tf32 only when the call allows it (opt-in, as in cuBLAS).
inline cublasComputeType_t compute_type(const core::GemmArgs& args) {
  return args.type() == core::GemmType::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace gpukern::cuda::gemm
