// Rung 09 `double_buffer`: a cp.async multi-stage pipeline feeding the warp-tiled
// micro-kernel of 08, with register double buffering, a larger per-thread tile and an
// L2-aware block order. The kernel is in 09_double_buffer.cuh, the tile configurations
// per architecture in cuda/gemm/configs/ (three per architecture: Large, the throughput
// tile; Small, a quarter of its area for problems whose Large tiles would leave SMs idle
// in their last round; Tiny, 16 x 32 with each stage's K steps split over four warps, for
// problems whose Small tiles would leave more than a quarter of the SMs idle).
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
// Problems of a few of those (128^3-768^3) take a 16 x 32 tile whose four warps each take
// every fourth K step of a stage and add their sums through shared memory at the end: the
// call's time is one block's K loop, and the split makes it four times shorter while the
// tiles spread over the SMs.
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

/// One row of the table: the three configs of an architecture family.
template <class LargeTile, class SmallTile, class TinyTile>
struct ArchConfigs {
  using Large = PipelineConfig<LargeTile>;
  using Small = PipelineConfig<SmallTile>;
  using Tiny = PipelineConfig<TinyTile>;
};

/// Calls f(ArchConfigs{}) for the first row compiled for `cuda_arch` (e.g. 900);
/// returns false when no row covers it.
template <class F, class Row, class... Rows>
bool with_arch_configs(int cuda_arch, F&& f) {
  if (Row::Large::compiled_for(cuda_arch) && Row::Small::compiled_for(cuda_arch) &&
      Row::Tiny::compiled_for(cuda_arch)) {
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
  return with_arch_configs<F, ArchConfigs<sm90::DoubleBufferLarge, sm90::DoubleBufferSmall, sm90::DoubleBufferTiny>,
                           ArchConfigs<sm80::DoubleBufferLarge, sm80::DoubleBufferSmall, sm80::DoubleBufferTiny>,
                           ArchConfigs<sm86::DoubleBufferLarge, sm86::DoubleBufferSmall, sm86::DoubleBufferTiny>,
                           ArchConfigs<sm120::DoubleBufferLarge, sm120::DoubleBufferSmall, sm120::DoubleBufferTiny>>(
      cuda_arch, static_cast<F&&>(f));
}

}  // namespace

core::Verdict double_buffer_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  core::Verdict why;
  const bool known = with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Tiny = typename decltype(row)::Tiny;  // the smallest tile: the most blocks
    const int64_t blocks =
        ceil_div<int64_t>(args.m, Tiny::Tiling::kBlockM) * ceil_div<int64_t>(args.n, Tiny::Tiling::kBlockN);
    if (blocks > std::numeric_limits<int>::max())
      why = {core::Decline::ShapeLimit, "the problem needs more thread blocks than one launch allows"};
  });
  if (!known) return {core::Decline::WrongArch, "no tile configuration for sm_" + std::to_string(ctx.arch.cc)};
  return why;
}

namespace {

/// GPUKERN_DOUBLE_BUFFER_TILE=large|small|tiny forces the tile, for measurement: read once
/// per process; any other value fails the call naming the variable. A call with an
/// epilogue forced to Small runs Large (Small has no epilogue kernel).
DoubleBufferTile forced_tile() {
  static const std::string value = knob_value("GPUKERN_DOUBLE_BUFFER_TILE");
  const int choice = knob_choice("GPUKERN_DOUBLE_BUFFER_TILE", value, {"large", "small", "tiny"});
  return choice == 0 ? DoubleBufferTile::Auto : static_cast<DoubleBufferTile>(choice);
}

}  // namespace

DoubleBufferTile double_buffer_tile(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool epilogue = epilogue_of(args).active();
  const auto small_or_large = [epilogue] { return epilogue ? DoubleBufferTile::Large : DoubleBufferTile::Small; };
  if (const DoubleBufferTile forced = forced_tile(); forced != DoubleBufferTile::Auto)
    return forced == DoubleBufferTile::Small ? small_or_large() : forced;
  DoubleBufferTile tile = DoubleBufferTile::Large;
  with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Large = typename decltype(row)::Large;
    using Small = typename decltype(row)::Small;
    const auto tiles = [&](auto cfg) {
      using Cfg = decltype(cfg);
      return ceil_div<int64_t>(args.m, Cfg::Tiling::kBlockM) * ceil_div<int64_t>(args.n, Cfg::Tiling::kBlockN) *
             args.batch;
    };
    // Large tiles (one block an SM) where they fill nine tenths or more of the SM slots of
    // the rounds they take; else the Small tile, a quarter of the area at three blocks an
    // SM, whose last round leaves less idle (each forced on the H200: notes/cuda-gemm.md,
    // "double_buffer's tile and its last round"); where the Small tiles would leave more
    // than a quarter of the SMs idle, the Tiny tile, whose K groups give its few outputs a
    // K loop a quarter as long; its low reuse loses once the Small tiles nearly fill the
    // SMs (each forced on the H200 at 128^3-2048^3: notes/cuda-gemm.md, "double_buffer's
    // tiny tile").
    const int64_t sms = ctx.sm_count, large = tiles(Large{}), rounds = ceil_div<int64_t>(large, sms);
    if (large * 10 >= rounds * sms * 9)
      tile = DoubleBufferTile::Large;
    else if (tiles(Small{}) * 4 < sms * 3)
      tile = DoubleBufferTile::Tiny;
    else
      tile = small_or_large();
  });
  return tile;
}

void double_buffer_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  const DoubleBufferTile tile = double_buffer_tile(args, ctx);
  with_double_buffer_configs(ctx.arch.cc * 10, [&](auto row) {
    using Large = typename decltype(row)::Large;
    using Small = typename decltype(row)::Small;
    using Tiny = typename decltype(row)::Tiny;
    const Epilogue epi = epilogue_of(args);
    const BatchStrides strides = batch_strides_of(args);
    switch (tile) {
      case DoubleBufferTile::Tiny:
        launch_double_buffer<Tiny>(p, ctx.stream, ctx.device, args.batch, strides, epi, dependent_launch(ctx));
        break;
      case DoubleBufferTile::Small:
        launch_double_buffer<Small, false>(p, ctx.stream, ctx.device, args.batch, strides, epi, dependent_launch(ctx));
        break;
      default:
        launch_double_buffer<Large>(p, ctx.stream, ctx.device, args.batch, strides, epi, dependent_launch(ctx));
    }
  });
}

}  // namespace gpukern::cuda::gemm
