// The cluster primitives under their former names (cluster::rank() ...), for code not
// yet calling cuda/arch/cluster.cuh's arch:: functions directly.
#pragma once

#include "cuda/arch/cluster.cuh"

#include <cstdint>

namespace gpukern::cuda::cluster {

__device__ __forceinline__ uint32_t rank() { return arch::cluster_rank(); }
__device__ __forceinline__ uint32_t size() { return arch::cluster_size(); }
__device__ __forceinline__ void sync() { arch::cluster_sync(); }
__device__ __forceinline__ void sync_aligned() { arch::cluster_sync_aligned(); }
__device__ __forceinline__ uint32_t map_shared(uint32_t local, uint32_t cta_rank) {
  return arch::map_shared_rank(local, cta_rank);
}

}  // namespace gpukern::cuda::cluster
