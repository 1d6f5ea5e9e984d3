// gemm_simt_bench tune: times candidate Hopper configurations of the double_buffer kernel
// (09_double_buffer.cuh) on row-major N x N problems, next to cuBLAS in the same run, to
// choose the entries of cuda/gemm/configs/sm90.cuh. Each candidate is a tile with named
// fields, most of them a shipped entry with one field changed; only sm_90 configurations
// are instantiated.
#include "core/backend.hpp"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/simt/09_double_buffer.cuh"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace gpukern;
using namespace gpukern::cuda::gemm;

namespace {

/// 4 stages instead of 3.
struct LargeFourStages : sm90::DoubleBufferLarge {
  static constexpr int kStages = 4;
};
/// K step 8, 5 stages.
struct LargeK8 : sm90::DoubleBufferLarge {
  static constexpr int kBlockK = 8, kStages = 5;
};
/// 128 x 128, 8 x 8 outputs per thread, 4 stages.
struct Square128 : sm90::DoubleBufferLarge {
  static constexpr int kThreadN = 8, kStages = 4;
};
/// 128 x 128 with 4 warps of 8 x 16 outputs per thread, 2 blocks per SM.
struct Square128FourWarps : sm90::DoubleBufferLarge {
  static constexpr int kWarpsN = 1, kStages = 4, kMinBlocksPerSm = 2;
};

template <class Cfg, bool kVec>
void launch_nn(const SgemmProblem& p, cudaStream_t stream) {
  using T = typename Cfg::Tiling;
  auto kernel = double_buffer_kernel<Cfg, false, false, kVec>;
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const int blocks = ceil_div(p.m, T::kBlockM) * ceil_div(p.n, T::kBlockN);
  kernel<<<blocks, T::kThreads, Cfg::kSmemBytes, stream>>>(p, c_vector_ok(p), BatchLaunch{}, Epilogue{});
  GK_LAUNCH_CHECK();
}

template <class Tile>
void launch_any(const SgemmProblem& p, cudaStream_t stream) {
  using Cfg = PipelineConfig<Tile>;
  if (aligned16(p.b) && p.ldb % 4 == 0)
    launch_nn<Cfg, true>(p, stream);
  else
    launch_nn<Cfg, false>(p, stream);
}

struct Candidate {
  const char* name;
  void (*launch)(const SgemmProblem&, cudaStream_t);
};

const Candidate kCandidates[] = {
    {"large (sm90::DoubleBufferLarge)", &launch_any<sm90::DoubleBufferLarge>},
    {"large, 4 stages", &launch_any<LargeFourStages>},
    {"large, K step 8, 5 stages", &launch_any<LargeK8>},
    {"128x128, 8x8 per thread", &launch_any<Square128>},
    {"small (sm90::DoubleBufferSmall)", &launch_any<sm90::DoubleBufferSmall>},
    {"128x128, 4 warps of 8x16, 2/SM", &launch_any<Square128FourWarps>},
};

}  // namespace

int run_tune(core::Backend& backend, const std::vector<std::vector<int>>& sizes, FILE* log) {
  std::fprintf(log, "config,m,n,k,ms,gflops,pct_of_cublas\n");
  std::mt19937 rng(3);
  for (const auto& s : sizes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> ha(size_t(m) * k), hb(size_t(k) * n);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : ha) x = d(rng);
    for (auto& x : hb) x = d(rng);
    float *da, *db, *dc;
    GK_GPU_CHECK(cudaMalloc(&da, ha.size() * 4));
    GK_GPU_CHECK(cudaMalloc(&db, hb.size() * 4));
    GK_GPU_CHECK(cudaMalloc(&dc, size_t(m) * n * 4));
    GK_GPU_CHECK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    GK_GPU_CHECK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    cudaStream_t stream;
    GK_GPU_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    backend.set_stream(stream);
    core::GemmArgs args;
    args.m = m, args.n = n, args.k = k, args.lda = k, args.ldb = n, args.ldc = n;
    args.a = da, args.b = db, args.c = dc;
    const SgemmProblem p = make_problem(args);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto time = [&](const std::function<void()>& f) {
      f();
      GK_GPU_CHECK(cudaStreamSynchronize(stream));
      std::vector<float> t;
      for (int r = 0; r < 25; ++r) {
        cudaEventRecord(e0, stream);
        f();
        cudaEventRecord(e1, stream);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      return double(t[t.size() / 2]);
    };
    const double flops = 2.0 * m * n * k;
    int cublas = 0;
    const auto ladder = backend.variants(core::OpKind::Gemm);
    for (int i = 0; i < int(ladder.size()); ++i)
      if (ladder[i].name == "cublas") cublas = i;
    const double ref = time([&] { backend.gemm(args, cublas); });
    std::printf("tune %5dx%5dx%5d cublas %.3f ms %.1f GFLOP/s\n", m, n, k, ref, flops / ref / 1e6);
    std::fprintf(log, "cublas,%d,%d,%d,%.4f,%.1f,100.0\n", m, n, k, ref, flops / ref / 1e6);
    for (const auto& c : kCandidates) {
      const double ms = time([&] { c.launch(p, stream); });
      std::printf("tune %5dx%5dx%5d [%-32s] %.3f ms %.1f GFLOP/s %.1f%%\n", m, n, k, c.name, ms, flops / ms / 1e6,
                  100.0 * ref / ms);
      std::fprintf(log, "\"%s\",%d,%d,%d,%.4f,%.1f,%.1f\n", c.name, m, n, k, ms, flops / ms / 1e6, 100.0 * ref / ms);
      std::fflush(stdout);
    }
    backend.set_stream(nullptr);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(stream);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
  }
  return 0;
}
