// The kernels of rung 5, `block_row` (05_block_row.cu), and their configuration types:
// a row held on chip by one block, in registers (block_row_kernel), in shared memory
// filled as it is reduced (block_row_smem_kernel), or in both (the hybrid layout,
// 05_block_row_hybrid.cuh). The rung instantiates its policy's configurations; the
// development driver (-DGPUKERN_BUILD_DEV=ON) instantiates other candidates from the same
// templates.
#pragma once

#include "cuda/softmax/05_block_row_hybrid.cuh"
#include "cuda/softmax/softmax_common.cuh"

#include <algorithm>

namespace gpukern::cuda::softmax {

/// A register layout: `threads` threads share a row, each holding `packs` vectors.
struct BlockRowConfig {
  int threads = 64;
  int packs = 1;
  /// Vectors of a row the layout holds.
  constexpr int64_t capacity() const { return int64_t(threads) * packs; }
  /// Whole warps on either vendor (multiples of 64 threads, at most 1024), at most 8
  /// packs a thread (32 data registers, so 1024 threads fit the 64K-register file).
  constexpr bool valid() const { return threads % 64 == 0 && threads <= 1024 && packs >= 1 && packs <= 8; }
};

/// Shared-memory staging: threads per block and vectors each thread loads before
/// storing any (several loads in flight).
constexpr int kBlockRowSmemThreads = 1024;
constexpr int kBlockRowSmemUnroll = 4;
/// Bytes of static shared memory the staging kernel keeps beside the row.
constexpr size_t kBlockRowSmemReserve = 1024;

/// kMasked (here and below): each pack is checked against the kept columns (with_mask,
/// softmax_common.cuh).
template <class T, int V, int kThreads, int kPacks, bool kMasked = false>
__global__ void __launch_bounds__(kThreads) block_row_kernel(RowArgs<T> a) {
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  const bool keep_exp = !a.log;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const RowRef<T> ref = a.at(row);
    RowFragment<T, V, kPacks> frag;
    frag.load(ref.x, threadIdx.x, kThreads, ref.mask.template vecs_read<kMasked>(V, num_vec));
    const RowStats mine = frag.template stats<kMasked>(keep_exp, threadIdx.x, kThreads, ref.mask);
    const RowStats stats = block_reduce<kThreads>(mine, scratch[parity]);
    parity ^= 1;
    frag.template store<kMasked>(ref.y, threadIdx.x, kThreads, num_vec, mine, stats, ref.mask);
  }
}

template <class T, int V, bool kMasked = false>
__global__ void __launch_bounds__(kBlockRowSmemThreads) block_row_smem_kernel(RowArgs<T> a) {
  extern __shared__ uint4 smem_raw[];  // uint4: 16-byte alignment for the packs
  Pack<T, V>* staged = reinterpret_cast<Pack<T, V>*>(smem_raw);
  __shared__ RowStats scratch[2][kBlockRowSmemThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const RowRef<T> ref = a.at(row);
    const int64_t read_vec = ref.mask.template vecs_read<kMasked>(V, num_vec);  // the packs holding a kept element
    RowStats mine = empty_stats();
    // Each thread stages and later reads back only its own vectors (i = tid + k *
    // kBlockRowSmemThreads), so the staging itself needs no barrier.
    for (int64_t base = threadIdx.x; base < read_vec; base += int64_t(kBlockRowSmemUnroll) * kBlockRowSmemThreads) {
      Pack<T, V> packs[kBlockRowSmemUnroll];
#pragma unroll
      for (int u = 0; u < kBlockRowSmemUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kBlockRowSmemThreads;
        if (i < read_vec) packs[u] = load_pack<T, V>(ref.x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kBlockRowSmemUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kBlockRowSmemThreads;
        if (i < read_vec) {  // (a break here kept hipcc from unrolling the loop)
          staged[i] = packs[u];
          mine = add_pack<kMasked>(mine, packs[u], i, ref.mask);
        }
      }
    }
    const RowStats stats = block_reduce<kBlockRowSmemThreads>(mine, scratch[parity]);
    parity ^= 1;
    const OutputScale o = output_scale(stats, a.log);
    for (int64_t i = threadIdx.x; i < read_vec; i += kBlockRowSmemThreads) {
      Pack<T, V> out;
      output_pack<kMasked>(staged[i], i, ref.mask, o, out);
      store_pack<T, V>(ref.y + i * V, out);
    }
    const Pack<T, V> fill = fill_pack<T, V>(ref.mask);
    for (int64_t i = read_vec + threadIdx.x; i < num_vec; i += kBlockRowSmemThreads)
      store_pack<T, V>(ref.y + i * V, fill);
  }
}

/// True when register layout `c` holds the call's rows.
inline bool block_row_holds(const BlockRowConfig& c, const core::SoftmaxArgs& args) {
  return c.capacity() >= args.cols / vector_elems(args);
}

/// True when the shared-memory staging kernel holds the call's rows.
inline bool block_row_smem_holds(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  return static_cast<size_t>(args.cols) * core::dtype_size(args.dtype) + kBlockRowSmemReserve <=
         ctx.smem_per_block_optin;
}

/// True when hybrid layout `c` holds the call's rows (16-byte path only).
inline bool block_row_hybrid_holds(const HybridConfig& c, const core::SoftmaxArgs& args, const CudaContext& ctx) {
  return vector_path_ok(args) && args.cols / vector_elems(args) <= hybrid_capacity(ctx, c);
}

/// Launches block_row_kernel in register layout kConfig (which must hold the rows).
template <class T, int V, const BlockRowConfig& kConfig>
void launch_block_row(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr BlockRowConfig c = kConfig;
  static_assert(c.valid(), "block_row layout: see BlockRowConfig::valid");
  with_mask(args, [&](auto masked) {
    launch_block_per_row(block_row_kernel<T, V, c.threads, c.packs, decltype(masked)::value>, c.threads, args, ctx);
  });
}

/// Launches block_row_smem_kernel (block_row_smem_holds must be true).
template <class T, int V>
void launch_block_row_smem(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const size_t bytes = static_cast<size_t>(args.cols) * sizeof(T);
  with_mask(args, [&](auto masked) {
    const auto kernel = block_row_smem_kernel<T, V, decltype(masked)::value>;
    // Per device and cheap: set on every launch rather than caching per device.
    GK_GPU_CHECK(gpu::allow_dynamic_smem(kernel, bytes));
    const int64_t blocks = std::min(total_rows(args), kMaxGridBlocks);
    kernel<<<static_cast<unsigned>(blocks), kBlockRowSmemThreads, bytes, ctx.stream>>>(typed_args<T>(args));
    GK_LAUNCH_CHECK();
  });
}

/// Launches hybrid_row_kernel in layout kConfig, one block a row
/// (block_row_hybrid_holds must be true; 16-byte path only).
template <class T, int V, const HybridConfig& kConfig>
void launch_block_row_hybrid(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if constexpr (sizeof(Pack<T, V>) == kVectorBytes) {
    constexpr HybridConfig c = kConfig;
    static_assert(c.valid(), "hybrid layout: see HybridConfig::valid");
    const int64_t smem_vecs = std::max<int64_t>(0, args.cols / V - int64_t(c.threads) * c.packs);
    const size_t bytes = static_cast<size_t>(smem_vecs) * kVectorBytes;
    with_mask(args, [&](auto masked) {
      const auto kernel = hybrid_row_kernel<T, V, c.threads, c.packs, c.min_blocks, false, 0, decltype(masked)::value>;
      GK_GPU_CHECK(gpu::allow_dynamic_smem(kernel, bytes));
#if defined(GPUKERN_CUDA)
      // All of the SM's shared memory to the carveout: min_blocks blocks' shares side by side.
      GK_GPU_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
#endif
      const int64_t blocks = std::min(total_rows(args), kMaxGridBlocks);
      kernel<<<static_cast<unsigned>(blocks), c.threads, bytes, ctx.stream>>>(typed_args<T>(args), args.cols / V);
      GK_LAUNCH_CHECK();
    });
  } else {
    throw core::Error(core::Status::InternalError, "block_row: the hybrid layout called on the scalar path");
  }
}

}  // namespace gpukern::cuda::softmax
