// Rung 09 `double_buffer`: a cp.async multi-stage pipeline feeding the warp-tiled
// micro-kernel of 08, with register double buffering, a larger per-thread tile and an
// L2-aware block order. The kernel is in 09_double_buffer.cuh, the tile configurations
// per architecture in cuda/gemm/configs/ (two per architecture: Large, the throughput
// tile, and Small, a quarter of its area for problems whose Large tiles would leave SMs
// idle in their last round).
//
// Change from 08. In 08 every K step was copy -> barrier -> compute -> barrier: while
// a block's warps wait on global memory no FMA issues, and the loads pass through
// registers. Here the copies are cp.async (sm_80+): global -> shared without registers,
// kStages - 1 K tiles in flight ahead of the one being computed, one barrier per K
// step. Global latency hides behind the FMAs of earlier tiles instead of behind other
// blocks, so one block of 8 warps per SM suffices and each thread may hold 8 x 16
// outputs (128 x 256 block tile, 225 registers): per kk a lane reads 24 values for 128
// FMAs (08: 16 for 64), a third less shared traffic and overhead per FMA. The
// fragments of kk + 1 load while kk's FMAs issue, across the tile boundary too (the
// barrier sits before the last kk, so the next tile's first loads overlap this tile's
// last FMAs). Blocks are numbered in groups of 8 tile rows so that the blocks resident
// together share A and B panels in L2. Problems whose 128 x 256 tiles would leave SMs
// idle or whose last round of them is mostly empty (1000^3, 3000^3) use a 64 x 128 tile.
// Any alignment and leading dimension is accepted: K-contiguous operands are copied
// 4 bytes at a time (and transposed into the K-major stage), MN-contiguous ones 16
// bytes at a time when aligned; out-of-range elements are zero-filled by the copy, so
// edge tiles need no separate path.
// Batches and the epilogue are fused: batch items run along grid dimension y (each block
// offsets A, B and C by its item's strides; stride 0 broadcasts an operand), and a call
// with a bias or activation runs the kernel's kEpilogue instantiation, which applies
// act(alpha*acc + beta*C + bias) in f32 where C is written; the plain one is unchanged.
#include "cuda/gemm/configs/sm120.cuh"
#include "cuda/gemm/configs/sm80.cuh"
#include "cuda/gemm/configs/sm86.cuh"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/simt/09_double_buffer.cuh"
#include "cuda/measurement_knob.hpp"

#include <limits>
#include <string>

namespace gpukern::cuda::gemm {
namespace {

/// One row of the table: the two configs of an architecture family.
template <class LargeTile, class SmallTile>
struct ArchConfigPair {
  using Large = PipelineConfig<LargeTile>;
  using Small = PipelineConfig<SmallTile>;
};

/// Calls f(ArchConfigPair{}) for the first row compiled for `cuda_arch` (e.g. 900);
/// returns false when no row covers it.
template <class F, class Row, class... Rows>
bool with_arch_configs(int cuda_arch, F&& f) {
  if (Row::Large::compiled_for(cuda_arch) && Row::Small::compiled_for(cuda_arch)) {
    f(Row{});
    return true;
  }
  if constexpr (sizeof...(Rows) > 0)
    return with_arch_configs<F, Rows...>(cuda_arch, static_cast<F&&>(f));
  else
    return false;
}

/// The table the rung dispatches through, one row per architecture.
template <class F>
bool with_double_buffer_configs(int cuda_arch, F&& f) {
  return with_arch_configs<F, ArchConfigPair<sm90::DoubleBufferLarge, sm90::DoubleBufferSmall>,
                           ArchConfigPair<sm80::DoubleBufferLarge, sm80::DoubleBufferSmall>,
                           ArchConfigPair<sm86::DoubleBufferLarge, sm86::DoubleBufferSmall>,
                           ArchConfigPair<sm120::DoubleBufferLarge, sm120::DoubleBufferSmall>>(cuda_arch,
                                                                                               static_cast<F&&>(f));
}

}  // namespace

core::Verdict double_buffer_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  core::Verdict why;
  const bool known = with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Small = typename decltype(row)::Small;
    const int64_t blocks =
        ceil_div<int64_t>(args.m, Small::Tiling::kBlockM) * ceil_div<int64_t>(args.n, Small::Tiling::kBlockN);
    if (blocks > std::numeric_limits<int>::max())
      why = {core::Decline::ShapeLimit, "the problem needs more thread blocks than one launch allows"};
  });
  if (!known) return {core::Decline::WrongArch, "no tile configuration for sm_" + std::to_string(ctx.arch.cc)};
  return why;
}

namespace {

/// GPUKERN_DOUBLE_BUFFER_TILE=large|small forces the tile, for measurement: read once per
/// process; any other value fails the call naming the variable. A call with an epilogue
/// runs Large whatever is forced (Small has no epilogue kernel).
enum class ForcedTile { None, Large, Small };
ForcedTile forced_tile() {
  static const std::string value = knob_value("GPUKERN_DOUBLE_BUFFER_TILE");
  return static_cast<ForcedTile>(knob_choice("GPUKERN_DOUBLE_BUFFER_TILE", value, {"large", "small"}));
}

}  // namespace

bool double_buffer_takes_large(const core::GemmArgs& args, const CudaContext& ctx) {
  const ForcedTile forced = forced_tile();
  if (epilogue_of(args).active()) return true;  // Small has no epilogue kernel (compile time)
  if (forced != ForcedTile::None) return forced == ForcedTile::Large;
  bool large = true;
  with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Large = typename decltype(row)::Large;
    const int64_t tiles = ceil_div<int64_t>(args.m, Large::Tiling::kBlockM) *
                          ceil_div<int64_t>(args.n, Large::Tiling::kBlockN) * args.batch;
    // Large tiles (one block an SM) where they fill nine tenths or more of the SM slots of
    // the rounds they take; else the Small tile, a quarter of the area at three blocks an
    // SM, whose last round leaves less idle (each forced on the H200: notes/cuda-gemm.md,
    // "double_buffer's tile and its last round").
    const int64_t sms = ctx.sm_count, rounds = ceil_div<int64_t>(tiles, sms);
    large = tiles * 10 >= rounds * sms * 9;
  });
  return large;
}

void double_buffer_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  const bool large = double_buffer_takes_large(args, ctx);
  with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Large = typename decltype(row)::Large;
    using Small = typename decltype(row)::Small;
    const Epilogue epi = epilogue_of(args);
    if (large)
      launch_double_buffer<Large>(p, ctx.stream, ctx.device, args.batch, batch_strides_of(args), epi);
    else
      launch_double_buffer<Small, false>(p, ctx.stream, ctx.device, args.batch, batch_strides_of(args), epi);
  });
}

}  // namespace gpukern::cuda::gemm
