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
// it cannot poison the rescaling). In place works. Accepts every valid call.
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
    const T* x = a.x + row * a.ldx;
    T* y = a.y + row * a.ldy;

    RowStats mine = empty_stats();
    for (int64_t base = threadIdx.x; base < num_vec; base += int64_t(kUnroll) * kThreads) {
      Pack<T, V> packs[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kThreads;
        if (i < num_vec) packs[u] = load_pack<T, V, Cache::Default>(x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + int64_t(u) * kThreads >= num_vec) break;
        float v[V];
        unpack(packs[u], v);
        mine = add_values(mine, v);
      }
    }
    const RowStats stats = block_reduce<kThreads>(mine, scratch[parity]);
    parity ^= 1;

    const OutputScale o = output_scale(stats, a.log);
    // output_pack's computation, written out: through the helper the HIP module's code
    // for this kernel changes (2-3 more instructions on gfx90a/gfx940/gfx1030).
    for (int64_t i = threadIdx.x; i < num_vec; i += kThreads) {
      float v[V];
      unpack(load_pack<T, V, Cache::Default>(x + i * V), v);
      Pack<T, V> out;
#pragma unroll
      for (int k = 0; k < V; ++k) out.v[k] = gpu::from_float<T>(output_value(v[k], o));
      store_pack<T, V>(y + i * V, out);
    }
  }
}

}  // namespace

void online_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  with_storage_and_width(args, [&](auto tag, auto width) {
    launch_block_per_row(online_kernel<decltype(tag), decltype(width)::value>, kThreads, args, ctx);
  });
}

}  // namespace gpukern::cuda::softmax
