// Rung 06 `vectorized`: 16-byte global loads, A transposed in shared memory, 16-byte
// shared loads of the register fragments.
//
// Change from 05: the tile copy reads float4s along the operand's contiguous storage
// (a quarter of the load instructions) and stores both tiles K-major: a_tile[kk][row],
// b_tile[kk][col]. With A transposed, a thread's 8 values of A for one kk are
// contiguous, so its fragments arrive in two 16-byte shared loads per operand instead
// of eight scalar ones (05 read A down a column: 8 loads, 2-way bank conflicts).
// Shared rows are padded by 4 floats so the transposing stores of a K-contiguous
// operand spread over the banks while each row stays 16-byte aligned.
// Declines when A or B is not 16-byte aligned or lda/ldb % 4 != 0 (the float4 loads
// need it); edge tiles read their partial groups element by element.
// The kernel (register_tile_kernel) is in 06_vectorized.cuh: rung 07 runs it too, with
// another tile shape.
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/simt/06_vectorized.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// 128 x 128 block tile, 8 x 8 outputs per thread (256 threads), K step 8, rows padded by
/// 4 floats (16-byte aligned, banks shifted by 4 per row). A type of its own (not an
/// alias) so the kernel's name says which rung it serves and it stays local to this file.
struct VectorizedConfig : RegisterTileConfig</*block_m=*/128, /*block_n=*/128, /*block_k=*/8, /*thread_m=*/8,
                                             /*thread_n=*/8, /*pad=*/4> {};

}  // namespace

core::Verdict vectorized_supports(const core::GemmArgs& args, const CudaContext&) {
  return register_tile_supports<VectorizedConfig>(args);
}

void vectorized_run(const core::GemmArgs& args, const CudaContext& ctx) {
  launch_register_tile<VectorizedConfig>(args, ctx);
}

}  // namespace gpukern::cuda::gemm
