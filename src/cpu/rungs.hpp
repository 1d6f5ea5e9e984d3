// The CPU rungs, one file each (src/cpu/gemm/NN_name.cpp, src/cpu/softmax/NN_name.cpp),
// all with the Rung signature; cpu_backend.cpp lists them in ladder order.
#pragma once

#include "cpu/cpu_context.hpp"

#include <string>

namespace gpukern::cpu {

// GEMM ladder
void gemm_naive(const core::GemmArgs& args, const CpuContext& ctx);     // gemm/01_naive.cpp
void gemm_omp_simd(const core::GemmArgs& args, const CpuContext& ctx);  // gemm/02_omp_simd.cpp
std::string gemm_openblas_supports(const core::GemmArgs& args, const CpuContext& ctx);
void gemm_openblas(const core::GemmArgs& args, const CpuContext& ctx);  // gemm/03_openblas.cpp

// softmax ladder
void softmax_naive(const core::SoftmaxArgs& args, const CpuContext& ctx);     // softmax/01_naive.cpp
void softmax_omp_simd(const core::SoftmaxArgs& args, const CpuContext& ctx);  // softmax/02_omp_simd.cpp

/// C = beta * C over the m x n matrix C (beta == 0 writes zeros without reading C):
/// what every gemm rung does when k == 0.
void scale_c(const core::GemmArgs& args);

}  // namespace gpukern::cpu
