// Entry points of the AMD-only GEMM rung (mfma.hip), for the HIP ladder table
// (src/hip/ladders.hip).
#pragma once

#include "cuda/context.cuh"

namespace gpukern::hip {

using cuda::CudaContext;

/// `mfma`: f16/bf16 inputs, f32 accumulation on the CDNA matrix cores (gfx90a, gfx940)
/// with v_mfma_f32_32x32x8 f16 / bf16_1k. Any shape (edge tiles predicated), either
/// transpose, any alignment; C in f32 or the input type.
core::Verdict mfma_supports(const core::GemmArgs& args, const CudaContext& ctx);
void mfma_run(const core::GemmArgs& args, const CudaContext& ctx);

/// Whether gfx target `gfx` (read as hex: gfx90a -> 0x90a) has matrix cores: CDNA
/// (gfx908, gfx90a, gfx94x) does, RDNA (gfx10xx, gfx11xx) does not.
bool has_matrix_cores(int gfx);

}  // namespace gpukern::hip
