// Entry points of the tensor-core GEMM rungs (tensor_core/10_wmma.cu,
// 11_mma_multistage.cu, 12_wgmma_tma.cu, 13_tcgen05.cu). Every launcher takes a call
// the core has already validated; `<rung>_supports` accepts it or returns the typed
// reason the rung declines it (operand alignment, a layout it does not implement,
// resources), never a reason the core or the table already checks.
#pragma once

#include "cuda/context.cuh"

#include <string>

namespace gpukern::cuda::gemm {

/// `wmma`: f16/bf16 inputs, f32 accumulation through the portable WMMA API (sm_80+).
/// Takes every valid f16/bf16 call: any shape, either transpose, any alignment.
core::Verdict wmma_supports(const core::GemmArgs& args, const CudaContext& ctx);
void wmma_run(const core::GemmArgs& args, const CudaContext& ctx);

/// `mma_multistage`: mma.sync fed by ldmatrix from swizzled shared memory, filled by
/// a multi-stage cp.async pipeline (sm_80+); tf32, f16, bf16. Declines operands
/// whose rows are not 16-byte aligned (cp.async moves 16-byte chunks).
core::Verdict mma_multistage_supports(const core::GemmArgs& args, const CudaContext& ctx);
void mma_multistage_run(const core::GemmArgs& args, const CudaContext& ctx);

/// `wgmma_tma`: Hopper (sm_90a) warp-specialized persistent kernel, TMA loads and
/// wgmma. f16/bf16 in every transpose; tf32 with A not transposed (B K-major from
/// shared memory, or N-contiguous B through registers); exact f32 with A not transposed,
/// B either way (3xTF32, B through registers); declines transposed 32-bit A.
core::Verdict wgmma_tma_supports(const core::GemmArgs& args, const CudaContext& ctx);
void wgmma_tma_run(const core::GemmArgs& args, const CudaContext& ctx);

/// `tcgen05`: Blackwell datacenter (sm_100a) persistent kernel, TMA loads, tcgen05.mma
/// issued by one thread into a tensor-memory accumulator, tcgen05.ld epilogue. f16, bf16
/// and tf32 in every transpose. Compile-verified only: never run (no sm_100 GPU was
/// available); declines unless compute capability is 10.0 and the module holds sm_100a
/// code for it.
core::Verdict tcgen05_supports(const core::GemmArgs& args, const CudaContext& ctx);
void tcgen05_run(const core::GemmArgs& args, const CudaContext& ctx);

/// `skinny`: GEMM with min(m, n) <= kSkinnyMaxT (LLM decode: T tokens against a weight
/// matrix) that streams the long operand once at the memory-bandwidth limit: swap-AB
/// mma.sync (the weights as the m16 side), cp.async ring, split K inside and across blocks
/// (sm_80+). f16, bf16, tf32 and exact f32 (3xTF32), every transpose. Declines calls with
/// a longer short side (ShapeLimit) and operand rows not 16-byte aligned (Misaligned).
constexpr int64_t kSkinnyMaxT = 64;
core::Verdict skinny_supports(const core::GemmArgs& args, const CudaContext& ctx);
void skinny_run(const core::GemmArgs& args, const CudaContext& ctx);
/// True when min(m, n) <= kSkinnyMaxT: the shapes `skinny` is built for (its supports() check).
bool skinny_shape(const core::GemmArgs& args);

}  // namespace gpukern::cuda::gemm
