// CUDA softmax rung 1, `naive`: one thread per row, the textbook safe softmax in three
// passes over the row ((1) max, (2) sum of exp(x - max), (3) output), scalar loads,
// accurate expf. The baseline of the ladder, and slow for two reasons the next rungs
// remove: the 32 threads of a warp read 32 different rows, so every load touches its
// own cache line (uncoalesced), and a row is read from memory three times; with few
// rows, few threads are busy at all.
//
// Special values as PyTorch (see softmax_common.cuh): NaN rows stay NaN, a row of all
// -inf gives NaN. In place (y == x) works: pass 3 reads each element before the same
// thread overwrites it. Accepts every valid call, and fuses batches (a thread per row
// of every item), the input scale and the causal mask (a row reads only its kept
// columns and fills the rest).
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {
namespace {

constexpr int kThreads = 128;

template <class T>
__global__ void __launch_bounds__(kThreads) naive_kernel(RowArgs<T> a) {
  const int64_t stride = int64_t(gridDim.x) * kThreads;
  for (int64_t row = int64_t(blockIdx.x) * kThreads + threadIdx.x; row < a.rows; row += stride) {
    const RowRef<T> ref = a.at(row);
    const T* x = ref.x;
    T* y = ref.y;
    const int64_t kept = ref.mask.kept;  // columns from `kept` on are masked: never read
    float max = -INFINITY;
    for (int64_t j = 0; j < kept; ++j) max = nan_max(max, gpu::to_float(x[j]) * a.scale);
    // One thread adds the whole row, so a plain f32 sum drifts by ~sqrt(cols) ulps
    // (1.5e-5 relative at 100000 columns, over the f32 bound): compensated (Kahan)
    // summation keeps it at a few ulps, still in f32.
    float sum = 0.0f, carry = 0.0f;
    for (int64_t j = 0; j < kept; ++j) {
      const float term = expf(gpu::to_float(x[j]) * a.scale - max) - carry;
      const float next = sum + term;
      carry = (next - sum) - term;
      sum = next;
    }
    const float log_sum = logf(sum);
    for (int64_t j = 0; j < kept; ++j) {
      const float shifted = gpu::to_float(x[j]) * a.scale - max;
      y[j] = gpu::from_float<T>(a.log ? shifted - log_sum : expf(shifted) / sum);
    }
    const T fill = gpu::from_float<T>(ref.mask.fill());
    for (int64_t j = kept; j < a.cols; ++j) y[j] = fill;
  }
}

}  // namespace

void naive_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int64_t blocks = std::min(ceil_div<int64_t>(total_rows(args), kThreads), kMaxGridBlocks);
  with_storage_type(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    naive_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, ctx.stream>>>(typed_args<T>(args));
    GK_LAUNCH_CHECK();
  });
}

}  // namespace gpukern::cuda::softmax
