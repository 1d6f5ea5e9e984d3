// gemm_simt_bench tune: times candidate Hopper configurations of the double_buffer kernel
// (09_double_buffer.cuh) on row-major NN problems (N or MxNxK), each paired with cuBLAS
// after a 512 MiB memset (TUNE_NO_FLUSH=1: warm caches) and checked against cuBLAS's
// output, to choose the entries of cuda/gemm/configs/sm90.cuh. Each candidate is a tile
// with named fields, most of them a shipped entry with one field changed (the Tiny ones:
// 16-64 x 32-64 tiles with the stages' K steps split over warps); only sm_90
// configurations are instantiated.
#include "core/backend.hpp"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/simt/09_double_buffer.cuh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace gpukern;
using namespace gpukern::cuda::gemm;

namespace {

/// A fill byte that changes from one flush to the next.
int r_byte() {
  static int b = 0;
  return ++b & 0xff;
}

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

/// Tiles for calls of a few tiles (128^3-512^3): 16 or 32 rows by 32 or 64 columns of 4 x 4
/// outputs a thread, every stage's K steps split over kSplitK groups of warps.
template <int kWarpsM_, int kWarpsN_, int kSplitK_, int kBlockK_, int kStages_ = 3>
struct Tiny {
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreadM = 4, kThreadN = 4;
  static constexpr int kBlockK = kBlockK_, kStages = kStages_, kSplitK = kSplitK_;
  static constexpr int kMinBlocksPerSm = 1;
  static constexpr int kArchLo = 900, kArchHi = 999;
};

template <class Tile>
void launch_any(const SgemmProblem& p, cudaStream_t stream) {
  launch_double_buffer<PipelineConfig<Tile>, false>(p, stream, 0);
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
    {"tiny (sm90::DoubleBufferTiny)", &launch_any<sm90::DoubleBufferTiny>},
    {"128x128, 4 warps of 8x16, 2/SM", &launch_any<Square128FourWarps>},
    {"32x32 split 2, K 32", &launch_any<Tiny<2, 1, 2, 32>>},
    {"32x32 split 4, K 32", &launch_any<Tiny<2, 1, 4, 32>>},
    {"32x32 split 4, K 16, 4 stages", &launch_any<Tiny<2, 1, 4, 16, 4>>},
    {"32x32 split 8, K 32", &launch_any<Tiny<2, 1, 8, 32>>},
    {"16x32 split 4, K 32", &launch_any<Tiny<1, 1, 4, 32>>},
    {"16x32 split 8, K 32", &launch_any<Tiny<1, 1, 8, 32>>},
    {"32x64 split 4, K 32", &launch_any<Tiny<2, 2, 4, 32>>},
    {"64x32 split 4, K 32", &launch_any<Tiny<4, 1, 4, 32>>},
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
    // Each timed call follows a 512 MiB memset that evicts the operands from L2 (as
    // gpukern-bench does); a candidate is timed in one loop with cuBLAS, the two
    // alternating, so that both see the same clock.
    const bool flush = std::getenv("TUNE_NO_FLUSH") == nullptr;
    constexpr size_t kFlushBytes = size_t(512) << 20;
    void* flush_buf = nullptr;
    if (flush) GK_GPU_CHECK(cudaMalloc(&flush_buf, kFlushBytes));
    auto time_one = [&](const std::function<void()>& f) {
      if (flush) GK_GPU_CHECK(cudaMemsetAsync(flush_buf, r_byte(), kFlushBytes, stream));
      cudaEventRecord(e0, stream);
      f();
      cudaEventRecord(e1, stream);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      return ms;
    };
    auto paired = [&](const std::function<void()>& ref_f, const std::function<void()>& f, double& ref_ms) {
      ref_f();
      f();
      GK_GPU_CHECK(cudaStreamSynchronize(stream));
      std::vector<float> tr, tf;
      for (int r = 0; r < 41; ++r) {
        tr.push_back(time_one(ref_f));
        tf.push_back(time_one(f));
      }
      std::sort(tr.begin(), tr.end());
      std::sort(tf.begin(), tf.end());
      ref_ms = tr[tr.size() / 2];
      return double(tf[tf.size() / 2]);
    };
    const double flops = 2.0 * m * n * k;
    int cublas = 0;
    const auto ladder = backend.variants(core::OpKind::Gemm);
    for (int i = 0; i < int(ladder.size()); ++i)
      if (ladder[i].name == "cublas") cublas = i;
    // Checked against cuBLAS's result (max |difference| over max |cuBLAS|).
    std::vector<float> want(size_t(m) * n), got(size_t(m) * n);
    backend.gemm(args, cublas);
    GK_GPU_CHECK(cudaStreamSynchronize(stream));
    GK_GPU_CHECK(cudaMemcpy(want.data(), dc, want.size() * 4, cudaMemcpyDeviceToHost));
    float want_max = 0;
    for (float x : want) want_max = std::max(want_max, std::fabs(x));
    for (const auto& c : kCandidates) {
      GK_GPU_CHECK(cudaMemset(dc, 0xff, want.size() * 4));
      c.launch(p, stream);
      GK_GPU_CHECK(cudaStreamSynchronize(stream));
      GK_GPU_CHECK(cudaMemcpy(got.data(), dc, got.size() * 4, cudaMemcpyDeviceToHost));
      float diff = 0;
      for (size_t i = 0; i < got.size(); ++i)
        diff = std::isnan(got[i]) ? INFINITY : std::max(diff, std::fabs(got[i] - want[i]));
      double ref = 0;
      const double ms = paired([&] { backend.gemm(args, cublas); }, [&] { c.launch(p, stream); }, ref);
      std::printf("tune %5dx%5dx%5d [%-32s] %.4f ms (cuBLAS %.4f) %.1f GFLOP/s %.1f%% of cuBLAS, rel. diff %.1e\n", m,
                  n, k, c.name, ms, ref, flops / ms / 1e6, 100.0 * ref / ms, diff / want_max);
      std::fprintf(log, "\"%s\",%d,%d,%d,%.4f,%.1f,%.1f\n", c.name, m, n, k, ms, flops / ms / 1e6, 100.0 * ref / ms);
      std::fflush(stdout);
    }
    backend.set_stream(nullptr);
    if (flush_buf) cudaFree(flush_buf);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(stream);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
  }
  return 0;
}
