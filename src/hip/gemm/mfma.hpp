// Entry points of the AMD-only GEMM rung (mfma.hip) and the HIP GEMM policy, for the
// shared ladder table (src/cuda/gemm/ladder.cu compiled by the HIP module).
#pragma once

#include "cuda/context.cuh"

#include <string>
#include <vector>

namespace gpukern::hip {

using cuda::CudaContext;

/// `mfma`: f16/bf16 inputs, f32 accumulation on the CDNA matrix cores (gfx90a, gfx940)
/// with v_mfma_f32_32x32x8 f16 / bf16_1k. Any shape (edge tiles predicated), either
/// transpose, any alignment; C in f32 or the input type. Declines devices without
/// matrix cores (RDNA: gfx1030).
std::string gemm_mfma_supports(const core::GemmArgs& args, const CudaContext& ctx);
void gemm_mfma(const core::GemmArgs& args, const CudaContext& ctx);

/// The rungs `auto` tries on HIP, fastest first (no vendor library to end the list).
std::vector<std::string> gemm_auto_order(const core::GemmArgs& args, const CudaContext& ctx);

}  // namespace gpukern::hip
