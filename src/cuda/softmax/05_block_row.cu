// CUDA softmax rung 5, `block_row`: one block per row, the row held on chip between
// the reduction and the write, so it is read from memory once, for rows too long for
// one warp's registers. Up to 2048 packs (32 KB) the row lives in registers: each
// thread loads its packs (all 16-byte loads in flight), the block merges the threads'
// (max, sum) pairs in one reduction (one barrier), and the output is written from
// registers with streaming stores. Longer rows on the 16-byte path take a hybrid layout
// (hybrid_row.cuh): part of the row in registers, the rest staged in shared memory by
// cp.async, with a register cap that lets 4 (64 KB rows) or 2 (128 KB rows) blocks share
// an SM, so that one block's exps overlap its neighbours' memory traffic. Beyond that,
// and on the scalar path, up to 8192 packs in registers, then up to the shared-memory
// opt-in limit of a block (ctx.smem_per_block_optin, 227 KB on the H100) staged in
// shared memory with the online (max, sum) computed as the vectors arrive. Against
// `warp_row` it trades shuffles for a block barrier and scales to long rows; against
// `online` it reads each row once instead of twice.
// Measured on the H100 (2026-11-21): 32768x8192 f32 2.99 TB/s (100% of the copy;
// online: 2.38), f16 and bf16 2.96 (100%); 4096x4096 2.56-2.77 (99-101%); 1024x32768
// with the hybrid layouts f32 2.80 (97.5%), f16 2.68 (96.7%), bf16 2.63 (95.2%), where
// the rows in registers alone gave 2.78 (96.9%), 2.56 (92.4%), 2.53 (91.4%).
//
// Declines rows beyond the shared-memory limit (use split_row). Scalar path when
// pointers, strides or the row length are not 16-byte multiples. Special values as
// PyTorch (softmax_common.cuh). In place works: each element is on chip before any
// output of the row is written, by the thread that read it.
#include "cuda/softmax/hybrid_row.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <utility>

namespace gpukern::cuda::softmax {
namespace {

/// A register layout: `threads` threads share a row, each holding `packs` vectors.
struct BlockRowConfig {
  int threads;
  int packs;
};

/// Ordered by capacity (threads x packs vectors); the policy takes the first that holds
/// the row, so among equal capacities the first listed wins. 4 packs a thread (64
/// bytes in flight) up to 1024-thread-wide rows, 8 packs beyond.
constexpr BlockRowConfig kConfigs[] = {
    {64, 1},  {64, 2},   {64, 4},  {128, 4}, {256, 4},  {128, 8},
    {512, 4}, {256, 8},  {512, 8}, {1024, 4}, {1024, 8},
};
constexpr int kNumConfigs = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));

constexpr bool configs_valid() {
  for (int i = 0; i < kNumConfigs; ++i) {
    const BlockRowConfig c = kConfigs[i];
    if (c.threads % 64 != 0 || c.threads > 1024 || c.packs < 1 || c.packs > 8) return false;
    if (i > 0 && c.threads * c.packs < kConfigs[i - 1].threads * kConfigs[i - 1].packs) return false;
  }
  return true;
}
static_assert(configs_valid(),
              "block_row configs: whole warps on either vendor (multiples of 64 threads, at most 1024), at "
              "most 8 packs a thread (32 data registers, so 1024 threads fit the 64K-register file), "
              "capacity ascending");
constexpr int kRegisterVectors = kConfigs[kNumConfigs - 1].threads * kConfigs[kNumConfigs - 1].packs;

/// Shared-memory staging: threads per block and vectors each thread loads before
/// storing any (several loads in flight).
constexpr int kSmemThreads = 1024;
constexpr int kSmemUnroll = 4;
/// Bytes of static shared memory the staging kernel keeps beside the row.
constexpr size_t kSmemReserve = 1024;

/// Hybrid layouts (hybrid_row.cuh): part of the row in registers, the rest in shared
/// memory, so that min_blocks rows share an SM (16-byte path only).
constexpr HybridConfig kHybridConfigs[] = {{256, 8, 4}, {256, 4, 4}, {512, 4, 3}, {512, 8, 2}, {256, 8, 2}};
constexpr int kNumHybrid = static_cast<int>(sizeof(kHybridConfigs) / sizeof(kHybridConfigs[0]));

template <class T, int V, int kThreads, int kPacks>
__global__ void __launch_bounds__(kThreads) block_row_kernel(RowArgs<T> a) {
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  const bool keep_exp = !a.log;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    RowFragment<T, V, kPacks> frag;
    frag.load(a.x + row * a.ldx, threadIdx.x, kThreads, num_vec);
    const RowStats mine = frag.stats(keep_exp);
    const RowStats stats = block_reduce<kThreads>(mine, scratch[parity]);
    parity ^= 1;
    frag.store(a.y + row * a.ldy, threadIdx.x, kThreads, num_vec, mine, stats, a.log);
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kSmemThreads) block_row_smem_kernel(RowArgs<T> a) {
  extern __shared__ uint4 smem_raw[];  // uint4: 16-byte alignment for the packs
  Pack<T, V>* staged = reinterpret_cast<Pack<T, V>*>(smem_raw);
  __shared__ RowStats scratch[2][kSmemThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const T* x = a.x + row * a.ldx;
    RowStats mine = empty_stats();
    // Each thread stages and later reads back only its own vectors (i = tid + k *
    // kSmemThreads), so the staging itself needs no barrier.
    for (int64_t base = threadIdx.x; base < num_vec; base += int64_t(kSmemUnroll) * kSmemThreads) {
      Pack<T, V> packs[kSmemUnroll];
#pragma unroll
      for (int u = 0; u < kSmemUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kSmemThreads;
        if (i < num_vec) packs[u] = load_pack<T, V>(x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kSmemUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kSmemThreads;
        if (i < num_vec) {  // (a break here kept hipcc from unrolling the loop)
          staged[i] = packs[u];
          float v[V];
          unpack(packs[u], v);
          mine = add_values(mine, v);
        }
      }
    }
    const RowStats stats = block_reduce<kSmemThreads>(mine, scratch[parity]);
    parity ^= 1;
    const OutputScale o = output_scale(stats, a.log);
    T* y = a.y + row * a.ldy;
    for (int64_t i = threadIdx.x; i < num_vec; i += kSmemThreads) {
      Pack<T, V> out;
      output_pack(staged[i], o, out);
      store_pack<T, V>(y + i * V, out);
    }
  }
}

template <class T, int V, int kIndex>
void launch_config(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr BlockRowConfig c = kConfigs[kIndex];
  launch_block_per_row(block_row_kernel<T, V, c.threads, c.packs>, c.threads, args, ctx);
}

template <class T, int V>
void launch_smem(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const size_t bytes = static_cast<size_t>(args.cols) * sizeof(T);
  const auto kernel = block_row_smem_kernel<T, V>;
  // Per device and cheap: set on every launch rather than caching per device.
  GK_GPU_CHECK(gpu::allow_dynamic_smem(kernel, bytes));
  const int64_t blocks = std::min(args.rows, kMaxGridBlocks);
  kernel<<<static_cast<unsigned>(blocks), kSmemThreads, bytes, ctx.stream>>>(typed_args<T>(args));
  GK_LAUNCH_CHECK();
}

template <class T, int V, int kIndex>
void launch_hybrid(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if constexpr (sizeof(Pack<T, V>) == kVectorBytes) {
    constexpr HybridConfig c = kHybridConfigs[kIndex];
    const auto kernel = hybrid_row_kernel<T, V, c.threads, c.packs, c.min_blocks, false>;
    const int64_t smem_vecs = std::max<int64_t>(0, args.cols / V - int64_t(c.threads) * c.packs);
    const size_t bytes = static_cast<size_t>(smem_vecs) * kVectorBytes;
    GK_GPU_CHECK(gpu::allow_dynamic_smem(kernel, bytes));
#if defined(GPUKERN_CUDA)
    // All of the SM's shared memory to the carveout: min_blocks blocks' shares side by side.
    GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
#endif
    const int64_t blocks = std::min(args.rows, kMaxGridBlocks);
    kernel<<<static_cast<unsigned>(blocks), c.threads, bytes, ctx.stream>>>(typed_args<T>(args), args.cols / V);
    GK_LAUNCH_CHECK();
  }
}

template <class T, int V, size_t... I, size_t... H>
void launch_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, std::index_sequence<I...>,
                    std::index_sequence<H...>) {
  if (index == kNumConfigs) return launch_smem<T, V>(args, ctx);
  ((index == static_cast<int>(I) ? launch_config<T, V, static_cast<int>(I)>(args, ctx) : void()), ...);
  ((index == kNumConfigs + 1 + static_cast<int>(H) ? launch_hybrid<T, V, static_cast<int>(H)>(args, ctx) : void()), ...);
}

bool fits_smem(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  return static_cast<size_t>(args.cols) * core::dtype_size(args.dtype) + kSmemReserve <= ctx.smem_per_block_optin;
}

/// Index kNumConfigs means the shared-memory staging kernel, kNumConfigs + 1 + h the
/// hybrid layout h (16-byte path only).
bool fits(const core::SoftmaxArgs& args, const CudaContext& ctx, int index) {
  if (index == kNumConfigs) return fits_smem(args, ctx);
  if (index > kNumConfigs) {
    const HybridConfig c = kHybridConfigs[index - kNumConfigs - 1];
    return vector_path_ok(args) && args.cols / vector_elems(args) <= hybrid_capacity(ctx, c);
  }
  return int64_t(kConfigs[index].threads) * kConfigs[index].packs >= args.cols / vector_elems(args);
}

/// The policy: the smallest register configuration that holds the row, else shared
/// memory; -1 when neither does.
int pick_config(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  // Rows over 2048 vectors (32 KB) on the 16-byte path: a hybrid layout, 4 rows an SM
  // (256 x 4 + shared memory: 1024x32768 f16 2.68 TB/s = 96.7% of the copy, bf16 2.63 =
  // 95.2%, against 92.4% and 91.4% for 512 x 8 in registers), else 2 rows an SM
  // (256 x 8 + shared memory: 1024x32768 f32 2.80 TB/s = 97.5%, 1024 x 8: 96.9%).
  if (vector_path_ok(args) && args.cols / vector_elems(args) > 2048)
    for (int h : {1, 4})
      if (fits(args, ctx, kNumConfigs + 1 + h)) return kNumConfigs + 1 + h;
  for (int i = 0; i <= kNumConfigs; ++i)
    if (fits(args, ctx, i)) return i;
  return -1;
}

void run_index(const core::SoftmaxArgs& args, const CudaContext& ctx, int index) {
  with_storage_and_width(args, [&](auto tag, auto width) {
    launch_indexed<decltype(tag), decltype(width)::value>(index, args, ctx, std::make_index_sequence<kNumConfigs>{},
                                                          std::make_index_sequence<kNumHybrid>{});
  });
}

}  // namespace

int64_t block_row_register_cols(const core::SoftmaxArgs& args) { return kRegisterVectors * vector_elems(args); }

core::Verdict block_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (pick_config(args, ctx) >= 0) return {};
  return {core::Decline::ShapeLimit, "row of " + std::to_string(args.cols * static_cast<int64_t>(core::dtype_size(args.dtype))) +
         " bytes exceeds block_row's registers and the shared-memory opt-in limit of " +
         std::to_string(ctx.smem_per_block_optin) + " bytes (use split_row)"};
}

void block_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int index = pick_config(args, ctx);
  if (index < 0)
    throw core::Error(core::Status::InternalError, "block_row ran a call it declines: " + block_row_supports(args, ctx).text());
  run_index(args, ctx, index);
}

std::vector<std::string> block_row_config_names() {
  std::vector<std::string> names;
  for (const auto& c : kConfigs) names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs));
  names.push_back(std::to_string(kSmemThreads) + "/smem");
  for (const auto& c : kHybridConfigs)
    names.push_back(std::to_string(c.threads) + "x" + std::to_string(c.packs) + "+s" + std::to_string(c.min_blocks));
  return names;
}

std::string block_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config) {
  if (config < 0 || config > kNumConfigs + kNumHybrid) return "no such config";
  if (!fits(args, ctx, config)) return "row does not fit";
  run_index(args, ctx, config);
  return {};
}

}  // namespace gpukern::cuda::softmax
