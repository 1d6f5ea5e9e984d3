// The timeline probe's copy kernels (softmax_phase_probe.cu): a grid-stride copy, and
// the phase copy -- split_row's one-wave load, barrier and store phases with no
// arithmetic -- in several cache-hint flavors.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "probe_trace.cuh"

__global__ void __launch_bounds__(256) stream_copy(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = __ldcs(x + i + k * stride);
#pragma unroll
    for (int k = 0; k < 4; ++k) __stcs(y + i + k * stride, v[k]);
  }
  for (; i < n; i += stride) __stcs(y + i, __ldcs(x + i));
}

// ---- cache flavors of the phase copy: how the stores and the shared-memory
// loads are issued. kSt: 0 st.global.cs (split_row's), 1 plain (write-back), 2 .cg,
// 3 L1::no_allocate + L2 evict_first policy, 4 L1::no_allocate + L2 evict_last policy,
// 5 L1::no_allocate, 6 the shared part as 16 KB bulk stores (cp.async.bulk global <-
// shared) issued by one thread. kLd: 0 cp.async.cg, 1 .L2::256B prefetch, 2 L2
// evict_first policy, 3 L2 evict_last policy, 4 as 2 with the register loads under the
// same policy (ld.global.nc.L1::no_allocate.L2::cache_hint instead of ld.global.cs).
namespace flavor {
__device__ __forceinline__ uint64_t policy(bool last) {
  return last ? arch::l2_evict_last_policy() : arch::l2_evict_first_policy();
}
/// Bytes of shared memory at `src` sent to `dst` by the bulk engine (one bulk group).
__device__ __forceinline__ void bulk_store(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
template <int kSt>
__device__ __forceinline__ void store(uint4* p, const uint4& v, uint64_t pol) {
  if constexpr (kSt == 0 || kSt == 6)
    __stcs(p, v);
  else if constexpr (kSt == 1)
    *p = v;
  else if constexpr (kSt == 2)
    __stcg(p, v);
  else if constexpr (kSt == 3 || kSt == 4)
    asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x),
                 "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol)
                 : "memory");
  else
    asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}
/// A register load: ld.global.cs, or (kLd == 4) with the L2 evict_first policy `pol`.
template <int kLd>
__device__ __forceinline__ uint4 load(const uint4* p, uint64_t pol) {
  if constexpr (kLd != 4) return __ldcs(p);
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(pol));
  return v;
}
/// A staged copy; `pol` (evict_last) serves kLd == 3 only.
template <int kLd>
__device__ __forceinline__ void copy16(uint4* dst, const uint4* src, uint64_t pol) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  if constexpr (kLd == 0)
    arch::cp_async_16(dst, src);
  else if constexpr (kLd == 1)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
  else if constexpr (kLd == 3)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "l"(pol)
                 : "memory");
  else
    arch::cp_async_16_stream(dst, src);  // split_row's copies
}
}  // namespace flavor

/// One CTA's chunk [begin, begin + n) of 16-byte vectors: kPacks a thread in registers,
/// the rest in shared memory. kHalves = 1: load all, (cluster barrier), store all.
/// kHalves = 2: the shared part in two groups, the first stored while the second lands.
template <int kPacks, int kHalves, bool kCluster, int kSt = 0, int kLd = 0>
__global__ void __launch_bounds__(1024, 1)
    phase_copy(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t chunk, int64_t total) {
  extern __shared__ uint4 staged[];
  probe_trace(0);
  const uint64_t st_pol = flavor::policy(kSt == 4);
  const uint64_t ld_pol = flavor::policy(kLd == 3);  // kLd 2 and 4: evict_first
  const int64_t begin = int64_t(blockIdx.x) * chunk;
  const int64_t n = begin >= total ? 0 : (chunk < total - begin ? chunk : total - begin);
  const int reg_count = static_cast<int>(n < 1024 * kPacks ? n : 1024 * kPacks);
  const int smem_count = static_cast<int>(n - reg_count);
  const int half = kHalves == 2 ? (smem_count / 2 + 1023) / 1024 * 1024 : smem_count;
  const uint4* src = x + begin + reg_count;
  for (int j = threadIdx.x; j < half; j += 1024) flavor::copy16<kLd>(staged + j, src + j, ld_pol);
  arch::cp_async_commit();
  for (int j = half + threadIdx.x; j < smem_count; j += 1024) flavor::copy16<kLd>(staged + j, src + j, ld_pol);
  arch::cp_async_commit();
  uint4 r[kPacks];
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    const int i = threadIdx.x + k * 1024;
    if (i < reg_count) r[k] = flavor::load<kLd>(x + begin + i, ld_pol);
  }
  if constexpr (kHalves == 1) {
    arch::cp_async_wait<0>();
    if constexpr (kSt == 6) gpukern::cuda::arch::fence_proxy_async();
    __syncthreads();
    probe_trace(1);
    if constexpr (kCluster) arch::cluster_sync_aligned();
    probe_trace(2);
    if constexpr (kSt == 6) {
      if (threadIdx.x == 0) {
        namespace sm90 = gpukern::cuda::arch;
        for (int j = 0; j < smem_count; j += 1024) {
          const int v = smem_count - j < 1024 ? smem_count - j : 1024;
          flavor::bulk_store(y + begin + reg_count + j, sm90::smem_addr(staged + j), v * 16);
        }
        sm90::bulk_commit_group();
      }
    }
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int i = threadIdx.x + k * 1024;
      if (i < reg_count) flavor::store<kSt>(y + begin + i, r[k], st_pol);
    }
    if constexpr (kSt != 6)
      for (int j = threadIdx.x; j < smem_count; j += 1024)
        flavor::store<kSt>(y + begin + reg_count + j, staged[j], st_pol);
    else if (threadIdx.x == 0)
      gpukern::cuda::arch::bulk_wait_group_read<0>();
  } else {
    arch::cp_async_wait<1>();
    probe_trace(1);
    for (int j = threadIdx.x; j < half; j += 1024) __stcs(y + begin + reg_count + j, staged[j]);
    arch::cp_async_wait<0>();
    probe_trace(2);
    for (int j = half + threadIdx.x; j < smem_count; j += 1024) __stcs(y + begin + reg_count + j, staged[j]);
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int i = threadIdx.x + k * 1024;
      if (i < reg_count) __stcs(y + begin + i, r[k]);
    }
  }
  probe_trace(3);
}
