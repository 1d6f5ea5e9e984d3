// Timeline probe for split_row's one-wave cluster kernel on 64x262144 (issue #5):
// where does the time go between the copy's floor and the kernel's?
//
//   mkdir -p build-probe && nvcc -std=c++17 -O3 -Isrc -Iinclude \
//     -gencode arch=compute_90a,code=sm_90a scripts/softmax_phase_probe.cu -o build-probe/softmax_phase_probe
//   build-probe/softmax_phase_probe [reps]    # on the GPU machine (carry build-probe)
//
// Every kernel is timed the way gpukern-bench times it (a 512 MiB memset before each
// call, events around the one call, the median), next to cudaMemcpyAsync of the same
// bytes. Kernels:
//   copy         cudaMemcpyAsync device to device
//   stream       a grid-stride 16-byte copy kernel (8 blocks an SM)
//   phase        one CTA an SM, 1024 threads: the CTA's whole chunk loaded (registers
//                + cp.async to shared memory), then stored: split_row's phases with
//                no arithmetic; /cN adds a cluster barrier of N CTAs between them
//   halves       the same chunk in two cp.async groups: the first half stored while
//                the second lands
//   bulk         (16-bit) the CTA's shared-memory part as 16 or 32 KB bulk copies issued
//                in order by one thread, one mbarrier each, folded piece by piece as they
//                complete (run 15 of src/cuda/softmax/dev/NOTES.md: ordered, but slower)
//   hybrid       split_row's policy kernel (hybrid_row.cuh) and other depths of it, with
//                %globaltimer stamps per CTA (GPUKERN_SOFTMAX_TRACE); outputs compared
//                with the policy's
// A traced call after the timed ones prints, per kernel, the stamps' spread relative to
// a one-thread marker kernel launched just before it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
#define GPUKERN_SOFTMAX_TRACE(point) probe_trace(point)
#define GPUKERN_SOFTMAX_TRACE_STEP(k, after) \
  do {                                      \
    if ((k) < 14) probe_trace(4 + 2 * (k) + (after)); \
  } while (0)

#include "cuda/cluster.cuh"
#include "cuda/gemm/tensor_core_sm90.cuh"
#include "cuda/softmax/hybrid_row.cuh"
#include "cuda/softmax/dev/driver_common.hpp"

namespace sm = gpukern::cuda::softmax;


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

/// One CTA's chunk [begin, begin + n) of 16-byte vectors: kPacks a thread in registers,
/// the rest in shared memory. kHalves = 1: load all, (cluster barrier), store all.
/// kHalves = 2: the shared part in two groups, the first stored while the second lands.
template <int kPacks, int kHalves, bool kCluster>
__global__ void __launch_bounds__(1024, 1) phase_copy(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                      int64_t chunk, int64_t total) {
  extern __shared__ uint4 staged[];
  probe_trace(0);
  const int64_t begin = int64_t(blockIdx.x) * chunk;
  const int64_t n = begin >= total ? 0 : (chunk < total - begin ? chunk : total - begin);
  const int reg_count = static_cast<int>(n < 1024 * kPacks ? n : 1024 * kPacks);
  const int smem_count = static_cast<int>(n - reg_count);
  const int half = kHalves == 2 ? (smem_count / 2 + 1023) / 1024 * 1024 : smem_count;
  const uint4* src = x + begin + reg_count;
  for (int j = threadIdx.x; j < half; j += 1024) gpukern::gpu::cp_async_16(staged + j, src + j);
  gpukern::gpu::cp_async_commit();
  for (int j = half + threadIdx.x; j < smem_count; j += 1024) gpukern::gpu::cp_async_16(staged + j, src + j);
  gpukern::gpu::cp_async_commit();
  uint4 r[kPacks];
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    const int i = threadIdx.x + k * 1024;
    if (i < reg_count) r[k] = __ldcs(x + begin + i);
  }
  if constexpr (kHalves == 1) {
    gpukern::gpu::cp_async_wait<0>();
    __syncthreads();
    probe_trace(1);
    if constexpr (kCluster) gpukern::cuda::cluster::sync_aligned();
    probe_trace(2);
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int i = threadIdx.x + k * 1024;
      if (i < reg_count) __stcs(y + begin + i, r[k]);
    }
    for (int j = threadIdx.x; j < smem_count; j += 1024) __stcs(y + begin + reg_count + j, staged[j]);
  } else {
    gpukern::gpu::cp_async_wait<1>();
    probe_trace(1);
    for (int j = threadIdx.x; j < half; j += 1024) __stcs(y + begin + reg_count + j, staged[j]);
    gpukern::gpu::cp_async_wait<0>();
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

template <class T, int kRegs, int kPiece>
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
  const unsigned rank = gpukern::cuda::cluster::rank();
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
    for (int c = 0; c < pieces; ++c) {
      sm90::mbar_arrive_expect_tx(sm90::smem_addr(&bars[c]), kPiece);
      bp::bulk(sm90::smem_addr(staged + c * kPieceVecs), xc + (int64_t(reg_vecs) + int64_t(c) * kPieceVecs) * V, kPiece,
               sm90::smem_addr(&bars[c]));
    }
  }
  sm::Pack<T, V> regs[kRegs];
#pragma unroll
  for (int r = 0; r < kRegs; ++r) regs[r] = *reinterpret_cast<const sm::Pack<T, V>*>(xc + int64_t(tid + r * 1024) * V);
  float m = -INFINITY, sum = 0.0f;
  auto fold = [&](const sm::Pack<T, V>& p) {
    const float nm = sm::nan_max(m, sm::pack_max(p));
    if (nm != m) {
      sum = sum == 0.0f ? 0.0f : sum * sm::fast_exp2((m - nm) * sm::kLog2e);
      m = nm;
    }
    if (m != -INFINITY) {
#pragma unroll
      for (int e = 0; e < V; ++e) sum += sm::fast_exp2((gpukern::gpu::to_float(p.v[e]) - m) * sm::kLog2e);
    }
  };
  // Each piece holds kPieceVecs vectors: thread t folds vectors t, t + 1024, ... of it.
  for (int c = 0; c < pieces; ++c) {
    if (c < 14) probe_trace(4 + 2 * c);
    sm90::mbar_wait(sm90::smem_addr(&bars[c]), 0);
    if (c < 14) probe_trace(5 + 2 * c);
#pragma unroll
    for (int v = 0; v < kPieceVecs / 1024; ++v) fold(staged[c * kPieceVecs + v * 1024 + tid]);
  }
#pragma unroll
  for (int r = 0; r < kRegs; ++r) fold(regs[r]);
  sm::RowStats stats = sm::block_reduce<1024>(m == -INFINITY ? sm::empty_stats() : sm::RowStats{m, sum}, scratch);
  probe_trace(1);
  if (tid == 0) cta_stats = stats;
  gpukern::cuda::cluster::sync_aligned();
  const unsigned lane = tid % 32;
  stats = lane < 2 ? sm::hybrid_detail::load_remote(&cta_stats, lane) : sm::empty_stats();
  stats = sm::group_reduce<32>(stats);
  probe_trace(2);
  const sm::OutputScale o = sm::output_scale(stats, false);
  auto out = [&](const sm::Pack<T, V>& p, T* dst) {
    sm::Pack<T, V> q;
#pragma unroll
    for (int e = 0; e < V; ++e) q.v[e] = gpukern::gpu::from_float<T>(sm::output_value(gpukern::gpu::to_float(p.v[e]), o));
    __stcs(reinterpret_cast<uint4*>(dst), *reinterpret_cast<const uint4*>(&q));
  };
#pragma unroll
  for (int r = 0; r < kRegs; ++r) out(regs[r], yc + int64_t(tid + r * 1024) * V);
  for (int j = tid; j < smem_vecs; j += 1024) out(staged[j], yc + (int64_t(reg_vecs) + j) * V);
  gpukern::cuda::cluster::sync_aligned();
  probe_trace(3);
#endif
}

struct Probe {
  std::string name;
  int blocks;  // traced CTAs (0: untraced)
  std::function<void(cudaStream_t)> launch;
  bool check = false;  // compare the output with the policy kernel's
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void launch_cluster(const void* kernel, void** args, int blocks, int threads, size_t smem, int cluster,
                           cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CHECK_CUDA(cudaLaunchKernelExC(&cfg, kernel, args));
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
  // The policy kernels of split_row for this shape (06_split_row.cu: 16-bit 1024x4+s1/d8
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
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 8>, {1024, 4, 1, 8}, 2, 0, "policy 1024x4+s1/d8/c2");
  } else {
    add_hybrid(sm::hybrid_row_kernel<T, V, 256, 8, 4, true, 0>, {256, 8, 4, 0}, 16, 0, "policy 256x8+s4/c16");
  }
  const size_t policy_index = probes.size() - 1;
  // The one-CTA-an-SM layout at other pipeline depths (d0: statistics after every copy
  // landed; d12: every shared-memory copy in flight at once, folded in issue order).
  const int cl = sizeof(T) == 2 ? 2 : 4;  // 256 KB a CTA
  const std::string c = "/c" + std::to_string(cl);
  if constexpr (sizeof(T) == 4)
    add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 8>, {1024, 4, 1, 8}, cl, 0, "1024x4+s1/d8" + c);
  add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 0>, {1024, 4, 1, 0}, cl, 0, "1024x4+s1/d0" + c);
  add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 4>, {1024, 4, 1, 4}, cl, 0, "1024x4+s1/d4" + c);
  add_hybrid(sm::hybrid_row_kernel<T, V, 1024, 4, 1, true, 12>, {1024, 4, 1, 12}, cl, 0, "1024x4+s1/d12" + c);
  if constexpr (sizeof(T) == 2) {
    // Bulk one-wave: 2 register packs (32 KB) + 14 x 16 KB pieces, or 4 packs + 12 x 16 KB.
    auto add_bulk = [&](auto kernel, int regs, const std::string& label) {
      const int64_t chunk_vecs = cols / V / 2;
      const size_t smem = size_t(chunk_vecs - int64_t(regs) * 1024) * 16;
      prepare(kernel, smem, false);
      const void* k = reinterpret_cast<const void*>(kernel);
      probes.push_back({label, 128, [=](cudaStream_t s) {
                          const T* xs = static_cast<const T*>(x);
                          T* ys = static_cast<T*>(y);
                          int64_t c = cols;
                          void* args[] = {&xs, &ys, &c};
                          launch_cluster(k, args, 128, 1024, smem, 2, s);
                        }});
    };
    add_bulk(bulk_onewave<T, 2, 16384>, 2, "bulk 1024x2+14x16KB/c2");
    add_bulk(bulk_onewave<T, 4, 16384>, 4, "bulk 1024x4+12x16KB/c2");
    add_bulk(bulk_onewave<T, 4, 32768>, 4, "bulk 1024x4+6x32KB/c2");
  }
  for (size_t i = policy_index + 1; i < probes.size(); ++i) probes[i].check = true;

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
      CHECK_CUDA(cudaMemsetAsync(flush, r & 0xff, flush_bytes, stream));
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
    if (pi == policy_index) CHECK_CUDA(cudaMemcpy(ref.data(), y, bytes, cudaMemcpyDeviceToHost));
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
    CHECK_CUDA(cudaMemsetAsync(flush, 0x5a, flush_bytes, stream));
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
      if (pt < 4) std::snprintf(label, sizeof(label), "%s", names[pt]);
      else std::snprintf(label, sizeof(label), "k%d %s", (pt - 4) / 2, (pt - 4) % 2 ? "got" : "wait");
      std::printf("  %-9s %8.2f %8.2f %8.2f %8.2f %8.2f\n", label, q(0), q(0.1), q(0.5), q(0.9), q(1));
    }
  }
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  CHECK_CUDA(cudaFree(flush));
  CHECK_CUDA(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  run_dtype<__half>("f16", reps, prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  run_dtype<float>("f32", reps, prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  return 0;
}
