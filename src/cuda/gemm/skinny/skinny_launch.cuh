// The host side of rung 14 `skinny` shared by its launch units (14_skinny.cu holds the
// rung's entry points; skinny_f16.cu, skinny_bf16.cu and skinny_f32.cu instantiate the
// kernels per input type, so the module's units compile in parallel): the mapping of a
// GEMM call onto SkinnyProblem, the K split, and the launch of one instantiation.
#pragma once

#include "cuda/gemm/bandwidth_class.hpp"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/skinny/skinny.cuh"
#include "cuda/gemm/skinny/skinny_gemv.cuh"
#include "cuda/gemm/skinny/skinny_tma.cuh"
#include "cuda/gemm/tensor_core/tma_host.cuh"
#include "cuda/workspace.cuh"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

namespace gpukern::cuda::gemm {

/// How the TMA path (skinny_tma.cuh) runs: ring stages and CTAs per SM, 0 = chosen (the ring
/// policy of skinny_tma_launch_shape, one CTA per SM); `ctas` > 0 fixes the grid; `tile_rows`
/// 64 takes 64-row tiles (sm90::SkinnyTma64), else 128 (sm90::SkinnyTma).
struct SkinnyTmaShape {
  int stages = 0, ctas_per_sm = 0, ctas = 0, tile_rows = 128;
};

/// Which kernel takes a call that the TMA path can run: kAuto follows GPUKERN_SKINNY_TMA
/// (unset: the TMA path), kForce takes the TMA path with `tma` (an error where it cannot),
/// kOff keeps skinny_kernel.
enum class SkinnyTmaMode { kAuto, kForce, kOff };

/// GPUKERN_SKINNY_TMA, read once, for measurement: "off" keeps every call on skinny_kernel;
/// "all" runs every call the TMA path can run on it with 128-row tiles in equal shares over
/// the SMs (not the plan skinny_tma_plan makes); "<stages>" or "<stages>x<CTAs per SM>" (0
/// stages: the ring policy's) does that with this shape. A malformed value throws
/// InvalidArgument where it is used.
struct SkinnyTmaSetting {
  bool off = false, all = false;
  SkinnyTmaShape shape;
};
SkinnyTmaSetting skinny_tma_setting();

/// GPUKERN_SKINNY_GEMV, read once, for measurement: "off" keeps every call off the CUDA-core
/// GEMV path (skinny_gemv.cuh); "all" runs every call it can run there (16-bit ones too,
/// not only those skinny_gemv_policy gives it); "<splits>" runs the calls the policy gives
/// it with this K split (not the one skinny_gemv_splits chooses). A malformed value throws
/// InvalidArgument where it is used.
struct SkinnyGemvSetting {
  bool off = false, all = false;
  int splits = 0;  // 0: skinny_gemv_splits decides
};
SkinnyGemvSetting skinny_gemv_setting();

/// A GEMM call as the skinny kernel sees it, plus the storage of its two operands.
struct SkinnyCall {
  SkinnyProblem problem;
  bool w_k_major = false, x_k_major = false;
  int forced_splits = 0;  // K ranges per N tile (clamped to the K blocks); 0: skinny_splits decides
  int64_t batch = 1;      // batch items (strides in problem.batch.strides)
  SkinnyTmaMode tma_mode = SkinnyTmaMode::kAuto;
  SkinnyTmaShape tma;  // kForce: the TMA path's shape
  // The CUDA-core GEMV path (T <= 4), in the same three modes: kAuto takes the calls
  // skinny_gemv_policy gives it (only while tma_mode is kAuto and no split is forced), kForce
  // with gemv_splits K ranges per group (0: chosen) and W's loads evict-first or plain as
  // gemv_evict_first says (1 / 0; -1: by W's size), kOff none.
  SkinnyTmaMode gemv_mode = SkinnyTmaMode::kAuto;
  int gemv_splits = 0;
  int gemv_evict_first = -1;
};

/// The skinny call of a row-major GEMM: the short side (m or n, whichever is smaller) is T.
inline SkinnyCall make_skinny_call(const core::GemmArgs& args) {
  SkinnyCall call;
  SkinnyProblem& p = call.problem;
  p.k = static_cast<int>(args.k);
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.c = args.c;
  p.c_f32 = args.c_type == core::DType::F32;
  call.batch = args.batch;
  p.epi = epilogue_of(args);
  p.batch.strides.c = args.stride_c;
  if (args.m <= args.n) {
    // C (T x N) = op(A) (T x K) op(B): X = op(A), W = op(B)^T; C's rows are t.
    p.t = static_cast<int>(args.m);
    p.n = static_cast<int>(args.n);
    p.x = args.a;
    p.ldx = args.lda;
    call.x_k_major = !args.trans_a;
    p.w = args.b;
    p.ldw = args.ldb;
    call.w_k_major = args.trans_b;
    p.c_stride_t = args.ldc;
    p.c_stride_n = 1;
    p.batch.strides.a = args.stride_b;  // W
    p.batch.strides.b = args.stride_a;  // X
  } else {
    // C (N x T) = op(A) (N x K) op(B) (K x T): W = op(A), X = op(B)^T; C's rows are n.
    p.t = static_cast<int>(args.n);
    p.n = static_cast<int>(args.m);
    p.w = args.a;
    p.ldw = args.lda;
    call.w_k_major = !args.trans_a;
    p.x = args.b;
    p.ldx = args.ldb;
    call.x_k_major = args.trans_b;
    p.c_stride_t = 1;
    p.c_stride_n = args.ldc;
    p.batch.strides.a = args.stride_a;  // W
    p.batch.strides.b = args.stride_b;  // X
    p.bias_along_t = true;              // C's columns are t
  }
  return call;
}

/// n8 tiles of T the kernel is instantiated for: 1, 2, 4 or 8.
inline int skinny_n_tiles(int t) {
  const int tiles = ceil_div(t, 8);
  return tiles <= 1 ? 1 : tiles <= 2 ? 2 : tiles <= 4 ? 4 : 8;
}

/// K ranges per N tile: the split that minimizes (waves of blocks) x (K blocks per block
/// + kFill), plus one K block's worth for parking and adding the partial sums once split.
/// kFill is what a block costs beyond its K blocks (filling the pipeline, the epilogue),
/// which keeps ranges from shrinking to a K block or two.
inline int skinny_splits(int n_tiles, int k_blocks, int64_t slots) {
  constexpr int64_t kFill = 2;
  int best = 1;
  int64_t best_cost = ceil_div<int64_t>(n_tiles, slots) * (k_blocks + kFill);
  const int most = static_cast<int>(std::min<int64_t>({k_blocks, 32, std::numeric_limits<int>::max() / n_tiles}));
  for (int s = 2; s <= most; ++s) {
    const int64_t waves = ceil_div<int64_t>(static_cast<int64_t>(n_tiles) * s, slots);
    const int64_t cost = waves * (ceil_div(k_blocks, s) + kFill) + 1;
    if (cost < best_cost) best = s, best_cost = cost;
  }
  return best;
}

/// The configuration for kNTiles n8 tiles of T and W stored K-contiguous or not.
template <int kNTiles, bool kWKMajor>
using SkinnyConfigFor =
    SkinnyConfig<std::conditional_t<(kNTiles > 4), sm90::SkinnyWide,
                                    std::conditional_t<(kWKMajor && kNTiles <= 2), sm90::SkinnyKMajor, sm90::Skinny>>,
                 kNTiles>;

/// Launches skinny_kernel<Cfg, T, kSplitF32, ...> for `call`: K split by occupancy (the N
/// tiles of every batch item fill the SMs together), with its workspace (partial sums,
/// arrival words per item and N tile) from the stream-ordered pool when split; the
/// epilogue instantiation when the call has one.
template <class Cfg, class T, bool kSplitF32, bool kWKMajor, bool kXKMajor>
void launch_skinny(SkinnyProblem p, int forced_splits, int64_t batch, const CudaContext& ctx) {
  auto kernel = p.epi.active() ? skinny_kernel<Cfg, T, kSplitF32, kWKMajor, kXKMajor, true>
                               : skinny_kernel<Cfg, T, kSplitF32, kWKMajor, kXKMajor, false>;
  constexpr int kSmem = skinny_smem_bytes<Cfg, T>();
  // Once per device and kernel: the shared-memory opt-in (a function attribute, kept by
  // the device) and the blocks per SM it allows.
  const int per_sm =
      cached_occupancy(std::make_pair(ctx.device, reinterpret_cast<const void*>(kernel)), [&](int* count) {
        const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
        return e != cudaSuccess ? e
                                : cudaOccupancyMaxActiveBlocksPerMultiprocessor(count, kernel, Cfg::kThreads, kSmem);
      });
  if (per_sm < 1)
    throw core::Error(core::Status::DeviceError, "skinny: no block of " + std::to_string(kSmem) +
                                                     " bytes of shared memory fits an SM of this device");
  constexpr int kBK = Cfg::kWarpsK * Cfg::kSliceBytes / static_cast<int>(sizeof(T));
  p.n_tiles = ceil_div(p.n, Cfg::kBlockN);
  p.k_blocks = ceil_div(p.k, kBK);
  const int64_t per_launch = std::min(batch, kMaxBatchPerLaunch);  // items of the largest launch
  const int all_tiles = static_cast<int>(std::min<int64_t>(p.n_tiles * batch, std::numeric_limits<int>::max()));
  p.splits = forced_splits > 0 ? std::min(forced_splits, std::max(p.k_blocks, 1))
                               : skinny_splits(all_tiles, p.k_blocks, static_cast<int64_t>(per_sm) * ctx.sm_count);
  void* ws = nullptr;
  if (p.splits > 1) {
    const std::size_t tiles = static_cast<std::size_t>(p.n_tiles) * per_launch;
    const std::size_t partial_bytes = tiles * p.splits * Cfg::kBlockN * p.t * sizeof(float);
    ws = workspace_alloc(partial_bytes + tiles * sizeof(uint64_t), ctx);
    p.partials = static_cast<float*>(ws);
    p.arrivals = reinterpret_cast<uint64_t*>(static_cast<char*>(ws) + partial_bytes);
  }
  // Launches run in stream order, so they share the workspace; each has its own tags.
  for_batch_chunks(batch, p.batch.strides, [&](const BatchLaunch& items, unsigned count) {
    p.batch = items;
    if (p.splits > 1) p.tag = arrival_tag();
    launch_kernel(dependent_launch(ctx), kernel, dim3(p.n_tiles * p.splits, count), Cfg::kThreads, kSmem, ctx.stream,
                  p);
  });
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
}

using SkinnyTmaCfg = SkinnyTmaConfig<sm90::SkinnyTma>;

/// "" when the TMA path can run `call` (T <= 16, X stored K-contiguous, one batch item, no
/// forced split, an sm_90 device whose driver encodes tensor maps; the rung's checks already
/// made every row and base 16-byte aligned), else why not. Any element size: a stage's bytes
/// do not depend on it.
inline std::string skinny_tma_refusal(const SkinnyCall& call, const CudaContext& ctx) {
  if (call.problem.t > SkinnyTmaCfg::kMaxT) return "T > " + std::to_string(SkinnyTmaCfg::kMaxT);
  if (!call.x_k_major) return "the activations are not stored K-contiguous";
  if (call.batch != 1) return "a batch";
  if (call.forced_splits > 0) return "a forced K split (skinny_kernel's)";
  if (ctx.arch.cc != 90) return "not an sm_90 device";
  if (tensor_map_encoder() == nullptr) return "the driver has no cuTensorMapEncodeTiled";
  if (ctx.smem_per_block_optin < static_cast<std::size_t>(SkinnyTmaCfg::smem_bytes(2)))
    return "too little shared memory for two stages";
  return "";
}

/// The TMA path's ring depth and grid for `shape` on this device: as many stages as fit
/// ctas_per_sm blocks per SM in `dynamic_limit` bytes of dynamic shared memory a block
/// (the opt-in less the kernel's static shared memory; each block also holds 1 KB the
/// system reserves, counted when several share an SM).
struct SkinnyTmaLaunch {
  int stages = 0, ctas = 0;
};
template <class Cfg = SkinnyTmaCfg>
SkinnyTmaLaunch skinny_tma_launch_shape(SkinnyTmaShape shape, int64_t units, int dynamic_limit,
                                        const CudaContext& ctx) {
  const int per_sm = std::max(shape.ctas_per_sm, 1);
  const int64_t static_bytes = static_cast<int64_t>(ctx.smem_per_block_optin) - dynamic_limit;
  const int64_t budget = std::min<int64_t>(
      dynamic_limit, static_cast<int64_t>(ctx.smem_per_block_optin + 1024) / per_sm - 1024 - static_bytes);
  const int fit = static_cast<int>(std::max<int64_t>((budget - 1024) / (Cfg::kStageBytes + Cfg::kStageExtraBytes), 2));
  SkinnyTmaLaunch l;
  const int64_t grid = shape.ctas > 0 ? shape.ctas : static_cast<int64_t>(per_sm) * ctx.sm_count;
  l.ctas = static_cast<int>(std::max<int64_t>(1, std::min(grid, units)));
  // Ring depth: a shallow ring (kShallowStages) while each CTA streams fewer than
  // kDeepRingUnits units: fewer bytes queued in the memory system, so the round trips of the
  // cut tiles' arrivals wait less and no CTA sits on a backlog of landed stages at the end;
  // the deepest ring that fits for the long streams (the vocabulary projection), where the
  // bytes in flight set the rate.
  constexpr int kShallowStages = 4;
  constexpr int64_t kDeepRingUnits = 200;
  const int chosen = units / l.ctas >= kDeepRingUnits ? fit : std::min(fit, kShallowStages);
  l.stages = std::max(shape.stages > 0 ? std::min(shape.stages, fit) : chosen, 2);
  return l;
}

/// Whether skinny's kernels load `call`'s W (elements of `elem_bytes`, every batch item)
/// evict-first in L2: arch::once_read_evict_first of its bytes on this device.
inline bool skinny_w_evict_first(const SkinnyCall& call, std::size_t elem_bytes, const CudaContext& ctx) {
  const SkinnyProblem& p = call.problem;
  return arch::once_read_evict_first(static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k) * elem_bytes *
                                         static_cast<std::size_t>(std::max<int64_t>(call.batch, 1)),
                                     ctx.l2_bytes);
}

/// Runs `call` on skinny_tma_kernel (the caller checked skinny_tma_refusal); `Cfg` other
/// than the shipped one for development drivers. T = float: tf32, or exact f32 with
/// `kSplitF32`.
template <class T, bool kSplitF32 = false, class Cfg = SkinnyTmaConfig<sm90::SkinnyTma, sizeof(T)>>
void launch_skinny_tma(const SkinnyCall& call, SkinnyTmaShape shape, const CudaContext& ctx) {
  SkinnyProblem p = call.problem;
  SkinnyTmaWork wk;
  wk.n_tiles = ceil_div(p.n, Cfg::kBlockN);
  wk.k_blocks = ceil_div(p.k, Cfg::kBlockK);
  // 32-bit calls with T <= 8 compute one n8 tile of T (skinny_tma_kernel's kXTiles).
  auto pick = [&](auto x_tiles) {
    constexpr int kX = decltype(x_tiles)::value;
    return call.w_k_major ? skinny_tma_kernel<Cfg, T, true, kSplitF32, kX>
                          : skinny_tma_kernel<Cfg, T, false, kSplitF32, kX>;
  };
  auto kernel = pick(std::integral_constant<int, 2>{});
  if constexpr (sizeof(T) == 4)
    if (p.t <= 8) kernel = pick(std::integral_constant<int, 1>{});
  // Once per device and kernel: the dynamic shared memory a block may use (the opt-in less
  // the kernel's static shared memory), opted in at that limit so every ring depth fits.
  const int dynamic_limit =
      cached_occupancy(std::make_pair(ctx.device, reinterpret_cast<const void*>(kernel)), [&](int* limit) {
        cudaFuncAttributes attr{};
        const cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
        if (e != cudaSuccess) return e;
        *limit = static_cast<int>(ctx.smem_per_block_optin - attr.sharedSizeBytes);
        return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, *limit);
      });
  if (dynamic_limit < Cfg::smem_bytes(2))
    throw core::Error(core::Status::DeviceError, "skinny: the TMA kernel cannot opt in to two stages of shared memory");
  const SkinnyTmaLaunch l =
      skinny_tma_launch_shape<Cfg>(shape, static_cast<int64_t>(wk.n_tiles) * wk.k_blocks, dynamic_limit, ctx);
  wk.stages = l.stages;
  const int smem = Cfg::smem_bytes(l.stages);
  // 32-bit operands as plain f32: the kernel rounds (tf32) or splits (3xTF32) them itself.
  const CUtensorMap map_w = call.w_k_major
                                ? make_tensor_map<T>(p.w, p.ldw, p.n, p.k, TmaWalk::AlongRows, true, Cfg::kBlockN)
                                : make_tensor_map<T>(p.w, p.ldw, p.k, p.n, TmaWalk::AcrossRows, true, Cfg::kBlockK);
  const CUtensorMap map_x = make_tensor_map<T>(p.x, p.ldx, p.t, p.k, TmaWalk::AlongRows, true, Cfg::kMaxT);
  wk.park_pitch = std::min(ceil_div(p.t, 2) * 2, static_cast<int>(Cfg::kMaxT));
  wk.w_evict_first = skinny_w_evict_first(call, sizeof(T), ctx);
  void* ws = nullptr;
  if (l.ctas > 1) {
    // Parked sums of cut tiles (two slots per CTA) and the ticket words per tile and warp.
    const std::size_t partial_bytes =
        static_cast<std::size_t>(2) * l.ctas * Cfg::kBlockN * wk.park_pitch * sizeof(float);
    ws = workspace_alloc(partial_bytes + static_cast<std::size_t>(wk.n_tiles) * Cfg::kConsumerWarps * sizeof(uint64_t),
                         ctx);
    wk.partials = static_cast<float*>(ws);
    wk.arrivals = reinterpret_cast<uint64_t*>(static_cast<char*>(ws) + partial_bytes);
    wk.tag = arrival_tag();
  }
  launch_kernel(dependent_launch(ctx), kernel, dim3(static_cast<unsigned>(l.ctas)), Cfg::kThreads, smem, ctx.stream,
                map_w, map_x, p, wk);
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
}

/// A TMA-path ring of as many stages as fit (skinny_tma_launch_shape caps it).
constexpr int kSkinnyTmaDeepestRing = 64;

/// A call's kernel on the rung's policy (skinny_tma_plan).
struct SkinnyTmaPlan {
  bool tma = false;      // false: skinny_kernel
  SkinnyTmaShape shape;  // the TMA path's tile, ring and grid
};

/// The choice for 32-bit elements (tf32, or exact f32 with `exact_f32`) at T > 4 (the GEMV
/// path, skinny_gemv.cuh, takes T <= 4), from the TMA path (equal shares, and a K split of
/// 128-row tiles) against skinny_kernel at T = 1-16 on the llm suite's six weights, NN and NT
/// (H200, notes/llm-gemm.md, "skinny's TMA path for 32-bit elements"): the TMA path, in equal
/// shares over the SMs, or with N-contiguous W whose 128-row tiles fit the SMs in a tiles x S
/// grid (one K chunk of a tile a CTA). Exact f32 takes the grid only where it fills 5/6 of
/// the SMs: with its three products a CTA, fewer CTAs than SMs leave compute idle (11008
/// columns, 86 CTAs, lost to equal shares at T 16), while on 4096 columns (32 x 4) the grid
/// is ahead ("Exact f32's split and tf32 rounding in fewer instructions").
inline SkinnyTmaPlan skinny_tma_plan_32(int n, bool w_k_major, int sms, bool exact_f32) {
  SkinnyTmaPlan plan;
  plan.tma = true;
  const int64_t tiles128 = ceil_div<int64_t>(n, 128);
  if (w_k_major || tiles128 > sms) return plan;
  const int64_t ctas = tiles128 * (sms / tiles128);
  if (!exact_f32 || 6 * ctas >= 5 * static_cast<int64_t>(sms))
    plan.shape = {kSkinnyTmaDeepestRing, 0, static_cast<int>(ctas), 128};
  return plan;
}

/// The rung's choice for a call the TMA path can run (T <= 16 rows of X; 32-bit elements:
/// skinny_tma_plan_32 above): skinny_kernel
/// or the TMA path with a tile and grid. `sms` is the device's SM count. In order:
///  1. Small weights, K of 2048..4096 with N in 64-row tiles for 44-100% of the SMs (4096 x
///     4096): one CTA per 64-row tile over the whole K, the deepest ring. No tile is cut,
///     nothing is parked or added, and the few long streams keep ~200 KB in flight per SM: at
///     ~30 MB the fixed costs decide, and this has the fewest. Not at T <= 8 with
///     K-contiguous W, where skinny_kernel's two blocks per SM of 32-row tiles finish first.
///  2. T <= 8 with K >= 2 N (4096 x 11008, 4096 x 14336): skinny_kernel (its K split over
///     256 blocks beat every TMA grid on these).
///  3. When 128-row tiles times S = SMs / tiles fill at least 5/6 of the SMs and each CTA
///     still streams kLongUnits units or more (14336 x 4096: 112 CTAs; 4096 x 11008: 32 x 4):
///     a grid of tiles x S, so each CTA's range is one K chunk of one tile (S = 1: nothing
///     cut), the deepest ring.
///  4. T > 8, or W giving every SM at least kTmaMinUnits units (~50 MB on 132 SMs): equal
///     shares over one CTA per SM, the ring policy of skinny_tma_launch_shape.
///  5. Otherwise skinny_kernel.
inline SkinnyTmaPlan skinny_tma_plan(int t, int n, int k, bool w_k_major, int sms, std::size_t elem_bytes = 2,
                                     bool exact_f32 = false) {
  constexpr int kSmallK = 4096;
  constexpr int64_t kTmaMinUnits = 24, kLongUnits = 32;
  SkinnyTmaPlan plan;
  if (elem_bytes == 4) return skinny_tma_plan_32(n, w_k_major, sms, exact_f32);
  const int64_t tiles64 = ceil_div<int64_t>(n, 64), tiles128 = ceil_div<int64_t>(n, 128);
  const int64_t k_blocks = ceil_div<int64_t>(k, 64);
  if (k <= kSmallK && 2 * k >= kSmallK && tiles64 <= sms && 100 * tiles64 >= 44 * static_cast<int64_t>(sms)) {
    if (t <= 8 && w_k_major) return plan;
    plan.tma = true;
    plan.shape = {kSkinnyTmaDeepestRing, 0, static_cast<int>(tiles64), 64};
    return plan;
  }
  if (t <= 8 && k >= 2 * static_cast<int64_t>(n)) return plan;
  const int64_t split = tiles128 <= sms ? sms / tiles128 : 0;
  if (split > 0 && 6 * tiles128 * split >= 5 * static_cast<int64_t>(sms) && k_blocks >= kLongUnits * split) {
    plan.tma = true;
    plan.shape = {kSkinnyTmaDeepestRing, 0, static_cast<int>(tiles128 * split), 128};
    return plan;
  }
  if (t > 8 || tiles128 * k_blocks >= kTmaMinUnits * sms) {
    plan.tma = true;
    plan.shape = {};
  }
  return plan;
}

/// Runs `call` on the TMA path with `shape`'s tile.
template <class T, bool kSplitF32>
void launch_skinny_tma_shape(const SkinnyCall& call, SkinnyTmaShape shape, const CudaContext& ctx) {
  if (shape.tile_rows == 64)
    launch_skinny_tma<T, kSplitF32, SkinnyTmaConfig<sm90::SkinnyTma64, sizeof(T)>>(call, shape, ctx);
  else
    launch_skinny_tma<T, kSplitF32>(call, shape, ctx);
}

/// The TMA path for `call` if its mode and skinny_tma_refusal let it run; true when it ran.
template <class T, bool kSplitF32>
bool try_skinny_tma(const SkinnyCall& call, const CudaContext& ctx) {
  if (call.tma_mode == SkinnyTmaMode::kOff) return false;
  const std::string refusal = skinny_tma_refusal(call, ctx);
  if (call.tma_mode == SkinnyTmaMode::kForce) {
    if (!refusal.empty())
      throw core::Error(core::Status::InvalidArgument, "skinny: the TMA path cannot run this call: " + refusal);
    launch_skinny_tma_shape<T, kSplitF32>(call, call.tma, ctx);
    return true;
  }
  if (!refusal.empty()) return false;
  const SkinnyTmaSetting setting = skinny_tma_setting();
  if (setting.off) return false;
  SkinnyTmaShape shape = setting.shape;
  if (!setting.all) {
    const SkinnyTmaPlan plan = skinny_tma_plan(call.problem.t, call.problem.n, call.problem.k, call.w_k_major,
                                               ctx.sm_count, sizeof(T), kSplitF32);
    if (!plan.tma) return false;
    shape = plan.shape;
  }
  try {
    launch_skinny_tma_shape<T, kSplitF32>(call, shape, ctx);
  } catch (const TmaEncodeError&) {
    return false;  // a shape the driver cannot describe: skinny_kernel runs it
  }
  return true;
}

/// "" when the CUDA-core GEMV path can run `call` (T <= 4, X stored K-contiguous, one batch
/// item, no forced split of skinny_kernel's), else why not.
inline std::string skinny_gemv_refusal(const SkinnyCall& call) {
  if (call.problem.t > SkinnyGemvCfg::kMaxT) return "T > " + std::to_string(SkinnyGemvCfg::kMaxT);
  if (!call.x_k_major) return "the activations are not stored K-contiguous";
  if (call.batch != 1) return "a batch";
  if (call.forced_splits > 0) return "a forced K split (skinny_kernel's)";
  return "";
}

/// K ranges per group of the GEMV path for `groups` groups of `group_bytes_per_k` bytes of W
/// per K element, `slots` blocks resident at once on `sms` SMs: three blocks per SM while the
/// groups are fewer (each SM then keeps enough loads in flight), and no block streaming more
/// than kMostBytes of W (a few long blocks would finish last); but no more blocks than one
/// wave where the groups fit one (a second, partial wave costs more than it adds); at least
/// one `grain` of K a range.
inline int skinny_gemv_splits(int64_t groups, int k, int grain, int64_t group_bytes_per_k, int sms, int64_t slots) {
  constexpr int64_t kMostBytes = 512 * 1024;
  groups = std::max<int64_t>(groups, 1);
  const int64_t fill = 3 * static_cast<int64_t>(sms) / groups;
  const int64_t stream = ceil_div<int64_t>(static_cast<int64_t>(k) * group_bytes_per_k, kMostBytes);
  const int64_t wave = slots / groups;
  int64_t splits = std::max(fill, stream);
  if (wave >= 1) splits = std::min(splits, wave);
  const int64_t most = std::max<int64_t>(ceil_div<int64_t>(k, grain), 1);
  return static_cast<int>(std::clamp<int64_t>(splits, 1, most));
}

/// Columns from which W is a vocabulary projection for the 16-bit GEMV policy.
constexpr int kSkinnyGemvVocabularyN = 65536;

/// Whether the rung's policy runs a call the GEMV path can run there, for elements of
/// `type` (F32 for tf32 and exact f32) on a device of `mem_gbps` GB/s: every 32-bit call
/// (notes/llm-gemm.md, "A CUDA-core GEMV for 32-bit decode"); 16-bit calls on the H200's
/// side of bandwidth_class.hpp, where they were measured ("A CUDA-core GEMV for 16-bit
/// decode", "The vocabulary's weight read without an L2 policy"): one token in either
/// layout (ahead of the TMA path and of wgmma_tma on the suite's weights, the vocabulary
/// included since its W is loaded plain), and two tokens at the vocabulary's width, or
/// against narrower K-contiguous W in bf16 (there f16's conversions to f32, which bf16 does
/// with a shift, cost it the lead on the long-K and 14336-wide weights, and N-contiguous W
/// reads faster on wgmma_tma's tiles; at the vocabulary the call is the weight's read at
/// the DRAM's rate). At T 3-4 two rows of X halve the loads in flight and the tensor-core
/// paths lead.
inline bool skinny_gemv_policy(const SkinnyCall& call, core::DType type, int mem_gbps) {
  if (type == core::DType::F32) return true;
  if (!high_bandwidth(mem_gbps)) return false;
  const SkinnyProblem& p = call.problem;
  if (p.t == 1) return true;
  return p.t == 2 && (p.n >= kSkinnyGemvVocabularyN || (call.w_k_major && type == core::DType::BF16));
}

/// Runs `call` on skinny_gemv_kernel<Cfg, T> (the caller checked skinny_gemv_refusal) with
/// `forced_splits` K ranges per group (0: skinny_gemv_splits); W's loads evict-first where
/// skinny_w_evict_first says so, or as `forced_evict_first` (0 / 1) says.
template <class T, class Cfg = SkinnyGemvCfg>
void launch_skinny_gemv(const SkinnyCall& call, int forced_splits, const CudaContext& ctx,
                        int forced_evict_first = -1) {
  const SkinnyProblem& p = call.problem;
  using Kernel = void (*)(SkinnyProblem, SkinnyGemvWork);
  const bool evict_first =
      forced_evict_first >= 0 ? forced_evict_first != 0 : skinny_w_evict_first(call, sizeof(T), ctx);
  // The instantiation for the call's W layout, epilogue and W policy, each a compile-time bool.
  auto as_bool = [](bool b, auto&& fn) { b ? fn(std::true_type{}) : fn(std::false_type{}); };
  auto pick = [&](auto t_rows) {
    Kernel kernel = nullptr;
    as_bool(call.w_k_major, [&](auto k_major) {
      as_bool(p.epi.active(), [&](auto epilogue) {
        as_bool(evict_first, [&](auto w_evict_first) {
          kernel = skinny_gemv_kernel<Cfg, T, decltype(t_rows)::value, decltype(k_major)::value,
                                      decltype(epilogue)::value, decltype(w_evict_first)::value>;
        });
      });
    });
    return kernel;
  };
  const int t_rows = p.t <= 1 ? 1 : p.t <= 2 ? 2 : 4;  // the instantiation's rows of X
  const Kernel kernel = t_rows == 1   ? pick(std::integral_constant<int, 1>{})
                        : t_rows == 2 ? pick(std::integral_constant<int, 2>{})
                                      : pick(std::integral_constant<int, 4>{});
  // Once per device and kernel: the blocks an SM holds (registers decide).
  const int per_sm = cached_occupancy(
      std::make_pair(ctx.device, reinterpret_cast<const void*>(kernel)),
      [&](int* count) { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(count, kernel, Cfg::kThreads, 0); });
  const int bn = Cfg::block_n(call.w_k_major, sizeof(T)), grain = Cfg::k_grain(call.w_k_major, t_rows, sizeof(T));
  const int64_t groups = ceil_div<int64_t>(p.n, bn);
  SkinnyGemvWork wk;
  const int most = std::max(ceil_div(p.k, grain), 1);
  const int splits = forced_splits > 0 ? std::min(forced_splits, most)
                                       : skinny_gemv_splits(groups, p.k, grain, bn * sizeof(T), ctx.sm_count,
                                                            static_cast<int64_t>(per_sm) * ctx.sm_count);
  wk.k_range = ceil_div(ceil_div(p.k, splits), grain) * grain;
  wk.splits = std::max(ceil_div(p.k, wk.k_range), 1);  // no empty range
  void* ws = nullptr;
  if (wk.splits > 1) {
    const std::size_t partial_bytes = static_cast<std::size_t>(groups) * wk.splits * t_rows * bn * sizeof(float);
    ws = workspace_alloc(partial_bytes + static_cast<std::size_t>(groups) * sizeof(uint64_t), ctx);
    wk.partials = static_cast<float*>(ws);
    wk.arrivals = reinterpret_cast<uint64_t*>(static_cast<char*>(ws) + partial_bytes);
    wk.tag = arrival_tag();
  }
  launch_kernel(dependent_launch(ctx), kernel, dim3(static_cast<unsigned>(groups * wk.splits)), Cfg::kThreads, 0,
                ctx.stream, p, wk);
  if (ws) GK_GPU_CHECK(cudaFreeAsync(ws, ctx.stream));
}

/// The GEMV path for `call` (elements of T: float, gpu::half_t or gpu::bf16_t) if its modes,
/// skinny_gemv_refusal and skinny_gemv_policy let it run; true when it ran. Forced where it
/// cannot run: InvalidArgument. Instantiated in skinny_gemv.cu.
template <class T>
bool try_skinny_gemv(const SkinnyCall& call, const CudaContext& ctx);

/// Launches the instantiation for the call's T and operand storage.
template <class T, bool kSplitF32>
void launch_skinny_typed(const SkinnyCall& call, const CudaContext& ctx) {
  if (try_skinny_gemv<T>(call, ctx)) return;
  if (try_skinny_tma<T, kSplitF32>(call, ctx)) return;
  auto by_layout = [&](auto nt) {
    using Cfg = SkinnyConfigFor<decltype(nt)::value, false>;
    using CfgK = SkinnyConfigFor<decltype(nt)::value, true>;
    if (call.w_k_major) {
      if (call.x_k_major)
        launch_skinny<CfgK, T, kSplitF32, true, true>(call.problem, call.forced_splits, call.batch, ctx);
      else
        launch_skinny<CfgK, T, kSplitF32, true, false>(call.problem, call.forced_splits, call.batch, ctx);
    } else {
      if (call.x_k_major)
        launch_skinny<Cfg, T, kSplitF32, false, true>(call.problem, call.forced_splits, call.batch, ctx);
      else
        launch_skinny<Cfg, T, kSplitF32, false, false>(call.problem, call.forced_splits, call.batch, ctx);
    }
  };
  switch (skinny_n_tiles(call.problem.t)) {
    case 1:
      return by_layout(std::integral_constant<int, 1>{});
    case 2:
      return by_layout(std::integral_constant<int, 2>{});
    case 4:
      return by_layout(std::integral_constant<int, 4>{});
    default:
      return by_layout(std::integral_constant<int, 8>{});
  }
}

/// Shared memory the largest configuration needs for elements of `elem_bytes`.
inline std::size_t skinny_smem_needed(std::size_t elem_bytes) {
  auto most = [](auto t) {
    using T = decltype(t);
    return static_cast<std::size_t>(
        std::max({skinny_smem_bytes<SkinnyConfigFor<1, false>, T>(), skinny_smem_bytes<SkinnyConfigFor<2, false>, T>(),
                  skinny_smem_bytes<SkinnyConfigFor<4, false>, T>(), skinny_smem_bytes<SkinnyConfigFor<8, false>, T>(),
                  skinny_smem_bytes<SkinnyConfigFor<1, true>, T>(), skinny_smem_bytes<SkinnyConfigFor<2, true>, T>()}));
  };
  return elem_bytes == 4 ? most(float{}) : most(gpu::half_t{});
}

/// skinny_run with the K split forced to `forced_splits` ranges per N tile (0: chosen by
/// occupancy, as skinny_run does); for tests of the split paths. A forced split always runs
/// skinny_kernel.
void skinny_run_split(const core::GemmArgs& args, const CudaContext& ctx, int forced_splits);

/// skinny_run on the kernel `mode` names: kForce runs the TMA path with `shape` (throws
/// InvalidArgument where it cannot), kOff skinny_kernel; for tests of both.
void skinny_run_mode(const core::GemmArgs& args, const CudaContext& ctx, SkinnyTmaMode mode, SkinnyTmaShape shape = {});

/// skinny_run on the CUDA-core GEMV path (T <= 4) with `splits` K ranges per group
/// (0: chosen) and W's loads evict-first (`evict_first` 1), plain (0) or as W's size
/// chooses (-1); throws InvalidArgument where it cannot run the call. For tests.
void skinny_run_gemv(const core::GemmArgs& args, const CudaContext& ctx, int splits, int evict_first = -1);

// One launch unit per input type (skinny_f16.cu, skinny_bf16.cu, skinny_f32.cu).
void skinny_launch_f16(const SkinnyCall& call, const CudaContext& ctx);
void skinny_launch_bf16(const SkinnyCall& call, const CudaContext& ctx);
void skinny_launch_tf32(const SkinnyCall& call, const CudaContext& ctx);
void skinny_launch_f32(const SkinnyCall& call, const CudaContext& ctx);  // exact: 3xTF32

}  // namespace gpukern::cuda::gemm
