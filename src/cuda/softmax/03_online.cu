// CUDA softmax rung 3, `online`: two passes instead of three. Pass 1 keeps a running
// (max, sum) per thread: when a vector brings a larger max, the sum so far is rescaled
// by exp(old max - new max) (the online softmax), so max and sum come out of a single
// read. The block then merges the threads' pairs in one reduction (warp shuffles of
// pairs, then one partial per warp), and pass 2 reads the row again to write it.
// Faster than `safe_3pass` because a row is read twice instead of three times and the
// block synchronizes once per row instead of twice; the exps use the hardware EX2.
// Still one block per row: very short rows (a block mostly idle) and few long rows
// (most SMs idle) stay far from a copy's speed.
//
// 16-byte vectors when pointers, strides and the row length allow, scalar otherwise.
// Special values as PyTorch (softmax_common.cuh: a part of only -inf carries sum 0, so
// it cannot poison the rescaling). In place works. Accepts every valid call; fuses
// batches, the input scale and the causal mask (only the vectors holding kept columns
// are read).
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {
namespace {

constexpr int kThreads = 256;
/// Vectors each thread loads before using any: several 16-byte loads in flight.
constexpr int kUnroll = 4;

template <class T, int V>
__global__ void __launch_bounds__(kThreads) online_kernel(RowArgs<T> a) {
  __shared__ RowStats scratch[2][kThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const RowRef<T> ref = a.at(row);
    const RowMask& mask = ref.mask;
    const int64_t read_vec = mask.read_vecs(V, num_vec);  // the packs holding a kept element

    RowStats mine = empty_stats();
    for (int64_t base = threadIdx.x; base < read_vec; base += int64_t(kUnroll) * kThreads) {
      Pack<T, V> packs[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kThreads;
        if (i < read_vec) packs[u] = load_pack<T, V, Cache::Default>(ref.x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kThreads;
        if (i >= read_vec) break;
        mine = add_pack<true>(mine, packs[u], i, mask);
      }
    }
    const RowStats stats = block_reduce<kThreads>(mine, scratch[parity]);
    parity ^= 1;

    const OutputScale o = output_scale(stats, a.log);
    for (int64_t i = threadIdx.x; i < read_vec; i += kThreads) {
      Pack<T, V> out;
      output_pack<true>(load_pack<T, V, Cache::Default>(ref.x + i * V), i, mask, o, out);
      store_pack<T, V>(ref.y + i * V, out);
    }
    const Pack<T, V> fill = fill_pack<T, V>(mask);
    for (int64_t i = read_vec + threadIdx.x; i < num_vec; i += kThreads) store_pack<T, V>(ref.y + i * V, fill);
  }
}

}  // namespace

void online_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  with_storage_and_width(args, [&](auto tag, auto width) {
    launch_block_per_row(online_kernel<decltype(tag), decltype(width)::value>, kThreads, args, ctx);
  });
}

}  // namespace gpukern::cuda::softmax
