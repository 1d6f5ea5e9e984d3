// Rung 11 `mma_multistage`: mma.sync tensor-core GEMM for sm_80+ (Ampere, Ada, Hopper,
// consumer Blackwell); tf32 (f32 data with allow_tf32), f16, bf16; f32 accumulation.
//
// Change from 10 (wmma): the same tensor cores, driven the way the fastest Ampere
// kernels drive them, each change removing a stall that wmma leaves in:
//  * cp.async multi-stage pipeline: global -> shared copies bypass the registers and
//    run kStages - 1 K blocks ahead of the math, so memory latency hides behind MMAs
//    instead of behind a __syncthreads per step.
//  * Swizzled shared memory: each 16-byte chunk of a row is stored at chunk ^ (row % 8),
//    so the 8 rows one ldmatrix phase reads (and the rows cp.async writes) fall in 8
//    different bank groups with no padding (rows stay 128-byte multiples).
//  * ldmatrix: one instruction loads a warp's 16x16 fragment (4 8x8 matrices) where
//    WMMA's load emits several; ldmatrix.trans serves MN-major 16-bit operands.
//  * Double-buffered fragments: K step kk+1's fragments load while step kk's MMAs run.
//  * Larger warp tiles (64x32: 16 mma.m16n8 per 6 ldmatrix.x4 per K step, where wmma's
//    16x16 fragments need 2 loads per MMA) raise the math per byte of shared memory read.
//    On sm_90, problems the tiles divide exactly take 64x64 warp tiles (32 mma per 8
//    ldmatrix.x4: 0.031 shared bytes per flop against 0.047; at the rate Hopper's
//    tensor cores run mma.sync, 64x32 would need most of the SM's 128 shared bytes per
//    clock for ldmatrix alone, plus the cp.async fills) in a 256x128 block of 8 warps.
//  * Cheap copies: a block whose tile lies inside the matrix copies full K blocks from
//    one per-thread pointer stepped by fixed strides (2 instructions per cp.async);
//    copy_tile's bounds-checked form (~25 per cp.async) serves only edge blocks and
//    the last partial K block. Tile-divisible problems use a kernel without the
//    checked path at all (kChecked = false), which is what lets the 64x64 warp tile
//    fit in 255 registers without spills.
//  * Thread-block raster in L2 groups of kGroupM tile rows.
//  * Tile-divisible problems stage the f32 accumulators in the idle pipeline memory and
//    write each C row with full-width coalesced stores instead of 4-byte pieces.
// tf32 operands that are MN-major (ldmatrix cannot transpose 32-bit elements) are read
// with 32-bit shared loads from the same swizzled layout. Edges: cp.async with a
// smaller source size zero-fills the rest of a chunk, so any M, N, K works; rows must
// start 16-byte aligned (decline otherwise).
// Batches and the epilogue are fused: batch items run along grid dimension y (each block
// offsets its operands by its item's strides; a stride of 0 broadcasts), and a call with a
// bias or activation runs the kernel's kEpilogue instantiation, which applies
// act(alpha*acc + beta*C + bias) in f32 where C is written (the plain instantiation's code
// is unchanged). Batch strides must keep every item's rows 16-byte aligned.
// The kernel and its configuration template are in 11_mma_multistage.cuh, the tile
// configurations per architecture in cuda/gemm/configs/.
#include "cuda/gemm/configs/sm80.cuh"
#include "cuda/gemm/configs/sm86.cuh"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core/11_mma_multistage.cuh"

#include <algorithm>

namespace gpukern::cuda::gemm {
namespace {

// The configuration per architecture: sm_90 and sm_80 their own, every other one
// (sm_86, sm_89, sm_120, ...) the ~99 KB configuration.
using MmaConfigSm90 = MmaMultistageConfig<sm90::MmaMultistage>;
using MmaConfigSm90Wide = MmaMultistageConfig<sm90::MmaMultistageWide>;  // f16/bf16, tile-divisible
using MmaConfigSm80 = MmaMultistageConfig<sm80::MmaMultistage>;
using MmaConfigOther = MmaMultistageConfig<sm86::MmaMultistage>;

/// On sm_90, f16/bf16 problems the tiles divide exactly take the wide tile, without the
/// bounds-checked copy path; calls with an epilogue take the 128 x 128 tile (the wide
/// tile has no epilogue instantiation: its 64 x 64 warp tiles are the unit's costliest
/// kernels to compile).
template <class T>
void launch_mma_typed(const core::GemmArgs& args, const CudaContext& ctx) {
  if (ctx.arch.cc == 90) {
    if constexpr (sizeof(T) == 2)
      if (!args.has_epilogue() && tiles_exactly<MmaConfigSm90Wide, T>(args))
        return launch_mma_layout<MmaConfigSm90Wide, T, false, false>(args, ctx);
    launch_mma_layout<MmaConfigSm90, T>(args, ctx);
  } else if (ctx.arch.cc == 80) {
    launch_mma_layout<MmaConfigSm80, T>(args, ctx);
  } else {
    launch_mma_layout<MmaConfigOther, T>(args, ctx);
  }
}

std::size_t mma_smem_needed(int arch) {
  return arch == 90   ? std::max(MmaConfigSm90::kSmemBytes, MmaConfigSm90Wide::kSmemBytes)
         : arch == 80 ? MmaConfigSm80::kSmemBytes
                      : MmaConfigOther::kSmemBytes;
}

}  // namespace

core::Verdict mma_multistage_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.type() == core::GemmType::F32) return {core::Decline::Dtype, "f32 needs allow_tf32 (tensor cores)"};
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  const std::size_t elem = core::dtype_size(args.ab_type);
  for (auto v :
       {row_alignment_reason("A", args.a, args.lda, elem, 16), row_alignment_reason("B", args.b, args.ldb, elem, 16)})
    if (!v.accepted()) return {v.reason, v.detail + " (cp.async copies 16-byte chunks)"};
  for (auto v : {batch_stride_reason(args, "a", args.stride_a, elem, 16),
                 batch_stride_reason(args, "b", args.stride_b, elem, 16)})
    if (!v.accepted()) return {v.reason, v.detail + " (cp.async copies 16-byte chunks)"};
  if (ctx.smem_per_block_optin < mma_smem_needed(ctx.arch.cc))
    return {core::Decline::Resource,
            "needs " + std::to_string(mma_smem_needed(ctx.arch.cc) / 1024) + " KB of shared memory per block"};
  return {};
}

void mma_multistage_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx, epilogue_of(args), args.batch)) return;
  gpu::with_storage_type(args.ab_type, [&](auto t) { launch_mma_typed<decltype(t)>(args, ctx); });
}

}  // namespace gpukern::cuda::gemm
