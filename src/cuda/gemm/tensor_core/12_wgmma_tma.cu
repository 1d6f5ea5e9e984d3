// Rung 12 `wgmma_tma`: Hopper (sm_90a) tensor-core GEMM. f16/bf16 in every transpose,
// tf32 with A not transposed (B either way); f32 accumulation.
//
// Change from 11 (mma_multistage): the three jobs that mma.sync kernels give every
// warp are split and handed to the hardware units built for them on Hopper.
//  * Loads: the tensor memory accelerator (TMA) copies each 64-row box of an operand
//    tile from global to shared memory in one instruction issued by one thread, in the
//    128-byte swizzled layout the tensor cores read without bank conflicts, zero-filling
//    whatever lies outside the matrix (odd shapes need no edge code). Completion is
//    counted in bytes on an mbarrier: no cp.async groups, no address arithmetic per thread.
//  * Math: wgmma (HGMMA in SASS) lets a warpgroup of 4 warps multiply a 64x256x16 block
//    straight out of shared memory, asynchronously, with the accumulators in registers;
//    no ldmatrix, no fragment registers. It reaches the H100's dense rate; mma.sync
//    reaches about two thirds of it.
//  * Warp specialization: one producer warpgroup (40 registers after setmaxnreg) only
//    issues TMA; two consumer warpgroups (232 registers) only issue wgmma, each owning
//    64x256 of the 128x256 block tile. A kStages-deep ring of shared-memory stages with
//    a "full" and an "empty" mbarrier per stage lets loads run ahead of the math
//    (wgmma_mainloop.cuh).
//  * Persistence: one CTA per SM loops over tiles in an L2-grouped order; the producer
//    starts the next tile's loads while the consumers run the epilogue of this one.
//    Odd rounds walk K backwards and odd raster groups backwards, so each round starts
//    on operand data the previous one left in L2 (wgmma_schedule.cuh).
//  * Epilogue through TMA stores (beta == 0, 16-byte-addressable C rows): each consumer
//    writes its scaled accumulators into swizzled shared-memory boxes and one thread
//    hands them to a TMA store, which drains to global memory while the consumers
//    already run the next tile's wgmmas; stores from the registers (scattered 4-byte
//    writes, for beta != 0 and unaligned C) keep the tensor cores waiting
//    (wgmma_epilogue.cuh).
//  * Clusters of 2 CTAs along M share the B tile, each loading half and TMA-multicasting
//    it to both: a third less L2 traffic, which under the H100's power cap is clock.
// Operands that TMA cannot address (base or row pitch not a multiple of 16 bytes,
// e.g. packed odd K) are first repacked into a 16-byte-pitched workspace by one
// memory-bound pass, then run the same way.
//
// tf32 with N-contiguous B (NN, the common layout): wgmma reads 32-bit operands from
// shared memory K-major only, so wgmma_tf32_nn_kernel computes C^T = B^T A^T with B^T
// fed from registers (see there). It runs without clusters; there the last, partial
// round of tiles is split along K between its CTAs and the idle ones when the cost
// model says that pays (wgmma_schedule.cuh).
//
// The kernels and their launchers are in 12_wgmma_tma.cuh, the configurations in
// cuda/gemm/configs/sm90.cuh.
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

namespace gpukern::cuda::gemm {
namespace {

using TmaConfig = WgmmaConfig<sm90::WgmmaTma>;
using TmaTf32NNConfig = WgmmaConfig<sm90::WgmmaTf32NN>;

/// Whether this module holds sm_90a machine code for the kernels (a build without the
/// 90a target would run an empty body on an H100).
/// Looked up once: the module's machine code does not change (supports() runs per call).
bool built_for_sm90a() {
  static const bool built = kernel_built_for(wgmma_tma_kernel<TmaConfig, gpu::bf16_t, true, false, void>, 90);
  return built;
}

}  // namespace

core::Verdict wgmma_tma_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  switch (args.type()) {
    case core::GemmType::F16:
    case core::GemmType::BF16:
      break;
    case core::GemmType::TF32:
      // wgmma reads 32-bit operands from shared memory K-major only; N-contiguous B goes
      // through registers instead (wgmma_tf32_nn_kernel). Both MN-major: no path.
      if (args.trans_a)
        return {core::Decline::Layout, "tf32 needs A not transposed (K-major): wgmma has no 32-bit transpose"};
      break;
    default:
      return {core::Decline::Dtype, "f32 needs allow_tf32 (tensor cores)"};
  }
  return tma_rung_reason(ctx, TmaConfig::kSmemBytes, built_for_sm90a(), "sm_90a");
}

void wgmma_tma_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx)) return;
  if (args.type() == core::GemmType::TF32 && !b_is_k_major(args))
    launch_wgmma_tf32_nn<TmaTf32NNConfig>(args, ctx);
  else
    launch_wgmma<TmaConfig>(args, ctx);
}

}  // namespace gpukern::cuda::gemm
