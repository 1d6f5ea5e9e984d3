// gk_memread on GPUs (CUDA and HIP): a read-only stream of device memory, the bandwidth
// reference of read-bound calls (decode GEMMs read their weights once and write little).
#pragma once

#include "cuda/context.cuh"

#include <cstddef>
#include <cstdint>

namespace gpukern::cuda {

/// Reads `bytes` (> 0) at `src` on ctx.stream. sum: null (queued, nothing written), or the
/// host word that receives the sum of the bytes, each an unsigned 8-bit value, modulo 2^64
/// (waits for the stream).
void memread(const void* src, std::size_t bytes, uint64_t* sum, const CudaContext& ctx);

}  // namespace gpukern::cuda
