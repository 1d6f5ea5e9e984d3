// Timeline probe for split_row's one-wave cluster kernel on 64x262144 (issue #5):
// where does the time go between the copy's floor and the kernel's?
//
//   cmake -S . -B build -DGPUKERN_BUILD_DEV=ON -DGPUKERN_CUDA_ARCHS=90a && cmake --build build --target
//   softmax_phase_probe build/bin/softmax_phase_probe [reps]    # on the GPU machine
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
#include "cuda/softmax/05_block_row_hybrid.cuh"
#include "driver_common.hpp"
#include "grid_row.cuh"
#include "probe_arrival.cuh"
#include "probe_copy_kernels.cuh"
#include "probe_grid_kernels.cuh"
#include "probe_onewave_kernels.cuh"
#include "probe_trace.cuh"

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
  CHECK_CUDA(
      cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
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
  probes.push_back(
      {"copy", 0, [=](cudaStream_t s) { CHECK_CUDA(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s)); }});
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
      if (pt < 4)
        std::snprintf(label, sizeof(label), "%s", names[pt]);
      else if (p.kind == 3 && pt >= 4 && pt <= 8) {
        const char* tw[5] = {"A landed", "A merged", "A stored", "B landed",
                             "B merged"};  // overlap: "A stored" = A's pieces issued
        std::snprintf(label, sizeof(label), "%s", tw[pt - 4]);
      } else if (pt == 30 && p.kind == 2) {
        std::printf("  %-9s %8.0f %8.0f %8.0f %8.0f %8.0f\n", "passes", double(tr[0 * kPoints + 30]), 0.0, 0.0, 0.0,
                    0.0);
        continue;
      } else if (p.kind == 1)
        std::snprintf(label, sizeof(label), "s%d %s", (pt - 4) / 4, step_names[(pt - 4) % 4]);
      else
        std::snprintf(label, sizeof(label), "k%d %s", (pt - 4) / 2, (pt - 4) % 2 ? "got" : "wait");
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
