// Host side of the TMA-fed tensor-core rungs (12_wgmma_tma, 13_tcgen05): the
// driver's tensor-map encoder, 2-D tensor maps with the 128-byte swizzle, and the
// repack of operands whose rows TMA cannot address into a 16-byte-pitched workspace
// (workspace_alloc, cuda/workspace.cuh).
// The same on Hopper and Blackwell: TMA and its descriptor format did not change.
#pragma once

#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/workspace.cuh"

#include <cuda.h>          // CUtensorMap and its enums (types only: the library never links -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace gpukern::cuda::gemm {

/// cuTensorMapEncodeTiled through the runtime's driver entry point (no -lcuda), or null
/// where the driver lacks it. Looked up once.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

/// The batch dimension of a tensor map: `items` matrices `stride` elements apart (the
/// third dimension, coordinate = item). items == 0: a plain 2-D map. A broadcast
/// operand (batch stride 0) is a 3-D map of one item, read at item coordinate 0: TMA
/// strides must be non-zero multiples of 16 bytes.
struct TmaItems {
  int64_t items = 0;
  int64_t stride = 0;
};

/// Which way a kernel walks a tensor map's boxes. AlongRows: each stage reads the next
/// 128 bytes of the same rows (a K-major operand: K is the contiguous dimension).
/// AcrossRows: each stage or tile reads other rows (an MN-major operand, C).
enum class TmaWalk : std::uint8_t { AlongRows, AcrossRows };

/// How many bytes L2 fetches from memory around a box row that misses (the map's L2
/// promotion). 256 bytes where the kernel walks along rows that start on 256-byte lines:
/// the fetch brings in the row's next 128 bytes, which the CTA's next stage reads.
/// Elsewhere 128 bytes, the box row itself, which measured faster: rows off the 256-byte
/// lines (pitches such as 2000 or 6000 bytes, where a box row spans two lines), and
/// across rows, where the rest of a 256-byte fetch belongs to another CTA's box, read at
/// another time (docs/notes/llm-gemm.md, "L2 promotion").
CUtensorMapL2promotion tma_l2_promotion(TmaWalk walk, int64_t pitch_bytes);

/// The driver refused to encode a tensor map (a DeviceError): launchers that have
/// another way to run the call (a batch item by item) catch this type.
struct TmaEncodeError : core::Error {
  using core::Error::Error;
};

/// TMA descriptor of a matrix stored as `rows` x `cols` (cols contiguous) with elements
/// of `elem_bytes` and data type `type`, moved in boxes of `box_rows` rows x 128 bytes
/// with the 128-byte swizzle; with `batch.items` >= 1 a 3-D map whose boxes are one
/// item deep. Loads read out-of-range elements as zero (OOB fill NONE means zeros; per
/// dimension, so a box never reads into the next item); stores skip them. A TFLOAT32
/// type the driver rejects is retried as FLOAT32 (same bits; the tensor cores then
/// truncate to tf32). `walk` sets the L2 promotion (tma_l2_promotion). Throws
/// TmaEncodeError (DeviceError) when the driver cannot encode it. The last few maps a
/// thread encoded are kept and returned again for the same arguments.
CUtensorMap encode_tensor_map(CUtensorMapDataType type, std::size_t elem_bytes, const void* ptr, int64_t ld, int rows,
                              int cols, TmaWalk walk, int box_rows, TmaItems batch = {});

/// The tensor map of a matrix of T (bf16, f16, or f32 described as tf32 for loads
/// unless `plain_f32`); see encode_tensor_map.
template <class T>
CUtensorMap make_tensor_map(const void* ptr, int64_t ld, int rows, int cols, TmaWalk walk, bool plain_f32 = false,
                            int box_rows = 64, TmaItems batch = {}) {
  const CUtensorMapDataType type = std::is_same_v<T, gpu::bf16_t>   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : std::is_same_v<T, gpu::half_t> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : plain_f32                      ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                                    : CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
  return encode_tensor_map(type, sizeof(T), ptr, ld, rows, cols, walk, box_rows, batch);
}

/// Whether TMA can address an operand: 16-byte aligned base and row pitch.
bool tma_addressable(const void* ptr, int64_t ld, std::size_t elem_bytes);

/// Whether C (elements of `c_bytes`) can leave through TMA stores: beta == 0 (C is not
/// read), TMA can address it (every batch item: stride_c a multiple of 16 bytes too),
/// and its rows are whole 16-byte chunks (a TMA store writes whole chunks: a partial one
/// would spill into the columns between n and ldc).
inline bool tma_store_ok(const core::GemmArgs& args, std::size_t c_bytes) {
  return args.beta == 0.0f && tma_addressable(args.c, args.ldc, c_bytes) &&
         (static_cast<std::size_t>(args.n) * c_bytes) % 16 == 0 &&
         (!args.batched() || (args.stride_c * static_cast<int64_t>(c_bytes)) % 16 == 0);
}

/// The batch dimension of an operand's tensor map in a batched launch: every item apart
/// by `stride` elements, or (stride 0) one item that all of them read. Unbatched: 2-D.
inline TmaItems tma_items(const core::GemmArgs& args, int64_t stride, int64_t rows, int64_t ld,
                          std::size_t elem_bytes) {
  if (!args.batched()) return {};
  if (stride != 0) return {args.batch, stride};
  // One item: the stride is never applied, but must be a valid one (a multiple of 16 bytes).
  const int64_t bytes = std::max<int64_t>(rows, 1) * ld * static_cast<int64_t>(elem_bytes);
  return {1, ceil_div<int64_t>(bytes, 16) * 16 / static_cast<int64_t>(elem_bytes)};
}

/// If TMA cannot address an operand (stored rows x cols of `elem_bytes` = 2 or 4, pitch
/// ld), copies it to a 16-byte-pitched workspace (zero-padded rows) and points `ptr`/`ld`
/// there; returns the workspace (free it stream-ordered) or null.
void* make_tma_addressable(const void*& ptr, int64_t& ld, int rows, int cols, std::size_t elem_bytes,
                           const CudaContext& ctx);

template <class T>
void* make_tma_addressable(const void*& ptr, int64_t& ld, int rows, int cols, const CudaContext& ctx) {
  return make_tma_addressable(ptr, ld, rows, cols, sizeof(T), ctx);
}

/// The workspaces of the operands a call had to repack for TMA (null where none was
/// needed); release() frees them stream-ordered, after the launches that read them.
struct TmaRepacked {
  void* a = nullptr;
  void* b = nullptr;
  void release(const CudaContext& ctx) const {
    if (a) GK_GPU_CHECK(cudaFreeAsync(a, ctx.stream));
    if (b) GK_GPU_CHECK(cudaFreeAsync(b, ctx.stream));
  }
};

/// Repacks A and B of `args` (stored K-major when kAKMajor / kBKMajor, else MN-major)
/// where TMA cannot address them, pointing `args` at the copies.
template <class T, bool kAKMajor, bool kBKMajor>
TmaRepacked make_operands_tma_addressable(core::GemmArgs& args, const CudaContext& ctx) {
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n), k = static_cast<int>(args.k);
  TmaRepacked r;
  r.a = kAKMajor ? make_tma_addressable<T>(args.a, args.lda, m, k, ctx)
                 : make_tma_addressable<T>(args.a, args.lda, k, m, ctx);
  r.b = kBKMajor ? make_tma_addressable<T>(args.b, args.ldb, n, k, ctx)
                 : make_tma_addressable<T>(args.b, args.ldb, k, n, ctx);
  return r;
}

/// Whether the module holds machine code of `binary_version` (90 = sm_90a, 100 =
/// sm_100a) for `kernel`: a build without that target runs the architecture-guarded
/// empty body instead, which must never be launched.
template <class Kernel>
bool kernel_built_for(Kernel* kernel, int binary_version) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.binaryVersion == binary_version;
}

/// The checks the TMA-fed rungs share once their dtypes and layouts are accepted: ""
/// or why the rung declines (shared memory per block, the driver's tensor-map encoder,
/// `built`: whether this module holds the machine code of architecture `arch`).
inline core::Verdict tma_rung_reason(const CudaContext& ctx, int smem_bytes, bool built, const char* arch) {
  if (ctx.smem_per_block_optin < static_cast<std::size_t>(smem_bytes))
    return {core::Decline::Resource, "needs " + std::to_string(smem_bytes / 1024) + " KB of shared memory per block"};
  if (!tensor_map_encoder()) return {core::Decline::LibraryMissing, "driver lacks cuTensorMapEncodeTiled"};
  if (!built) return {core::Decline::WrongArch, std::string("module not built for ") + arch};
  return {};
}

}  // namespace gpukern::cuda::gemm
