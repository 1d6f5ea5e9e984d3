// Host helpers of the TMA-fed tensor-core rungs; see tma_host.cuh.
#include "cuda/gemm/tensor_core/tma_host.cuh"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>

namespace gpukern::cuda::gemm {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status);
    return (e == cudaSuccess && status == cudaDriverEntryPointSuccess)
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p)
               : nullptr;
  }();
  return fn;
}

namespace {

/// What a tensor map is made from (encode_tensor_map): equal keys encode equal maps.
struct MapKey {
  CUtensorMapDataType type;
  std::size_t elem_bytes;
  const void* ptr;
  int64_t ld;
  int rows, cols, box_rows;
  TmaWalk walk;
  int64_t items, stride;
  bool operator==(const MapKey& o) const {
    return type == o.type && elem_bytes == o.elem_bytes && ptr == o.ptr && ld == o.ld && rows == o.rows &&
           cols == o.cols && box_rows == o.box_rows && walk == o.walk && items == o.items && stride == o.stride;
  }
};

/// The maps this thread encoded last: a call repeated on the same operands (a layer run
/// step after step, a benchmark) finds its maps here instead of encoding them again,
/// which costs a microsecond-scale GEMM several percent of its time. A map holds the
/// operand's address, not its data, so an entry never goes stale.
struct MapCache {
  static constexpr int kEntries = 8;
  std::array<MapKey, kEntries> keys{};
  std::array<CUtensorMap, kEntries> maps{};
  int used = 0, next = 0;
  const CUtensorMap* find(const MapKey& key) const {
    for (int i = 0; i < used; ++i)
      if (keys[i] == key) return &maps[i];
    return nullptr;
  }
  void add(const MapKey& key, const CUtensorMap& map) {
    keys[next] = key;
    maps[next] = map;
    next = (next + 1) % kEntries;
    used = std::min(used + 1, kEntries);
  }
};

CUtensorMap encode_uncached(CUtensorMapDataType type, std::size_t elem_bytes, const void* ptr, int64_t ld, int rows,
                            int cols, TmaWalk walk, int box_rows, TmaItems batch) {
  const cuuint32_t rank = batch.items > 0 ? 3 : 2;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(std::max<int64_t>(batch.items, 1))};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * elem_bytes,
                                 static_cast<cuuint64_t>(batch.stride) * elem_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / elem_bytes), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  CUtensorMap map{};
  auto encode = [&] {
    return tensor_map_encoder()(&map, type, rank, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                tma_l2_promotion(walk, ld * static_cast<int64_t>(elem_bytes)),
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CUresult r = encode();
  if (r != CUDA_SUCCESS && type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) {
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;  // same bits; the tensor cores then truncate to tf32
    r = encode();
  }
  if (r != CUDA_SUCCESS)
    throw TmaEncodeError(core::Status::DeviceError, "cuTensorMapEncodeTiled failed with CUresult " +
                                                        std::to_string(static_cast<int>(r)) +
                                                        (rank == 3 ? " (3-D map of a batch)" : ""));
  return map;
}

}  // namespace

CUtensorMapL2promotion tma_l2_promotion(TmaWalk walk, int64_t pitch_bytes) {
  return walk == TmaWalk::AlongRows && pitch_bytes % 256 == 0 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                                              : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
}

CUtensorMap encode_tensor_map(CUtensorMapDataType type, std::size_t elem_bytes, const void* ptr, int64_t ld, int rows,
                              int cols, TmaWalk walk, int box_rows, TmaItems batch) {
  thread_local MapCache cache;
  const MapKey key{type, elem_bytes, ptr, ld, rows, cols, box_rows, walk, batch.items, batch.stride};
  if (const CUtensorMap* hit = cache.find(key)) return *hit;
  const CUtensorMap map = encode_uncached(type, elem_bytes, ptr, ld, rows, cols, walk, box_rows, batch);
  cache.add(key, map);
  return map;
}

bool tma_addressable(const void* ptr, int64_t ld, std::size_t elem_bytes) {
  return row_alignment_reason("", ptr, ld, elem_bytes, 16).accepted();
}

namespace {

/// Copies a rows x cols matrix of `Word`-sized elements (row pitch `ld`) to `dst` with a
/// row pitch of `dst_ld` (a multiple of 16 bytes), zero bits past `cols`: each thread
/// writes one aligned 16-byte chunk. The copy is bitwise, so one kernel per element size
/// serves f16, bf16 and f32 (all three encode +0 as zero bits).
template <class Word>
__global__ void repack_rows_kernel(const Word* src, int64_t ld, Word* dst, int64_t dst_ld, int rows, int cols) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(Word));
  const int64_t chunks_per_row = dst_ld / kPerChunk;
  const int64_t total = static_cast<int64_t>(rows) * chunks_per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / chunks_per_row;
    const int col = static_cast<int>(i % chunks_per_row) * kPerChunk;
    Word e[kPerChunk];
#pragma unroll
    for (int j = 0; j < kPerChunk; ++j) e[j] = col + j < cols ? src[row * ld + col + j] : Word{0};
    uint4 packed;
    memcpy(&packed, e, sizeof(packed));
    *reinterpret_cast<uint4*>(dst + row * dst_ld + col) = packed;
  }
}

template <class Word>
void launch_repack(const void* src, int64_t ld, void* dst, int64_t dst_ld, int rows, int cols, const CudaContext& ctx) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(Word));
  const int64_t chunks = rows * dst_ld / kPerChunk;
  const int blocks = static_cast<int>(std::min<int64_t>(ceil_div<int64_t>(chunks, 256), 8 * ctx.sm_count));
  repack_rows_kernel<Word>
      <<<blocks, 256, 0, ctx.stream>>>(static_cast<const Word*>(src), ld, static_cast<Word*>(dst), dst_ld, rows, cols);
  GK_LAUNCH_CHECK();
}

}  // namespace

void* make_tma_addressable(const void*& ptr, int64_t& ld, int rows, int cols, std::size_t elem_bytes,
                           const CudaContext& ctx) {
  if (tma_addressable(ptr, ld, elem_bytes)) return nullptr;
  const int64_t per_chunk = 16 / static_cast<int64_t>(elem_bytes);
  const int64_t dst_ld = ceil_div<int64_t>(cols, per_chunk) * per_chunk;
  void* dst = workspace_alloc(static_cast<std::size_t>(rows) * dst_ld * elem_bytes, ctx);
  if (elem_bytes == 2)
    launch_repack<uint16_t>(ptr, ld, dst, dst_ld, rows, cols, ctx);
  else
    launch_repack<uint32_t>(ptr, ld, dst, dst_ld, rows, cols, ctx);
  ptr = dst;
  ld = dst_ld;
  return dst;
}

}  // namespace gpukern::cuda::gemm
