// The CPU rungs, one file each (src/cpu/gemm/NN_name.cpp, src/cpu/softmax/NN_name.cpp).
// Every backend names its entry points the same way: in namespace <backend>::<op>,
// `<rung>_run` and, when the rung can decline a call, `<rung>_supports`.
// cpu_backend.cpp lists them in ladder order.
#pragma once

#include "cpu/cpu_context.hpp"

namespace gpukern::cpu {

namespace gemm {
void naive_run(const core::GemmArgs& args, const CpuContext& ctx);                   // gemm/01_naive.cpp
void omp_simd_run(const core::GemmArgs& args, const CpuContext& ctx);                // gemm/02_omp_simd.cpp
core::Verdict openblas_supports(const core::GemmArgs& args, const CpuContext& ctx);  // gemm/03_openblas.cpp
void openblas_run(const core::GemmArgs& args, const CpuContext& ctx);
core::Verdict openblas_gemv_supports(const core::GemmArgs& args, const CpuContext& ctx);  // gemm/03_openblas.cpp
void openblas_gemv_run(const core::GemmArgs& args, const CpuContext& ctx);
core::Verdict skinny_supports(const core::GemmArgs& args, const CpuContext& ctx);  // gemm/04_skinny.cpp
void skinny_run(const core::GemmArgs& args, const CpuContext& ctx);
}  // namespace gemm

namespace softmax {
void naive_run(const core::SoftmaxArgs& args, const CpuContext& ctx);     // softmax/01_naive.cpp
void omp_simd_run(const core::SoftmaxArgs& args, const CpuContext& ctx);  // softmax/02_omp_simd.cpp
}  // namespace softmax

/// C = beta * C over the m x n matrix C (beta == 0 writes zeros without reading C):
/// what every gemm rung does when k == 0.
void scale_c(const core::GemmArgs& args);

}  // namespace gpukern::cpu
