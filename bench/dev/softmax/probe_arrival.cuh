// The timeline probe's arrival report (softmax_phase_probe.cu): the phase copy's load
// phase with each shared-memory vector's landing time recorded.
#pragma once

#include "driver_common.hpp"
#include "probe_fold.cuh"
#include "probe_trace.cuh"

#include <algorithm>
#include <vector>

// ---- arrival probe: the phase copy's load phase (1024 threads, kPacks register
// vectors + kVecs shared-memory vectors a thread, every copy in flight at once), with each
// shared-memory slot pre-filled with a sentinel and polled by its own thread, so that the
// globaltimer of each vector's arrival is recorded: times[cta][k][tid].
__device__ unsigned long long g_arrival[128 * 16 * 1024];
template <int kPacks, int kVecs>
__global__ void __launch_bounds__(1024, 1)
    arrival_probe(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t chunk) {
  extern __shared__ uint4 staged[];
  const int tid = threadIdx.x;
  const int64_t begin = int64_t(blockIdx.x) * chunk;
  const uint4* src = x + begin + 1024 * kPacks;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) staged[tid + k * 1024] = make_uint4(~0u, ~0u, ~0u, ~0u);
  __syncthreads();
  probe_trace(0);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) arch::cp_async_16(staged + tid + k * 1024, src + tid + k * 1024);
  arch::cp_async_commit();
  uint4 r[kPacks];
  probe_fold::load_regs(r, x + begin);
  unsigned long long t[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) t[k] = 0;
  int left = kVecs;
  const volatile unsigned* words = reinterpret_cast<const volatile unsigned*>(staged);
  while (left) {
    const unsigned long long now = global_timer();
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (!t[k] && words[4 * (tid + k * 1024) + 3] != ~0u) {
        t[k] = now;
        --left;
      }
    }
  }
  unsigned acc = 0;
#pragma unroll
  for (int k = 0; k < kPacks; ++k) acc ^= r[k].x;
  if (acc == 0x12345678u) y[0] = r[0];  // the register part landed (a dependent use)
  const unsigned long long treg = global_timer();
#pragma unroll
  for (int k = 0; k < kVecs; ++k) g_arrival[(int64_t(blockIdx.x) * 16 + k) * 1024 + tid] = t[k];
  g_arrival[(int64_t(blockIdx.x) * 16 + kVecs) * 1024 + tid] = treg;
  arch::cp_async_wait<0>();
  __syncthreads();
  probe_trace(1);
#pragma unroll
  for (int k = 0; k < kPacks; ++k) __stcs(y + begin + tid + k * 1024, r[k]);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) __stcs(y + begin + 1024 * kPacks + tid + k * 1024, staged[tid + k * 1024]);
  probe_trace(3);
}

template <class K>
static void prepare(K kernel, size_t smem, bool nonportable);
static void do_flush(void* flush, size_t bytes, int value, cudaStream_t s);

static void arrival_report(const void* x, void* y, int64_t chunk, cudaStream_t stream, void* flush,
                           size_t flush_bytes) {
  constexpr int kPacks = 4, kVecs = 12;
  const size_t smem = size_t(kVecs) * 1024 * 16;
  prepare(arrival_probe<kPacks, kVecs>, smem, false);
  std::vector<unsigned long long> zero(4096 * kPoints, 0);
  CHECK_CUDA(cudaMemcpyToSymbol(g_trace, zero.data(), zero.size() * 8));
  do_flush(flush, flush_bytes, 0x33, stream);
  arrival_probe<kPacks, kVecs>
      <<<128, 1024, smem, stream>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), chunk);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaGetLastError());
  std::vector<unsigned long long> tr(4096 * kPoints), arr(128 * 16 * 1024);
  CHECK_CUDA(cudaMemcpyFromSymbol(tr.data(), g_trace, tr.size() * 8));
  CHECK_CUDA(cudaMemcpyFromSymbol(arr.data(), g_arrival, arr.size() * 8));
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < 128; ++b) t0 = std::min(t0, tr[b * kPoints]);
  auto q = [](std::vector<double> v, double f) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(f * (v.size() - 1) + 0.5))];
  };
  std::printf("-- arrival of each 16-byte vector (us after the first CTA's entry), 128 CTAs x 1024 threads\n");
  std::printf("   %-14s %7s %7s %7s %7s %7s %7s\n", "", "1%", "10%", "25%", "50%", "90%", "max");
  std::vector<double> all, prefix_done(128 * 1024, 0.0);
  for (int k = 0; k <= kVecs; ++k) {
    std::vector<double> v;
    for (int b = 0; b < 128; ++b)
      for (int t = 0; t < 1024; ++t) {
        const double u = (double(arr[(int64_t(b) * 16 + k) * 1024 + t]) - double(t0)) * 1e-3;
        v.push_back(u);
        if (k < kVecs) all.push_back(u);
      }
    std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n",
                k < kVecs ? ("smem k=" + std::to_string(k)).c_str() : "registers(4)", q(v, 0.01), q(v, 0.1), q(v, 0.25),
                q(v, 0.5), q(v, 0.9), q(v, 1.0));
  }
  std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", "all smem", q(all, 0.01), q(all, 0.1), q(all, 0.25),
              q(all, 0.5), q(all, 0.9), q(all, 1.0));
  // Per thread: when its vectors 0..k had all landed (an in-order fold's earliest start).
  for (int k : {0, 2, 5, 8, 11}) {
    std::vector<double> v;
    for (int b = 0; b < 128; ++b)
      for (int t = 0; t < 1024; ++t) {
        double m = 0;
        for (int j = 0; j <= k; ++j)
          m = std::max(m, (double(arr[(int64_t(b) * 16 + j) * 1024 + t]) - double(t0)) * 1e-3);
        v.push_back(m);
      }
    std::printf("   prefix 0..%-4d %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", k, q(v, 0.01), q(v, 0.1), q(v, 0.25),
                q(v, 0.5), q(v, 0.9), q(v, 1.0));
  }
  // Per CTA: the time by which 25/50/75/100% of its shared-memory vectors had landed.
  std::vector<double> c25, c50, c75, c100;
  for (int b = 0; b < 128; ++b) {
    std::vector<double> v;
    for (int k = 0; k < kVecs; ++k)
      for (int t = 0; t < 1024; ++t) v.push_back((double(arr[(int64_t(b) * 16 + k) * 1024 + t]) - double(t0)) * 1e-3);
    c25.push_back(q(v, 0.25));
    c50.push_back(q(v, 0.5));
    c75.push_back(q(v, 0.75));
    c100.push_back(q(v, 1.0));
  }
  for (auto& [name, v] : std::vector<std::pair<const char*, std::vector<double>*>>{
           {"CTA 25% in", &c25}, {"CTA 50% in", &c50}, {"CTA 75% in", &c75}, {"CTA all in", &c100}})
    std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  (over CTAs)\n", name, q(*v, 0.01), q(*v, 0.1),
                q(*v, 0.25), q(*v, 0.5), q(*v, 0.9), q(*v, 1.0));
  std::vector<double> ex;
  for (int b = 0; b < 128; ++b) ex.push_back((double(tr[b * kPoints + 3]) - double(t0)) * 1e-3);
  std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  (over CTAs)\n", "CTA exit", q(ex, 0.01), q(ex, 0.1),
              q(ex, 0.25), q(ex, 0.5), q(ex, 0.9), q(ex, 1.0));
}
