// Per-architecture tile configurations of the tuned GEMM rung (09 double_buffer).
//
// A config is a type whose static constexpr members are the tile shape, the
// pipeline depth and the occupancy target; the kernel is a template over it and checks
// its invariants with static_asserts. Each config says which device architectures it
// is compiled for (`compiled_for(__CUDA_ARCH__)`): its kernel body is emitted only in
// those device passes of the fat binary, and the launcher picks the config whose range
// contains the device's compute capability (never a kernel with an empty body).
//
// Every architecture gets a Large config (the throughput tile) and a Small one (a
// quarter of its area, for problems whose Large tiles would leave SMs idle, e.g.
// 1000^3 on 132 SMs).
#pragma once

#include "cuda/gemm/warp_tiling.cuh"

namespace gpukern::cuda::gemm {

template <int kWarpsM, int kWarpsN, int kThreadM, int kThreadN, int kBlockK_, int kStages_, int kMinBlocksPerSm_,
          int kArchLo, int kArchHi>
struct PipelineConfig {
  using Tiling = WarpTiling<kWarpsM, kWarpsN, kThreadM, kThreadN>;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kStages = kStages_;            // shared-memory stages in flight
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;  // __launch_bounds__: caps registers per thread
  static constexpr int kPad = 4;    // floats per shared row: 16-byte aligned rows, spread transposing stores
  static constexpr int kGroupM = 8;  // block swizzle: tile rows walked together (L2 reuse of B panels)
  static constexpr int kSmemBytes =
      kStages * kBlockK * ((Tiling::kBlockM + kPad) + (Tiling::kBlockN + kPad)) * static_cast<int>(sizeof(float));

  static_assert(kStages >= 2, "a pipeline needs at least two stages to overlap copy and compute");
  static_assert(kBlockK % 4 == 0, "the K step must be a multiple of 4");
  static_assert(kMinBlocksPerSm >= 1, "occupancy target must be at least one block per SM");

  /// True for the __CUDA_ARCH__ values this config is built for (0, the host pass, never).
  static constexpr bool compiled_for(int cuda_arch) { return cuda_arch >= kArchLo && cuda_arch <= kArchHi; }
};

// ---- Hopper (sm_90, sm_90a): 228 KB shared memory and 64K registers per SM ----
// Chosen from two sweeps of 13 shapes each on the H100 (scripts/cuda_gemm_device.sh,
// mode tune; 2026-11-21), in % of cuBLAS at 2048 / 4096 / 8192 / 4097x4095x4093:
//   128 x 256, 8 x 16 per thread, 3 stages, 1 block/SM   97.0 / 96.1 / 96.5 / 94.2
//   128 x 128, 8 x 8 per thread,  4 stages, 1 block/SM   92.6 / 90.7 / 91.7 / 91.7
//   256 x 128, 16 x 8 per thread, 3 stages, 1 block/SM   94.0 / 92.8 / 92.6 / 72.4
// Large: 128 x 256 tile, 8 warps of 32 x 128, 8 x 16 outputs per thread (225
// registers): per kk a lane reads 8 + 16 values for 128 FMAs (8 x 8: 16 for 64), so
// shared-memory traffic and non-FMA instructions per FMA drop by a third. 3 stages of
// K = 16 (75 KB), one block (8 warps) per SM.
// Small: 64 x 128 tile, 4 warps, three blocks per SM: for problems with too few Large
// tiles to cover the SMs (1000^3: 89.8% against 58% with the 128 x 128 tile).
namespace sm90 {
using DoubleBufferLarge = PipelineConfig<4, 2, 8, 16, 16, 3, 1, 900, 999>;
using DoubleBufferSmall = PipelineConfig<2, 2, 8, 8, 16, 4, 3, 900, 999>;
}  // namespace sm90

// ---- A100 (sm_80): 164 KB shared memory per SM ----
// (Not measured here: Hopper's shapes.)
namespace sm80 {
using DoubleBufferLarge = PipelineConfig<4, 2, 8, 16, 16, 3, 1, 800, 809>;
using DoubleBufferSmall = PipelineConfig<2, 2, 8, 8, 16, 3, 2, 800, 809>;
}  // namespace sm80

// ---- GeForce Ampere / Ada (sm_86, sm_89): ~100 KB shared memory per SM, 1536 threads ----
// K = 8 per stage keeps the stages (38 KB per 128 x 256 block) small next to the L1
// carve-out. (Not measured here.)
namespace sm86 {
using DoubleBufferLarge = PipelineConfig<4, 2, 8, 16, 8, 3, 1, 860, 899>;
using DoubleBufferSmall = PipelineConfig<2, 2, 8, 8, 8, 3, 2, 860, 899>;
}  // namespace sm86

// ---- consumer Blackwell (sm_120): ~100 KB shared memory per SM, like sm_86/89 ----
namespace sm120 {
using DoubleBufferLarge = PipelineConfig<4, 2, 8, 16, 8, 3, 1, 1200, 1299>;
using DoubleBufferSmall = PipelineConfig<2, 2, 8, 8, 8, 3, 2, 1200, 1299>;
}  // namespace sm120

/// One row of the table: the two configs of an architecture family.
template <class Large_, class Small_>
struct ArchConfigPair {
  using Large = Large_;
  using Small = Small_;
  static_assert(Large::compiled_for(0) == false && Small::compiled_for(0) == false,
                "a config must not claim the host pass");
};

/// Calls f(ArchConfigPair{}) for the first row compiled for `cuda_arch` (e.g. 900);
/// returns false when no row covers it.
template <class F, class Row, class... Rows>
bool with_arch_configs(int cuda_arch, F&& f) {
  if (Row::Large::compiled_for(cuda_arch) && Row::Small::compiled_for(cuda_arch)) {
    f(Row{});
    return true;
  }
  if constexpr (sizeof...(Rows) > 0) return with_arch_configs<F, Rows...>(cuda_arch, static_cast<F&&>(f));
  else return false;
}

/// The table the double_buffer rung dispatches through.
template <class F>
bool with_double_buffer_configs(int cuda_arch, F&& f) {
  return with_arch_configs<F, ArchConfigPair<sm90::DoubleBufferLarge, sm90::DoubleBufferSmall>,
                           ArchConfigPair<sm80::DoubleBufferLarge, sm80::DoubleBufferSmall>,
                           ArchConfigPair<sm86::DoubleBufferLarge, sm86::DoubleBufferSmall>,
                           ArchConfigPair<sm120::DoubleBufferLarge, sm120::DoubleBufferSmall>>(
      cuda_arch, static_cast<F&&>(f));
}

}  // namespace gpukern::cuda::gemm
