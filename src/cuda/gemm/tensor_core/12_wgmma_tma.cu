// Rung 12 `wgmma_tma`: Hopper (sm_90a) tensor-core GEMM. f16/bf16 in every transpose,
// tf32 and exact f32 (3xTF32) with A not transposed (B either way); f32 accumulation.
//
// Change from 11 (mma_multistage): the three jobs that mma.sync kernels give every
// warp are split and handed to the hardware units built for them on Hopper.
//  * Loads: the tensor memory accelerator (TMA) copies an operand tile from global to
//    shared memory in one instruction issued by one thread (a K-major operand's rows in
//    one copy, up to 256 of them; an MN-major one a copy per 64-element box), in the
//    128-byte swizzled layout the tensor cores read without bank conflicts, zero-filling
//    whatever lies outside the matrix (odd shapes need no edge code). Completion is
//    counted in bytes on an mbarrier: no cp.async groups, no address arithmetic per thread.
//    One copy of a K-major tile's rows lands sooner than a copy per 64-row box
//    (notes/llm-gemm.md, "One TMA copy a stage").
//  * Math: wgmma (HGMMA in SASS) lets a warpgroup of 4 warps multiply a 64x256x16 block
//    straight out of shared memory, asynchronously, with the accumulators in registers;
//    no ldmatrix, no fragment registers. It reaches the H100's dense rate; mma.sync
//    reaches about two thirds of it.
//  * Warp specialization: one producer warpgroup (40 registers after setmaxnreg) only
//    issues TMA, from one converged warp (one lane issues): its loop state stays in
//    uniform registers, and a stage costs a few dozen scalar instructions, fast enough
//    for the 128x128 and 64-row tiles' stages; two consumer warpgroups (232 registers)
//    only issue wgmma, each owning 64x256 of the 128x256 block tile. A kStages-deep
//    ring of shared-memory stages with
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
//  * L2 policies: operand tiles load evict-last (the other tiles of their row or column
//    read them again) and C stores evict-first; an operand that one or two tiles read in
//    quick succession (the weight of a call of one or two cluster tile rows, attention's
//    P in P V) loads evict-first, so it does not displace the operand that is read again
//    (mark_read_once).
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
// Exact f32 (allow_tf32 off) runs the same C^T kernel in 3xTF32, with B either way: each
// operand is split into a rounded tf32 part and its rest, and three tf32 products
// per K step (small * big, big * small, big * big) carry f32 accuracy at the tensor cores'
// tf32 rate, a third of it in all: several times what f32 FMAs on the CUDA cores reach.
// The B^T fragments are split in registers, A's stage in shared memory by the producer
// warpgroup's idle warps; each stage's products are summed apart and added in f32 (the
// kernel says why). Its tiles are 128 or 64 rows of C by 128 columns (a second set of
// accumulators does not fit beside the 256-row tile's), chosen by the C^T kernel's cost
// model with the exact tiles' costs.
//
// Tile configurations by shape (choose_wgmma_config below; the kernel is the same, the
// tile a field of its configuration). Few tiles leave SMs idle: 512 x 4096 has 64
// tiles of 128x256 for 132 SMs. Where tiles are fewer than the SMs, every tile's K is
// split in `ways` ranges run by different CTAs, the last to finish adding the others'
// parked partial sums (wgmma_schedule.cuh): 512 x 4096 x 4096 runs 128x256 tiles split
// in 2 on 128 SMs. The 128x256 tile reads the fewest shared-memory bytes per flop, so
// it runs wherever its 2-CTA clusters, split if need be, fill the SMs; otherwise
// 128x128 (1000^3: 64 tiles), in clusters of 2 sharing B where its tile rows are even
// and fill half the SMs or more. At most 64 rows take 64x128 (one consumer warpgroup);
// 65..128 rows 64x64 tiles in clusters of 2 sharing B where those fit one wave (the
// two tile rows; one cluster a 64-column slab of B over the whole K fills the SMs
// without a split at N = 4096), else 128x128. Small calls (K of at most 16 blocks) whose
// 64x128 tiles fit one wave take 64x128 at any row count. Narrow calls over a
// long K (attention's P V, n = d) take 128x128 tiles in clusters of 2 that share B, or
// 128x64 tiles (in clusters of 2 where the tile rows pair up) at n <= 64, where a
// 128-wide tile would compute and stage half padding;
// calls whose K is two blocks (Q K^T at d = 128) a 128x256 configuration with 4 C
// staging rounds in flight, since storing C takes longer than the math.
//
// Small calls (K of at most 16 blocks) whose 64-row tiles fill one wave take 64x128 where
// the rows of A and B start 128-byte lines, else 64x128 tiles in clusters of 2 sharing B.
// Single 16-bit calls whose 128x192 clusters fill the rounds of the SMs better than
// 128x256 ones (1536^3, 3072^3, 256 x 11008) take 128x192 tiles in clusters of 2, and
// after them those whose 192x192 clusters do (3000^3) 192x192 tiles in clusters of 2,
// three consumer warpgroups of m64n192 each. On a device of 4000 GB/s or more (the H200;
// DeviceArch::mem_gbps), 128 or 256 rows whose 128x64 tiles fill one wave take those over
// the whole K (256 x 4096 x 4096, 128 x 4096 over a long K split in 2), at most 64 rows
// and 128 rows over K of 64 blocks 64x64 tiles over the whole K where they fill a third
// of the SMs or more in one wave, other 65..128 rows over a long K 128x128
// tiles split in 2 or 3, calls whose 128x256 clusters would need a K split 128x128 tiles
// in clusters of 2 where those fill one wave (256 and 512 x 4096 over a long K), and
// batches of two-K-block tiles the 128x256 clusters with their tiles claimed at run time
// instead of the store-bound configuration.
//
// tf32 with K-major B over more than 128 rows and a K no longer than M or N takes the
// smallest of 64x64, 128x64, 128x128 and 128x192 in clusters of 2 whose CTAs fit one
// wave (tf32_wave_tile): a tf32 K block is half a 16-bit one's K, and the rules above,
// counted in K blocks, would give such calls tiles too large to fill the SMs.
//
// Strided batches run in one launch: the persistent schedule walks tiles x items, each
// operand a 3-D tensor map with the batch stride as its third dimension (stride 0: one
// item, read by all); wgmma_batch.cuh says why. Batched operands TMA cannot address
// (base, pitch or batch stride not a multiple of 16 bytes) are declined (Misaligned):
// the repack pass serves unbatched calls only. The configuration choice counts the
// tiles of all items, so many small items (attention: 1024 heads of S x S x 64) fill the
// SMs without a K split. A batch of one-K-block tiles over many rounds (Q K^T at d = 64)
// claims its tiles at run time (wgmma_claims_tiles says why).
//
// The fused epilogue (bias over N, activation) is applied to the accumulators where
// they leave for C, in f32 before the single rounding: on both store paths, after the
// split-K fixup (the last CTA of a split tile holds the whole sum); wgmma_epilogue.cuh.
// The K = 0 call (C = act(beta C + bias)) and the tf32 NN (C^T) kernel, whose registers
// are full, use the module's epilogue pass (epilogue_pass.cu; the tf32 NN C is f32, so
// it is still rounded once).
//
// GPUKERN_WGMMA_CONFIG=<name> forces a configuration, for tests and measurement: read
// once per process; names "128x256c2", "128x128", "64x128", "tf32nn" (tf32 with
// N-contiguous B), "tf32nn128" and "tf32nn64" (the same on 128 x 128 and 64 x 128 tiles
// of C), "f32nn128" and "f32nn64" (exact f32 on the C^T kernel's 128 x 128 and 64 x 128
// tiles), "128x256store" (16-bit C stored by TMA; other calls run 128x256c2), "128x128c2"
// (128x128 in clusters of 2), "128x64" (64-wide tiles), "64x64c2" (64x64 in clusters of
// 2), "64x128c2" (64x128 in clusters of 2), "128x64c2" (128x64 in clusters of 2),
// "128x192c2" (128x192 in clusters of 2), "192x192c2" (192x192 in clusters of 2, three
// consumers), "192x96c2" (192x96 in clusters of 2, three consumers), "192x96kc2" (the
// same loading only the tile's rows of B; 16-bit calls with K-major B, others run
// 192x96c2), "128x168c2" (128x168 in clusters of 2; 16-bit calls with K-major B, others
// run 128x256c2), "64x32" (16-bit calls with K-major B, others run 64x128), "64x64"
// (64x64, no cluster), each optionally followed by " splitkN" (N = 1..16; '-', ':' or '/'
// also separate it), e.g. "128x128 splitk4". A forced tile applies to the calls its
// kernel runs (tf32nn, tf32nn128, tf32nn64 to tf32 with N-contiguous B, f32nn128 and
// f32nn64 to exact f32, the others to every other call); other calls keep the table's
// choice. A malformed value fails the
// call naming the variable. GPUKERN_WGMMA_SCHEDULE=static|claimed overrides where tiles
// are claimed at run time (wgmma_claims_tiles), likewise. GPUKERN_LOG=debug prints each
// call's configuration and the reason, and each launch that claims its tiles.
//
// The kernels and their launchers are in 12_wgmma_tma.cuh, the configurations in
// cuda/gemm/configs/sm90.cuh.
#include "cuda/gemm/bandwidth_class.hpp"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"
#include "cuda/measurement_knob.hpp"

#include "core/log.hpp"

#include <cstdlib>
#include <limits>

namespace gpukern::cuda::gemm {
namespace {

using TmaConfig = WgmmaConfig<sm90::WgmmaTma>;

/// Whether this module holds sm_90a machine code for the kernels (a build without the
/// 90a target would run an empty body on an H100).
/// Looked up once: the module's machine code does not change (supports() runs per call).
bool built_for_sm90a() {
  static const bool built = kernel_built_for(wgmma_tma_kernel<TmaConfig, gpu::bf16_t, true, false, void>, 90);
  return built;
}

/// The large tile's launcher.
void launch_wgmma_large(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  launch_wgmma<TmaConfig>(args, ctx, ways);
}

/// tf32 with N-contiguous B: the C^T kernel's tf32 calls.
bool is_tf32_nn(const core::GemmArgs& args) { return args.type() == core::GemmType::TF32 && !b_is_k_major(args); }
/// Exact f32: the C^T kernel's 3xTF32 calls (B either way).
bool is_exact_f32(const core::GemmArgs& args) { return args.type() == core::GemmType::F32; }

using TileLauncher = void (*)(const core::GemmArgs&, const CudaContext&, int ways);
/// The launcher of a configuration whose kernels take only the calls `kFits` accepts
/// (kTile), the others (a forced name meets every call) in `kOther`: the store-bound
/// configuration (16-bit C stored by TMA) and the large tile, the tiles of part boxes of
/// B (16-bit, K-major B) and the large or the 64x128 tile, the C^T kernel's tiles (tf32
/// with N-contiguous B) and the large tile.
template <bool (*kFits)(const core::GemmArgs&), TileLauncher kTile, TileLauncher kOther>
void launch_where_fits(const core::GemmArgs& args, const CudaContext& ctx, int ways) {
  (kFits(args) ? kTile : kOther)(args, ctx, ways);
}

/// A configuration as the rung's host code sees it: its cluster tile (rows kBlockM x
/// kClusterM, columns, CTAs), the shared memory a block asks for, its launcher.
struct TileEntry {
  WgmmaTile tile;
  const char* name;  // what GPUKERN_WGMMA_CONFIG accepts
  int rows, cols, ctas, smem_bytes;
  void (*launch)(const core::GemmArgs&, const CudaContext&, int ways);
};
template <class Tile>
constexpr TileEntry entry(WgmmaTile tile, const char* name,
                          void (*launch)(const core::GemmArgs&, const CudaContext&, int)) {
  using C = WgmmaConfig<Tile>;
  return {tile, name, C::kBlockM * C::kClusterM, C::kBlockN, C::kClusterM, C::kSmemBytes, launch};
}
/// Every configuration the rung ships.
constexpr TileEntry kTiles[] = {
    entry<sm90::WgmmaTma>(WgmmaTile::Large, "128x256c2", launch_wgmma_large),
    entry<sm90::WgmmaTmaMid>(WgmmaTile::Mid, "128x128", launch_wgmma_mid),
    entry<sm90::WgmmaTmaShort>(WgmmaTile::Short, "64x128", launch_wgmma_short),
    entry<sm90::WgmmaTf32NN>(WgmmaTile::Tf32NN, "tf32nn",
                             launch_where_fits<is_tf32_nn, launch_wgmma_tf32_nn_large, launch_wgmma_large>),
    entry<sm90::WgmmaTmaStore>(WgmmaTile::Store, "128x256store",
                               launch_where_fits<wgmma_store_fits, launch_wgmma_store, launch_wgmma_large>),
    entry<sm90::WgmmaTmaMidC2>(WgmmaTile::MidC2, "128x128c2", launch_wgmma_mid_c2),
    entry<sm90::WgmmaTmaNarrow>(WgmmaTile::Narrow, "128x64", launch_wgmma_narrow),
    entry<sm90::WgmmaTmaSmallC2>(WgmmaTile::SmallC2, "64x64c2", launch_wgmma_small_c2),
    entry<sm90::WgmmaTmaShortC2>(WgmmaTile::ShortC2, "64x128c2", launch_wgmma_short_c2),
    entry<sm90::WgmmaTmaNarrowC2>(WgmmaTile::NarrowC2, "128x64c2", launch_wgmma_narrow_c2),
    entry<sm90::WgmmaTmaWideC2>(WgmmaTile::WideC2, "128x192c2", launch_wgmma_wide_c2),
    entry<sm90::WgmmaTmaTallC2>(WgmmaTile::TallC2, "192x192c2", launch_wgmma_tall_c2),
    entry<sm90::WgmmaTmaTall96C2>(WgmmaTile::Tall96C2, "192x96c2", launch_wgmma_tall96_c2),
    entry<sm90::WgmmaTmaTall96KC2>(
        WgmmaTile::Tall96KC2, "192x96kc2",
        launch_where_fits<wgmma_k_major_b_fits, launch_wgmma_tall96_kc2, launch_wgmma_tall96_c2>),
    entry<sm90::WgmmaTmaWave168C2>(WgmmaTile::WaveC2, "128x168c2",
                                   launch_where_fits<wgmma_k_major_b_fits, launch_wgmma_wave_c2, launch_wgmma_large>),
    entry<sm90::WgmmaTmaThin>(WgmmaTile::Thin, "64x32",
                              launch_where_fits<wgmma_k_major_b_fits, launch_wgmma_thin, launch_wgmma_short>),
    entry<sm90::WgmmaTmaSmall>(WgmmaTile::Small, "64x64", launch_wgmma_small),
    entry<sm90::WgmmaTf32NNMid>(WgmmaTile::Tf32NNMid, "tf32nn128",
                                launch_where_fits<is_tf32_nn, launch_wgmma_tf32_nn_mid, launch_wgmma_large>),
    entry<sm90::WgmmaTf32NNShort>(WgmmaTile::Tf32NNShort, "tf32nn64",
                                  launch_where_fits<is_tf32_nn, launch_wgmma_tf32_nn_short, launch_wgmma_large>),
    entry<sm90::WgmmaF32NNMid>(WgmmaTile::F32NNMid, "f32nn128",
                               launch_where_fits<is_exact_f32, launch_wgmma_f32_nn_mid, launch_wgmma_large>),
    entry<sm90::WgmmaF32NNShort>(WgmmaTile::F32NNShort, "f32nn64",
                                 launch_where_fits<is_exact_f32, launch_wgmma_f32_nn_short, launch_wgmma_large>),
};

const TileEntry& tile_entry(WgmmaTile tile) {
  for (const TileEntry& e : kTiles)
    if (e.tile == tile) return e;
  return kTiles[0];
}

/// The most shared memory a block of any configuration asks for.
constexpr int max_smem_bytes() {
  int most = 0;
  for (const TileEntry& e : kTiles) most = std::max(most, e.smem_bytes);
  return most;
}
constexpr int kMaxSmemBytes = max_smem_bytes();

constexpr int kMaxWays = 16;  // K ranges per tile at most (partial sums: ways - 1 tiles' worth each)
// K blocks per range at least: a shorter range spends too much of its time filling the
// pipeline and parking or adding partial sums. Measured (H100, % of cuBLAS): 128 x 4096
// x 4096 in 128x128 tiles 78-88 split in 2 (32 blocks a range), 75-84 in 4 (16);
// 1000^3 70-80 unsplit, 62-66 in 2 (8).
constexpr int kMinSplitBlocks = 32;
// K blocks at least for the 128x128 tile's clusters of 2 (table_choice): over a shorter K
// the cluster's start and its multicast waits cost more than the L2 reads it saves.
constexpr int kMinClusterBlocks = 32;

/// K ranges per tile for `tiles` tiles (or clusters) of `k_blocks` K blocks, `slots`
/// of which run at once: 1 while the tiles fill three quarters of the slots or more
/// (the parked partial sums and the pipeline restarts would cost more than the idle
/// quarter), else as many as keep tiles x ways within the slots, each range at least
/// `min_blocks` (kMinSplitBlocks) long.
int split_ways(int64_t tiles, int64_t k_blocks, int slots, int min_blocks = kMinSplitBlocks) {
  if (4 * tiles >= 3 * static_cast<int64_t>(slots)) return 1;
  const int64_t ways = std::min<int64_t>({slots / std::max<int64_t>(tiles, 1), k_blocks / min_blocks, kMaxWays});
  return static_cast<int>(std::max<int64_t>(ways, 1));
}

// The cost model between the 128x256 and 128x128 tiles (H100 measurements, % of
// cuBLAS): a 128x128 tile costs 0.75 of a 128x256 one (4096^3: 65-69% against 100%);
// a split tile costs extra K blocks' worth (parking or adding the partial sums, the
// pipeline restart): 512 x 4096 x 4096 ran 76-80% as 128x256 split in 2 against
// 85-93% as 128x128 unsplit, 512 x 4096 x 11008 89-98% split against 72-79%.
constexpr double kMidTileCost = 0.75, kLargeSplitCost = 20, kMidSplitCost = 8;

/// Estimated time, in K blocks of a 128x256 tile, of `tiles` tiles (or clusters) of
/// `k_blocks` K blocks split in `ways`, `slots` of them at once, each costing `tile_cost`.
double estimate(int64_t tiles, int slots, int ways, int64_t k_blocks, double tile_cost, double split_cost) {
  const int64_t rounds = core::ceil_div<int64_t>(tiles * ways, std::max(slots, 1));
  return static_cast<double>(rounds * core::ceil_div<int64_t>(k_blocks, ways)) * tile_cost +
         (ways > 1 ? split_cost : 0);
}

// The 128x192 tile against the 128x256 one, both in clusters of 2 and unsplit (H200,
// bf16, each forced, % of cuBLAS): a 128x192 cluster tile costs 0.78 of a 128x256 one
// over a long K (3072^3: 2.9 rounds of 128x192 clusters 95% against 2.2 of 128x256,
// whose last round the tail split covers, 87%), so it runs where its rounds, counted
// with that split, are estimated 3% shorter or more: 1536^3 69 -> 78%, 3072^3 87 -> 95%,
// 256 x 11008 x 4096 88 / 81 -> 99 / 90% (NN / NT). Where the estimate is level
// (6144^3, 8192^3, 512 x 11008) it measured level to 7 points behind, and 5000^3 16
// behind. Rows off the 128-byte lines lost 1-2 points (3000^3: a TMA row spans two lines).
constexpr double kWideTileCost = 0.78;

// The 192x192 tile against the 128x256 one, both in clusters of 2 and unsplit (H200,
// bf16, NN and NT, each forced): a 192x192 cluster tile costs 1.12-1.16 of a 128x256 one
// (its flops: 1.125) over the rounds rounds_estimate counts (2048^3, 3000^3, 4096^3,
// 5000^3, 6144^3), so it runs where its rounds are estimated 3% shorter or more at the
// dearest: 3000^3 (1.94 rounds of 192x192 clusters against 2.2 of 128x256 ones) 81 ->
// 87-89% of cuBLAS. cuBLAS runs 192x192 tiles there.
constexpr double kTallTileCost = 1.16;
// The 168-wide tile against the 128x256 one, both in clusters of 2 and unsplit (H200,
// bf16 NT, each forced, two runs, % of cuBLAS): 0.67 of a 128x256 cluster tile (its
// flops: 0.656), which puts it ahead where it was measured ahead: 256 / 512 / 1024 x
// 11008 x 4096 (66 tile columns: 1, 2, 4 whole rounds) 81 / 87 / 93 (128x256c2) and 94 /
// 87.5 / 91 (128x192c2) -> 101 / 95-96 / 95.5-95.7, 1536^3 79 (128x192c2) -> 80; and
// behind elsewhere: 2048 x 11008 101 against 102.5 (5.2 rounds of 128x256 clusters),
// 14336 columns (86 tile columns) 86-98 against 94-101, squares 512-4096 70-90 against
// 94-100. It runs only where its clusters fill their last round to 90% or more
// (kWaveFill): a partial round is where the 128x256 tile's tail split is ahead.
constexpr double kWaveTileCost = 0.67;
constexpr double kWaveFill = 0.9;
// What another unsplit cluster tile's estimated rounds must beat the 128x256 ones by.
constexpr double kUnsplitGain = 0.97;

/// Estimated time, in K blocks of one cluster tile, of `clusters` unsplit cluster tiles
/// of `k_blocks` K blocks over `slots`: the whole rounds, then the last partial round as
/// the launch's tail split runs it (tail_split_plan).
double rounds_estimate(int64_t clusters, int slots, int64_t k_blocks) {
  const WgmmaSchedule s = make_schedule(static_cast<int>(clusters), 1, static_cast<int>(k_blocks));
  return static_cast<double>((clusters / slots) * k_blocks) + tail_split_plan(s, slots).blocks;
}

/// The cost model between the C^T kernel's tiles (tf32 with N-contiguous B: 256, 128 or
/// 64 rows of C by 128 columns), fitted to every tile and split forced on the H200
/// (notes/llm-gemm.md, "The C^T kernel's smaller tiles"): a tile's time in K blocks of a
/// 256-row one (the wgmma work halves with the rows, the register loads of B^T per tile
/// stay), and a split tile's extra cost per K range beyond the first, in K blocks of a
/// 256-row tile, in proportion to the partial sums it parks (its rows).
struct CtTile {
  WgmmaTile tile;
  int rows;
  double cost;
  const char* why;
};
constexpr CtTile kTf32NNTiles[] = {
    {WgmmaTile::Tf32NN, 256, 1.0, "tf32 with N-contiguous B: the C^T kernel's 256 x 128 tiles, estimated shortest"},
    {WgmmaTile::Tf32NNMid, 128, 0.6, "tf32 with N-contiguous B: the C^T kernel's 128 x 128 tiles, estimated shortest"},
    {WgmmaTile::Tf32NNShort, 64, 0.45, "tf32 with N-contiguous B: the C^T kernel's 64 x 128 tiles, estimated shortest"},
};
constexpr double kTf32NNRangeCost = 24;
/// The same for exact f32 (3xTF32), in K blocks of a 128-row tile: the three products
/// make the wgmma work the larger part of a K block, so a 64-row tile costs more than
/// half; a split range's cost in proportion to its rows as above, a third of tf32's in
/// its K blocks (the same partial sums against a K block three times as long), which
/// also lets ranges be shorter (kExactMinSplitBlocks).
constexpr CtTile kF32NNTiles[] = {
    {WgmmaTile::F32NNMid, 128, 1.0, "exact f32: the C^T kernel's 128 x 128 tiles in 3xTF32, estimated shortest"},
    {WgmmaTile::F32NNShort, 64, 0.6, "exact f32: the C^T kernel's 64 x 128 tiles in 3xTF32, estimated shortest"},
};
constexpr double kF32NNRangeCost = 4;
constexpr int kExactMinSplitBlocks = 4;

/// Which kernel a call runs, and which a configuration's tile belongs to: wgmma_tma_kernel,
/// the tf32 C^T kernel or the exact-f32 one.
enum class Family { Kernel, Tf32CT, ExactCT };
Family call_family(const core::GemmArgs& args) {
  return is_exact_f32(args) ? Family::ExactCT : is_tf32_nn(args) ? Family::Tf32CT : Family::Kernel;
}
Family tile_family(WgmmaTile tile) {
  for (const CtTile& t : kTf32NNTiles)
    if (t.tile == tile) return Family::Tf32CT;
  for (const CtTile& t : kF32NNTiles)
    if (t.tile == tile) return Family::ExactCT;
  return Family::Kernel;
}

/// The C^T kernel on whichever of `tiles` (split as split_ways says where they are few)
/// is estimated the shortest (the larger on a tie), its last partial round counted as the
/// launch's tail split runs it; `range_cost` per split range of a tile of `tiles[0]`'s rows.
template <std::size_t kN>
WgmmaChoice ct_choice(const core::GemmArgs& args, int sms, int64_t k_blocks, const CtTile (&tiles)[kN],
                      double range_cost, int min_split_blocks = kMinSplitBlocks) {
  const int64_t c_tiles_n = core::ceil_div<int64_t>(args.n, 128) * args.batch;
  WgmmaChoice best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const CtTile& t : tiles) {
    const int64_t count = core::ceil_div<int64_t>(args.m, t.rows) * c_tiles_n;
    const int ways = split_ways(count, k_blocks, sms, min_split_blocks);
    const double split_cost = range_cost * t.rows / tiles[0].rows * (ways - 1);
    const double cost = ways > 1 ? estimate(count, sms, ways, k_blocks, t.cost, split_cost)
                                 : t.cost * rounds_estimate(count, sms, k_blocks);
    if (cost < best_cost) best_cost = cost, best = {t.tile, ways, t.why};
  }
  return best;
}

/// tf32 with K-major B (the wgmma_tma kernel) over more than 128 rows and K no longer
/// than M or N (the table's caller checks both): the smallest of
/// 64x64, 128x64, 128x128, 192x96 and 128x192 in clusters of 2 whose CTAs fit one wave
/// of the `sms` SMs, or null where none does (the rules for 16-bit calls then apply). A
/// tf32 K block is half a 16-bit one's K, so the 16-bit rules' K-block thresholds put
/// these calls on tiles too large for them: as many CTAs as one wave holds stream the
/// operands on the most SMs. H200, tf32 NT, each configuration forced, % of cuBLAS, table
/// before -> this: 384^3 108 -> 116 (64x64), 512^3 89 -> 104 (64x64), 768^3 86 -> 108
/// (128x64; 64x128 109), 1000^3 100 -> 105 (128x64), 1024^3 92 -> 119 (128x64), 1536^3
/// 87 -> 106 (128x192c2; 192x96c2, the smaller tile, since: 105 -> 124); at 2048^3 none
/// fits and the large tile stays (100). Prefill against a weight: 256 x 4096 x 4096 118
/// -> 120 (128x64), 256 x 11008 x 4096 104 -> 120 (128x192c2), the other 512-1024-row
/// cells level. Not where K is longer than both M and
/// N, where the K splits of the rules below keep the SMs busy: 256 x 4096 x 11008 130%
/// split, 97% in 128x64 tiles over the whole K.
const WgmmaTile* tf32_wave_tile(int64_t m, int64_t n, int sms) {
  static constexpr WgmmaTile kBySize[] = {WgmmaTile::Small, WgmmaTile::Narrow, WgmmaTile::Mid, WgmmaTile::Tall96C2,
                                          WgmmaTile::WideC2};
  for (const WgmmaTile& tile : kBySize) {
    const TileEntry& e = tile_entry(tile);  // its cluster tile and CTAs
    if (core::ceil_div<int64_t>(m, e.rows) * e.ctas * core::ceil_div<int64_t>(n, e.cols) <= sms) return &tile;
  }
  return nullptr;
}

/// The table: shape class -> configuration, the rows tried in order. Measured on the
/// H100 (bench/dev/gemm/wgmma_configs.sh: every configuration forced, % of cuBLAS).
/// Tile counts are over all batch items: one launch runs them all.
WgmmaChoice table_choice(const core::GemmArgs& args, const CudaContext& ctx) {
  const int64_t m = args.m, n = args.n, items = args.batch;
  const int sms = ctx.sm_count;
  const int64_t k_blocks = core::ceil_div<int64_t>(args.k, args.ab_type == core::DType::F32 ? 32 : 64);
  if (is_exact_f32(args)) return ct_choice(args, sms, k_blocks, kF32NNTiles, kF32NNRangeCost, kExactMinSplitBlocks);
  if (is_tf32_nn(args)) return ct_choice(args, sms, k_blocks, kTf32NNTiles, kTf32NNRangeCost);
  if (args.ab_type == core::DType::F32 && items == 1 && m > 128 && args.k <= std::max(m, n))
    if (const WgmmaTile* tile = tf32_wave_tile(m, n, sms))
      return {*tile, 1, "tf32, more than 128 rows: the smallest tile whose CTAs fit one wave"};
  const int64_t mid_tiles = core::ceil_div<int64_t>(m, 128) * core::ceil_div<int64_t>(n, 128) * items;
  // Small calls (K of at most 16 blocks) whose 64x128 tiles fit one wave: the pipeline's
  // fill and the epilogue set the time, and twice the tiles of 128x128 run them on twice
  // the SMs (256^3-1024^3: 77-100% of cuBLAS against 67-82%). Only where every row of A
  // and B starts a 128-byte line: at 1000^3 (2000-byte pitches each 128-byte TMA row
  // spans two lines) the extra operand reads of the smaller tiles cost more (66% against
  // 78%).
  const int64_t short_tiles = core::ceil_div<int64_t>(m, 64) * core::ceil_div<int64_t>(n, 128) * items;
  const int64_t es = static_cast<int64_t>(core::dtype_size(args.ab_type));
  // Every row of A and B starts a 128-byte line (each 128-byte TMA row reads one line).
  const bool on_lines = (args.lda * es) % 128 == 0 && (args.ldb * es) % 128 == 0;
  const bool small_call = k_blocks <= 16 && short_tiles <= sms;
  if (small_call && on_lines) return {WgmmaTile::Short, 1, "K of at most 16 blocks, 64x128 tiles in one wave: 64x128"};
  // The same small calls with rows off the 128-byte lines: the 64x128 tiles in clusters of
  // 2 along M, which read each B tile from L2 once for two tiles (1000^3: 81-89% of
  // cuBLAS against 72-79% for 128x128 and 67-69% for 64x128 alone), where the tile rows
  // pair up. cuBLAS runs the same shape there (64x128 tiles, clusters of 2 along M).
  if (small_call && core::ceil_div<int64_t>(m, 64) % 2 == 0)
    return {WgmmaTile::ShortC2, 1,
            "K of at most 16 blocks, 64x128 tiles in one wave, rows off the 128-byte lines: 64x128 tiles in "
            "clusters of 2 sharing B"};
  // On a device of 4000 GB/s or more (H200), a single 16-bit call with rows on the
  // 128-byte lines and a K of 64 blocks or more: 64x64 tiles over the whole K, no
  // cluster, no split, where they fit one wave. Each CTA streams one 64-column slab of B
  // in whole 128-byte lines, 13 stages deep; a tile over fewer than 64 rows loads only
  // the rows A has (a_box_rows). H200, each forced in one run, % of
  // cuBLAS, bf16 / f16, table before -> 64x64:
  //  * 128 rows over K of 64 blocks (128 tiles), ahead of 128x64: 128 x 4096 x 4096 NN
  //    89 / 91 -> 94.5 / 95, NT 93 / 92 -> 97 / 96. Not over a longer K, where 128x64
  //    split in 2 stays ahead (128 x 4096 x 11008 / 14336: 87-96 against 101-110);
  //  * at most 64 rows filling a third of the SMs or more (N = 4096: 64 tiles), either
  //    layout; K-major B at 33..64 rows takes the 64x32 rule below first (level with
  //    64x64). 1 / 4 / 8 x 4096 x 4096 NN 92 -> 110 / 110 / 114, NT 91-94 -> 107-112, 8
  //    x 4096 x 14336 99-101 -> 106-107;
  //    NN 16 / 24 / 32 / 48 / 64 x 4096 x 4096 94-97 / 95-97 / 97 / 95 / 87 -> 115 / 111
  //    / 113 / 113 / 105 (f16 112 / 118 / 117 / 114 / 103), NT 16 / 24 / 32 x 4096 x
  //    4096 92-95 -> 107-111, 32 x 4096 x 11008 99-108 -> 112-116, 64 x 4096 x 11008 NN
  //    109-111 -> 118-120, x 14336 102-103 -> 107-108. Not where the tiles take more than
  //    a wave (64 x 11008 x 4096: 96-97 against 108-109).
  // Before a 64-row tile loaded only A's rows, it lost at 32 rows over a long K (76-85
  // against 101-108 at 32 x 4096 x 11008 / 14336): TMA filling a box's rows past M
  // with zeros cost 2-4 us a call.
  const int64_t small_tiles = core::ceil_div<int64_t>(m, 64) * core::ceil_div<int64_t>(n, 64);
  const bool small_wave =
      high_bandwidth(ctx.arch.mem_gbps) && items == 1 && es == 2 && k_blocks >= 64 && small_tiles <= sms && on_lines;
  if (small_wave && m == 128 && k_blocks == 64 && 4 * small_tiles >= 3 * static_cast<int64_t>(sms))
    return {WgmmaTile::Small, 1, "4000 GB/s or more, 128 rows, K of 64 blocks: 64x64 tiles in one wave"};
  // On a device of 4000 GB/s or more (H200): 128 or 256 rows (whole 128-row tiles, a
  // single 16-bit call) whose 128x64 tiles fill a third of the SMs or more in one wave
  // take one tile per 64 columns of B over the whole K (of 64 blocks or more, the K
  // measured), or split in 2 at one tile row over K of more than 64 blocks. The K splits
  // and clusters of the rules below cost more there than the tile's extra reads of A
  // (H200, bf16 NN / NT, each forced, % of cuBLAS, before -> 128x64): 128 x 4096 x 4096
  // 79-82 -> 88-93 (two runs), 256 x 4096 x 4096 95 / 100 -> 107 / 103; split in 2, 128
  // x 4096 x 11008 102 / 101 -> 105 / 108, x 14336 97 / 102 -> 101 / 107. Not at 256 rows
  // over a longer K, where the 128x64 tiles read twice the L2 bytes of 128x128 clusters
  // (256 x 4096 x 11008 / 14336: 87-95 against 103-110), nor at rows that end inside a
  // 64-row box (80 and 96 rows: 72-89).
  const int64_t narrow_tiles = (m / 128) * core::ceil_div<int64_t>(n, 64);
  if (high_bandwidth(ctx.arch.mem_gbps) && items == 1 && es == 2 && m % 128 == 0 && m <= 256 && k_blocks >= 64 &&
      (m == 128 || k_blocks <= 64) && narrow_tiles <= sms && 3 * narrow_tiles >= sms && on_lines) {
    const int ways = m == 128 && k_blocks > 64 && 2 * narrow_tiles <= sms ? 2 : 1;
    return {WgmmaTile::Narrow, ways,
            "4000 GB/s or more, 128 or 256 rows: 128x64 tiles in one wave over the whole K (split in 2 over a long "
            "K)"};
  }
  // On a device of 4000 GB/s or more (H200): 33..64 rows against K-major B (a linear
  // layer's N x K weight) whose 64x32 tiles fill one wave (three quarters of the SMs or
  // more) over a long K: one tile per 32-row slab of B over the whole K, so the call
  // streams B on ~all SMs without the K split 64x128 tiles need (cuBLAS runs 64x32 tiles
  // there). H200, bf16 NT, each forced, two runs, % of cuBLAS, table -> 64x32: 64 x 4096
  // x 4096 91 -> 106, x 11008 103 -> 118, x 14336 102 -> 111. Not at 32 rows (92
  // against 91), over wider N (64 x 11008 x 4096: 111 against 93), at small squares (level
  // at 128-512, 30-50 points behind at 768-1024).
  const int64_t thin_tiles = core::ceil_div<int64_t>(n, 32);
  if (high_bandwidth(ctx.arch.mem_gbps) && items == 1 && m > 32 && m <= 64 && wgmma_k_major_b_fits(args) &&
      thin_tiles <= sms && 4 * thin_tiles >= 3 * static_cast<int64_t>(sms) && k_blocks >= 64 && on_lines)
    return {WgmmaTile::Thin, 1, "4000 GB/s or more, 33..64 rows, K-major B: 64x32 tiles in one wave over the whole K"};
  // (H200, the 64x64 rule above) at most 64 rows in 64x64 tiles filling a third of the
  // SMs or more.
  if (small_wave && m <= 64 && 3 * small_tiles >= sms)
    return {WgmmaTile::Small, 1, "4000 GB/s or more, at most 64 rows: 64x64 tiles in one wave over the whole K"};
  if (m <= 64)  // a 128-row tile would compute twice the rows; such calls stream B
    return {WgmmaTile::Short, split_ways(core::ceil_div<int64_t>(n, 128) * items, k_blocks, sms),
            "at most 64 rows: 64x128 tiles, K split when fewer than the SMs"};
  // 65..128 rows: two 64-row tiles, a cluster of 2 sharing each 64-column B tile, where
  // the clusters run in one wave (N <= 64 x 66 on the H100: 128 x 4096 x 4096 93-94%
  // against 79-82% for 128x128 split in 2); wider B takes 128x128 tiles, whose fewer
  // tiles fit one wave (128 x 11008: 64x64c2 81-88%, 128x128 96-102%).
  const int64_t small_clusters = core::ceil_div<int64_t>(n, 64) * items;
  // On a device of 4000 GB/s or more (H200), over K of 64 blocks or more, 128x128 tiles
  // split in 2 (K = 4096) or 3 (longer K) instead: 64 clusters streaming B fall behind
  // cuBLAS there (H200, bf16 NN / NT alike, table -> split: 128 x 4096 x 4096 77 -> 85%,
  // x 11008 77 -> 103%, x 14336 72 -> 100%, 96 x 4096 x 11008 76 -> 101-103%).
  if (m > 64 && m <= 128 && small_clusters <= sms / 2 && items == 1 && k_blocks >= 64 &&
      high_bandwidth(ctx.arch.mem_gbps))
    return {WgmmaTile::Mid, static_cast<int>(std::min<int64_t>(3, k_blocks / 32)),
            "65..128 rows, long K, 4000 GB/s or more: 128x128 tiles split in 2 or 3"};
  if (m > 64 && m <= 128 && small_clusters <= sms / 2)
    return {WgmmaTile::SmallC2, split_ways(small_clusters, k_blocks, sms / 2),
            "65..128 rows, clusters in one wave: 64x64 tiles in clusters of 2 sharing B, K split when fewer than "
            "the SMs"};
  if (m <= 128)  // one tile row: the large tile's 2-CTA cluster would leave its second CTA empty
    return {WgmmaTile::Mid, split_ways(mid_tiles, k_blocks, sms),
            "one tile row: 128x128 tiles, K split when fewer than the SMs"};
  // Otherwise the tile whose estimated time is shorter (estimate()): 128x256 in
  // clusters of 2 reads the fewest shared-memory bytes per flop, 128x128 has twice the
  // tiles to spread over the SMs.
  const int64_t clusters =
      core::ceil_div<int64_t>(core::ceil_div<int64_t>(m, 128), 2) * core::ceil_div<int64_t>(n, 256) * items;
  // At most 64 columns over a long K (attention's P V at d = 64): a 128-wide tile would
  // compute and stage half padding.
  // Where the tile rows of an item pair up, in clusters of 2 that share B: every tile row
  // reads all of B again from L2, and the cluster halves that (P V at d = 64, S 512-4096:
  // 99-102% of cuBLAS against 97-100% for 128x64 alone).
  if (n <= 64 && k_blocks >= 8 && core::ceil_div<int64_t>(m, 128) * items >= 2 * sms) {
    if (core::ceil_div<int64_t>(m, 128) % 2 == 0)
      return {WgmmaTile::NarrowC2, 1, "at most 64 columns, long K: 128x64 tiles in clusters of 2 sharing B"};
    return {WgmmaTile::Narrow, 1, "at most 64 columns, long K, an odd number of tile rows: 128x64 tiles"};
  }
  // At most 128 columns over a long K (attention's P V: n = d, K = S): each tile row reads
  // all of B again, from L2; 128x128 tiles in clusters of 2 share it.
  if (n <= 128 && k_blocks >= 8 && mid_tiles >= 2 * sms)
    return {WgmmaTile::MidC2, 1, "at most 128 columns, long K: 128x128 tiles in clusters of 2 sharing B"};
  // Two K blocks (attention's Q K^T at d = 128): writing C takes longer than the math in
  // every tile, and 4 staging rounds in flight beat 4 operand stages. At one K block
  // (d = 64) they are level, and the large tile keeps its stages (notes/attention.md). At
  // 4000 GB/s or more (H200) the large tile with its tiles claimed at run time
  // (wgmma_claims_tiles) is ahead instead: 86-93% of cuBLAS -> 95-101%.
  if (k_blocks == 2 && n > 128 && 2 * clusters >= sms && wgmma_store_fits(args) && !high_bandwidth(ctx.arch.mem_gbps))
    return {WgmmaTile::Store, 1, "two K blocks, C stored by TMA: 128x256 clusters with 4 C staging rounds in flight"};
  const int large_ways = split_ways(clusters, k_blocks, sms / 2), mid_ways = split_ways(mid_tiles, k_blocks, sms);
  if (estimate(clusters, sms / 2, large_ways, k_blocks, 1.0, kLargeSplitCost) <
      estimate(mid_tiles, sms, mid_ways, k_blocks, kMidTileCost, kMidSplitCost)) {
    // On a device of 4000 GB/s or more (H200): where the 128x256 clusters need a K split
    // to fill the SMs but 128x128 tiles in clusters of 2, split in 2 at most, fill one
    // wave (95% of the SMs or more), those instead. The 128x128 tile's stages come every
    // ~500 cycles, which the producer warp keeps up with (produce_stages). H200, bf16 NN
    // and NT, each forced, two alternations: 512 x 4096 x 11008 / 14336 89-92 -> 97-99%
    // of cuBLAS (unsplit), 256 x 4096 x 11008 / 14336 96-101 -> 105-111% (split in 2).
    if (items == 1 && large_ways > 1 && high_bandwidth(ctx.arch.mem_gbps) && core::ceil_div<int64_t>(m, 128) % 2 == 0 &&
        k_blocks >= kMinClusterBlocks && mid_tiles * mid_ways <= sms &&
        20 * mid_tiles * mid_ways >= 19 * static_cast<int64_t>(sms))
      return {WgmmaTile::MidC2, mid_ways,
              "4000 GB/s or more, 128x256 clusters split to fill the SMs: 128x128 tiles in clusters of 2 filling one "
              "wave"};
    // On a device of 4000 GB/s or more (H200): a single 16-bit call of 257..512 rows
    // against a wide N-contiguous weight (N over 8192 up to 16384, K of at most 64 blocks:
    // the 11008- and 14336-wide weights of the llm suite): 128x128 tiles unclustered and
    // unsplit, 2.5-3.4 rounds of them, instead of 1.3-1.7 rounds of 128x256 clusters (at
    // 384 rows half of the second cluster row is empty). H200, bf16 / f16 NN, each forced,
    // two runs, % of cuBLAS, table -> 128x128: 384 x 14336 x 4096 89.7-90.2 -> 100.8-101.3,
    // 512 x 11008 x 4096 98.5-99.3 -> 101.4-102.4, 512 x 14336 x 4096 101.6-101.7 ->
    // 104.2-104.3, 384 x 11008 x 4096 level (95.4-96.3). Not at 768 rows (x 11008: 97.7
    // against 100), nor at 256 (128x192 clusters 104.5-106 against 97-98), nor with K-major
    // B (512 x 11008 x 4096 NT: 128x168 clusters 97.7 against 90.9).
    if (items == 1 && es == 2 && large_ways == 1 && high_bandwidth(ctx.arch.mem_gbps) && !b_is_k_major(args) &&
        m > 256 && m <= 512 && n > 8192 && n <= 16384 && k_blocks <= 64 && on_lines)
      return {WgmmaTile::Mid, 1,
              "4000 GB/s or more, 257..512 rows against a wide N-contiguous weight: 128x128 tiles, no cluster"};
    // Unsplit 128x256 clusters against unsplit clusters of `rows` x `cols` tiles in pairs
    // along M, one of which costs `cost` of a 128x256 cluster tile: single 16-bit calls,
    // the only ones measured, where the other tile's rounds are estimated kUnsplitGain of
    // the 128x256 ones or less (ahead). The other tile's estimate, in K blocks of a
    // 128x256 cluster tile (0: it does not qualify); `fill`: the least share of the slots
    // its last round must fill.
    auto unsplit_estimate = [&](int rows, int cols, double cost, double fill = 0) {
      const int64_t other =
          core::ceil_div<int64_t>(core::ceil_div<int64_t>(m, rows), 2) * core::ceil_div<int64_t>(n, cols);
      const int64_t last = other % (sms / 2) == 0 ? sms / 2 : other % (sms / 2);
      const bool runs = items == 1 && es == 2 && large_ways == 1 && split_ways(other, k_blocks, sms / 2) == 1 &&
                        static_cast<double>(last) >= fill * (sms / 2);
      return runs ? cost * rounds_estimate(other, sms / 2, k_blocks) : 0.0;
    };
    // A single 16-bit call whose 192x96 clusters (three m64n96 consumers) fill 90% or more
    // of one wave where the 128x256 clusters fill less than 60% of it: the smaller tile
    // keeps the most SMs busy where every larger one leaves a quarter of them idle or
    // more; with K-major B, the tile that loads only its 96 rows of B (192x96kc2). H200,
    // bf16 / f16, each forced, % of cuBLAS: 1536^3 NN 87.0 / 87.5 (128x192c2 78.5 / 82.1),
    // NT 192x96kc2 89.3-90.7 / 89.0-89.3, 192x96c2 88.0 / 87.7-88.5 (128x168c2 82-83);
    // 768 x 3072 x 3072 NT 91.9-92.4 / 92.0-93.0 (128x168c2 85-87). Behind at 1000^3,
    // 1280^3 and 1792^3 (64-77 against 79-102), where its clusters fill a wave less well.
    const TileEntry& tall96 = tile_entry(WgmmaTile::Tall96C2);  // its cluster tile
    const int64_t tall96_clusters = core::ceil_div<int64_t>(m, tall96.rows) * core::ceil_div<int64_t>(n, tall96.cols);
    if (items == 1 && es == 2 && large_ways == 1 && tall96_clusters <= sms / 2 &&
        10 * tall96_clusters >= 9 * (sms / 2) && 5 * clusters < 3 * (sms / 2))
      return {wgmma_k_major_b_fits(args) ? WgmmaTile::Tall96KC2 : WgmmaTile::Tall96C2, 1,
              "192x96 clusters fill 90% of a wave or more, 128x256 clusters less than 60%: 192x96 clusters"};
    const double large_estimate = rounds_estimate(clusters, sms / 2, k_blocks);
    auto ahead = [&](double estimate) { return estimate > 0 && estimate < kUnsplitGain * large_estimate; };
    // Where the rows start 128-byte lines: 128x168 (kWaveTileCost, K-major B, whole
    // rounds; on a device of 4000 GB/s or more, the H200 it was measured on) or 128x192
    // (kWideTileCost), whichever is estimated faster, then 192x192 (kTallTileCost).
    const double wave = on_lines && wgmma_k_major_b_fits(args) && high_bandwidth(ctx.arch.mem_gbps)
                            ? unsplit_estimate(128, 168, kWaveTileCost, kWaveFill)
                            : 0.0;
    const double wide = on_lines ? unsplit_estimate(128, 192, kWideTileCost) : 0.0;
    if (ahead(wave) && (wide == 0 || wave <= wide))
      return {WgmmaTile::WaveC2, 1, "128x168 clusters estimated 3% or more faster than 128x256 and 128x192 clusters"};
    if (ahead(wide))
      return {WgmmaTile::WideC2, 1, "128x192 clusters estimated 3% or more faster than 128x256 clusters"};
    if (ahead(unsplit_estimate(192, 192, kTallTileCost)))
      return {WgmmaTile::TallC2, 1, "192x192 clusters estimated 3% or more faster than 128x256 clusters"};
    return {WgmmaTile::Large, large_ways, "128x256 clusters (K split if need be) estimated faster than 128x128"};
  }
  // An even number of tile rows, at least half the SMs busy and a long K: clusters of 2
  // along M share B (half its L2 reads), measured ahead of the single tile at 256 and 512
  // rows over K = 4096 (notes/llm-gemm.md); an odd number would leave a cluster half
  // empty, calls of a few tiles (256^3, 512^3) are not bound by L2 and lost 10 points in
  // clusters, and so did a short K (1280^3, 20 K blocks: 84-89% against 96%).
  if (core::ceil_div<int64_t>(m, 128) % 2 == 0 && mid_tiles * mid_ways >= sms / 2 && k_blocks >= kMinClusterBlocks)
    return {WgmmaTile::MidC2, mid_ways,
            "128x128 tiles in clusters of 2 (K split if need be) estimated faster than 128x256 clusters"};
  return {WgmmaTile::Mid, mid_ways, "128x128 tiles (K split if need be) estimated faster than 128x256 clusters"};
}

/// GPUKERN_WGMMA_CONFIG, read once: unset, a choice, or malformed (`raw` kept for the error).
struct ForcedConfig {
  bool set = false, valid = false;
  WgmmaChoice choice;
  std::string raw;
};
const ForcedConfig& forced_config() {
  static const ForcedConfig forced = [] {
    ForcedConfig f;
    const char* value = std::getenv("GPUKERN_WGMMA_CONFIG");
    if (!value || !*value) return f;
    f.set = true;
    f.raw = value;
    f.valid = parse_wgmma_config(f.raw, &f.choice);
    f.choice.why = "forced by GPUKERN_WGMMA_CONFIG";
    return f;
  }();
  return forced;
}

/// Why a batched call cannot run: every item of A and B must be TMA-addressable (base,
/// pitch and batch stride multiples of 16 bytes), since the repack pass copies one
/// matrix. Unbatched calls: "" (operands TMA cannot address are repacked).
core::Verdict batch_reason(const core::GemmArgs& args) {
  if (!args.batched()) return {};
  const std::size_t es = core::dtype_size(args.ab_type);
  const struct {
    const char *name, *stride_name;
    const void* ptr;
    int64_t ld, stride;
  } operands[] = {{"A", "stride_a", args.a, args.lda, args.stride_a},
                  {"B", "stride_b", args.b, args.ldb, args.stride_b}};
  for (const auto& o : operands) {
    if (core::Verdict v = row_alignment_reason(o.name, o.ptr, o.ld, es, 16); !v.accepted())
      return {v.reason, "batched call: " + v.detail + " (TMA; only unbatched operands are repacked)"};
    if ((o.stride * static_cast<int64_t>(es)) % 16 != 0)
      return {core::Decline::Misaligned,
              std::string("batched call: ") + o.stride_name + " * element size not a multiple of 16 bytes (TMA)"};
  }
  return {};
}

}  // namespace

std::string WgmmaChoice::name() const {
  std::string text = "?";
  for (const auto& t : kTiles)
    if (t.tile == tile) text = t.name;
  return ways > 1 ? text + " splitk" + std::to_string(ways) : text;
}

bool parse_wgmma_config(const std::string& text, WgmmaChoice* choice) {
  const std::size_t cut = text.find_first_of(" -:/");
  const std::string tile = text.substr(0, cut);
  WgmmaChoice c;
  bool known = false;
  for (const auto& t : kTiles)
    if (tile == t.name) c.tile = t.tile, known = true;
  if (!known) return false;
  if (cut != std::string::npos) {
    const std::string split = text.substr(cut + 1);
    long long ways = 0;
    if (split.rfind("splitk", 0) != 0 || !core::parse_whole_number(split.substr(6), kMaxWays, &ways) || ways < 1)
      return false;
    c.ways = static_cast<int>(ways);
  }
  *choice = c;
  return true;
}

WgmmaChoice choose_wgmma_config(const core::GemmArgs& args, const CudaContext& ctx) {
  const ForcedConfig& forced = forced_config();
  if (forced.set && !forced.valid) {
    std::string names;
    for (const TileEntry& e : kTiles) names += std::string(names.empty() ? "" : ", ") + e.name;
    throw core::Error(core::Status::InvalidArgument, "GPUKERN_WGMMA_CONFIG='" + forced.raw + "': expected one of " +
                                                         names + ", optionally followed by ' splitkN' (N = 1.." +
                                                         std::to_string(kMaxWays) + ")");
  }
  if (forced.set && tile_family(forced.choice.tile) == call_family(args)) return forced.choice;
  return table_choice(args, ctx);
}

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
    case core::GemmType::F32:
      // Exact f32 on the C^T kernel in 3xTF32: its shared operand is A, K-major.
      if (args.trans_a)
        return {core::Decline::Layout, "exact f32 needs A not transposed (K-major): wgmma has no 32-bit transpose"};
      break;
    default:
      return {core::Decline::Dtype, "wgmma_tma takes f16, bf16, tf32 and f32"};
  }
  if (core::Verdict v = batch_reason(args); !v.accepted()) return v;
  return tma_rung_reason(ctx, kMaxSmemBytes, built_for_sm90a(), "sm_90a");
}

namespace {

/// Items [first, first + count) of a batched call, as a call of their own.
core::GemmArgs batch_part(const core::GemmArgs& args, int64_t first, int64_t count) {
  core::GemmArgs part = args;
  const int64_t es = static_cast<int64_t>(core::dtype_size(args.ab_type));
  part.a = static_cast<const char*>(args.a) + first * args.stride_a * es;
  part.b = static_cast<const char*>(args.b) + first * args.stride_b * es;
  part.c = static_cast<char*>(args.c) + first * args.stride_c * static_cast<int64_t>(core::dtype_size(args.c_type));
  if (args.bias)
    part.bias = static_cast<const char*>(args.bias) +
                first * args.stride_bias * static_cast<int64_t>(core::dtype_size(args.bias_type));
  part.batch = count;
  return part;
}

/// The choice's launcher; a C^T kernel's call (tf32 NN, exact f32) with a tile of another
/// kernel takes its kernel's first tile (wgmma_tma_run_with's contract).
void run_launches(const core::GemmArgs& args, const CudaContext& ctx, const WgmmaChoice& choice) {
  WgmmaTile tile = choice.tile;
  const Family family = call_family(args);
  if (family != tile_family(tile) && family != Family::Kernel)
    tile = family == Family::ExactCT ? kF32NNTiles[0].tile : kTf32NNTiles[0].tile;
  tile_entry(tile).launch(args, ctx, choice.ways);
}

}  // namespace

// A tile of one K block (attention's Q K^T at d = 64) is mostly the storing of its C,
// at the rate each SM gets from the memory system, and the SMs' rates differ a little:
// over hundreds of rounds of a static schedule the persistent CTAs drift apart, so the
// CTAs that read an item's operand rows read them far apart in time, after C's stream
// has pushed them out of L2. Nsight Compute on the H100, 2048 x 2048 x 64 items in one
// launch: Q and K read from DRAM 1.2 times at 96 items (93 rounds), 1.9 at 192, 2.3 at
// 512, 3.2 at 1024 (at two K blocks a tile, 1.0 at 1024). Such launches claim their tiles
// at run time instead (WgmmaSchedule::claimed): the tiles in flight are then always the
// ~CTAs after the last one handed out, a few items' worth, whatever each SM's pace.
// Measured ahead of launches of ~32 whole rounds (which realigned the CTAs at each
// launch boundary but paid the boundaries) and of one static launch, from 16 rounds
// (S 256, 1024 heads) up.

namespace {
enum class SchedulePolicy { Table, Static, Claimed };
/// GPUKERN_WGMMA_SCHEDULE, read once: unset (the rule below), "static" (never claim) or
/// "claimed" (every unsplit launch of more than one round claims), for tests and
/// measurement.
SchedulePolicy forced_schedule() {
  static const std::string value = knob_value("GPUKERN_WGMMA_SCHEDULE");
  switch (knob_choice("GPUKERN_WGMMA_SCHEDULE", value, {"static", "claimed"})) {
    case 1:
      return SchedulePolicy::Static;
    case 2:
      return SchedulePolicy::Claimed;
    default:
      return SchedulePolicy::Table;
  }
}
}  // namespace

bool wgmma_claims_tiles(const WgmmaSchedule& s, int ctas, int mem_gbps) {
  // Unsplit, more than one round, and every claim's ticket within the word's count.
  if (s.split_first != s.total || s.total <= ctas || int64_t(s.total) + ctas >= kMaxArrivals) return false;
  switch (forced_schedule()) {
    case SchedulePolicy::Static:
      return false;
    case SchedulePolicy::Claimed:
      break;
    default:
      // Two K blocks (Q K^T at d = 128) too at 4000 GB/s or more (H200, 1024 heads, 128x256
      // clusters: S 1024 / 2048 / 4096 88 / 96 / 93 -> 100 / 95 / 101% of cuBLAS, two
      // alternations; on the H100 they lost, 96.6-100.1% against 99.9-105.4%).
      if (s.k_blocks > (high_bandwidth(mem_gbps) ? 2 : 1) || s.total == s.per_item) return false;
  }
  if (core::log_enabled(core::LogLevel::Debug))
    core::log_line(core::LogLevel::Debug, "wgmma_tma: " + std::to_string(s.total) + " tiles on " +
                                              std::to_string(ctas) +
                                              " persistent CTAs (clusters), claimed at run time");
  return true;
}

void wgmma_epilogue_pass(const core::GemmArgs& args, const CudaContext& ctx) {
  core::EpiloguePassArgs pa = c_pass_args(args, epilogue_of(args), args.batch);
  pa.w = static_cast<const float*>(args.c);  // C = act(C + bias), read before it is written
  pa.ldw = pa.ldc;
  pa.stride_w = pa.stride_c;
  core::GenericPaths<CudaContext>::epilogue_pass(pa, ctx);
}

void wgmma_tma_run_with(const core::GemmArgs& args, const CudaContext& ctx, const WgmmaChoice& choice) {
  if (args.m == 0 || args.n == 0) return;
  if (tc_trivial_call(args, ctx, epilogue_of(args), args.batch)) return;
  // A launch schedules at most kMaxScheduledTiles tiles (the smallest tile, 64 x 32, has
  // the most); a larger batch runs in parts.
  const int64_t item_tiles = core::ceil_div<int64_t>(args.m, 64) * core::ceil_div<int64_t>(args.n, 32);
  const int64_t per_launch = std::max<int64_t>(1, kMaxScheduledTiles / item_tiles);
  for (int64_t first = 0; first < args.batch; first += per_launch) {
    const core::GemmArgs part =
        args.batch <= per_launch ? args : batch_part(args, first, std::min(per_launch, args.batch - first));
    try {
      run_launches(part, ctx, choice);
    } catch (const TmaEncodeError& e) {
      // A driver that refuses the batch's 3-D tensor maps (they are encoded before the
      // part's launch, so nothing of it has run): the part's items one launch each.
      if (!part.batched()) throw;
      core::log_line(core::LogLevel::Debug,
                     std::string("wgmma_tma: 3-D tensor maps refused (") + e.what() + "), items run one by one");
      for (int64_t i = 0; i < part.batch; ++i) run_launches(batch_part(part, i, 1), ctx, choice);
    }
  }
}

void wgmma_tma_run(const core::GemmArgs& args, const CudaContext& ctx) {
  const WgmmaChoice choice = choose_wgmma_config(args, ctx);
  if (core::log_enabled(core::LogLevel::Debug))
    core::log_line(core::LogLevel::Debug, "wgmma_tma: configuration " + choice.name() + " (" + choice.why + ")");
  wgmma_tma_run_with(args, ctx, choice);
}

}  // namespace gpukern::cuda::gemm
