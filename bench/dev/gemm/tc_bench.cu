// gemm_tc_bench: timing of the tensor-core GEMM rungs (10_wmma, 11_mma_multistage,
// 12_wgmma_tma) and of other configurations of their kernels, on a GPU machine
// (bench/dev/gemm/run_device.sh). It links the module's code (gpukern_cuda_static),
// builds a CudaContext by hand, and:
//   bench   : median time (CUDA events) of each rung and cuBLAS (cublasGemmEx, same
//             dtypes, row-major mapping) at 4096^3, 8192^3, 4097x4095x4093.
//   variants: other wgmma_tma / mma_multistage configurations side by side, bf16/f16 NN
//             (and NT with TC_NT=1)
//             (wgmma_variants(), mma_candidates(): instantiated here from the kernel
//             templates, each a shipped configuration with named fields changed).
//   power   : cuBLAS, the rung and the TC_RUNGS variants each run back to back (tc_power.cu).
//   wave    : the shipped 128x168c2 tile and variants of it (wave_variants()), bf16 NT,
//             at TC_SIZES.
//   skinny  : the skinny rung, skinny_kernel alone and TMA-path schedules (equal shares,
//             a K split of 128-row tiles, one CTA per 64-row tile, several CTAs per SM:
//             skinny_variants()), bf16 NN and NT at T = 1, 4, 16 against the
//             llm suite's weights (TC_SIZES replaces them; m is T). Run with TC_FLUSH_MB=512
//             (the weights fit the 50 MB L2 otherwise) and TC_RUNGS=skinny; TC_SKINNY="a,b"
//             times only the listed variants, TC_COPY=1 adds a same-traffic device copy,
//             TC_DTYPE=f16|tf32|f32 another input type; the gemv* variants are the
//             CUDA-core GEMV path (32-bit, T <= 4) in other configurations and K splits.
// Each timed call is paired with a cuBLAS call (alternating, so clock and temperature
// drift hit both alike) and its output compared with cuBLAS's. The correctness of the
// rungs is checked by ctest (tests/cuda/gemm, tests/conformance).
// Environment: TC_RUNGS="a,b" times only the listed rungs and variants; TC_SIZES=
// "MxNxK,..." replaces 4096^3 and 8192^3 in variants and power modes; TC_FLUSH_MB=N
// memsets N MiB before every timed call; TC_REPS=N times N pairs (default 40, 15 past 2^38
// multiply-adds).
#include "tc_bench.hpp"

#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/skinny/skinny_launch.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core/11_mma_multistage.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"
#include "support/device_random.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpukern::dev {
namespace {

using core::DType;
using namespace cuda;

struct RungEntry {
  const char* name;
  std::function<core::Verdict(const core::GemmArgs&, const CudaContext&)> supports;
  std::function<void(const core::GemmArgs&, const CudaContext&)> run;
};

std::vector<RungEntry> rungs() {
  using namespace gemm;
  return {{"wmma", wmma_supports, wmma_run},
          {"mma_multistage", mma_multistage_supports, mma_multistage_run},
          {"wgmma_tma", wgmma_tma_supports, wgmma_tma_run}};
}

// ---- mma_multistage candidates for sm_90 16-bit, tile-divisible problems (the kernel
// without bounds checks), each the shipped wide tile with named fields changed.
struct Mma128x256Stages3 : gemm::sm90::MmaMultistageWide {
  static constexpr int kBlockM = 128, kBlockN = 256, kWarpsM = 2, kWarpsN = 4, kStages = 3;
};
struct Mma256x128Stages3 : gemm::sm90::MmaMultistageWide {
  static constexpr int kStages = 3;
};

/// Small tiles for calls of a few of wgmma_tma's (128^3-1024^3), run on the bounds-checked
/// kernel (kChecked), any shape (MN-major operands need 64 columns: 128-byte swizzled rows).
template <int kM, int kN, int kWM, int kWN, int kS = 4>
struct MmaSmall : gemm::sm90::MmaMultistage {
  static constexpr int kBlockM = kM, kBlockN = kN, kWarpsM = kWM, kWarpsN = kWN, kStages = kS;
};

/// Runs sm_90 f16/bf16 calls: with kChecked = false (the kernel without bounds checks) only
/// those the config's tiles divide exactly; others are declined.
template <class Tile, bool kChecked = false>
Variant mma_candidate(const char* name, const CudaContext& ctx) {
  using Cfg = gemm::MmaMultistageConfig<Tile>;
  return {
      name, [&ctx, name](const core::GemmArgs& g) {
        if (ctx.arch.cc != 90 || g.ab_type == DType::F32 || (!kChecked && !gemm::tiles_exactly<Cfg, gpu::half_t>(g))) {
          std::printf("%s: sm_90 f16/bf16%s calls only\n", name, kChecked ? "" : " tile-divisible");
          return;
        }
        if (g.ab_type == DType::F16)
          gemm::launch_mma_layout<Cfg, gpu::half_t, kChecked, false>(g, ctx);
        else
          gemm::launch_mma_layout<Cfg, gpu::bf16_t, kChecked, false>(g, ctx);
      }};
}

std::vector<Variant> mma_candidates(const CudaContext& ctx) {
  return {mma_candidate<Mma128x256Stages3>("mma_128x256_s3", ctx),
          mma_candidate<Mma256x128Stages3>("mma_256x128_s3", ctx),
          mma_candidate<gemm::sm90::MmaMultistageWide>("mma_256x128_s4", ctx),
          mma_candidate<MmaSmall<16, 64, 1, 4>, true>("mma_s16x64", ctx),
          mma_candidate<MmaSmall<32, 64, 2, 2>, true>("mma_s32x64", ctx),
          mma_candidate<MmaSmall<32, 64, 2, 4>, true>("mma_s32x64w8", ctx),
          mma_candidate<MmaSmall<64, 64, 2, 2>, true>("mma_s64x64", ctx),
          mma_candidate<MmaSmall<64, 128, 2, 4>, true>("mma_s64x128", ctx),
          mma_candidate<MmaSmall<32, 64, 2, 2, 2>, true>("mma_s32x64st2", ctx)};
}

// ---- wgmma_tma configurations and schedule policies beside the rung's
// (sm90::WgmmaTma: 4 stages, 2 staging boxes, 2-CTA clusters with B multicast, raster
// groups of 16, serpentine rounds).
struct WgmmaNoCluster : gemm::sm90::WgmmaTma {
  static constexpr int kClusterM = 1;
};
struct WgmmaCluster4 : gemm::sm90::WgmmaTma {
  static constexpr int kClusterM = 4;
};
struct WgmmaStages3Boxes4 : gemm::sm90::WgmmaTma {  // a 16-bit slice leaves in one TMA-store round
  static constexpr int kStages = 3, kEpiBoxes = 4;
};
template <int kRows>
struct WgmmaGroup : gemm::sm90::WgmmaTma {
  static constexpr int kGroupM = kRows;
};
// Mid-size candidates beside the rung's 128x128 and 64x128 tiles (run with the K split
// the rung's table picks for the shape): 128x128 in clusters of 2 (the shipped
// 128x128c2), 128x128 with 4 stages, 64x256 (half the B tiles of 64x128 per row).
struct WgmmaMidStages4 : gemm::sm90::WgmmaTmaMid {
  static constexpr int kStages = 4;
};
struct WgmmaShortWide : gemm::sm90::WgmmaTmaShort {
  static constexpr int kBlockN = 256, kStages = 5;
};

/// The rung's policy with another serpentine order (0: every round forwards in K; 1: odd
/// rounds backwards in K, raster groups forwards).
template <int kSerpentine>
struct SerpentinePolicy {
  template <class Cfg>
  static void* plan(gemm::WgmmaSchedule& s, int ctas, const CudaContext& ctx) {
    void* ws = gemm::WgmmaTmaPolicy::plan<Cfg>(s, ctas, ctx);
    s.serpentine = kSerpentine;
    return ws;
  }
};
/// The rung's serpentine order with a fixed K split of the last partial round: helpers
/// take kHelperBlocks K blocks of each tail tile (0: no split).
template <int kHelperBlocks>
struct SplitPolicy {
  template <class Cfg>
  static void* plan(gemm::WgmmaSchedule& s, int ctas, const CudaContext& ctx) {
    s.serpentine = 3;
    return gemm::split_tail(s, ctas, {kHelperBlocks}, gemm::split_slots<Cfg>(), ctx);
  }
};

/// wgmma_tma configurations and policies timed beside the rung in variants and power
/// modes, on bf16 and f16 NN calls (only those are instantiated), each with the K split
/// the rung's table chooses for the call.
std::vector<Variant> wgmma_variants(const CudaContext& ctx) {
  using gemm::WgmmaConfig;
  // ways_forced > 0: that K split instead of the table's.
  auto with = [&ctx](auto tile, auto policy, int ways_forced = 0) {
    using Cfg = WgmmaConfig<decltype(tile)>;
    using Policy = decltype(policy);
    return [&ctx, ways_forced](const core::GemmArgs& g) {
      if (g.trans_a || g.trans_b || g.ab_type == DType::F32) {
        std::printf("wgmma variants: bf16/f16 NN calls only\n");
        return;
      }
      // 1 where the rung's table does not split
      const int ways = ways_forced > 0 ? ways_forced : gemm::choose_wgmma_config(g, ctx).ways;
      if (g.ab_type == DType::F16)
        gemm::launch_wgmma_layout<Cfg, Policy, gpu::half_t, true, false>(g, ctx, ways);
      else
        gemm::launch_wgmma_layout<Cfg, Policy, gpu::bf16_t, true, false>(g, ctx, ways);
    };
  };
  const gemm::WgmmaTmaPolicy rung{};
  return {{"c1", with(WgmmaNoCluster{}, rung)},  // no cluster: the cost model's tail split
          {"c1_nosplit", with(WgmmaNoCluster{}, SplitPolicy<0>{})},
          {"c1_split_lo", with(WgmmaNoCluster{}, SplitPolicy<1>{})},        // helpers take 1 K block
          {"c1_split_hi", with(WgmmaNoCluster{}, SplitPolicy<1 << 20>{})},  // all but one
          {"s3e4", with(WgmmaStages3Boxes4{}, rung)},
          {"g4", with(WgmmaGroup<4>{}, rung)},  // L2 raster groups of 4 / 8 / 32 tile rows
          {"g8", with(WgmmaGroup<8>{}, rung)},
          {"g32", with(WgmmaGroup<32>{}, rung)},
          {"c4", with(WgmmaCluster4{}, rung)},
          // 128x256 clusters of 4 (B read once per 512 rows) with a fixed K split, for
          // prefill-sized calls (T = 256..1024 rows): c4 at 1, 2, 4 ways, c2 at 2 and 4.
          {"c4_w1", with(WgmmaCluster4{}, rung, 1)},
          {"c4_w2", with(WgmmaCluster4{}, rung, 2)},
          {"c4_w4", with(WgmmaCluster4{}, rung, 4)},
          {"c2_w2", with(gemm::sm90::WgmmaTma{}, rung, 2)},
          {"c2_w4", with(gemm::sm90::WgmmaTma{}, rung, 4)},
          {"mid_w1", with(gemm::sm90::WgmmaTmaMid{}, rung, 1)},
          {"mid_w2", with(gemm::sm90::WgmmaTmaMid{}, rung, 2)},
          {"midc2_w1", with(gemm::sm90::WgmmaTmaMidC2{}, rung, 1)},
          {"midc2_w2", with(gemm::sm90::WgmmaTmaMidC2{}, rung, 2)},
          {"noserp", with(gemm::sm90::WgmmaTma{}, SerpentinePolicy<0>{})},
          {"serp1", with(gemm::sm90::WgmmaTma{}, SerpentinePolicy<1>{})},
          {"mid_c2", with(gemm::sm90::WgmmaTmaMidC2{}, rung)},  // shipped as 128x128c2
          {"mid_s4", with(WgmmaMidStages4{}, rung)},
          {"short_n256", with(WgmmaShortWide{}, rung)}};
}

// ---- 128x168 variants (K-major B) beside the shipped 128x168c2, for bf16 NT calls: 4
// stages, no cluster, other raster groups, one staging box a round.
struct Wave168Stages4 : gemm::sm90::WgmmaTmaWave168C2 {
  static constexpr int kStages = 4;
};
struct Wave168NoCluster : gemm::sm90::WgmmaTmaWave168C2 {
  static constexpr int kClusterM = 1;
};
template <int kRows>
struct Wave168Group : gemm::sm90::WgmmaTmaWave168C2 {
  static constexpr int kGroupM = kRows;
};
struct Wave168Boxes1 : gemm::sm90::WgmmaTmaWave168C2 {
  static constexpr int kEpiBoxes = 1;
};

/// The 128x168 variants, bf16 with A and B K-major (NT) only.
std::vector<Variant> wave_variants(const CudaContext& ctx) {
  auto with = [&ctx](auto tile, auto policy) {
    using Cfg = gemm::WgmmaConfig<decltype(tile)>;
    using Policy = decltype(policy);
    return [&ctx](const core::GemmArgs& g) {
      if (g.ab_type != DType::BF16 || g.trans_a || !g.trans_b) {
        std::printf("128x168 variants: bf16 NT calls only\n");
        return;
      }
      gemm::launch_wgmma_layout<Cfg, Policy, gpu::bf16_t, true, true>(g, ctx, 1);
    };
  };
  const gemm::WgmmaTmaPolicy rung{};
  return {{"w168", with(gemm::sm90::WgmmaTmaWave168C2{}, rung)},
          {"w168_s4", with(Wave168Stages4{}, rung)},
          {"w168_c1", with(Wave168NoCluster{}, rung)},
          {"w168_g4", with(Wave168Group<4>{}, rung)},
          {"w168_g64", with(Wave168Group<64>{}, rung)},
          {"w168_e1", with(Wave168Boxes1{}, rung)},
          {"w168_noserp", with(gemm::sm90::WgmmaTmaWave168C2{}, SerpentinePolicy<0>{})}};
}

/// skinny's kernels side by side: the rung (skinny_tma_plan's choice per shape), skinny_kernel
/// alone, and the TMA path in each of the plan's schedules forced on every shape (equal shares
/// over all SMs with the ring policy; tiles x S CTAs, one K chunk of a 128-row tile each;
/// one CTA per 64-row tile), plus several CTAs' worth of equal shares per SM.
std::vector<Variant> skinny_variants(const CudaContext& ctx) {
  using gemm::SkinnyTmaShape;
  auto tma = [&ctx](auto shape_of) {
    return [&ctx, shape_of](const core::GemmArgs& g) {
      const gemm::SkinnyCall call = gemm::make_skinny_call(g);
      const std::string why = gemm::skinny_tma_refusal(call, ctx);
      if (!why.empty()) {
        std::printf("skinny TMA variant: %s\n", why.c_str());
        return;
      }
      const SkinnyTmaShape shape = shape_of(call);
      switch (g.type()) {
        case core::GemmType::F16:
          return gemm::launch_skinny_tma_shape<gpu::half_t, false>(call, shape, ctx);
        case core::GemmType::BF16:
          return gemm::launch_skinny_tma_shape<gpu::bf16_t, false>(call, shape, ctx);
        case core::GemmType::TF32:
          return gemm::launch_skinny_tma_shape<float, false>(call, shape, ctx);
        case core::GemmType::F32:
          return gemm::launch_skinny_tma_shape<float, true>(call, shape, ctx);
      }
    };
  };
  // The CUDA-core GEMV path (T <= 4) in configuration Cfg with `splits` K ranges per group
  // (0: chosen).
  auto gemv = [&ctx](auto cfg, int splits, int evict_first = -1) {
    return [&ctx, splits, evict_first](const core::GemmArgs& g) {
      using Cfg = decltype(cfg);
      const gemm::SkinnyCall call = gemm::make_skinny_call(g);
      const std::string why = gemm::skinny_gemv_refusal(call);
      if (!why.empty()) {
        std::printf("skinny GEMV variant: %s\n", why.c_str());
        return;
      }
      gpu::with_storage_type(
          g.ab_type, [&](auto t) { gemm::launch_skinny_gemv<decltype(t), Cfg>(call, splits, ctx, evict_first); });
    };
  };
  const int sms = ctx.sm_count;
  return {
      {"skinny", [&ctx](const core::GemmArgs& g) { gemm::skinny_run(g, ctx); }},
      {"gemv", gemv(gemm::SkinnyGemvCfg{}, 0)},
      // W's loads evict-first (ld.global.cs) or plain whatever its size.
      {"gemv_cs", gemv(gemm::SkinnyGemvCfg{}, 0, 1)},
      {"gemv_nc", gemv(gemm::SkinnyGemvCfg{}, 0, 0)},
      {"gemv_c2_nc", gemv(gemm::SkinnyGemvConfig<1, 2, 8, 2>{}, 0, 0)},
      {"gemv_w4_nc", gemv(gemm::SkinnyGemvConfig<1, 2, 8, 1, 4>{}, 0, 0)},
      {"gemv_r2_nc", gemv(gemm::SkinnyGemvConfig<2, 2, 8>{}, 0, 0)},
      // N-contiguous W at T = 2 without the shipped bound of 4 blocks an SM (3 in 16 bits).
      {"gemv_o1", gemv(gemm::SkinnyGemvConfig<1, 2, 8>{}, 0)},
      // K-contiguous W: 4 loads in flight, 2 rows a warp; N-contiguous W: 4 rows in flight,
      // two 16-byte chunks a lane, 4 warps a block.
      {"gemv_k4", gemv(gemm::SkinnyGemvConfig<1, 4, 8>{}, 0)},
      {"gemv_r2", gemv(gemm::SkinnyGemvConfig<2, 2, 8>{}, 0)},
      {"gemv_n4", gemv(gemm::SkinnyGemvConfig<1, 2, 4>{}, 0)},
      {"gemv_c2", gemv(gemm::SkinnyGemvConfig<1, 2, 8, 2>{}, 0)},
      {"gemv_w4", gemv(gemm::SkinnyGemvConfig<1, 2, 8, 1, 4>{}, 0)},
      // Fixed K splits (N-contiguous W), around the chosen ones.
      {"gemv_s2", gemv(gemm::SkinnyGemvCfg{}, 2)},
      {"gemv_s3", gemv(gemm::SkinnyGemvCfg{}, 3)},
      {"gemv_s4", gemv(gemm::SkinnyGemvCfg{}, 4)},
      {"gemv_s5", gemv(gemm::SkinnyGemvCfg{}, 5)},
      {"gemv_s6", gemv(gemm::SkinnyGemvCfg{}, 6)},
      {"gemv_s8", gemv(gemm::SkinnyGemvCfg{}, 8)},
      {"gemv_s12", gemv(gemm::SkinnyGemvCfg{}, 12)},
      {"gemv_s16", gemv(gemm::SkinnyGemvCfg{}, 16)},
      {"skinny_kernel", [&ctx](const core::GemmArgs& g) { gemm::skinny_run_mode(g, ctx, gemm::SkinnyTmaMode::kOff); }},
      {"tma128", tma([](const gemm::SkinnyCall&) { return SkinnyTmaShape{}; })},
      {"split128", tma([sms](const gemm::SkinnyCall& call) {
         const int tiles = (call.problem.n + 127) / 128;
         return SkinnyTmaShape{64, 0, tiles * std::max(1, sms / tiles)};
       })},
      {"tiles64", tma([](const gemm::SkinnyCall& call) {
         return SkinnyTmaShape{64, 0, (call.problem.n + 63) / 64, 64};
       })},
      // 64-row tiles in two K halves (128 CTAs at 4096 x 4096: all SMs, one cut per tile).
      {"tiles64x2", tma([](const gemm::SkinnyCall& call) {
         return SkinnyTmaShape{64, 0, 2 * ((call.problem.n + 63) / 64), 64};
       })},
      // Four SMs' worth of equal shares: up to three 4-stage CTAs share an SM and the block
      // scheduler hands the rest to the SMs that finish first.
      {"tma128_g4", tma([sms](const gemm::SkinnyCall&) {
         return SkinnyTmaShape{4, 0, 4 * sms};
       })}};
}

CudaContext make_context() {
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  const DeviceDescription d = vendor::describe_device(dev);
  CudaContext ctx = cuda::make_context(dev, d, nullptr);
  CHECK(cudaStreamCreate(&ctx.stream));
  std::printf("device: %s, sm_%d, %d SMs, smem optin %zu, L2 %zu\n", d.name.c_str(), ctx.arch.cc, ctx.sm_count,
              ctx.smem_per_block_optin, ctx.l2_bytes);
  return ctx;
}

void fill(void* p, DType t, int64_t count, uint64_t seed, cudaStream_t s) {
  if (t == DType::F32)
    test::fill_random_window<<<1024, 256, 0, s>>>(static_cast<float*>(p), 1, count, count, seed);
  else if (t == DType::F16)
    test::fill_random_window<<<1024, 256, 0, s>>>(static_cast<gpu::half_t*>(p), 1, count, count, seed);
  else
    test::fill_random_window<<<1024, 256, 0, s>>>(static_cast<gpu::bf16_t*>(p), 1, count, count, seed);
  CHECK(cudaGetLastError());
}

}  // namespace

Bench make_bench(int64_t m, int64_t n, int64_t k, DType ab, bool tf32, bool ta, bool tb, cudaStream_t s) {
  Bench x;
  auto& g = x.g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.trans_a = ta;
  g.trans_b = tb;
  g.lda = ta ? m : k;
  g.ldb = tb ? k : n;
  g.ldc = n;
  g.ab_type = ab;
  g.c_type = ab;
  g.allow_tf32 = tf32;
  const size_t es = core::dtype_size(ab);
  // TC_ALIGN_MB=N: each operand at an N MiB boundary (the allocation N MiB larger);
  // TC_ADDR=1 prints where each operand landed (offset in its 2 MiB page).
  const size_t align = std::getenv("TC_ALIGN_MB") ? size_t(std::atol(std::getenv("TC_ALIGN_MB"))) << 20 : 0;
  auto alloc = [align](void*& raw, size_t bytes) {
    CHECK(cudaMalloc(&raw, bytes + align));
    const uintptr_t p = reinterpret_cast<uintptr_t>(raw);
    return reinterpret_cast<void*>(align ? (p + align - 1) / align * align : p);
  };
  x.a = alloc(x.raw_a, m * k * es);
  x.b = alloc(x.raw_b, k * n * es);
  x.c = alloc(x.raw_c, m * n * es);
  if (std::getenv("TC_ADDR"))
    std::printf("operands: A %#llx B %#llx C %#llx (offsets in 2 MiB: %llu %llu %llu KiB)\n", (unsigned long long)x.a,
                (unsigned long long)x.b, (unsigned long long)x.c,
                (unsigned long long)(reinterpret_cast<uintptr_t>(x.a) % (2u << 20)) >> 10,
                (unsigned long long)(reinterpret_cast<uintptr_t>(x.b) % (2u << 20)) >> 10,
                (unsigned long long)(reinterpret_cast<uintptr_t>(x.c) % (2u << 20)) >> 10);
  CHECK(cudaMalloc(&x.cref, m * n * sizeof(float)));
  fill(x.a, ab, m * k, 11, s);
  fill(x.b, ab, k * n, 12, s);
  g.a = x.a;
  g.b = x.b;
  g.c = x.c;
  return x;
}

void free_bench(Bench& x) {
  cudaFree(x.raw_a);
  cudaFree(x.raw_b);
  cudaFree(x.raw_c);
  cudaFree(x.cref);
  x = Bench{};
}

cudaDataType cuda_type(DType t) { return t == DType::F32 ? CUDA_R_32F : t == DType::F16 ? CUDA_R_16F : CUDA_R_16BF; }

void flush_before_call(int i, cudaStream_t s) {
  static const size_t bytes = std::getenv("TC_FLUSH_MB") ? size_t(std::atol(std::getenv("TC_FLUSH_MB"))) << 20 : 0;
  static void* buf = nullptr;
  if (!bytes) return;
  if (!buf) CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMemsetAsync(buf, i & 0xff, bytes, s));
}

void run_cublas(cublasHandle_t h, const core::GemmArgs& g, void* c, DType c_type) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const float alpha = g.alpha, beta = g.beta;
  const cublasComputeType_t ct =
      g.ab_type == DType::F32 && g.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasStatus_t st =
      cublasGemmEx(h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m),
                   int(g.k), &alpha, g.b, cuda_type(g.ab_type), int(g.ldb), g.a, cuda_type(g.ab_type), int(g.lda),
                   &beta, c, cuda_type(c_type), int(g.ldc), ct, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasGemmEx failed %d\n", int(st));
    std::exit(2);
  }
}

const char* dtype_label(DType t) { return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16"; }

namespace {

float median_ms(const std::function<void()>& f, cudaStream_t s, int reps) {
  for (int i = 0; i < 3; ++i) f();
  CHECK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(ev[2 * i], s));
    f();
    CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) CHECK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}

/// Medians of two calls timed alternately (ref, cand, ref, cand, ...), so clock and
/// temperature drift during the run affect both the same way; flush_before_call each.
std::pair<float, float> paired_median_ms(const std::function<void()>& ref, const std::function<void()>& cand,
                                         cudaStream_t s, int reps) {
  const auto flush = [&](int i) { flush_before_call(i, s); };
  for (int i = 0; i < 3; ++i) {
    ref();
    cand();
  }
  CHECK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> ev(4 * reps);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    flush(2 * i);
    CHECK(cudaEventRecord(ev[4 * i], s));
    ref();
    CHECK(cudaEventRecord(ev[4 * i + 1], s));
    flush(2 * i + 1);
    CHECK(cudaEventRecord(ev[4 * i + 2], s));
    cand();
    CHECK(cudaEventRecord(ev[4 * i + 3], s));
  }
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> tr(reps), tc(reps);
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventElapsedTime(&tr[i], ev[4 * i], ev[4 * i + 1]));
    CHECK(cudaEventElapsedTime(&tc[i], ev[4 * i + 2], ev[4 * i + 3]));
  }
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(tr.begin(), tr.end());
  std::sort(tc.begin(), tc.end());
  return {tr[reps / 2], tc[reps / 2]};
}

template <class CT>
__global__ void rel_err(const CT* c, const float* ref, int64_t count, double* sums) {
  double d = 0, r = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const double v = gpu::to_float(c[i]), x = ref[i];
    d += isfinite(v) ? (v - x) * (v - x) : 1e30;
    r += x * x;
  }
  atomicAdd(&sums[0], d);
  atomicAdd(&sums[1], r);
}

double error_vs(const Bench& x, cudaStream_t s) {
  double* sums;
  CHECK(cudaMalloc(&sums, 2 * sizeof(double)));
  CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), s));
  const int64_t count = x.g.m * x.g.n;
  if (x.g.ab_type == DType::F16)
    rel_err<<<512, 256, 0, s>>>(static_cast<gpu::half_t*>(x.c), static_cast<float*>(x.cref), count, sums);
  else if (x.g.ab_type == DType::BF16)
    rel_err<<<512, 256, 0, s>>>(static_cast<gpu::bf16_t*>(x.c), static_cast<float*>(x.cref), count, sums);
  else
    rel_err<<<512, 256, 0, s>>>(static_cast<float*>(x.c), static_cast<float*>(x.cref), count, sums);
  double h[2];
  CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  cudaFree(sums);
  return std::sqrt(h[0] / h[1]);
}

void bench_one(const CudaContext& ctx, cublasHandle_t h, int64_t m, int64_t n, int64_t k, DType ab, bool tf32, bool ta,
               bool tb, const std::vector<Variant>& extra) {
  Bench x = make_bench(m, n, k, ab, tf32, ta, tb, ctx.stream);
  run_cublas(h, x.g, x.cref, DType::F32);  // reference output in f32
  const int reps = std::getenv("TC_REPS")           ? std::atoi(std::getenv("TC_REPS"))
                   : m * n * k > (int64_t(1) << 38) ? 15
                                                    : 40;
  const double flop = 2.0 * m * n * k;
  const float cublas_ms = median_ms([&] { run_cublas(h, x.g, x.c, ab); }, ctx.stream, reps);
  const double cublas_err = error_vs(x, ctx.stream);
  const char* tname = tf32 ? "tf32" : dtype_label(ab);
  // Bytes of A, B and C (the memory-bound calls' measure: GB/s beside TFLOP/s).
  const double bytes = static_cast<double>(m * k + k * n + m * n) * core::dtype_size(ab);
  std::printf("%-22s %-4s %c%c %5lldx%5lldx%5lld %9.4f ms %7.1f TFLOP/s %6.0f GB/s %6.1f%%  err %.1e\n", "cublas",
              tname, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, cublas_ms,
              flop / cublas_ms / 1e9, bytes / cublas_ms / 1e6, 100.0, cublas_err);
  if (std::getenv("TC_COPY")) {
    // A device copy whose read + write traffic equals the call's bytes, alternating with
    // cuBLAS as the rungs do: the bandwidth bound of a call of this size.
    void *src = nullptr, *dst = nullptr;
    const size_t half = static_cast<size_t>(bytes / 2);
    CHECK(cudaMalloc(&src, half));
    CHECK(cudaMalloc(&dst, half));
    CHECK(cudaMemsetAsync(src, 1, half, ctx.stream));
    const auto [ref_ms, copy_ms] = paired_median_ms(
        [&] { run_cublas(h, x.g, x.c, ab); },
        [&] { CHECK(cudaMemcpyAsync(dst, src, half, cudaMemcpyDeviceToDevice, ctx.stream)); }, ctx.stream, reps);
    std::printf(
        "%-22s %-4s %c%c %5lldx%5lldx%5lld %9.4f ms %6.0f GB/s  (cublas alternating: %.0f GB/s, %.1f%% of copy)\n",
        "copy", tname, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, copy_ms,
        bytes / copy_ms / 1e6, bytes / ref_ms / 1e6, 100.0 * copy_ms / ref_ms);
    cudaFree(src);
    cudaFree(dst);
  }
  auto report = [&](const std::string& name, const std::function<void(const core::GemmArgs&)>& run) {
    CHECK(cudaMemsetAsync(x.c, 0xFF, m * n * core::dtype_size(ab), ctx.stream));
    run(x.g);
    CHECK(cudaStreamSynchronize(ctx.stream));
    CHECK(cudaGetLastError());
    const double err = error_vs(x, ctx.stream);
    const auto [ref_ms, ms] =
        paired_median_ms([&] { run_cublas(h, x.g, x.c, ab); }, [&] { run(x.g); }, ctx.stream, reps);
    std::printf(
        "%-22s %-4s %c%c %5lldx%5lldx%5lld %9.4f ms %7.1f TFLOP/s %6.0f GB/s %6.1f%%  err %.1e  (cublas "
        "alternating: %.1f TFLOP/s %.0f GB/s)\n",
        name.c_str(), tname, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, ms,
        flop / ms / 1e9, bytes / ms / 1e6, 100.0 * ref_ms / ms, err, flop / ref_ms / 1e9, bytes / ref_ms / 1e6);
  };
  // TC_RUNGS="a,b": time only these rungs (and the extras), e.g. for a short device call.
  const char* only = std::getenv("TC_RUNGS");
  for (const auto& r : rungs()) {
    if (only && !std::strstr(only, r.name)) continue;
    const std::string why = r.supports(x.g, ctx).text();
    if (!why.empty()) {
      std::printf("%-22s %-4s %c%c %5lldx%5lldx%5lld declined: %s\n", r.name, tname, ta ? 'T' : 'N', tb ? 'T' : 'N',
                  (long long)m, (long long)n, (long long)k, why.c_str());
      continue;
    }
    report(r.name, [&](const core::GemmArgs& g) { r.run(g, ctx); });
  }
  for (const auto& [name, run] : extra) report(name, run);
  std::fflush(stdout);
  free_bench(x);
}

}  // namespace
}  // namespace gpukern::dev

int main(int argc, char** argv) {
  using namespace gpukern::dev;
  const std::string mode = argc > 1 ? argv[1] : "bench";
  setvbuf(stdout, nullptr, _IONBF, 0);
  CudaContext ctx = make_context();
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(
      &attr,
      gpukern::cuda::gemm::wgmma_tma_kernel<gpukern::cuda::gemm::WgmmaConfig<gpukern::cuda::gemm::sm90::WgmmaTma>,
                                            gpukern::gpu::bf16_t, true, false, void>));
  std::printf("wgmma kernel: binaryVersion %d ptxVersion %d regs %d\n", attr.binaryVersion, attr.ptxVersion,
              attr.numRegs);

  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, ctx.stream);
  // TC_SIZES="MxNxK,...": these shapes instead of 4096^3 and 8192^3 (variants, power).
  std::vector<std::array<int64_t, 3>> shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  if (const char* list = std::getenv("TC_SIZES")) {
    shapes.clear();
    for (const char* p = list; *p;) {
      long long m = 0, n = 0, k = 0;
      int used = 0;
      if (std::sscanf(p, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3) break;
      shapes.push_back({m, n, k});
      p += used;
      if (*p == ',') ++p;
    }
  }
  if (mode == "power") {
    const Variant rung{"wgmma_tma",
                       [&ctx](const gpukern::core::GemmArgs& g) { gpukern::cuda::gemm::wgmma_tma_run(g, ctx); }};
    return power_mode(ctx, h, shapes, rung, wgmma_variants(ctx));
  }
  if (mode == "variants") {
    // mma_multistage candidates first (right after the rungs, before the wgmma variants).
    std::vector<Variant> v = mma_candidates(ctx);
    for (auto& e : wgmma_variants(ctx)) v.push_back(std::move(e));
    if (const char* only = std::getenv("TC_RUNGS")) {  // the listed rungs and variants only
      auto unlisted = [only](const auto& e) { return !std::strstr(only, e.first.c_str()); };
      v.erase(std::remove_if(v.begin(), v.end(), unlisted), v.end());
    }
    for (const DType dt : {DType::BF16, DType::F16})
      for (const auto& s : shapes)
        for (const int tb : {0, 1})  // NT calls with TC_NT=1
          if (tb == 0 || std::getenv("TC_NT")) bench_one(ctx, h, s[0], s[1], s[2], dt, false, false, tb == 1, v);
    return 0;
  }
  if (mode == "wave") {  // the 128x168 variants on bf16 NT calls (TC_SIZES)
    const std::vector<Variant> v = wave_variants(ctx);
    for (const auto& s : shapes) bench_one(ctx, h, s[0], s[1], s[2], DType::BF16, false, false, true, v);
    return 0;
  }
  if (mode == "skinny") {
    std::vector<std::array<int64_t, 3>> cases;
    if (std::getenv("TC_SIZES")) {
      cases = shapes;
    } else {
      const int64_t weights[][2] = {{4096, 4096},  {11008, 4096}, {4096, 11008},
                                    {14336, 4096}, {4096, 14336}, {128256, 4096}};
      for (int64_t t : {1, 4, 16})
        for (const auto& w : weights) cases.push_back({t, w[0], w[1]});
    }
    std::vector<Variant> v = skinny_variants(ctx);
    if (const char* only = std::getenv("TC_SKINNY")) {  // the listed variants only (exact names)
      const std::string list = std::string(",") + only + ",";
      auto unlisted = [&list](const auto& e) { return list.find("," + e.first + ",") == std::string::npos; };
      v.erase(std::remove_if(v.begin(), v.end(), unlisted), v.end());
    }
    // TC_DTYPE=f16|tf32|f32 times that input type instead of bf16.
    const std::string dt = std::getenv("TC_DTYPE") ? std::getenv("TC_DTYPE") : "bf16";
    const DType ab = dt == "f16" ? DType::F16 : dt == "tf32" || dt == "f32" ? DType::F32 : DType::BF16;
    for (const auto& s : cases)
      for (bool tb : {false, true}) bench_one(ctx, h, s[0], s[1], s[2], ab, dt == "tf32", false, tb, v);
    return 0;
  }
  if (mode != "bench") {
    std::fprintf(stderr, "usage: gemm_tc_bench bench|variants|power|skinny|wave\n");
    return 2;
  }
  const std::vector<Variant> none;
  const int64_t sizes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4097, 4095, 4093}};
  for (const auto& s : sizes) {
    bench_one(ctx, h, s[0], s[1], s[2], DType::BF16, false, false, false, none);
    bench_one(ctx, h, s[0], s[1], s[2], DType::F16, false, false, false, none);
    bench_one(ctx, h, s[0], s[1], s[2], DType::F32, true, false, false, none);
    if (s[0] == 4096) {
      bench_one(ctx, h, s[0], s[1], s[2], DType::F32, true, false, true, none);   // the layout wgmma tf32 takes
      bench_one(ctx, h, s[0], s[1], s[2], DType::BF16, false, true, true, none);  // other transposes
      bench_one(ctx, h, s[0], s[1], s[2], DType::BF16, false, false, true, none);
    }
  }
  return 0;
}
