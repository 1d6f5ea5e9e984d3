// Standalone check-and-time driver for the tensor-core GEMM rungs (10_wmma, 11_mma_multistage,
// 12_wgmma_tma), for a GPU machine without the rest of the build. It includes the rung
// sources directly (one translation unit), builds a CudaContext by hand, and:
//   check  : every rung x dtype x transpose x C type x alpha/beta over odd and aligned
//            shapes, packed and padded leading dimensions, against a double-precision
//            GPU reference; C is poisoned first and guard columns must stay untouched.
//   bench  : median time (CUDA events) of each rung and cuBLAS (cublasGemmEx, same
//            dtypes, row-major mapping) at 4096^3, 8192^3, 4097x4095x4093.
//   variants: other wgmma_tma / mma_multistage configurations side by side, bf16/f16 NN.
// mma_candidates() (unchecked mma_multistage configs, tile-divisible shapes) run in both
// check (as extra rungs) and variants (first, right after the rungs).
//   trace  : (a build with -DTC_TRACE, scripts/tc_build.sh trace) a %globaltimer timeline
//            of wgmma_tma at 4096^3 per CTA (entry, first stage, each work unit's start,
//            last epilogue, stores drained) beside cuBLAS's span, both after a 100 MiB memset.
//   power  : cuBLAS, the rung and the TC_RUNGS variants each run back to back for
//            TC_POWER_SECS seconds (default 3; TC_FLUSH_MB memsets between calls) at
//            TC_SIZES (default 4096^3), bf16 and f16, while a host thread samples NVML
//            (dlopen'ed libnvidia-ml): median time a call, mean board power and SM clock,
//            share of samples with a power-cap clock reason, energy a call.
// Build: scripts/tc_build.sh (nvcc, sm_90a). Prints "N passed, M failed" last in check.
#if defined(TC_TRACE)
__device__ unsigned long long g_wgmma_trace[1024][16];
#define GPUKERN_WGMMA_TRACE(slot)                                       \
  do {                                                                  \
    unsigned long long t_;                                              \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));              \
    g_wgmma_trace[blockIdx.x][slot] = t_;                               \
  } while (0)
#endif
#include "../src/cuda/gemm/10_wmma.cu"
#include "../src/cuda/gemm/11_mma_multistage.cu"
#include "../src/cuda/gemm/12_wgmma_tma.cu"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <atomic>
#include <thread>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace gpukern;
using namespace gpukern::cuda;
using core::DType;

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

namespace {

/// A named way to run a call (a configuration outside the rung table).
using Variant = std::pair<std::string, std::function<void(const core::GemmArgs&)>>;

struct RungEntry {
  const char* name;
  std::function<std::string(const core::GemmArgs&, const CudaContext&)> supports;
  std::function<void(const core::GemmArgs&, const CudaContext&)> run;
};

/// A wgmma_tma configuration checked like the rung (declines what the rung declines).
template <class Cfg>
RungEntry wgmma_candidate(const char* name, gemm::WgmmaOptions opt = {}) {
  return {name, gemm::gemm_wgmma_tma_supports, [opt](const core::GemmArgs& g, const CudaContext& c) {
            if (!gemm::tc_trivial_call(g, c)) gemm::launch_wgmma_config<Cfg>(g, c, opt);
          }};
}

std::vector<RungEntry> rungs() {
  using namespace gemm;
  return {{"wmma", gemm_wmma_supports, gemm_wmma},
          {"mma_multistage", gemm_mma_multistage_supports, gemm_mma_multistage},
          {"wgmma_tma", gemm_wgmma_tma_supports, gemm_wgmma_tma},
          // Candidate configurations, checked like the rung.
          wgmma_candidate<TmaGridConfig>("wgmma_c1"),  // no cluster: the rung until 2026-11-22
          wgmma_candidate<TmaCluster4Config>("wgmma_c4"),
          // The tail split forced on whenever the last round is partial: helpers take 1
          // K block (the owner usually arrives second and adds) or all but one (the
          // helper usually arrives second); and forced off.
          // (The split runs without clusters only: TmaGridConfig, and tf32 with B N-major.)
          wgmma_candidate<TmaGridConfig>("wgmma_split_lo", {1}),
          wgmma_candidate<TmaGridConfig>("wgmma_split_hi", {1 << 20}),
          wgmma_candidate<TmaGridConfig>("wgmma_nosplit", {0}),
          wgmma_candidate<WgmmaConfig<4, 1, 40, 232, 16, 2, 2>>("wgmma_stagger")};
}

/// The wgmma_tma entry of the rung table.
RungEntry wgmma_rung() {
  for (auto& r : rungs())
    if (std::strcmp(r.name, "wgmma_tma") == 0) return r;
  std::printf("no wgmma_tma rung\n");
  std::exit(2);
}

/// mma_multistage candidates for sm_90 16-bit, tile-divisible problems (the unchecked
/// kernel; other calls are declined): checked in check mode, timed in variants mode.
template <class Cfg>
RungEntry mma_candidate(const char* name) {
  using namespace gemm;
  return {name,
          [](const core::GemmArgs& g, const CudaContext& ctx) -> std::string {
            std::string r = gemm_mma_multistage_supports(g, ctx);
            if (!r.empty()) return r;
            if (ctx.arch != 90 || g.ab_type == DType::F32) return "candidate: sm_90 f16/bf16 only";
            if (!tiles_exactly<Cfg, gpu::half_t>(g)) return "candidate: tile-divisible shapes only";
            if (g.m == 0 || g.n == 0 || g.k == 0) return "candidate: non-empty";
            return {};
          },
          [](const core::GemmArgs& g, const CudaContext& ctx) {
            if (g.ab_type == DType::F16) launch_mma_layout<Cfg, gpu::half_t, false>(g, ctx);
            else launch_mma_layout<Cfg, gpu::bf16_t, false>(g, ctx);
          }};
}

std::vector<RungEntry> mma_candidates() {
  using namespace gemm;
  return {mma_candidate<MmaMultistageConfig<128, 256, 2, 4, 3, 900>>("mma_128x256_s3"),
          mma_candidate<MmaMultistageConfig<256, 128, 4, 2, 3, 900>>("mma_256x128_s3"),
          mma_candidate<MmaMultistageConfig<256, 128, 4, 2, 4, 900>>("mma_256x128_s4"),
          mma_candidate<MmaMultistageConfig<256, 128, 4, 2, 3, 900, 1, true>>("mma_256x128_s3_pers"),
          mma_candidate<MmaMultistageConfig<256, 128, 4, 2, 4, 900, 1, true>>("mma_256x128_s4_pers"),
          mma_candidate<MmaMultistageConfig<128, 256, 2, 4, 4, 900, 1, true>>("mma_128x256_s4_pers")};
}

__device__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

/// Uniform [-1, 1) values in the storage type, `count` elements.
template <class T>
__global__ void fill_random(T* p, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = gpu::from_float<T>(static_cast<float>(hash32(seed * 0x9E3779B97F4A7C15ULL + i) >> 8) / 8388608.0f - 1.0f);
}
__global__ void fill_bytes(uint16_t* p, int64_t count, uint16_t v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) p[i] = v;
}

template <class T>
__device__ double load_d(const void* p, int64_t i) { return static_cast<double>(gpu::to_float(static_cast<const T*>(p)[i])); }

/// ref = alpha * op(A) op(B) + beta * C0, in double, and (in ref[m n + i]) its
/// magnitude |alpha| sum |a b| + |beta c0|, the scale of rounding errors (BLAS error
/// analysis), so that cancellation in a tiny case cannot fail a correct kernel. tf32
/// inputs are taken exactly (f32).
template <class T, class CT>
__global__ void reference_gemm(core::GemmArgs g, const void* c0, double* ref) {
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= g.m || col >= g.n) return;
  double s = 0, mag = 0;
  for (int64_t k = 0; k < g.k; ++k) {
    const double a = load_d<T>(g.a, g.trans_a ? k * g.lda + row : row * g.lda + k);
    const double b = load_d<T>(g.b, g.trans_b ? col * g.ldb + k : k * g.ldb + col);
    s += a * b;
    mag += fabs(a * b);
  }
  double out = double(g.alpha) * s;
  mag *= fabs(double(g.alpha));
  if (g.beta != 0.0f) {
    const double c = double(g.beta) * load_d<CT>(c0, row * g.ldc + col);
    out += c;
    mag += fabs(c);
  }
  ref[row * g.n + col] = out;
  ref[g.m * g.n + row * g.n + col] = mag;
}

/// Error sums and guard check: sums (diff^2, magnitude^2), counts of non-finite outputs and
/// of touched guard cells (columns n..ldc-1 must still hold `poison`).
template <class CT>
__global__ void compare(const void* c, const double* ref, int64_t m, int64_t n, int64_t ldc, uint16_t poison16,
                        uint32_t poison32, double* sums, unsigned long long* bad) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m * ldc; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ldc, col = i % ldc;
    if (col >= n) {
      bool same;
      if constexpr (sizeof(CT) == 2) same = static_cast<const uint16_t*>(c)[i] == poison16;
      else same = static_cast<const uint32_t*>(c)[i] == poison32;
      if (!same) atomicAdd(&bad[1], 1ull);
      continue;
    }
    const double v = load_d<CT>(c, i), r = ref[row * n + col], mag = ref[m * n + row * n + col];
    if (!isfinite(v)) { atomicAdd(&bad[0], 1ull); continue; }
    atomicAdd(&sums[0], (v - r) * (v - r));
    atomicAdd(&sums[1], mag * mag);
  }
}

CudaContext make_context() {
  CudaContext ctx;
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  ctx.device = dev;
  ctx.arch = prop.major * 10 + prop.minor;
  ctx.sm_count = prop.multiProcessorCount;
  ctx.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  ctx.l2_bytes = prop.l2CacheSize;
  ctx.cluster_launch = prop.major >= 9;
  CHECK(cudaStreamCreate(&ctx.stream));
  std::printf("device: %s, sm_%d, %d SMs, smem optin %zu, L2 %zu\n", prop.name, ctx.arch, ctx.sm_count,
              ctx.smem_per_block_optin, ctx.l2_bytes);
  return ctx;
}

const char* dname(DType t) { return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16"; }

template <class F>
void dispatch_types(DType ab, DType c, F&& f) {
  if (ab == DType::F16) {
    if (c == DType::F32) f(gpu::half_t{}, float{}); else f(gpu::half_t{}, gpu::half_t{});
  } else if (ab == DType::BF16) {
    if (c == DType::F32) f(gpu::bf16_t{}, float{}); else f(gpu::bf16_t{}, gpu::bf16_t{});
  } else {
    f(float{}, float{});
  }
}

void fill(void* p, DType t, int64_t count, uint64_t seed, cudaStream_t s) {
  if (t == DType::F32) fill_random<<<1024, 256, 0, s>>>(static_cast<float*>(p), count, seed);
  else if (t == DType::F16) fill_random<<<1024, 256, 0, s>>>(static_cast<gpu::half_t*>(p), count, seed);
  else fill_random<<<1024, 256, 0, s>>>(static_cast<gpu::bf16_t*>(p), count, seed);
  CHECK(cudaGetLastError());
}

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  DType ab, c;
  bool tf32;
  float alpha, beta;
  bool aligned;  // rows of A and B padded to 16-byte multiples (+16 bytes) or packed
};

double bound(const Case& t) { return t.ab == DType::BF16 ? 1e-2 : 2e-3; }

/// Runs one case on one rung; returns 1 = pass, 0 = fail, -1 = declined.
int run_case(const RungEntry& r, const Case& t, const CudaContext& ctx, uint64_t seed, std::string* note) {
  const int64_t a_rows = t.ta ? t.k : t.m, a_cols = t.ta ? t.m : t.k;
  const int64_t b_rows = t.tb ? t.n : t.k, b_cols = t.tb ? t.k : t.n;
  core::GemmArgs g;
  g.trans_a = t.ta; g.trans_b = t.tb; g.m = t.m; g.n = t.n; g.k = t.k; g.alpha = t.alpha; g.beta = t.beta;
  const auto ld_of = [&](int64_t cols) { return t.aligned ? (cols + 7) / 8 * 8 + 8 : cols; };
  g.lda = ld_of(a_cols); g.ldb = ld_of(b_cols); g.ldc = t.n + ((seed & 1) ? 3 : 8);
  g.ab_type = t.ab; g.c_type = t.c; g.allow_tf32 = t.tf32;
  const size_t es = core::dtype_size(t.ab), cs = core::dtype_size(t.c);
  void *a, *b, *c, *c0;
  double *ref, *sums;
  unsigned long long* bad;
  CHECK(cudaMalloc(&a, std::max<int64_t>(1, a_rows * g.lda) * es));
  CHECK(cudaMalloc(&b, std::max<int64_t>(1, b_rows * g.ldb) * es));
  CHECK(cudaMalloc(&c, std::max<int64_t>(1, t.m * g.ldc) * cs));
  CHECK(cudaMalloc(&c0, std::max<int64_t>(1, t.m * g.ldc) * cs));
  CHECK(cudaMalloc(&ref, std::max<int64_t>(1, 2 * t.m * t.n) * sizeof(double)));
  CHECK(cudaMalloc(&sums, 2 * sizeof(double)));
  CHECK(cudaMalloc(&bad, 2 * sizeof(unsigned long long)));
  g.a = a; g.b = b; g.c = c;
  int result = -1;
  const std::string reason = r.supports(g, ctx);
  if (reason.empty()) {
    fill(a, t.ab, a_rows * g.lda, seed * 3 + 1, ctx.stream);
    fill(b, t.ab, b_rows * g.ldb, seed * 3 + 2, ctx.stream);
    // Poison: NaN bit patterns everywhere in C, then random values in range when beta != 0.
    const uint16_t p16 = t.c == DType::F16 ? 0x7E01 : 0x7FC1;
    const uint32_t p32 = 0x7FC00001u;
    if (cs == 2) fill_bytes<<<256, 256, 0, ctx.stream>>>(static_cast<uint16_t*>(c), t.m * g.ldc, p16);
    else fill_bytes<<<256, 256, 0, ctx.stream>>>(static_cast<uint16_t*>(c), 2 * t.m * g.ldc, 0x7FC0);
    if (t.beta != 0.0f) {
      // random C in the valid columns, NaN in the guard columns
      void* tmp;
      CHECK(cudaMalloc(&tmp, std::max<int64_t>(1, t.m * t.n) * cs));
      fill(tmp, t.c, t.m * t.n, seed * 3 + 3, ctx.stream);
      CHECK(cudaMemcpy2DAsync(c, g.ldc * cs, tmp, t.n * cs, t.n * cs, t.m, cudaMemcpyDeviceToDevice, ctx.stream));
      CHECK(cudaStreamSynchronize(ctx.stream));
      CHECK(cudaFree(tmp));
    }
    const uint32_t guard32 = cs == 4 ? 0x7FC07FC0u : p32;
    CHECK(cudaMemcpyAsync(c0, c, t.m * g.ldc * cs, cudaMemcpyDeviceToDevice, ctx.stream));
    r.run(g, ctx);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), ctx.stream));
    CHECK(cudaMemsetAsync(bad, 0, 2 * sizeof(unsigned long long), ctx.stream));
    dispatch_types(t.ab, t.c, [&](auto in, auto out) {
      using T = decltype(in);
      using CT = decltype(out);
      dim3 block(16, 16), grid((t.n + 15) / 16, (t.m + 15) / 16);
      if (t.m > 0 && t.n > 0) reference_gemm<T, CT><<<grid, block, 0, ctx.stream>>>(g, c0, ref);
      compare<CT><<<256, 256, 0, ctx.stream>>>(c, ref, t.m, t.n, g.ldc, p16, guard32, sums, bad);
    });
    CHECK(cudaStreamSynchronize(ctx.stream));
    CHECK(cudaGetLastError());
    double hs[2];
    unsigned long long hb[2];
    CHECK(cudaMemcpy(hs, sums, sizeof(hs), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hb, bad, sizeof(hb), cudaMemcpyDeviceToHost));
    const double err = hs[1] > 0 ? std::sqrt(hs[0] / hs[1]) : std::sqrt(hs[0]);
    result = (hb[0] == 0 && hb[1] == 0 && err <= bound(t)) ? 1 : 0;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "err %.2e nonfinite %llu guard %llu", err, hb[0], hb[1]);
    *note = buf;
  } else {
    *note = reason;
  }
  cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(c0); cudaFree(ref); cudaFree(sums); cudaFree(bad);
  return result;
}

int check_mode(const CudaContext& ctx) {
  struct Shape { int64_t m, n, k; };
  const Shape shapes[] = {{1, 1, 1}, {7, 33, 13}, {127, 129, 65}, {128, 256, 64}, {256, 512, 192}, {257, 255, 300}, {300, 520, 1000}, {1, 300, 40}, {513, 1, 77}, {64, 64, 0}, {2050, 2568, 72}, {2050, 2568, 1000}};
  const struct { DType ab; bool tf32; } types[] = {{DType::F16, false}, {DType::BF16, false}, {DType::F32, true}};
  int pass = 0, fail = 0, declined = 0;
  uint64_t seed = 1;
  std::vector<RungEntry> all = rungs();
  for (auto& c : mma_candidates()) all.push_back(c);
  if (const char* only = std::getenv("TC_RUNGS"))  // the listed rungs only
    all.erase(std::remove_if(all.begin(), all.end(), [only](const RungEntry& r) { return !std::strstr(only, r.name); }),
              all.end());
  for (const auto& r : all)
    for (const auto& ty : types)
      for (int lay = 0; lay < 4; ++lay)
        for (const auto& s : shapes)
          for (int variant = 0; variant < 5; ++variant) {
            Case t{s.m, s.n, s.k, bool(lay & 1), bool(lay & 2), ty.ab, ty.ab, ty.tf32, 1.0f, 0.0f, false};
            if (variant & 1) t.c = DType::F32;
            if (variant & 2) { t.alpha = 0.75f; t.beta = -1.25f; }
            t.aligned = variant == 1 || variant == 2;
            if (variant == 4) { t.alpha = 0.75f; t.aligned = true; }  // C in the input type, beta = 0, padded rows
            std::string note;
            const int res = run_case(r, t, ctx, ++seed, &note);
            if (res < 0) { ++declined; continue; }
            (res ? pass : fail) += 1;
            if (!res || (s.m == 300 && variant == 0))
              std::printf("%-5s %-15s %-4s%s C=%-4s %c%c %lldx%lldx%lld a=%.2f b=%.2f %s: %s\n", res ? "ok" : "FAIL",
                          r.name, ty.tf32 ? "tf32" : dname(ty.ab), "", dname(t.c), t.ta ? 'T' : 'N', t.tb ? 'T' : 'N',
                          (long long)s.m, (long long)s.n, (long long)s.k, t.alpha, t.beta, t.aligned ? "aligned" : "packed", note.c_str());
          }
  // Reasons given when declining, one per rung and type.
  for (const auto& r : rungs())
    for (const auto& ty : types) {
      core::GemmArgs g;
      g.m = 301; g.n = 520; g.k = 1001; g.lda = 1001; g.ldb = 520; g.ldc = 520; g.ab_type = ty.ab; g.c_type = ty.ab;
      g.allow_tf32 = ty.tf32; g.a = g.b = g.c = reinterpret_cast<void*>(256);
      std::printf("decline %-15s %-4s NN lda=1001: '%s'\n", r.name, ty.tf32 ? "tf32" : dname(ty.ab), r.supports(g, ctx).c_str());
    }
  std::printf("declined %d\n%d passed, %d failed\n", declined, pass, fail);
  return fail == 0 ? 0 : 1;
}

// ------------------------------------------------------------------ timing

struct Bench {
  core::GemmArgs g;
  void *a = nullptr, *b = nullptr, *c = nullptr, *cref = nullptr;
};

Bench make_bench(int64_t m, int64_t n, int64_t k, DType ab, bool tf32, bool ta, bool tb, cudaStream_t s) {
  Bench x;
  auto& g = x.g;
  g.m = m; g.n = n; g.k = k; g.trans_a = ta; g.trans_b = tb;
  g.lda = ta ? m : k; g.ldb = tb ? k : n; g.ldc = n;
  g.ab_type = ab; g.c_type = ab; g.allow_tf32 = tf32;
  const size_t es = core::dtype_size(ab);
  CHECK(cudaMalloc(&x.a, m * k * es));
  CHECK(cudaMalloc(&x.b, k * n * es));
  CHECK(cudaMalloc(&x.c, m * n * es));
  CHECK(cudaMalloc(&x.cref, m * n * sizeof(float)));
  fill(x.a, ab, m * k, 11, s);
  fill(x.b, ab, k * n, 12, s);
  g.a = x.a; g.b = x.b; g.c = x.c;
  return x;
}

cudaDataType cuda_type(DType t) { return t == DType::F32 ? CUDA_R_32F : t == DType::F16 ? CUDA_R_16F : CUDA_R_16BF; }

void run_cublas(cublasHandle_t h, const core::GemmArgs& g, void* c, DType c_type) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const float alpha = g.alpha, beta = g.beta;
  const cublasComputeType_t ct = g.ab_type == DType::F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasStatus_t st = cublasGemmEx(h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   int(g.n), int(g.m), int(g.k), &alpha, g.b, cuda_type(g.ab_type), int(g.ldb), g.a,
                                   cuda_type(g.ab_type), int(g.lda), &beta, c, cuda_type(c_type), int(g.ldc), ct,
                                   CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) { std::printf("cublasGemmEx failed %d\n", int(st)); std::exit(2); }
}

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

/// TC_FLUSH_MB=N: an untimed memset of N MiB before every timed call, as gpukern-bench
/// does (the GPU then starts each call with cold caches and rested power); no-op unset.
void flush_before_call(int i, cudaStream_t s) {
  static const size_t bytes = std::getenv("TC_FLUSH_MB") ? size_t(std::atol(std::getenv("TC_FLUSH_MB"))) << 20 : 0;
  static void* buf = nullptr;
  if (!bytes) return;
  if (!buf) CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMemsetAsync(buf, i & 0xff, bytes, s));
}

/// Medians of two calls timed alternately (ref, cand, ref, cand, ...), so clock and
/// temperature drift during the run affect both the same way; flush_before_call each.
std::pair<float, float> paired_median_ms(const std::function<void()>& ref, const std::function<void()>& cand,
                                         cudaStream_t s, int reps) {
  const auto flush = [&](int i) { flush_before_call(i, s); };
  for (int i = 0; i < 3; ++i) { ref(); cand(); }
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
  if (x.g.ab_type == DType::F16) rel_err<<<512, 256, 0, s>>>(static_cast<gpu::half_t*>(x.c), static_cast<float*>(x.cref), count, sums);
  else if (x.g.ab_type == DType::BF16) rel_err<<<512, 256, 0, s>>>(static_cast<gpu::bf16_t*>(x.c), static_cast<float*>(x.cref), count, sums);
  else rel_err<<<512, 256, 0, s>>>(static_cast<float*>(x.c), static_cast<float*>(x.cref), count, sums);
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
  const int reps = m * n * k > (int64_t(1) << 38) ? 15 : 40;
  const double flop = 2.0 * m * n * k;
  const float cublas_ms = median_ms([&] { run_cublas(h, x.g, x.c, ab); }, ctx.stream, reps);
  const double cublas_err = error_vs(x, ctx.stream);
  const char* tname = tf32 ? "tf32" : dname(ab);
  std::printf("%-22s %-4s %c%c %5lldx%5lldx%5lld %8.3f ms %7.1f TFLOP/s %6.1f%%  err %.1e\n", "cublas", tname,
              ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, cublas_ms,
              flop / cublas_ms / 1e9, 100.0, cublas_err);
  auto report = [&](const std::string& name, const std::function<void(const core::GemmArgs&)>& run) {
    CHECK(cudaMemsetAsync(x.c, 0xFF, m * n * core::dtype_size(ab), ctx.stream));
    run(x.g);
    CHECK(cudaStreamSynchronize(ctx.stream));
    CHECK(cudaGetLastError());
    const double err = error_vs(x, ctx.stream);
    const auto [ref_ms, ms] = paired_median_ms([&] { run_cublas(h, x.g, x.c, ab); }, [&] { run(x.g); }, ctx.stream, reps);
    std::printf("%-22s %-4s %c%c %5lldx%5lldx%5lld %8.3f ms %7.1f TFLOP/s %6.1f%%  err %.1e  (cublas alternating: %.1f)\n",
                name.c_str(), tname, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, ms,
                flop / ms / 1e9, 100.0 * ref_ms / ms, err, flop / ref_ms / 1e9);
  };
  // TC_RUNGS="a,b": time only these rungs (and the extras), e.g. for a short device call.
  const char* only = std::getenv("TC_RUNGS");
  for (const auto& r : rungs()) {
    if (only && !std::strstr(only, r.name)) continue;
    const std::string why = r.supports(x.g, ctx);
    if (!why.empty()) {
      std::printf("%-22s %-4s %c%c %5lldx%5lldx%5lld declined: %s\n", r.name, tname, ta ? 'T' : 'N', tb ? 'T' : 'N',
                  (long long)m, (long long)n, (long long)k, why.c_str());
      continue;
    }
    report(r.name, [&](const core::GemmArgs& g) { r.run(g, ctx); });
  }
  for (const auto& [name, run] : extra) report(name, run);
  if (extra.empty() && !only && gemm::gemm_wgmma_tma_supports(x.g, ctx).empty())  // beside it: no cluster
    report("wgmma_tma_c1", [&](const core::GemmArgs& g) { gemm::launch_wgmma_config<gemm::TmaGridConfig>(g, ctx); });
  std::fflush(stdout);
  cudaFree(x.a); cudaFree(x.b); cudaFree(x.c); cudaFree(x.cref);
}

}  // namespace

/// wgmma_tma configurations beside the rung (TmaConfig: 4 stages, 2 staging boxes,
/// 2-CTA clusters with B multicast, no stagger), timed in variants and power modes and
/// traced by name in trace mode. They dispatch on the call's dtype themselves: one list
/// serves bf16 and f16.
std::vector<Variant> wgmma_variants(const CudaContext& ctx) {
  using namespace gemm;
  auto with = [&ctx](auto cfg, WgmmaOptions opt = {}) {
    using Cfg = decltype(cfg);
    return [&ctx, opt](const core::GemmArgs& g) { launch_wgmma_config<Cfg>(g, ctx, opt); };
  };
  return {{"c1", with(TmaGridConfig{})},                               // no cluster, stagger 1, tail split
          {"c1_nosplit", with(TmaGridConfig{}, {0})},
          {"c1_s3e4", with(WgmmaConfig<3, 1, 40, 232, 16, 4, 1>{})},   // the rung before 2026-11-22
          {"s1", with(WgmmaConfig<4, 2, 40, 232, 16, 2, 1>{})},        // consumer stagger 1
          {"s3e4", with(WgmmaConfig<3, 2, 40, 232, 16, 4, 0>{})},      // 3 stages, 4 staging boxes
          {"g4", with(WgmmaConfig<4, 2, 40, 232, 4, 2, 0>{})},         // L2 raster groups of 4 / 8 / 32
          {"g8", with(WgmmaConfig<4, 2, 40, 232, 8, 2, 0>{})},
          {"g32", with(WgmmaConfig<4, 2, 40, 232, 32, 2, 0>{})},
          {"c4", with(TmaCluster4Config{})},
          {"noserp", with(TmaConfig{}, {-1, 0})},                      // every round walks K forwards
          {"serp1", with(TmaConfig{}, {-1, 1})}};                      // odd rounds backwards in K, no snake
}


/// NVML through dlopen (no nvml.h on the build machine): the few calls power mode needs.
struct Nvml {
  using Dev = void*;
  int (*init)() = nullptr;
  int (*handle)(unsigned, Dev*) = nullptr;
  int (*power)(Dev, unsigned*) = nullptr;                 // milliwatts
  int (*clock)(Dev, int, unsigned*) = nullptr;            // 1 = SM clock, MHz
  int (*reasons)(Dev, unsigned long long*) = nullptr;     // clock event reasons bit mask
  int (*temp)(Dev, int, unsigned*) = nullptr;
  Dev dev = nullptr;
  bool ok = false;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return;
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    handle = reinterpret_cast<int (*)(unsigned, Dev*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    power = reinterpret_cast<int (*)(Dev, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    clock = reinterpret_cast<int (*)(Dev, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    reasons = reinterpret_cast<int (*)(Dev, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons) reasons = reinterpret_cast<int (*)(Dev, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    temp = reinterpret_cast<int (*)(Dev, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetTemperature"));
    int cur = 0;
    CHECK(cudaGetDevice(&cur));
    ok = init && handle && power && clock && reasons && temp && init() == 0 && handle(unsigned(cur), &dev) == 0;
  }
};

/// Runs `f` back to back (with TC_FLUSH_MB memsets between calls) for `secs` seconds
/// while sampling NVML every 5 ms after the first second; prints one line.
void power_phase(const Nvml& nv, const char* name, const char* tname, double flop, const std::function<void()>& f,
                 cudaStream_t s, double secs) {
  std::atomic<bool> sampling{false}, stop{false};
  double p_sum = 0, c_sum = 0, t_max = 0;
  long samples = 0, capped = 0;
  std::thread sampler([&] {
    while (!stop.load()) {
      if (sampling.load() && nv.ok) {
        unsigned mw = 0, mhz = 0, deg = 0;
        unsigned long long why = 0;
        nv.power(nv.dev, &mw);
        nv.clock(nv.dev, 1, &mhz);
        nv.reasons(nv.dev, &why);
        nv.temp(nv.dev, 0, &deg);
        p_sum += mw / 1000.0;
        c_sum += mhz;
        t_max = std::max(t_max, double(deg));
        capped += (why & 0x4ull) ? 1 : 0;  // software power cap
        ++samples;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  constexpr int kBatch = 64;
  std::vector<cudaEvent_t> ev(2 * kBatch);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  std::vector<float> times;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > secs) break;
    sampling.store(el > 1.0);
    for (int i = 0; i < kBatch; ++i) {
      flush_before_call(i, s);
      CHECK(cudaEventRecord(ev[2 * i], s));
      f();
      CHECK(cudaEventRecord(ev[2 * i + 1], s));
    }
    CHECK(cudaStreamSynchronize(s));
    if (el > 1.0)
      for (int i = 0; i < kBatch; ++i) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        times.push_back(ms);
      }
  }
  stop.store(true);
  sampler.join();
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(times.begin(), times.end());
  const double ms = times.empty() ? 0 : times[times.size() / 2];
  const double watts = samples ? p_sum / samples : 0, mhz = samples ? c_sum / samples : 0;
  std::printf("power %-10s %-4s %8.4f ms %7.1f TFLOP/s  %6.1f W %6.0f MHz  capped %5.1f%%  %6.1f mJ/call  %4.0f C  (%zu calls, %ld samples)\n",
              name, tname, ms, flop / ms / 1e9, watts, mhz, samples ? 100.0 * capped / samples : 0.0, watts * ms,
              t_max, times.size(), samples);
}

int power_mode(const CudaContext& ctx, cublasHandle_t h, const std::vector<std::array<int64_t, 3>>& shapes) {
  const Nvml nv;
  if (!nv.ok) std::printf("NVML not available: times only\n");
  const double secs = std::getenv("TC_POWER_SECS") ? std::atof(std::getenv("TC_POWER_SECS")) : 3.0;
  const RungEntry rung = wgmma_rung();
  auto variants = wgmma_variants(ctx);
  const char* only = std::getenv("TC_RUNGS");
  for (const DType dt : {DType::BF16, DType::F16})
    for (const auto& sh : shapes) {
      Bench x = make_bench(sh[0], sh[1], sh[2], dt, false, false, false, ctx.stream);
      const double flop = 2.0 * sh[0] * sh[1] * sh[2];
      const char* tname = dname(dt);
      std::printf("%lldx%lldx%lld %s\n", (long long)sh[0], (long long)sh[1], (long long)sh[2], tname);
      auto cub = [&] { run_cublas(h, x.g, x.c, dt); };
      power_phase(nv, "cublas", tname, flop, cub, ctx.stream, secs);
      power_phase(nv, "wgmma_tma", tname, flop, [&] { rung.run(x.g, ctx); }, ctx.stream, secs);
      for (auto& [name, run] : variants)
        if (only && std::strstr(only, name.c_str()))
          power_phase(nv, name.c_str(), tname, flop, [&, run = run] { run(x.g); }, ctx.stream, secs);
      power_phase(nv, "cublas", tname, flop, cub, ctx.stream, secs);
      power_phase(nv, "wgmma_tma", tname, flop, [&] { rung.run(x.g, ctx); }, ctx.stream, secs);
      cudaFree(x.a); cudaFree(x.b); cudaFree(x.c); cudaFree(x.cref);
    }
  return 0;
}

#if defined(TC_TRACE)
__global__ void stamp(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}

/// Per-CTA timeline of wgmma_tma (slots of GPUKERN_WGMMA_TRACE in 12_wgmma_tma.cu) and the
/// spans of both libraries between stamps, each call after a 100 MiB memset.
int trace_mode(const CudaContext& ctx, cublasHandle_t h) {
  void* flush = nullptr;
  const size_t flush_bytes = size_t(100) << 20;
  CHECK(cudaMalloc(&flush, flush_bytes));
  // Device memory (managed memory faulted on every first stamp after the host read it:
  // tens to hundreds of microseconds before the next kernel could start).
  unsigned long long* stamps = nullptr;
  unsigned long long host_stamps[4];
  CHECK(cudaMalloc(&stamps, sizeof(host_stamps)));
  void* trace_ptr = nullptr;
  CHECK(cudaGetSymbolAddress(&trace_ptr, g_wgmma_trace));
  const RungEntry rung = wgmma_rung();
  // TC_TRACE_VARIANT: the rung (default) or one of wgmma_variants() by name.
  const std::string variant = std::getenv("TC_TRACE_VARIANT") ? std::getenv("TC_TRACE_VARIANT") : "rung";
  std::function<void(const core::GemmArgs&)> run = [&](const core::GemmArgs& g) { rung.run(g, ctx); };
  for (auto& [name, f] : wgmma_variants(ctx))
    if (name == variant) run = f;
  std::printf("trace of %s\n", variant.c_str());
  for (const DType dt : {DType::BF16, DType::F16}) {
    Bench x = make_bench(4096, 4096, 4096, dt, false, false, false, ctx.stream);
    for (int i = 0; i < 3; ++i) { run(x.g); run_cublas(h, x.g, x.c, dt); }
    for (int rep = 0; rep < 6; ++rep) {
      static unsigned long long host[1024][16];
      CHECK(cudaMemsetAsync(trace_ptr, 0, sizeof(host), ctx.stream));
      CHECK(cudaMemsetAsync(flush, rep & 0xff, flush_bytes, ctx.stream));
      stamp<<<1, 1, 0, ctx.stream>>>(&stamps[0]);
      const auto h0 = std::chrono::steady_clock::now();
      run(x.g);
      const auto h1 = std::chrono::steady_clock::now();
      stamp<<<1, 1, 0, ctx.stream>>>(&stamps[1]);
      CHECK(cudaMemsetAsync(flush, (rep + 7) & 0xff, flush_bytes, ctx.stream));
      stamp<<<1, 1, 0, ctx.stream>>>(&stamps[2]);
      const auto h2 = std::chrono::steady_clock::now();
      run_cublas(h, x.g, x.c, dt);
      const auto h3 = std::chrono::steady_clock::now();
      stamp<<<1, 1, 0, ctx.stream>>>(&stamps[3]);
      CHECK(cudaStreamSynchronize(ctx.stream));
      CHECK(cudaMemcpy(host, trace_ptr, sizeof(host), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(host_stamps, stamps, sizeof(host_stamps), cudaMemcpyDeviceToHost));
      const double t0 = double(host_stamps[0]);
      int ctas = 0;
      while (ctas < 1024 && host[ctas][0] != 0) ++ctas;
      auto col = [&](int slot, double& lo, double& med, double& hi, int& n) {
        std::vector<double> v;
        for (int c = 0; c < ctas; ++c)
          if (host[c][slot] != 0) v.push_back((double(host[c][slot]) - t0) / 1e3);
        n = static_cast<int>(v.size());
        std::sort(v.begin(), v.end());
        lo = v.empty() ? 0 : v.front();
        med = v.empty() ? 0 : v[v.size() / 2];
        hi = v.empty() ? 0 : v.back();
      };
      std::printf("%s rep %d: host %.1f us a wgmma_tma call, %.1f us a cuBLAS call\n", dname(dt), rep,
                  std::chrono::duration<double, std::micro>(h1 - h0).count(),
                  std::chrono::duration<double, std::micro>(h3 - h2).count());
      std::printf("%s rep %d: wgmma_tma span %.1f us (%d CTAs), cuBLAS span %.1f us\n", dname(dt), rep,
                  (double(host_stamps[1]) - t0) / 1e3, ctas, (double(host_stamps[3]) - double(host_stamps[2])) / 1e3);
      const char* names[15] = {"entry", "unit 0", "unit 1", "unit 2", "unit 3", "unit 4", "unit 5", "unit 6",
                               "unit 7", "unit 8", "unit 9", "unit 10", "last epilogue", "first stage", "drained"};
      for (int slot : {0, 13, 1, 2, 3, 4, 5, 12, 14}) {
        double lo, med, hi;
        int n;
        col(slot, lo, med, hi, n);
        if (n > 0) std::printf("  %-14s n %3d  min %7.2f  median %7.2f  max %7.2f us\n", names[slot], n, lo, med, hi);
      }
    }
    cudaFree(x.a); cudaFree(x.b); cudaFree(x.c); cudaFree(x.cref);
  }
  return 0;
}
#endif

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  setvbuf(stdout, nullptr, _IONBF, 0);
  CudaContext ctx = make_context();
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, gemm::wgmma_tma_kernel<gemm::TmaConfig, gpu::bf16_t, true, false, void>));
  std::printf("wgmma kernel: binaryVersion %d ptxVersion %d regs %d\n", attr.binaryVersion, attr.ptxVersion, attr.numRegs);
  if (mode == "check") return check_mode(ctx);

  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, ctx.stream);
  std::vector<Variant> none;
#if defined(TC_TRACE)
  if (mode == "trace") return trace_mode(ctx, h);
#endif
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
  if (mode == "power") return power_mode(ctx, h, shapes);
  if (mode == "variants") {
    using namespace gemm;
    // mma_multistage candidates first (right after the rungs, before the wgmma variants).
    std::vector<Variant> v;
    for (const auto& c : mma_candidates()) v.push_back({c.name, [&ctx, run = c.run](const core::GemmArgs& g) { run(g, ctx); }});
    for (auto& e : wgmma_variants(ctx)) v.push_back(std::move(e));
    if (const char* only = std::getenv("TC_RUNGS")) {  // the listed rungs and variants only
      auto unlisted = [only](const auto& e) { return !std::strstr(only, e.first.c_str()); };
      v.erase(std::remove_if(v.begin(), v.end(), unlisted), v.end());
    }
    for (const DType dt : {DType::BF16, DType::F16})
      for (const auto& s : shapes) bench_one(ctx, h, s[0], s[1], s[2], dt, false, false, false, v);
    return 0;
  }
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
