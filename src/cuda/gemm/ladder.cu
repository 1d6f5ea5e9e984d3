// The CUDA GEMM ladder: every rung in ladder order (naive first, the cuBLAS reference
// last) with its place in auto's order. This table is the dispatch.
#include "cuda/gemm/auto_table.hpp"
#include "cuda/gemm/simt_rows.cuh"
#include "cuda/gemm/tensor_core.cuh"

#include <algorithm>

namespace gpukern::cuda {
namespace {

using core::RungKind;
using namespace gemm;

/// wgmma_tma is level with cuBLAS or ahead for f16/bf16 (and tf32 with K-major A) once its
/// 128x256 tiles fill the SMs a few times over, and far ahead when a row pitch is not a
/// multiple of 16 bytes (cuBLAS then takes a slow path; wgmma_tma repacks). Small grids
/// stay with cuBLAS, which has smaller tiles; a batch's tiles count for all its items (one
/// launch runs them), but batches of small items stay with cuBLAS. The measured table
/// (auto_table.hpp) is consulted first; this is the policy for calls in none of its
/// entries. (Measurements: docs/notes/cuda-gemm.md, docs/notes/attention.md.)
bool wgmma_tma_first(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.type() == core::GemmType::F32) return exact_f32_on_wgmma(args);
  const std::size_t es = core::dtype_size(args.ab_type);
  const auto pitch_ok = [es](const void* p, int64_t ld) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * static_cast<int64_t>(es)) % 16 == 0;
  };
  const bool unaligned = !pitch_ok(args.a, args.lda) || !pitch_ok(args.b, args.ldb);
  // Batches of small items (k, m or n at most 128: attention's Q*K^T and P*V per head) stay
  // with cuBLAS's strided-batched kernels, ahead of wgmma_tma's in most cells of the
  // attention suite; the cells where an own rung is ahead are entries of the table.
  if (args.batched() && std::min(args.k, std::min(args.m, args.n)) <= 128) return unaligned;
  const int64_t tiles = core::ceil_div<int64_t>(args.m, 128) * core::ceil_div<int64_t>(args.n, 256) * args.batch;
  return unaligned || tiles >= 3 * static_cast<int64_t>(ctx.sm_count);
}

constexpr uint32_t kTF32 = core::kMaskTF32, kF16 = core::kMaskF16, kBF16 = core::kMaskBF16;
constexpr uint32_t kAll = kF32 | kTF32 | kF16 | kBF16;
constexpr core::ArchSupport kSm80 = {80, 0, nullptr, "sm_80"};
/// Rungs that run strided batches and the bias + activation epilogue in their own kernels.
constexpr uint32_t kFusesBatchEpilogue = core::kFuseBatch | core::kFuseEpilogue;

}  // namespace

// Auto: the measured table's entry first (auto_table.hpp); else wgmma_tma where its policy
// says (it declines off sm_90a; exact f32 runs its 3xTF32 kernel, exact_f32_on_wgmma), else
// cuBLAS, which accepts every valid call.
const GemmLadder& gemm_ladder() {
  static const GemmLadder table(
      {
          kNaiveRow,
          kCoalescedRow,
          kSmemTiledRow,
          kBlocktile1dRow,
          kBlocktile2dRow,
          kVectorizedRow,
          kRectTileRow,
          kWarptileRow,
          core::fusing(
              GemmRung{"double_buffer", "cp.async multi-stage pipeline, register double buffering, L2 block swizzle",
                       kF32, kSm80, RungKind::Ladder, double_buffer_supports, double_buffer_run, core::kNeverAuto},
              kFusesBatchEpilogue),
          {"wmma", "WMMA 16x16x16 tensor-core fragments, f32 accumulation", kF16 | kBF16, kSm80, RungKind::Ladder,
           wmma_supports, wmma_run, core::kNeverAuto},
          core::fusing(GemmRung{"mma_multistage",
                                "mma.sync + ldmatrix from swizzled shared memory, cp.async multi-stage pipeline",
                                kTF32 | kF16 | kBF16, kSm80, RungKind::Ladder, mma_multistage_supports,
                                mma_multistage_run, core::kNeverAuto},
                       kFusesBatchEpilogue),
          core::fusing(GemmRung{"skinny", "min(m, n) <= 64: weights streamed once, swap-AB mma.sync, split K", kAll,
                                kSm80, RungKind::Ladder, skinny_supports, skinny_run, core::kNeverAuto},
                       kFusesBatchEpilogue),
          // Runs strided batches (one launch, 3-D tensor maps) and the bias + activation
          // epilogue itself.
          core::fusing(GemmRung{"wgmma_tma",
                                "Hopper wgmma fed by TMA, warp-specialized persistent kernel",
                                kAll,
                                {90, 90, nullptr, "sm_90a"},
                                RungKind::Ladder,
                                wgmma_tma_supports,
                                wgmma_tma_run,
                                0,
                                wgmma_tma_first},
                       core::kFuseBatch | core::kFuseEpilogue),
          {"tcgen05",
           "Blackwell tcgen05.mma into tensor memory, TMA-fed, persistent",
           kTF32 | kF16 | kBF16,
           {100, 100, nullptr, "sm_100a"},
           RungKind::Experimental,
           tcgen05_supports,
           tcgen05_run,
           core::kNeverAuto},
          core::fusing(GemmRung{"cublas",
                                "cuBLAS cublasGemmEx_64 / cublasGemmStridedBatchedEx_64 (vendor reference)",
                                kAll,
                                {},
                                RungKind::Reference,
                                cublas_supports,
                                cublas_run,
                                1},
                       core::kFuseBatch),
          core::fusing(GemmRung{"cublaslt",
                                "cuBLASLt matmul with its bias/relu/gelu epilogues, strided batches (vendor reference)",
                                kAll,
                                {},
                                RungKind::Reference,
                                cublaslt_supports,
                                cublaslt_run,
                                core::kNeverAuto},
                       core::kFuseBatch | core::kFuseEpilogue),
      },
      gemm_auto_table());
  return table;
}

}  // namespace gpukern::cuda
