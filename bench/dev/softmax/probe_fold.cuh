// Helpers of the timeline probe's one-wave kernels (softmax_phase_probe.cu): a thread's
// running (max, sum), the exchanges of a row's partials, the staging of two rows.
#pragma once

#include "grid_row.cuh"
#include "probe_trace.cuh"

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
  __device__ sm::OutputScale scale(const Online<T>& acc, int step, sm::dev::GridPartial* ws,
                                   unsigned long long tag_base, Smem& smem) const {
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

/// Waits until at most n (0..N) cp.async groups are in flight (a run-time n).
namespace onewave {
template <int N>
__device__ __forceinline__ void wait_pending(int n) {
  if constexpr (N >= 0) {
    if (n == N)
      arch::cp_async_wait<N>();
    else
      wait_pending<N - 1>(n);
  }
}
}  // namespace onewave
