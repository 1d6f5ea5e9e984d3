// Random device data for the CUDA tests (tests/cuda) and the development drivers
// (bench/dev): a counter-based hash, so that a buffer of any size fills in parallel and a
// seed gives the same values in every run, on every GPU.
#pragma once

#include "cuda/portable.cuh"

#include <cstdint>

namespace gpukern::test {

/// MurmurHash3's 64-bit finalizer, low 32 bits: a well-mixed value of a 64-bit counter.
__device__ __forceinline__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

/// Element i of the stream `seed`: uniform in [-1, 1) in steps of 2^-23 (exact in f32).
__device__ __forceinline__ float random_unit(uint64_t seed, int64_t i) {
  return static_cast<float>(hash32(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(i)) >> 8) / 8388608.0f - 1.0f;
}

/// The rows x cols window at `p` (leading dimension ld): element (r, c) gets
/// random_unit(seed, r * cols + c) in the storage type T. A flat buffer of n elements is
/// the window (1, n, n).
template <class T>
__global__ void fill_random_window(T* p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    p[(i / cols) * ld + i % cols] = gpu::from_float<T>(random_unit(seed, i));
}

}  // namespace gpukern::test
