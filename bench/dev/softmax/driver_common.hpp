// Helpers shared by the softmax development driver's files: the device context, host
// data in the three storage types, the double-precision reference, the error measure,
// and the ladder's rungs as callables.
#pragma once

#include "core/half.hpp"
#include "cuda/context.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace softmax_dev {

using gpukern::core::DType;
using gpukern::core::SoftmaxArgs;
using gpukern::cuda::CudaContext;

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

/// Device 0's context, as the module builds it (vendor::describe_device), on a
/// non-blocking stream of its own; prints the device.
inline CudaContext make_context() {
  CHECK_CUDA(cudaSetDevice(0));
  const gpukern::cuda::DeviceDescription d = gpukern::cuda::vendor::describe_device(0);
  CudaContext ctx = gpukern::cuda::make_context(0, d, nullptr);
  CHECK_CUDA(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  int mem_clock = 0;
  cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, 0);
  std::printf(
      "device: %s, %s, %d SMs, SM clock %d MHz, mem clock %d MHz, L2 %zu B, smem opt-in %zu B, "
      "driver %s, runtime %s\n",
      d.name.c_str(), d.arch.name.c_str(), ctx.sm_count, d.clock_mhz, mem_clock / 1000, ctx.l2_bytes,
      ctx.smem_per_block_optin, d.driver_version.c_str(), d.runtime_version.c_str());
  return ctx;
}

inline const char* dname(DType t) { return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16"; }
inline size_t dsize(DType t) { return t == DType::F32 ? 4 : 2; }
inline double bound(DType t) { return t == DType::F32 ? 1e-5 : t == DType::F16 ? 2e-3 : 1e-2; }

// ----- host data -----

inline uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), n / 65536 + 1));
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w) pool.emplace_back([&, w] { body(n * w / workers, n * (w + 1) / workers); });
  for (auto& t : pool) t.join();
}

/// Logical input values (already rounded to the storage type), roughly N(0, 2^2).
inline std::vector<float> make_values(int64_t n, uint64_t seed, DType t) {
  std::vector<float> v(static_cast<size_t>(n));
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      uint64_t s = seed * 0x100000001b3ull + static_cast<uint64_t>(i);
      const uint64_t r = splitmix(s);
      // Sum of four uniforms: cheap, bell-shaped, in (-8, 8).
      double u = 0;
      for (int k = 0; k < 4; ++k) u += double((r >> (16 * k)) & 0xffff) / 65536.0 - 0.5;
      float f = static_cast<float>(u * 3.5);
      if (t == DType::F16) f = gpukern::core::f16_to_float(gpukern::core::float_to_f16(f));
      if (t == DType::BF16) f = gpukern::core::bf16_to_float(gpukern::core::float_to_bf16(f));
      v[static_cast<size_t>(i)] = f;
    }
  });
  return v;
}

inline void encode(const float* src, int64_t n, DType t, void* dst) {
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (t == DType::F32)
        static_cast<float*>(dst)[i] = src[i];
      else if (t == DType::F16)
        static_cast<uint16_t*>(dst)[i] = gpukern::core::float_to_f16(src[i]);
      else
        static_cast<uint16_t*>(dst)[i] = gpukern::core::float_to_bf16(src[i]);
    }
  });
}

inline float decode(const void* base, int64_t i, DType t) {
  if (t == DType::F32) return static_cast<const float*>(base)[i];
  const uint16_t h = static_cast<const uint16_t*>(base)[i];
  return t == DType::F16 ? gpukern::core::f16_to_float(h) : gpukern::core::bf16_to_float(h);
}

/// Double-precision softmax of one row with PyTorch's special values.
inline void reference_row(const float* x, int64_t cols, bool log, double* out) {
  double m = -INFINITY;
  for (int64_t j = 0; j < cols; ++j)
    if (std::isnan(x[j]) || x[j] > m) m = std::isnan(m) ? m : x[j];
  double s = 0;
  for (int64_t j = 0; j < cols; ++j) s += std::exp(double(x[j]) - m);
  for (int64_t j = 0; j < cols; ++j) out[j] = log ? (double(x[j]) - m) - std::log(s) : std::exp(double(x[j]) - m) / s;
}

/// Relative Frobenius error over entries with a finite reference; -1 when an entry
/// whose reference is NaN / -inf is not NaN / -inf, or an output is NaN where the
/// reference is finite (unwritten outputs stay NaN from the poison).
inline double compare(const std::vector<double>& ref, const std::vector<float>& out) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double r = ref[i], o = out[i];
    if (std::isnan(r)) {
      if (!std::isnan(o)) return -1;
      continue;
    }
    if (std::isinf(r)) {
      if (o != r) return -1;
      continue;
    }
    if (!std::isfinite(o)) return -1;
    num += (o - r) * (o - r);
    den += r * r;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// A callable softmax: a registered rung, or a rung configuration for tuning.
struct Variant {
  std::string rung, config;
  std::function<std::string(const SoftmaxArgs&, const CudaContext&)> run;  // "" = ran
};

/// The ladder's rungs, each as the core runs it: declined with its verdict, an empty
/// call a no-op, else run.
inline std::vector<Variant> ladder_variants() {
  std::vector<Variant> out;
  const auto& ladder = gpukern::cuda::softmax_ladder();
  for (int i = 0; i < ladder.size(); ++i)
    out.push_back({ladder[i].name, "policy", [i](const SoftmaxArgs& a, const CudaContext& c) {
                     const auto& l = gpukern::cuda::softmax_ladder();
                     const gpukern::core::Verdict v = l.supports(i, a, c, c.arch);
                     if (!v.accepted()) return v.text();
                     if (a.rows > 0 && a.cols > 0) l.run(i, a, c);
                     return std::string();
                   }});
  return out;
}

/// The rung auto picks for the call: the first in auto's order that it tries and that
/// accepts ("" when none does).
inline std::string auto_pick(const SoftmaxArgs& a, const CudaContext& c) {
  const auto& ladder = gpukern::cuda::softmax_ladder();
  for (int i : ladder.auto_order())
    if (ladder.auto_candidate(i, a, c) && ladder.supports(i, a, c, c.arch).accepted()) return ladder[i].name;
  return {};
}

}  // namespace softmax_dev
