// Timeline probe for split_row's one-wave cluster kernel on 64x262144 (issue #5):
// where does the time go between the copy's floor and the kernel's?
//
//   cmake -S . -B build -DGPUKERN_BUILD_DEV=ON -DGPUKERN_CUDA_ARCHS=90a && cmake --build build --target softmax_phase_probe
//   build/bin/softmax_phase_probe [reps]    # on the GPU machine
//
// Every kernel is timed the way gpukern-bench times it (a 512 MiB memset before each
// call, events around the one call, the median), next to cudaMemcpyAsync of the same
// bytes; PROBE_FLUSH=read reads the buffer instead (clean L2), PROBE_FLUSH=none skips it.
// Kernels:
//   copy         cudaMemcpyAsync device to device
//   stream       a grid-stride 16-byte copy kernel (8 blocks an SM)
//   phase        one CTA an SM, 1024 threads: the CTA's whole chunk loaded (registers
//                + cp.async to shared memory), then stored: split_row's phases with
//                no arithmetic; /cN adds a cluster barrier of N CTAs between them
//   phase/c2 FL  the phase copy with other cache hints: stores plain, .cg, with an
//                L2 evict_first / evict_last policy, L1::no_allocate, as bulk stores; shared-
//                memory copies with L2::256B prefetch or an L2 evict_first / evict_last policy
//                (PROBE_ONLY=a,b runs only the probes whose names contain a or b, with the
//                copy and the policy)
//   halves       the same chunk in two cp.async groups: the first half stored while
//                the second lands
//   bulk         (16-bit) the CTA's shared-memory part as 16 or 32 KB bulk copies issued
//                in order by one thread, one mbarrier each, folded piece by piece as they
//                complete (ordered, but slower than cp.async);
//                "pf": the chunk prefetched to L2 first (slower still)
//   onewave      (16-bit) every copy in flight, folded registers first or last, or in
//                arrival order per thread
//   arrival      (16-bit) arrival-order fold compacted per warp: sentinel-filled slots
//                polled, a per-warp mbarrier (cp.async.mbarrier.arrive.noinc) for the end
//   twostep      (16-bit) 128 co-resident CTAs, rows in 4 parts of 128 KB: rows 0-31 then
//                rows 32-63, the first step's stores over the second's loads
//   overlap      (16-bit) every copy in flight, two rows a CTA, the first row's outputs
//                sent with bulk stores while the second's statistics are made
//   stepped      a persistent cooperative grid: rows cut in q parts, G / q rows a step,
//                a ring of shared-memory buffers, the q partials exchanged through global
//                memory each step (tagged GridPartial words of grid_row.cuh)
//   hybrid       split_row's policy kernel (05_block_row_hybrid.cuh) and other depths of
//                it, timed only (the library's kernels carry no stamps); outputs compared
//                with the policy's
// A traced call after the timed ones prints, per kernel, the stamps' spread relative to
// a one-thread marker kernel launched just before it. Last (f16), the arrival report: the
// phase copy's load phase with each shared-memory vector's landing time recorded.
#include "cuda/arch/cache_policy.cuh"
#include "cuda/arch/cluster.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/gemm/tensor_core_sm90.cuh"
#include "cuda/softmax/05_block_row_hybrid.cuh"
#include "driver_common.hpp"
#include "grid_row.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

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
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}
template <int kSt>
__device__ __forceinline__ void store(uint4* p, const uint4& v, uint64_t pol) {
  if constexpr (kSt == 0 || kSt == 6) __stcs(p, v);
  else if constexpr (kSt == 1) *p = v;
  else if constexpr (kSt == 2) __stcg(p, v);
  else if constexpr (kSt == 3 || kSt == 4)
    asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x),
                 "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol) : "memory");
  else
    asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w) : "memory");
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
  if constexpr (kLd == 0) arch::cp_async_16(dst, src);
  else if constexpr (kLd == 1)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
  else if constexpr (kLd == 3)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "l"(pol)
                 : "memory");
  else arch::cp_async_16_stream(dst, src);  // split_row's copies
}
}  // namespace flavor

/// One CTA's chunk [begin, begin + n) of 16-byte vectors: kPacks a thread in registers,
/// the rest in shared memory. kHalves = 1: load all, (cluster barrier), store all.
/// kHalves = 2: the shared part in two groups, the first stored while the second lands.
template <int kPacks, int kHalves, bool kCluster, int kSt = 0, int kLd = 0>
__global__ void __launch_bounds__(1024, 1) phase_copy(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                      int64_t chunk, int64_t total) {
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
    if constexpr (kSt == 6) gpukern::cuda::gemm::sm90::fence_proxy_async();
    __syncthreads();
    probe_trace(1);
    if constexpr (kCluster) arch::cluster_sync_aligned();
    probe_trace(2);
    if constexpr (kSt == 6) {
      if (threadIdx.x == 0) {
        namespace sm90 = gpukern::cuda::gemm::sm90;
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
      for (int j = threadIdx.x; j < smem_count; j += 1024) flavor::store<kSt>(y + begin + reg_count + j, staged[j], st_pol);
    else if (threadIdx.x == 0) gpukern::cuda::gemm::sm90::bulk_wait_group_read<0>();
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

// ---- shared by the one-wave probe kernels below: a thread's running (max, sum) folded a
// 16-byte vector at a time (rescaled when the max grows; two partial sums), and one
// vector's outputs stored.
namespace probe_fold {
template <class T>
struct Online {
  static constexpr int V = 16 / sizeof(T);
  float m = -INFINITY, sum = 0.0f;
  __device__ void add(const sm::Pack<T, V>& p) {
    const float nm = sm::nan_max(m, sm::pack_max(p));
    if (nm != m) {
      sum = sum == 0.0f ? 0.0f : sum * sm::fast_exp2((m - nm) * sm::kLog2e);
      m = nm;
    }
    if (m != -INFINITY) {
      float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
      for (int e = 0; e < V; e += 2) {
        s0 += sm::fast_exp2((gpukern::gpu::to_float(p.v[e]) - m) * sm::kLog2e);
        s1 += sm::fast_exp2((gpukern::gpu::to_float(p.v[e + 1]) - m) * sm::kLog2e);
      }
      sum += s0 + s1;
    }
  }
  __device__ void add(const uint4& u) {
    sm::Pack<T, V> p;
    memcpy(&p, &u, 16);
    add(p);
  }
  __device__ sm::RowStats stats() const { return m == -INFINITY ? sm::empty_stats() : sm::RowStats{m, sum}; }
  /// One vector's outputs.
  __device__ static uint4 outputs(const uint4& u, const sm::OutputScale& o) {
    sm::Pack<T, V> p, q;
    memcpy(&p, &u, 16);
    sm::output_pack(p, o, q);
    uint4 w;
    memcpy(&w, &q, 16);
    return w;
  }
};
template <class T>
__device__ __forceinline__ void store_out(const uint4& u, uint4* dst, const sm::OutputScale& o) {
  __stcs(dst, Online<T>::outputs(u, o));
}
/// The row's statistics from this CTA's and its cluster partner's (clusters of 2).
__device__ __forceinline__ sm::RowStats pair_merge(sm::RowStats mine, sm::RowStats* cta_stats) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  if (threadIdx.x == 0) *cta_stats = mine;
  arch::cluster_sync_aligned();
  const unsigned lane = threadIdx.x % 32;
  mine = lane < 2 ? sm::hybrid_detail::load_remote(cta_stats, lane) : sm::empty_stats();
  mine = sm::group_reduce<32>(mine);
#endif
  return mine;
}
/// The row's statistics from this CTA's threads' (`mine`) and the q - 1 other CTAs of the
/// row: block reduction, this CTA's partial published at ws[row * q + part] (tagged, no
/// reset), the row's q partials gathered by warp 0 and handed to every thread through
/// `shared_row`. `reduced_point`: the probe stamp between the two halves (-1: none).
template <int kThreads>
__device__ sm::RowStats row_exchange(sm::RowStats mine, sm::dev::GridPartial* ws, int q, int part, int64_t row,
                                     unsigned long long tag_base, sm::RowStats* scratch, sm::RowStats* shared_row,
                                     int reduced_point = -1) {
  const sm::RowStats st = sm::block_reduce<kThreads>(mine, scratch);
  if (reduced_point >= 0) probe_trace(reduced_point);
  if (threadIdx.x < 32) {
    const unsigned long long tag = tag_base + static_cast<unsigned long long>(row);
    if (threadIdx.x == 0) sm::dev::grid_detail::publish(ws + row * q + part, st, tag);
    sm::RowStats r =
        int(threadIdx.x) < q ? sm::dev::grid_detail::wait_partial(ws + row * q + threadIdx.x, tag) : sm::empty_stats();
    r = sm::group_reduce<32>(r);
    if (threadIdx.x == 0) *shared_row = r;
  }
  __syncthreads();
  return *shared_row;
}

/// A CTA of the two-row kernels (1024 threads, 128 co-resident CTAs): part blockIdx.x % 4
/// of row blockIdx.x / 4 (a) and of the row gridDim.x / 4 further (b), as 16-byte vectors.
struct RowPair {
  static constexpr int kQ = 4;
  int part;
  int64_t row_a, row_b;
  const uint4 *xa, *xb;
  uint4 *ya, *yb;
  template <class T>
  __device__ RowPair(const T* x, T* y, int64_t cols) {
    part = blockIdx.x % kQ;
    const int64_t part_vecs = cols * int64_t(sizeof(T)) / 16 / kQ;
    row_a = blockIdx.x / kQ;
    row_b = row_a + gridDim.x / kQ;
    xa = reinterpret_cast<const uint4*>(x + row_a * cols) + part * part_vecs;
    xb = reinterpret_cast<const uint4*>(x + row_b * cols) + part * part_vecs;
    ya = reinterpret_cast<uint4*>(y + row_a * cols) + part * part_vecs;
    yb = reinterpret_cast<uint4*>(y + row_b * cols) + part * part_vecs;
  }
  /// Shared memory of the two exchanges (one a step).
  struct Smem {
    sm::RowStats scratch[2][32];
    sm::RowStats row[2];
  };
  /// The output scale of row a (step 0) or b (step 1) from this thread's fold `acc`.
  template <class T>
  __device__ sm::OutputScale scale(const Online<T>& acc, int step, sm::dev::GridPartial* ws, unsigned long long tag_base,
                                   Smem& smem) const {
    return sm::output_scale(row_exchange<1024>(acc.stats(), ws, kQ, part, step ? row_b : row_a, tag_base,
                                               smem.scratch[step], &smem.row[step]),
                            false);
  }
};
/// The two-row kernels' dynamic shared memory: row a's kVecsA vectors a thread, then
/// row b's.
struct TwoRowStaging {
  uint4* a;
  uint4* b;
};
template <int kVecsA>
__device__ __forceinline__ TwoRowStaging two_row_staging() {
  extern __shared__ uint4 smem_raw[];
  return {smem_raw, smem_raw + kVecsA * 1024};
}
/// Loads the thread's N register vectors tid + k * 1024 of `src` (evict-first).
template <int N>
__device__ __forceinline__ void load_regs(uint4 (&r)[N], const uint4* src) {
#pragma unroll
  for (int k = 0; k < N; ++k) r[k] = __ldcs(src + threadIdx.x + k * 1024);
}

/// The thread's N vectors tid + k * 1024 of `src` copied to the same places of `dst`
/// (cp.async); kGroups: one commit group each, else one for all.
template <int N, bool kGroups = false>
__device__ __forceinline__ void copy_vecs(uint4* dst, const uint4* src) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    arch::cp_async_16(dst + threadIdx.x + k * 1024, src + threadIdx.x + k * 1024);
    if constexpr (kGroups) arch::cp_async_commit();
  }
  if constexpr (!kGroups) arch::cp_async_commit();
}
/// Folds the thread's N vectors tid + k * 1024 of `v`.
template <int N, class T>
__device__ __forceinline__ void fold_vecs(Online<T>& acc, const uint4* v) {
#pragma unroll
  for (int k = 0; k < N; ++k) acc.add(v[threadIdx.x + k * 1024]);
}
/// Folds the thread's register vectors.
template <int N, class T>
__device__ __forceinline__ void fold_regs(Online<T>& acc, const uint4 (&r)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) acc.add(r[k]);
}
/// Stores the outputs of the thread's register vectors to tid + k * 1024 of `dst`.
template <class T, int N>
__device__ __forceinline__ void store_regs(const uint4 (&r)[N], uint4* dst, const sm::OutputScale& o) {
#pragma unroll
  for (int k = 0; k < N; ++k) store_out<T>(r[k], dst + threadIdx.x + k * 1024, o);
}
/// Stores the outputs of the thread's N vectors tid + k * 1024 of `v` to the same places of `dst`.
template <int N, class T>
__device__ __forceinline__ void store_vecs(const uint4* v, uint4* dst, const sm::OutputScale& o) {
#pragma unroll
  for (int k = 0; k < N; ++k) store_out<T>(v[threadIdx.x + k * 1024], dst + threadIdx.x + k * 1024, o);
}
/// The chunk of a CTA of the one-wave pair kernels (clusters of 2, a row a cluster,
/// 1024 threads): its half of row blockIdx.x / 2, as 16-byte vectors.
struct PairChunk {
  const uint4* x;
  uint4* y;
  template <class T>
  __device__ PairChunk(const T* xr, T* yr, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
    const int64_t row = blockIdx.x / 2;
    const int64_t chunk_vecs = cols * int64_t(sizeof(T)) / 16 / 2;
    const int64_t first = int64_t(arch::cluster_rank()) * chunk_vecs;
    x = reinterpret_cast<const uint4*>(xr + row * cols) + first;
    y = reinterpret_cast<uint4*>(yr + row * cols) + first;
#endif
  }
};
/// The end of a one-wave pair kernel: the CTA's statistics (stamp 1), merged with the
/// partner's (stamp 2), the outputs of kPacks register vectors then kVecs shared vectors
/// (tid + k * 1024), a cluster barrier before exit (stamp 3).
template <class T, int kPacks, int kVecs>
__device__ __forceinline__ void finish_pair(const Online<T>& acc, const uint4 (&r)[kPacks], const uint4* staged,
                                            uint4* y, sm::RowStats* scratch, sm::RowStats* cta_stats) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  sm::RowStats stats = sm::block_reduce<1024>(acc.stats(), scratch);
  probe_trace(1);
  stats = pair_merge(stats, cta_stats);
  probe_trace(2);
  const sm::OutputScale o = sm::output_scale(stats, false);
  store_regs<T>(r, y, o);
  store_vecs<kVecs, T>(staged, y + 1024 * kPacks, o);
  arch::cluster_sync_aligned();
  probe_trace(3);
#endif
}
}  // namespace probe_fold

// ---- bulk one-wave: the CTA's shared-memory part as 16 KB bulk copies (cp.async.bulk,
// one thread issues them in order, one mbarrier each), folded chunk by chunk as they
// complete; the register part (kRegs packs a thread) loaded with ld.global. 16-bit only,
// clusters of 2 (one row per cluster), 1024 threads, the whole chunk on chip.
namespace bulk_probe {
/// One bulk copy global -> this CTA's shared memory, completing `bytes` on `bar`
/// (mbarriers themselves: gemm's sm90 helpers).
__device__ __forceinline__ void bulk(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
}  // namespace bulk_probe

// kPrefetch: one thread first asks L2 for the whole chunk (cp.async.bulk.prefetch.L2, in
// piece order), so the bulk copies to shared memory meet data in (or on its way to) L2.
// kRegsLate: the register part is loaded after the shared part has been folded.
// kAhead > 0: at most kAhead pieces in flight; piece c + kAhead is issued once piece c
// landed (thread 0, after its wait), so the copies stay ordered.
template <class T, int kRegs, int kPiece, bool kPrefetch = false, bool kRegsLate = false, int kAhead = 0>
__global__ void __launch_bounds__(1024, 1) bulk_onewave(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  namespace bp = bulk_probe;
  namespace sm90 = gpukern::cuda::gemm::sm90;
  constexpr int V = 16 / sizeof(T);
  constexpr int kPieceVecs = kPiece / 16;
  extern __shared__ uint4 smem_raw[];
  sm::Pack<T, V>* const staged = reinterpret_cast<sm::Pack<T, V>*>(smem_raw);
  __shared__ uint64_t bars[32];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  probe_trace(0);
  const unsigned rank = arch::cluster_rank();
  const int64_t row = blockIdx.x / 2;
  const int64_t chunk_vecs = cols / V / 2;
  const T* xc = x + row * cols + int64_t(rank) * chunk_vecs * V;
  T* yc = y + row * cols + int64_t(rank) * chunk_vecs * V;
  const int tid = threadIdx.x;
  const int reg_vecs = kRegs * 1024;
  const int smem_vecs = static_cast<int>(chunk_vecs) - reg_vecs;
  const int pieces = smem_vecs / kPieceVecs;
  if (tid == 0) {
    for (int c = 0; c < pieces; ++c) sm90::mbar_init(sm90::smem_addr(&bars[c]), 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    if constexpr (kPrefetch) {
      for (int c = 0; c < pieces; ++c)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(xc + (int64_t(reg_vecs) + int64_t(c) * kPieceVecs) * V),
                     "r"(kPiece)
                     : "memory");
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(xc), "r"(reg_vecs * 16) : "memory");
    }
  }
  auto issue = [&](int c) {
    sm90::mbar_arrive_expect_tx(sm90::smem_addr(&bars[c]), kPiece);
    bp::bulk(sm90::smem_addr(staged + c * kPieceVecs), xc + (int64_t(reg_vecs) + int64_t(c) * kPieceVecs) * V, kPiece,
             sm90::smem_addr(&bars[c]));
  };
  if (tid == 0) {
    for (int c = 0; c < (kAhead > 0 && kAhead < pieces ? kAhead : pieces); ++c) issue(c);
  }
  sm::Pack<T, V> regs[kRegs];
  if constexpr (!kRegsLate) {
#pragma unroll
    for (int r = 0; r < kRegs; ++r) regs[r] = *reinterpret_cast<const sm::Pack<T, V>*>(xc + int64_t(tid + r * 1024) * V);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const sm::Pack<T, V>& p) { acc.add(p); };
  // Each piece holds kPieceVecs vectors: thread t folds vectors t, t + 1024, ... of it.
  for (int c = 0; c < pieces; ++c) {
    if (c < 14) probe_trace(4 + 2 * c);
    sm90::mbar_wait(sm90::smem_addr(&bars[c]), 0);
    if (c < 14) probe_trace(5 + 2 * c);
    if (kAhead > 0 && tid == 0 && c + kAhead < pieces) issue(c + kAhead);
#pragma unroll
    for (int v = 0; v < kPieceVecs / 1024; ++v) fold(staged[c * kPieceVecs + v * 1024 + tid]);
  }
  if constexpr (kRegsLate) {
#pragma unroll
    for (int r = 0; r < kRegs; ++r) regs[r] = *reinterpret_cast<const sm::Pack<T, V>*>(xc + int64_t(tid + r * 1024) * V);
  }
#pragma unroll
  for (int r = 0; r < kRegs; ++r) fold(regs[r]);
  sm::RowStats stats = sm::block_reduce<1024>(acc.stats(), scratch);
  probe_trace(1);
  stats = probe_fold::pair_merge(stats, &cta_stats);
  probe_trace(2);
  const sm::OutputScale o = sm::output_scale(stats, false);
  auto out = [&](const sm::Pack<T, V>& p, T* dst) {
    uint4 u;
    memcpy(&u, &p, 16);
    probe_fold::store_out<T>(u, reinterpret_cast<uint4*>(dst), o);
  };
#pragma unroll
  for (int r = 0; r < kRegs; ++r) out(regs[r], yc + int64_t(tid + r * 1024) * V);
  for (int j = tid; j < smem_vecs; j += 1024) out(staged[j], yc + (int64_t(reg_vecs) + j) * V);
  arch::cluster_sync_aligned();
  probe_trace(3);
#endif
}


// ---- stepped grid: a persistent grid of G CTAs (one an SM,
// cooperative launch), rows cut into q parts of part_vecs vectors; item = (row, part),
// CTA c takes items c, c + G, ... (G a multiple of q, so each step holds whole rows).
// Items go through a ring of kAhead + 1 shared-memory buffers, kAhead items in flight
// ahead of the one being worked on; per item: wait, fold (max, then sum of exps), block
// reduction, publish the CTA's partial (GridPartial, tagged, no reset), gather the row's
// q partials (warp 0), store. kAfter: the next item's copies are issued after the wait
// for this one (else before it). Stamps: 4 + 4k + {0 landed, 1 reduced, 2 merged, 3 stored}.
template <class T, int kThreads, int kAhead, bool kAfter>
__global__ void __launch_bounds__(kThreads, 1)
    stepped_row(sm::RowArgs<T> a, int q, int part_vecs, sm::dev::GridPartial* ws, unsigned long long tag_base) {
  constexpr int V = 16 / sizeof(T);
  constexpr int kRing = kAhead + 1;
  extern __shared__ uint4 smem_raw[];
  sm::Pack<T, V>* const ring = reinterpret_cast<sm::Pack<T, V>*>(smem_raw);
  __shared__ sm::RowStats scratch[2][kThreads / 32];
  __shared__ sm::RowStats row_stats[2];
  probe_trace(0);
  const int tid = threadIdx.x;
  const int64_t G = gridDim.x;
  const int64_t items = a.rows * q;
  const int n = blockIdx.x < items ? static_cast<int>((items - blockIdx.x + G - 1) / G) : 0;
  const int64_t num_vec = a.cols / V;
  auto where = [&](int i, int64_t& row, int& part, int64_t& begin, int& count) {
    const int64_t it = blockIdx.x + int64_t(i) * G;
    row = it / q;
    part = static_cast<int>(it % q);
    begin = int64_t(part) * part_vecs;
    count = static_cast<int>(begin + part_vecs < num_vec ? part_vecs : num_vec - begin);
  };
  auto issue = [&](int i) {
    if (i < n) {
      int64_t row, begin;
      int part, count;
      where(i, row, part, begin, count);
      const T* x = a.x + row * a.ldx + begin * V;
      sm::Pack<T, V>* buf = ring + int64_t(i % kRing) * part_vecs;
      for (int v = tid; v < count; v += kThreads) arch::cp_async_16(buf + v, x + int64_t(v) * V);
    }
    arch::cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < kAhead; ++i) issue(i);
  int parity = 0;
  for (int i = 0; i < n; ++i) {
    if constexpr (kAfter) {
      arch::cp_async_wait<kAhead - 1>();
      issue(i + kAhead);
    } else {
      issue(i + kAhead);
      arch::cp_async_wait<kAhead>();
    }
    if (i < 7) probe_trace(4 + 4 * i);
    int64_t row, begin;
    int part, count;
    where(i, row, part, begin, count);
    const sm::Pack<T, V>* buf = ring + int64_t(i % kRing) * part_vecs;
    probe_fold::Online<T> acc;
    for (int v = tid; v < count; v += kThreads) acc.add(buf[v]);
    const sm::RowStats st = probe_fold::row_exchange<kThreads>(acc.stats(), ws, q, part, row, tag_base,
                                                                 scratch[parity], &row_stats[parity],
                                                                 i < 7 ? 5 + 4 * i : -1);
    if (i < 7) probe_trace(6 + 4 * i);
    const sm::OutputScale o = sm::output_scale(st, a.log);
    uint4* y = reinterpret_cast<uint4*>(a.y + row * a.ldy + begin * V);
    for (int v = tid; v < count; v += kThreads) probe_fold::store_out<T>(reinterpret_cast<const uint4&>(buf[v]), y + v, o);
    if (i < 7) probe_trace(7 + 4 * i);
    parity ^= 1;
  }
  arch::cp_async_wait<0>();
  probe_trace(3);
}


// ---- arrival probe: the phase copy's load phase (1024 threads, kPacks register
// vectors + kVecs shared-memory vectors a thread, every copy in flight at once), with each
// shared-memory slot pre-filled with a sentinel and polled by its own thread, so that the
// globaltimer of each vector's arrival is recorded: times[cta][k][tid].
__device__ unsigned long long g_arrival[128 * 16 * 1024];
template <int kPacks, int kVecs>
__global__ void __launch_bounds__(1024, 1) arrival_probe(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                         int64_t chunk) {
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

static void arrival_report(const void* x, void* y, int64_t chunk, cudaStream_t stream, void* flush, size_t flush_bytes) {
  constexpr int kPacks = 4, kVecs = 12;
  const size_t smem = size_t(kVecs) * 1024 * 16;
  prepare(arrival_probe<kPacks, kVecs>, smem, false);
  std::vector<unsigned long long> zero(4096 * kPoints, 0);
  CHECK_CUDA(cudaMemcpyToSymbol(g_trace, zero.data(), zero.size() * 8));
  do_flush(flush, flush_bytes, 0x33, stream);
  arrival_probe<kPacks, kVecs><<<128, 1024, smem, stream>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), chunk);
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
        for (int j = 0; j <= k; ++j) m = std::max(m, (double(arr[(int64_t(b) * 16 + j) * 1024 + t]) - double(t0)) * 1e-3);
        v.push_back(m);
      }
    std::printf("   prefix 0..%-4d %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", k, q(v, 0.01), q(v, 0.1), q(v, 0.25), q(v, 0.5),
                q(v, 0.9), q(v, 1.0));
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
    std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  (over CTAs)\n", name, q(*v, 0.01), q(*v, 0.1), q(*v, 0.25),
                q(*v, 0.5), q(*v, 0.9), q(*v, 1.0));
  std::vector<double> ex;
  for (int b = 0; b < 128; ++b) ex.push_back((double(tr[b * kPoints + 3]) - double(t0)) * 1e-3);
  std::printf("   %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  (over CTAs)\n", "CTA exit", q(ex, 0.01), q(ex, 0.1),
              q(ex, 0.25), q(ex, 0.5), q(ex, 0.9), q(ex, 1.0));
}


// ---- one-wave fold orders: 16-bit, 1024 threads, clusters of 2 (a row a
// cluster), kPacks register vectors + kVecs shared-memory vectors a thread, every copy in
// flight at once (one commit group per shared-memory vector); the register part loaded
// evict-first (.cg, plain and .nc.L1::no_allocate.L2::256B measured alike).
// kFold: 0 registers first, then the shared part in issue order (the policy's order);
// 1 the shared part in issue order, registers last; 2 the shared part in arrival order
// (slots pre-filled with a sentinel and polled), registers last.
namespace onewave {
template <int N>
__device__ __forceinline__ void wait_pending(int n) {
  if constexpr (N >= 0) {
    if (n == N) arch::cp_async_wait<N>();
    else wait_pending<N - 1>(n);
  }
}
}  // namespace onewave

template <class T, int kPacks, int kVecs, int kFold>
__global__ void __launch_bounds__(1024, 1) onewave_fold(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  extern __shared__ uint4 smem_raw[];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  const int tid = threadIdx.x;
  const probe_fold::PairChunk chunk(x, y, cols);  // 1024 * (kPacks + kVecs) vectors
  const uint4* xc = chunk.x;
  const uint4* xs = xc + 1024 * kPacks;
  if constexpr (kFold == 2) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) smem_raw[tid + k * 1024] = make_uint4(~0u, ~0u, ~0u, ~0u);
  }
  probe_trace(0);
  uint4 r[kPacks];
  if constexpr (kFold == 0) {
    probe_fold::load_regs(r, xc);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    arch::cp_async_16(smem_raw + tid + k * 1024, xs + tid + k * 1024);
    arch::cp_async_commit();
  }
  if constexpr (kFold != 0) {
    probe_fold::load_regs(r, xc);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const uint4& u) { acc.add(u); };
  if constexpr (kFold == 0) {
#pragma unroll
    for (int k = 0; k < kPacks; ++k) fold(r[k]);
  }
  if constexpr (kFold == 2) {
    const volatile unsigned* words = reinterpret_cast<const volatile unsigned*>(smem_raw);
    unsigned done = 0;
    while (done != (1u << kVecs) - 1) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        if (!(done >> k & 1) && words[4 * (tid + k * 1024) + 3] != ~0u) {
          done |= 1u << k;
          fold(smem_raw[tid + k * 1024]);  // (a vector whose data is the sentinel: folded after the wait below)
        }
      }
    }
    arch::cp_async_wait<0>();
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (k < 12) probe_trace(4 + 2 * k);
      onewave::wait_pending<kVecs - 1>(kVecs - 1 - k);
      if (k < 12) probe_trace(5 + 2 * k);
      fold(smem_raw[tid + k * 1024]);
    }
  }
  if constexpr (kFold != 0) {
#pragma unroll
    for (int k = 0; k < kPacks; ++k) fold(r[k]);
  }
  probe_fold::finish_pair<T, kPacks, kVecs>(acc, r, smem_raw, chunk.y, scratch, &cta_stats);
#endif
}


// ---- arrival-order fold, warp-compacted: each thread's shared-memory slots are
// pre-filled with a sentinel; a pass polls one word of each pending slot, then every lane
// folds its own landed vectors (whichever k), so a warp's fold steps keep all lanes busy
// as long as each has something landed. A per-warp mbarrier fed by
// cp.async.mbarrier.arrive.noinc says when all the warp's copies landed (then the rest is
// folded without checks: a vector whose data equals the sentinel cannot hang it). A
// vector is taken when none of its four words is the sentinel. Registers folded last.
namespace arrival_detail {
__device__ __forceinline__ bool test_wait(uint32_t bar) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ uint4 vload(const uint4* p) {
  uint4 u;
  asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
               : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p))));
  return u;
}
__device__ __forceinline__ uint32_t vword(const uint4* p) {
  uint32_t w;
  asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(w) : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p)) + 12));
  return w;
}
}  // namespace arrival_detail

template <class T, int kPacks, int kVecs, bool kRegFirst, int kSleep>
__global__ void __launch_bounds__(1024, 1) arrival_fold(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  namespace ad = arrival_detail;
  namespace sm90 = gpukern::cuda::gemm::sm90;
  constexpr uint32_t kS = ~0u;
  extern __shared__ uint4 smem_raw[];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  __shared__ uint64_t bars[32];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const probe_fold::PairChunk chunk(x, y, cols);  // 1024 * (kPacks + kVecs) vectors
  const uint4* xc = chunk.x;
  const uint4* xs = xc + 1024 * kPacks;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) smem_raw[tid + k * 1024] = make_uint4(kS, kS, kS, kS);
  if (tid % 32 == 0) sm90::mbar_init(sm90::smem_addr(&bars[warp]), 32);
  sm90::fence_barrier_init();
  __syncwarp();
  probe_trace(0);
  uint4 r[kPacks];
  if constexpr (kRegFirst) {
    probe_fold::load_regs(r, xc);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) arch::cp_async_16(smem_raw + tid + k * 1024, xs + tid + k * 1024);
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sm90::smem_addr(&bars[warp])) : "memory");
  if constexpr (!kRegFirst) {
    probe_fold::load_regs(r, xc);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const uint4& u) { acc.add(u); };
  unsigned pending = (1u << kVecs) - 1;
  bool all_in = false;
  int passes = 0;
  // Warp-uniform loop (lanes done early keep calling the vote with the others).
  while (__any_sync(~0u, pending != 0)) {
    if (!all_in) all_in = ad::test_wait(sm90::smem_addr(&bars[warp])) || passes > (1 << 20);
    if (all_in && passes > (1 << 20)) sm90::mbar_wait(sm90::smem_addr(&bars[warp]), 0);
    unsigned ready = 0;
    if (all_in) {
      ready = pending;
    } else {
#pragma unroll
      for (int k = 0; k < kVecs; ++k)
        if ((pending >> k & 1) && ad::vword(smem_raw + tid + k * 1024) != kS) ready |= 1u << k;
    }
    ++passes;
    if (!__any_sync(~0u, ready != 0)) {
      if constexpr (kSleep > 0) __nanosleep(kSleep);
      continue;
    }
    while (ready) {
      const int k = __ffs(ready) - 1;
      ready &= ready - 1;
      const uint4 u = ad::vload(smem_raw + tid + k * 1024);
      if (!all_in && (u.x == kS || u.y == kS || u.z == kS || u.w == kS)) continue;
      fold(u);
      pending &= ~(1u << k);
    }
  }
  if (tid == 0 && blockIdx.x < 4096) g_trace[blockIdx.x][30] = passes;
  probe_trace(4);
#pragma unroll
  for (int k = 0; k < kPacks; ++k) fold(r[k]);
  probe_trace(5);
  probe_fold::finish_pair<T, kPacks, kVecs>(acc, r, smem_raw, chunk.y, scratch, &cta_stats);
#endif
}


// ---- two steps (16-bit): 128 co-resident CTAs (cooperative launch, one an SM),
// each row cut in 4 parts of 128 KB; step A holds rows 0-31 (64 KB in registers + 64 KB
// in shared memory), step B rows 32-63 (128 KB in shared memory). The 4 partials of a row
// are exchanged through global memory (GridPartial). A's stores overlap B's loads; only
// B's statistics sit between the last loads and the last stores. kIssueB: 0 B's copies
// issued once A has landed, 1 together with A's. kPipeB: B's copies in 8 groups, folded
// in order as they land (else one group, folded after it landed).
template <class T, int kIssueB, bool kPipeB>
__global__ void __launch_bounds__(1024, 1)
    twostep_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols, sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  constexpr int kPacks = 4, kVecsA = 4, kVecsB = 8;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const int tid = threadIdx.x;
  const pf::RowPair rp(x, y, cols);  // a part is 1024 * (kPacks + kVecsA) == 1024 * kVecsB vectors
  probe_trace(0);
  // Step A's loads: shared part (one group), then registers.
  pf::copy_vecs<kVecsA>(sa, rp.xa + 4096);
  uint4 r[kPacks];
  pf::load_regs(r, rp.xa);
  if constexpr (kIssueB == 1) pf::copy_vecs<kVecsB, kPipeB>(sb, rp.xb);
  // Step A.
  if constexpr (kIssueB == 1) arch::cp_async_wait<kPipeB ? kVecsB : 1>();
  else arch::cp_async_wait<0>();
  probe_trace(4);
  if constexpr (kIssueB == 0) pf::copy_vecs<kVecsB, kPipeB>(sb, rp.xb);
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  pf::fold_regs(acc_a, r);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  pf::store_regs<T>(r, rp.ya, oa);
  pf::store_vecs<kVecsA, T>(sa, rp.ya + 4096, oa);
  probe_trace(6);
  // Step B.
  pf::Online<T> acc_b;
  if constexpr (kPipeB) {
#pragma unroll
    for (int k = 0; k < kVecsB; ++k) {
      onewave::wait_pending<kVecsB - 1>(kVecsB - 1 - k);
      acc_b.add(sb[tid + k * 1024]);
    }
  } else {
    arch::cp_async_wait<0>();
    probe_trace(7);
    pf::fold_vecs<kVecsB>(acc_b, sb);
  }
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  pf::store_vecs<kVecsB, T>(sb, rp.yb, ob);
  probe_trace(3);
}


// ---- two steps, registers in the second: as twostep_row, but step A (rows
// 0-31) is all in shared memory (128 KB), step B (rows 32-63) 64 KB in registers + 64 KB
// in shared memory, issued once A's copies landed (kRegsFirst: B's register loads before
// its copies).
template <class T, bool kRegsFirst>
__global__ void __launch_bounds__(1024, 1)
    twostep2_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols, sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  constexpr int kVecsA = 8, kPacks = 4, kVecsB = 4;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const pf::RowPair rp(x, y, cols);  // a part is 1024 * kVecsA == 1024 * (kPacks + kVecsB) vectors
  probe_trace(0);
  pf::copy_vecs<kVecsA>(sa, rp.xa);
  arch::cp_async_wait<0>();
  probe_trace(4);
  uint4 r[kPacks];
  if constexpr (kRegsFirst) {
    pf::load_regs(r, rp.xb);
  }
  pf::copy_vecs<kVecsB>(sb, rp.xb + 4096);
  if constexpr (!kRegsFirst) {
    pf::load_regs(r, rp.xb);
  }
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  pf::store_vecs<kVecsA, T>(sa, rp.ya, oa);
  probe_trace(6);
  arch::cp_async_wait<0>();
  probe_trace(7);
  pf::Online<T> acc_b;
  pf::fold_vecs<kVecsB>(acc_b, sb);
  pf::fold_regs(acc_b, r);
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  pf::store_regs<T>(r, rp.yb, ob);
  pf::store_vecs<kVecsB, T>(sb, rp.yb + 4096, ob);
  probe_trace(3);
}


// PROBE_FLUSH=read: the flush before each call reads the 512 MiB buffer instead of
// writing it (L2 left full of clean lines, nothing for the timed call to write back);
// PROBE_FLUSH=none: no flush. Default: gpukern-bench's memset.
__global__ void read_flush_kernel(const uint4* __restrict__ p, int64_t n, unsigned* sink) {
  unsigned acc = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    acc ^= __ldcg(p + i).x;
  if (acc == 0x9e3779b9u) *sink = acc;
}
static void do_flush(void* flush, size_t bytes, int value, cudaStream_t s) {
  static const char* mode = std::getenv("PROBE_FLUSH");
  if (mode && std::string(mode) == "none") return;
  if (mode && std::string(mode) == "read") {
    read_flush_kernel<<<132 * 8, 256, 0, s>>>(static_cast<const uint4*>(flush), int64_t(bytes / 16),
                                               static_cast<unsigned*>(flush));
    return;
  }
  CHECK_CUDA(cudaMemsetAsync(flush, value, bytes, s));
}


// ---- one wave, two rows a CTA, stores through the bulk engine (16-bit): 128
// co-resident CTAs, each row in 4 parts of 128 KB; a CTA holds part A of row c / 4 (128 KB
// in shared memory) and part B of row 32 + c / 4 (64 KB registers + 64 KB shared memory),
// every copy in flight at once. Then: A's statistics (fold, block reduction, the row's 4
// partials through global memory), A's outputs written in place 16 KB at a time and each
// piece sent with a bulk store (cp.async.bulk global <- shared, which does not queue ahead
// of the SM's own loads), B's statistics while A's pieces drain, B's shared part the same
// way, B's register part last with ordinary stores.

template <class T>
__global__ void __launch_bounds__(1024, 1)
    overlap_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols, sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  namespace sm90 = gpukern::cuda::gemm::sm90;
  constexpr int kVecsA = 8, kPacks = 4, kVecsB = 4;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const int tid = threadIdx.x;
  const pf::RowPair rp(x, y, cols);
  probe_trace(0);
#pragma unroll
  for (int k = 0; k < kVecsA; ++k) arch::cp_async_16(sa + tid + k * 1024, rp.xa + tid + k * 1024);
  pf::copy_vecs<kVecsB>(sb, rp.xb + 4096);  // one commit group for both parts
  uint4 r[kPacks];
  pf::load_regs(r, rp.xb);
  // Outputs of `vecs` 16 KB pieces at `buf` written in place and sent to `dst` piece by piece.
  auto store_pieces = [&](uint4* buf, uint4* dst, int vecs, const sm::OutputScale& o) {
    for (int k = 0; k < vecs; ++k) {
      uint4* v = buf + tid + k * 1024;
      *v = pf::Online<T>::outputs(*v, o);
      sm90::fence_proxy_async();
      __syncthreads();
      if (tid == 0) {
        flavor::bulk_store(dst + k * 1024, sm90::smem_addr(buf + k * 1024), 16384);
        sm90::bulk_commit_group();
      }
    }
  };
  arch::cp_async_wait<0>();
  probe_trace(4);
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  store_pieces(sa, rp.ya, kVecsA, oa);
  probe_trace(6);
  pf::Online<T> acc_b;
  pf::fold_vecs<kVecsB>(acc_b, sb);
  pf::fold_regs(acc_b, r);
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  store_pieces(sb, rp.yb + 4096, kVecsB, ob);
  pf::store_regs<T>(r, rp.yb, ob);
  if (tid == 0) sm90::bulk_wait_group<0>();
  probe_trace(3);
}

struct Probe {
  std::string name;
  int blocks;  // traced CTAs (0: untraced)
  std::function<void(cudaStream_t)> launch;
  bool check = false;  // compare the output with the policy kernel's
  int kind = 0;        // stamps: 0 hybrid (k wait/got), 1 stepped (s landed/reduced/merged/stored)
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void launch_coop(const void* kernel, void** args, int blocks, int threads, size_t smem, cudaStream_t s) {
  const gpukern::cuda::CooperativeLaunch launch(blocks, threads, smem, s);
  CHECK_CUDA(cudaLaunchKernelExC(&launch.config, kernel, args));
}

static void launch_cluster(const void* kernel, void** args, int blocks, int threads, size_t smem, int cluster,
                           cudaStream_t s) {
  const gpukern::cuda::ClusterLaunch launch(blocks, threads, smem, s, cluster);
  CHECK_CUDA(cudaLaunchKernelExC(&launch.config, kernel, args));
}

template <class K>
static void prepare(K kernel, size_t smem, bool nonportable) {
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  if (nonportable) CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

template <class T>
static void run_dtype(const char* dtype, int reps, int sms, size_t optin) {
  const int64_t rows = 64, cols = 262144;
  const int64_t elems = rows * cols, bytes = elems * int64_t(sizeof(T));
  const int64_t vecs = bytes / 16;
  void *x, *y, *flush;
  const size_t flush_bytes = size_t(512) << 20;
  CHECK_CUDA(cudaMalloc(&x, bytes));
  CHECK_CUDA(cudaMalloc(&y, bytes));
  CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  {
    std::vector<T> h(elems);
    uint32_t s = 12345;
    for (auto& v : h) {
      s = s * 1664525u + 1013904223u;
      v = static_cast<T>(static_cast<float>(s >> 8) / 16777216.0f * 8.0f - 4.0f);
    }
    CHECK_CUDA(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<Probe> probes;
  probes.push_back({"copy", 0, [=](cudaStream_t s) { CHECK_CUDA(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s)); }});
  probes.push_back({"stream", 0, [=](cudaStream_t s) {
                      stream_copy<<<sms * 8, 256, 0, s>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), vecs);
                    }});
  // Phase copies: chunk = vectors / CTAs, for CTAs = 128 (clusters of 2 fill 64 pairs)
  // or as many 1-CTA-an-SM waves as the chunk needs.
  const int64_t cap = 1024 * 4 + int64_t(optin - 2048) / 16;
  for (int cluster : {1, 2}) {
    for (int halves : {1, 2}) {
      if (cluster == 2 && halves == 2) continue;
      int64_t ctas = 128;
      while ((vecs + ctas - 1) / ctas > cap) ctas *= 2;
      const int64_t chunk = (vecs + ctas - 1) / ctas;
      const size_t smem = size_t(std::max<int64_t>(0, chunk - 4096)) * 16;
      const void* k;
      if (halves == 2) {
        prepare(phase_copy<4, 2, false>, smem, false);
        k = reinterpret_cast<const void*>(phase_copy<4, 2, false>);
      } else if (cluster == 2) {
        prepare(phase_copy<4, 1, true>, smem, false);
        k = reinterpret_cast<const void*>(phase_copy<4, 1, true>);
      } else {
        prepare(phase_copy<4, 1, false>, smem, false);
        k = reinterpret_cast<const void*>(phase_copy<4, 1, false>);
      }
      const std::string name = std::string(halves == 2 ? "halves" : "phase") + (cluster == 2 ? "/c2" : "") + " " +
                               std::to_string(ctas) + "x" + std::to_string(chunk * 16 / 1024) + "KB";
      probes.push_back({name, static_cast<int>(ctas), [=](cudaStream_t s) {
                          const uint4* xs = static_cast<const uint4*>(x);
                          uint4* ys = static_cast<uint4*>(y);
                          int64_t c = chunk, t = vecs;
                          void* args[] = {&xs, &ys, &c, &t};
                          launch_cluster(k, args, static_cast<int>(ctas), 1024, smem, cluster, s);
                        }});
    }
  }
  // Cache flavors of the phase copy in clusters of 2.
  {
    int64_t ctas = 128;
    while ((vecs + ctas - 1) / ctas > cap) ctas *= 2;
    const int64_t chunk = (vecs + ctas - 1) / ctas;
    const size_t smem = size_t(std::max<int64_t>(0, chunk - 4096)) * 16;
    auto add_flavor = [&](auto kernel, const std::string& label) {
      prepare(kernel, smem, false);
      const void* k = reinterpret_cast<const void*>(kernel);
      probes.push_back({"phase/c2 " + label, 0, [=](cudaStream_t s) {
                          const uint4* xs = static_cast<const uint4*>(x);
                          uint4* ys = static_cast<uint4*>(y);
                          int64_t c = chunk, t = vecs;
                          void* args[] = {&xs, &ys, &c, &t};
                          launch_cluster(k, args, static_cast<int>(ctas), 1024, smem, 2, s);
                        }});
    };
    add_flavor(phase_copy<4, 1, true, 1, 0>, "st plain");
    add_flavor(phase_copy<4, 1, true, 2, 0>, "st cg");
    add_flavor(phase_copy<4, 1, true, 3, 0>, "st noalloc+evict_first");
    add_flavor(phase_copy<4, 1, true, 4, 0>, "st noalloc+evict_last");
    add_flavor(phase_copy<4, 1, true, 5, 0>, "st noalloc");
    add_flavor(phase_copy<4, 1, true, 6, 0>, "st bulk");
    add_flavor(phase_copy<4, 1, true, 0, 1>, "ld L2::256B");
    add_flavor(phase_copy<4, 1, true, 0, 2>, "ld evict_first");
    add_flavor(phase_copy<4, 1, true, 0, 3>, "ld evict_last");
    add_flavor(phase_copy<4, 1, true, 1, 3>, "ld evict_last st plain");
    add_flavor(phase_copy<4, 1, true, 1, 2>, "ld evict_first st plain");
    add_flavor(phase_copy<4, 1, true, 2, 2>, "ld evict_first st cg");
    add_flavor(phase_copy<4, 1, true, 4, 2>, "ld evict_first st noalloc+evict_last");
    add_flavor(phase_copy<4, 1, true, 6, 2>, "ld evict_first st bulk");
    add_flavor(phase_copy<4, 1, true, 0, 4>, "ld evict_first regs too");
  }
  // The policy kernels of split_row for this shape (06_split_row.cu: 16-bit 1024x4+s1/d4
  // in clusters of 2; f32 256x8+s4 in clusters of 16).
  gpukern::cuda::CudaContext ctx;
  ctx.smem_per_block_optin = optin;
  const sm::RowArgs<T> ra{static_cast<const T*>(x), static_cast<T*>(y), rows, cols, cols, cols, false};
  constexpr int V = 16 / sizeof(T);
  // clusters = 0: one cluster a row (the launcher's grid); else that many clusters, each
  // taking rows / clusters rows in turn.
  auto add_hybrid = [&](auto kernel, sm::HybridConfig c, int cluster, int clusters, const std::string& label) {
    const int64_t chunk_vecs = (cols / V + cluster - 1) / cluster;
    const size_t smem = size_t(std::max<int64_t>(0, chunk_vecs - int64_t(c.threads) * c.packs)) * 16;
    // One instantiation can serve several chunk sizes: allow the most it may ask for.
    prepare(kernel, optin - 4096, cluster > 8);
    const int blocks = static_cast<int>((clusters ? clusters : rows) * cluster);
    const void* k = reinterpret_cast<const void*>(kernel);
    probes.push_back({label, blocks, [=](cudaStream_t s) {
                        sm::RowArgs<T> a = ra;
                        int64_t cv = chunk_vecs;
                        void* args[] = {&a, &cv};
                        launch_cluster(k, args, blocks, c.threads, smem, cluster, s);
                      }});
  };
  // The policy first: its output is the reference of the checked probes.
  if constexpr (sizeof(T) == 2) {
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 4>, {1024, 4, 1, 4}, 2, 0, "policy 1024x4+s1/d4/c2");
  } else {
    add_hybrid(sm::hybrid_row_kernel<T, V, 256, 8, 4, true, 0>, {256, 8, 4, 0}, 16, 0, "policy 256x8+s4/c16");
  }
  const size_t policy_index = probes.size() - 1;
  size_t policy_index_live = policy_index;
  // The one-CTA-an-SM layout at other pipeline depths (d0: statistics after every copy
  // landed; d12: every shared-memory copy in flight at once, folded in issue order).
  const int cl = sizeof(T) == 2 ? 2 : 4;  // 256 KB a CTA
  const std::string c = "/c" + std::to_string(cl);
  if constexpr (sizeof(T) == 4)
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 8>, {1024, 4, 1, 8}, cl, 0, "1024x4+s1/d8" + c);
  add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 0>, {1024, 4, 1, 0}, cl, 0, "1024x4+s1/d0" + c);
  if constexpr (sizeof(T) == 4)
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 4>, {1024, 4, 1, 4}, cl, 0, "1024x4+s1/d4" + c);
  else
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 8>, {1024, 4, 1, 8}, cl, 0, "1024x4+s1/d8" + c);
  add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 12>, {1024, 4, 1, 12}, cl, 0, "1024x4+s1/d12" + c);
  if constexpr (sizeof(T) == 2) {
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 2>, {1024, 4, 1, 2}, cl, 0, "1024x4+s1/d2" + c);
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 3>, {1024, 4, 1, 3}, cl, 0, "1024x4+s1/d3" + c);
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 6>, {1024, 4, 1, 6}, cl, 0, "1024x4+s1/d6" + c);
  }
  if constexpr (sizeof(T) == 2) {
    // One-wave kernels over 128 CTAs in clusters of 2 (a row a cluster), 1024 threads,
    // `regs` register vectors a thread, the rest of the 256 KB chunk in shared memory.
    auto add_pair = [&](auto kernel, int regs, const std::string& label, int kind) {
      const size_t smem = size_t(cols / V / 2 - int64_t(regs) * 1024) * 16;
      prepare(kernel, smem, false);
      const void* k = reinterpret_cast<const void*>(kernel);
      probes.push_back({label, 128, [=](cudaStream_t s) {
                          const T* xs = static_cast<const T*>(x);
                          T* ys = static_cast<T*>(y);
                          int64_t c = cols;
                          void* args[] = {&xs, &ys, &c};
                          launch_cluster(k, args, 128, 1024, smem, 2, s);
                        }});
      probes.back().kind = kind;
    };
    // Bulk: 2 register packs (32 KB) + 14 x 16 KB pieces (or 7 x 32 KB), with and without
    // the L2 prefetch of the chunk, register part loaded first or after the pieces.
    add_pair(bulk_onewave<T, 2, 16384>, 2, "bulk 1024x2+14x16KB/c2", 0);
    add_pair(bulk_onewave<T, 2, 16384, true, false>, 2, "bulk 1024x2+14x16KB/c2 pf", 0);
    add_pair(bulk_onewave<T, 2, 16384, true, true>, 2, "bulk 1024x2+14x16KB/c2 pf regs-late", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, true>, 2, "bulk 1024x2+14x16KB/c2 regs-late", 0);
    add_pair(bulk_onewave<T, 2, 32768, true, true>, 2, "bulk 1024x2+7x32KB/c2 pf regs-late", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, false, 4>, 2, "bulk 1024x2+14x16KB/c2 ahead4", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, false, 6>, 2, "bulk 1024x2+14x16KB/c2 ahead6", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, false, 8>, 2, "bulk 1024x2+14x16KB/c2 ahead8", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, true, 4>, 2, "bulk 1024x2+14x16KB/c2 regs-late ahead4", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, true, 6>, 2, "bulk 1024x2+14x16KB/c2 regs-late ahead6", 0);
    add_pair(bulk_onewave<T, 2, 16384, false, true, 8>, 2, "bulk 1024x2+14x16KB/c2 regs-late ahead8", 0);
    add_pair(bulk_onewave<T, 2, 32768, false, false, 3>, 2, "bulk 1024x2+7x32KB/c2 ahead3", 0);
    // Fold orders with every copy in flight; arrival-order folds (sentinel polling).
    add_pair(onewave_fold<T, 4, 12, 0>, 4, "onewave regs-first cs", 0);
    add_pair(onewave_fold<T, 4, 12, 1>, 4, "onewave regs-last cs", 0);
    add_pair(onewave_fold<T, 4, 12, 2>, 4, "onewave arrival cs", 0);
    add_pair(arrival_fold<T, 4, 12, true, 0>, 4, "arrival 4+12 regs-first", 2);
    add_pair(arrival_fold<T, 4, 12, false, 0>, 4, "arrival 4+12 regs-last", 2);
    add_pair(arrival_fold<T, 2, 14, true, 0>, 2, "arrival 2+14 regs-first", 2);
    add_pair(arrival_fold<T, 2, 14, false, 0>, 2, "arrival 2+14 regs-last", 2);
    add_pair(arrival_fold<T, 2, 14, true, 200>, 2, "arrival 2+14 regs-first sleep200", 2);
  }
  // Stepped grid: q parts a row, G = the largest multiple of q <= SMs.
  {
    static sm::dev::GridPartial* ws = nullptr;
    static unsigned long long tag = 1ull << 40;
    if (!ws) {
      CHECK_CUDA(cudaMalloc(&ws, 64 * 64 * sizeof(sm::dev::GridPartial)));
      CHECK_CUDA(cudaMemset(ws, 0, 64 * 64 * sizeof(sm::dev::GridPartial)));
    }
    auto add_stepped = [&](auto kernel, int threads, int ahead, bool after, int part_kb) {
      const int64_t num_vec = cols / V;
      const int part_vecs = part_kb * 1024 / 16;
      const int q = static_cast<int>((num_vec + part_vecs - 1) / part_vecs);
      const int G = sms / q * q;
      const size_t smem = size_t(ahead + 1) * part_vecs * 16;
      if (smem > optin - 4096 || q > 32) return;
      prepare(kernel, optin - 4096, false);  // one instantiation serves several part sizes
      const void* k = reinterpret_cast<const void*>(kernel);
      const std::string label = "stepped " + std::to_string(threads) + "t " + std::to_string(part_kb) + "KB q" +
                                std::to_string(q) + " G" + std::to_string(G) + " A" + std::to_string(ahead) +
                                (after ? " after" : " before");
      Probe pr{label, G, [=](cudaStream_t s) {
                 sm::RowArgs<T> a = ra;
                 int qq = q, pv = part_vecs;
                 sm::dev::GridPartial* w = ws;
                 unsigned long long t = tag;
                 tag += 64;
                 void* args[] = {&a, &qq, &pv, &w, &t};
                 launch_coop(k, args, G, threads, smem, s);
               }};
      pr.kind = 1;
      probes.push_back(pr);
    };
    if constexpr (sizeof(T) == 2) {
      auto add_twostep = [&](auto kernel, const std::string& label) {
        const size_t smem = size_t(12) * 1024 * 16;
        prepare(kernel, smem, false);
        const void* k = reinterpret_cast<const void*>(kernel);
        Probe pr{label, 128, [=](cudaStream_t s) {
                   const T* xs = static_cast<const T*>(x);
                   T* ys = static_cast<T*>(y);
                   int64_t c = cols;
                   sm::dev::GridPartial* w = ws;
                   unsigned long long t = tag;
                   tag += 64;
                   void* args[] = {&xs, &ys, &c, &w, &t};
                   launch_coop(k, args, 128, 1024, smem, s);
                 }};
        pr.kind = 3;
        probes.push_back(pr);
      };
      add_twostep(overlap_row<T>, "overlap bulk stores");
      add_twostep(twostep2_row<T, true>, "twostep2 regs in B, B regs first");
      add_twostep(twostep2_row<T, false>, "twostep2 regs in B, B copies first");
      add_twostep(twostep_row<T, 0, false>, "twostep B after A");
      add_twostep(twostep_row<T, 0, true>, "twostep B after A, B pipelined");
    }
    add_stepped(stepped_row<T, 1024, 1, true>, 1024, 1, true, 64);
    add_stepped(stepped_row<T, 1024, 1, true>, 1024, 1, true, 96);
  }
  for (size_t i = policy_index + 1; i < probes.size(); ++i) probes[i].check = true;
  // PROBE_ONLY=a,b,...: only the probes whose names contain one of these (the copy and
  // the policy, the checks' reference, always run).
  if (const char* only = std::getenv("PROBE_ONLY")) {
    std::vector<std::string> keys;
    for (std::string rest = only; !rest.empty();) {
      const size_t comma = rest.find(',');
      keys.push_back(rest.substr(0, comma));
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    std::vector<Probe> kept;
    size_t new_policy = 0;
    for (size_t i = 0; i < probes.size(); ++i) {
      bool keep = probes[i].name == "copy" || i == policy_index;
      for (const auto& key : keys) keep = keep || probes[i].name.find(key) != std::string::npos;
      if (i == policy_index) new_policy = kept.size();
      if (keep) kept.push_back(probes[i]);
    }
    probes = kept;
    policy_index_live = new_policy;
  }

  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::printf("\n== %s 64x262144 (%lld MB in + out), 512 MiB flush before each call, median of %d\n", dtype,
              static_cast<long long>(2 * bytes >> 20), reps);
  double copy_us = 0;
  std::vector<T> ref(elems), got(elems);
  for (size_t pi = 0; pi < probes.size(); ++pi) {
    auto& p = probes[pi];
    std::vector<double> t;
    for (int r = 0; r < reps + 3; ++r) {
      do_flush(flush, flush_bytes, r & 0xff, stream);
      CHECK_CUDA(cudaEventRecord(e0, stream));
      p.launch(stream);
      CHECK_CUDA(cudaEventRecord(e1, stream));
      CHECK_CUDA(cudaEventSynchronize(e1));
      float ms;
      CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) t.push_back(ms * 1000.0);
    }
    CHECK_CUDA(cudaGetLastError());
    const double us = median(t);
    if (p.name == "copy") copy_us = us;
    std::string verdict;
    if (pi == policy_index_live) CHECK_CUDA(cudaMemcpy(ref.data(), y, bytes, cudaMemcpyDeviceToHost));
    if (p.name.rfind("phase", 0) == 0 || p.name.rfind("halves", 0) == 0) {  // a copy: y must equal x
      std::vector<T> xin(elems);
      CHECK_CUDA(cudaMemcpy(xin.data(), x, bytes, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(got.data(), y, bytes, cudaMemcpyDeviceToHost));
      verdict = std::memcmp(xin.data(), got.data(), bytes) == 0 ? "  copy ok" : "  COPY WRONG";
    }
    if (p.check) {
      CHECK_CUDA(cudaMemcpy(got.data(), y, bytes, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int64_t i = 0; i < elems; ++i) {
        const double r = static_cast<float>(ref[i]), g = static_cast<float>(got[i]);
        const double d = std::fabs(r - g) / std::max(std::fabs(r), 1e-30);
        worst = (d > worst || d != d) ? d : worst;
      }
      char buf[64];
      std::snprintf(buf, sizeof(buf), "  max rel diff vs policy %.2e", worst);
      verdict = buf;
    }
    std::printf("%-34s %8.2f us  %6.3f TB/s  %6.1f%% of copy  (min %.2f max %.2f)%s\n", p.name.c_str(), us,
                2.0 * bytes / us * 1e-6, 100.0 * copy_us / us, *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()), verdict.c_str());
  }
  // Traced calls: stamps relative to the marker kernel before each.
  std::printf("-- timelines (us after the marker kernel; CTA quantiles min/10%%/50%%/90%%/max)\n");
  for (auto& p : probes) {
    if (p.blocks == 0) continue;
    do_flush(flush, flush_bytes, 0x5a, stream);
    std::vector<unsigned long long> zero(4096 * kPoints, 0);
    CHECK_CUDA(cudaMemcpyToSymbol(g_trace, zero.data(), zero.size() * 8));
    mark_kernel<<<1, 1, 0, stream>>>(0);
    p.launch(stream);
    mark_kernel<<<1, 1, 0, stream>>>(1);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<unsigned long long> tr(4096 * kPoints);
    unsigned long long mk[2];
    CHECK_CUDA(cudaMemcpyFromSymbol(tr.data(), g_trace, tr.size() * 8));
    CHECK_CUDA(cudaMemcpyFromSymbol(mk, g_mark, sizeof(mk)));
    std::printf("%s: after-marker %.2f us\n", p.name.c_str(), (mk[1] - mk[0]) * 1e-3);
    const char* names[4] = {"entry", "loaded", "merged", "exit"};
    for (int pt = 0; pt < kPoints; ++pt) {
      std::vector<double> v;
      for (int b = 0; b < p.blocks; ++b)
        if (tr[b * kPoints + pt]) v.push_back((double(tr[b * kPoints + pt]) - double(mk[0])) * 1e-3);
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      auto q = [&](double f) { return v[std::min(v.size() - 1, size_t(f * (v.size() - 1) + 0.5))]; };
      char label[16];
      const char* step_names[4] = {"landed", "reduced", "merged", "stored"};
      if (pt < 4) std::snprintf(label, sizeof(label), "%s", names[pt]);
      else if (p.kind == 3 && pt >= 4 && pt <= 8) {
        const char* tw[5] = {"A landed", "A merged", "A stored", "B landed", "B merged"};  // overlap: "A stored" = A's pieces issued
        std::snprintf(label, sizeof(label), "%s", tw[pt - 4]);
      } else if (pt == 30 && p.kind == 2) {
        std::printf("  %-9s %8.0f %8.0f %8.0f %8.0f %8.0f\n", "passes", double(tr[0 * kPoints + 30]), 0.0, 0.0, 0.0, 0.0);
        continue;
      } else if (p.kind == 1) std::snprintf(label, sizeof(label), "s%d %s", (pt - 4) / 4, step_names[(pt - 4) % 4]);
      else std::snprintf(label, sizeof(label), "k%d %s", (pt - 4) / 2, (pt - 4) % 2 ? "got" : "wait");
      std::printf("  %-9s %8.2f %8.2f %8.2f %8.2f %8.2f\n", label, q(0), q(0.1), q(0.5), q(0.9), q(1));
    }
  }
  if (sizeof(T) == 2 && !std::getenv("PROBE_ONLY")) arrival_report(x, y, vecs / 128, stream, flush, flush_bytes);
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  CHECK_CUDA(cudaFree(flush));
  CHECK_CUDA(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  run_dtype<__half>("f16", reps, prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  run_dtype<float>("f32", reps, prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  return 0;
}
