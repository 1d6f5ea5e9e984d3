// CUDA softmax rung 2, `safe_3pass`: one block per row. The same three passes as
// `naive` (max, sum of exp(x - max), output), but the 256 threads of a block split the
// row: consecutive threads read consecutive 16-byte vectors (coalesced: a warp's load
// is 512 contiguous bytes instead of 32 scattered lines), and block reductions (warp
// shuffles, then one partial per warp through shared memory) combine the threads' max
// and sum. Faster than `naive` because every byte fetched is used and there are rows x
// 8 warps of parallelism instead of rows threads; still three reads of each row (the
// second and third partly from L2, until the tensor no longer stays in L2 between
// passes).
//
// 16-byte vectors when pointers, strides and the row length allow, scalar otherwise.
// Special values as PyTorch (softmax_common.cuh). In place works: pass 3 reads each
// element before the same thread writes it. Accepts every valid call; fuses batches,
// the input scale and the causal mask (a row reads only the vectors holding kept
// columns and writes the fill past them).
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {
namespace {

constexpr int kThreads = 256;

template <class T, int V>
__global__ void __launch_bounds__(kThreads) safe_3pass_kernel(RowArgs<T> a) {
  __shared__ float scratch[2][kThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const RowRef<T> ref = a.at(row);
    const RowMask& mask = ref.mask;
    const int64_t read_vec = mask.read_vecs(V, num_vec);  // the packs holding a kept element
    float v[V];

    float max = -INFINITY;
    for (int64_t i = threadIdx.x; i < read_vec; i += kThreads) {
      row_values<true>(load_pack<T, V, Cache::Default>(ref.x + i * V), i, mask, v);
#pragma unroll
      for (int k = 0; k < V; ++k) max = nan_max(max, v[k]);
    }
    max = block_max<kThreads>(max, scratch[0]);

    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < read_vec; i += kThreads) {
      row_values<true>(load_pack<T, V, Cache::Default>(ref.x + i * V), i, mask, v);
#pragma unroll
      for (int k = 0; k < V; ++k) sum += expf(v[k] - max);
    }
    sum = block_sum<kThreads>(sum, scratch[1]);

    const float log_sum = logf(sum);
    for (int64_t i = threadIdx.x; i < read_vec; i += kThreads) {
      row_values<true>(load_pack<T, V, Cache::Default>(ref.x + i * V), i, mask, v);
      Pack<T, V> out;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float shifted = v[k] - max;
        out.v[k] = gpu::from_float<T>(a.log ? shifted - log_sum : expf(shifted) / sum);
      }
      mask_output<true>(out, i, mask);
      store_pack<T, V, Cache::Default>(ref.y + i * V, out);
    }
    const Pack<T, V> fill = fill_pack<T, V>(mask);
    for (int64_t i = read_vec + threadIdx.x; i < num_vec; i += kThreads)
      store_pack<T, V, Cache::Default>(ref.y + i * V, fill);
    // scratch[0] is written again by the next row's max only after this row's sum
    // barrier, which every thread passes after reading scratch[0]: no barrier here.
  }
}

}  // namespace

void safe_3pass_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  with_storage_and_width(args, [&](auto tag, auto width) {
    launch_block_per_row(safe_3pass_kernel<decltype(tag), decltype(width)::value>, kThreads, args, ctx);
  });
}

}  // namespace gpukern::cuda::softmax
