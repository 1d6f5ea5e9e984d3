// The timeline probe's stamps (softmax_phase_probe.cu): per-CTA %globaltimer stamps in
// g_trace, and a one-thread marker kernel launched before a traced call.
#pragma once

#include "cuda/arch/cache_policy.cuh"
#include "cuda/arch/cluster.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/softmax/softmax_common.cuh"

constexpr int kPoints = 32;  // 0 entry, 1 loaded, 2 merged, 3 exit, 4 + 2k (+1): before (after) step k's wait
__device__ unsigned long long g_trace[4096][kPoints];
__device__ unsigned long long g_mark[2];

__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void probe_trace(int point) {
  if (threadIdx.x == 0) g_trace[blockIdx.x][point] = global_timer();
}

namespace sm = gpukern::cuda::softmax;
namespace arch = gpukern::cuda::arch;

__global__ void mark_kernel(int slot) { g_mark[slot] = global_timer(); }
