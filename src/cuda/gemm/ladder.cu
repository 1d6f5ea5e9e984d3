// The CUDA GEMM ladder: every rung in ladder order (naive first, the cuBLAS reference
// last) with its place in auto's order. This table is the dispatch.
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
/// launch runs them), but batches of small items stay with cuBLAS. (Measurements:
/// docs/notes/cuda-gemm.md, docs/notes/attention.md.)
bool wgmma_tma_first(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.type() == core::GemmType::F32) return false;
  const std::size_t es = core::dtype_size(args.ab_type);
  const auto pitch_ok = [es](const void* p, int64_t ld) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * static_cast<int64_t>(es)) % 16 == 0;
  };
  const bool unaligned = !pitch_ok(args.a, args.lda) || !pitch_ok(args.b, args.ldb);
  // Batches of small items (k, m or n at most 128: attention's Q*K^T and P*V per head) stay
  // with cuBLAS's strided-batched kernels, ahead of wgmma_tma's in 15 of the 16 bf16 cells
  // of the attention suite (docs/notes/attention.md).
  if (args.batched() && std::min(args.k, std::min(args.m, args.n)) <= 128) return unaligned;
  const int64_t tiles = core::ceil_div<int64_t>(args.m, 128) * core::ceil_div<int64_t>(args.n, 256) * args.batch;
  return unaligned || tiles >= 3 * static_cast<int64_t>(ctx.sm_count);
}

constexpr uint32_t kTF32 = core::kMaskTF32, kF16 = core::kMaskF16, kBF16 = core::kMaskBF16;
constexpr uint32_t kAll = kF32 | kTF32 | kF16 | kBF16;
constexpr core::ArchSupport kSm80 = {80, 0, nullptr, "sm_80"};
constexpr core::ArchSupport kH100 = {90, 90, nullptr, "sm_90 (measured on H100)"};
constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
/// Rungs that run strided batches and the bias + activation epilogue in their own kernels.
constexpr uint32_t kFusesBatchEpilogue = core::kFuseBatch | core::kFuseEpilogue;

}  // namespace

// Auto: the measured table's entry first (below the rows); else wgmma_tma where its policy
// says (it declines off sm_90a), else cuBLAS, which accepts every valid call; exact f32
// goes to cuBLAS outside the table (our best SIMT rung trails it).
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
                                kTF32 | kF16 | kBF16,
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
      // The measured auto table (H100, gpukern-bench --suite llm/square with cuBLAS in the
      // same run; docs/notes/cuda-gemm-llm.md gives the cells behind each entry). Calls in
      // no entry take the ranked order above.
      {
          // The 128256 x 4096 vocabulary projection: 128x256 tiles fill the SMs at every T
          // but 32..128 rows with N-contiguous weights, where cuBLAS stays 2-4% ahead.
          {"16-bit NN vocabulary, T 32..128",
           kF16 | kBF16,
           kH100,
           {32, 128},
           {65536, kAny},
           {},
           "cublas",
           core::kLayoutNN},
          {"16-bit vocabulary-wide", kF16 | kBF16, kH100, {}, {65536, kAny}, {}, "wgmma_tma"},
          // Decode against a linear layer's weight (B stored N x K): one pass over the weights.
          {"16-bit decode NT", kF16 | kBF16, kH100, {1, 8}, {}, {}, "skinny", core::kLayoutNT},
          // Exact f32 at a few tokens: the 3xTF32 split on tensor cores still reads W once,
          // where cuBLAS runs CUDA-core kernels.
          {"f32 decode", kF32, kH100, {2, 32}, {}, {}, "skinny"},
          // tf32 at a few tokens: cuBLAS (the C^T kernel's 256-row tiles waste most of a tile).
          {"tf32 decode", kTF32, kH100, {1, 16}, {}, {}, "cublas"},
          {"tf32 NN few rows", kTF32, kH100, {17, 64}, {}, {}, "cublas", core::kLayoutNN},
          // tf32 from 512 rows: N-contiguous B through the C^T kernel and its K split; K-major
          // B where the weights are long along K or wide.
          {"tf32 NN mid", kTF32, kH100, {512, kAny}, {1536, kAny}, {}, "wgmma_tma", core::kLayoutNN},
          {"tf32 NT long k", kTF32, kH100, {512, kAny}, {}, {8192, kAny}, "wgmma_tma", core::kLayoutNT},
          {"tf32 NT wide", kTF32, kH100, {512, kAny}, {8192, kAny}, {}, "wgmma_tma", core::kLayoutNT},
      });
  return table;
}

}  // namespace gpukern::cuda
