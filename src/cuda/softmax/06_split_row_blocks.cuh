// split_row's split across ordinary blocks (rung 6, 06_split_row.cu): any architecture,
// any row length. Two kernels: the first reduces each chunk of a row to its (max, sum)
// pair in a workspace; the second merges the row's pairs and reads its chunk again to
// write it. 1.5x the traffic of one read and one write, but it needs no clusters (the
// policy's path before sm_90) and no row is too long for it.
//
// Special values as PyTorch (softmax_common.cuh: pairs from chunks of only -inf carry
// sum 0). In place works: every chunk is fully reduced by the first kernel before the
// second overwrites it.
#pragma once

#include "cuda/softmax/softmax_common.cuh"

#include <algorithm>
#include <string>

namespace gpukern::cuda::softmax {

/// Threads a block, and vectors each thread loads before reducing any (loads in flight).
constexpr int kSplitBlockThreads = 256;
constexpr int kSplitBlockUnroll = 4;
/// Vectors per block: 8 per thread keeps a block's chunk (32 KB of f32) long enough to
/// amortize its reduction, short enough to give long rows many blocks.
constexpr int64_t kSplitBlockChunkVecs = 8 * kSplitBlockThreads;
/// Rows in flight (grid y; the kernels loop over the rest).
constexpr int64_t kSplitMaxGridY = 65535;

/// kMasked (both kernels): each pack is checked against the kept columns (with_mask,
/// softmax_common.cuh).
template <class T, int V, bool kMasked = false>
__global__ void __launch_bounds__(kSplitBlockThreads)
    split_stats_kernel(RowArgs<T> a, int64_t chunk_vecs, RowStats* partial) {
  __shared__ RowStats scratch[2][kSplitBlockThreads / gpu::kWarpSize];
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(blockIdx.x) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  int parity = 0;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    const RowRef<T> ref = a.at(row);
    const int64_t read_end = ref.mask.template vecs_read<kMasked>(V, end);  // the chunk's vectors holding a kept column
    RowStats mine = empty_stats();
    for (int64_t base = begin + threadIdx.x; base < read_end; base += int64_t(kSplitBlockUnroll) * kSplitBlockThreads) {
      Pack<T, V> packs[kSplitBlockUnroll];
#pragma unroll
      for (int u = 0; u < kSplitBlockUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kSplitBlockThreads;
        if (i < read_end) packs[u] = load_pack<T, V, Cache::Default>(ref.x + i * V);
      }
#pragma unroll
      for (int u = 0; u < kSplitBlockUnroll; ++u) {
        const int64_t i = base + int64_t(u) * kSplitBlockThreads;
        if (i >= read_end) break;
        mine = add_pack<kMasked>(mine, packs[u], i, ref.mask);
      }
    }
    const RowStats stats = block_reduce<kSplitBlockThreads>(mine, scratch[parity]);
    parity ^= 1;
    if (threadIdx.x == 0) partial[row * gridDim.x + blockIdx.x] = stats;
  }
}

template <class T, int V, bool kMasked = false>
__global__ void __launch_bounds__(kSplitBlockThreads)
    split_write_kernel(RowArgs<T> a, int64_t chunk_vecs, const RowStats* partial) {
  const int64_t num_vec = a.cols / V;
  const int64_t begin = int64_t(blockIdx.x) * chunk_vecs;
  const int64_t end = begin + chunk_vecs < num_vec ? begin + chunk_vecs : num_vec;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    // Every thread merges the row's pairs in chunk order: identical results everywhere.
    RowStats stats = empty_stats();
    for (unsigned s = 0; s < gridDim.x; ++s) stats = merge(stats, partial[row * gridDim.x + s]);
    const OutputScale o = output_scale(stats, a.log);
    const RowRef<T> ref = a.at(row);
    const int64_t read_end = ref.mask.template vecs_read<kMasked>(V, end);
    for (int64_t i = begin + threadIdx.x; i < read_end; i += kSplitBlockThreads) {
      Pack<T, V> out;
      output_pack<kMasked>(load_pack<T, V, Cache::Default>(ref.x + i * V), i, ref.mask, o, out);
      store_pack<T, V>(ref.y + i * V, out);
    }
    const Pack<T, V> fill = fill_pack<T, V>(ref.mask);
    for (int64_t i = (read_end > begin ? read_end : begin) + threadIdx.x; i < end; i += kSplitBlockThreads)
      store_pack<T, V>(ref.y + i * V, fill);
  }
}

/// Launches the two kernels on ctx.stream, with a stream-ordered workspace.
template <class T, int V>
void launch_split_blocks(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int64_t num_vec = args.cols / V;
  const int64_t splits = ceil_div(num_vec, kSplitBlockChunkVecs);
  const int64_t rows = total_rows(args);
  const int64_t grid_y = std::min(rows, kSplitMaxGridY);
  if (splits > kMaxGridBlocks)
    throw core::Error(core::Status::InternalError, "split_row: row of " + std::to_string(args.cols) +
                                                       " elements needs more than " + std::to_string(kMaxGridBlocks) +
                                                       " blocks");
  // One (max, sum) pair per row and chunk, in stream-ordered memory: freed after the
  // second kernel without a host synchronization.
  RowStats* partial = nullptr;
  const size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(splits) * sizeof(RowStats);
  GK_GPU_CHECK(gpu::malloc_async(reinterpret_cast<void**>(&partial), bytes, ctx.stream));
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(grid_y));
  const RowArgs<T> a = typed_args<T>(args);
  gpu::error_t first = gpu::kSuccess, second = gpu::kSuccess;
  with_mask(args, [&](auto masked) {
    constexpr bool kMasked = decltype(masked)::value;
    split_stats_kernel<T, V, kMasked><<<grid, kSplitBlockThreads, 0, ctx.stream>>>(a, kSplitBlockChunkVecs, partial);
    first = gpu::last_launch_error();
    if (first == gpu::kSuccess)
      split_write_kernel<T, V, kMasked><<<grid, kSplitBlockThreads, 0, ctx.stream>>>(a, kSplitBlockChunkVecs, partial);
    second = gpu::last_launch_error();
  });
  GK_GPU_CHECK(gpu::free_async(partial, ctx.stream));
  GK_GPU_CHECK(first);
  GK_GPU_CHECK(second);
}

}  // namespace gpukern::cuda::softmax
