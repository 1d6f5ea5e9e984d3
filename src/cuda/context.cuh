// Per-device state of the CUDA backend that every rung receives, and the two
// ladders (tables of rungs) the backend glue dispatches through.
#pragma once

#include "core/rung_table.hpp"
#include "cuda/portable.cuh"

#include <string>
#include <vector>

namespace gpukern::cuda {

/// What a rung may use: the stream to launch on and the device's properties.
/// Library handles (cuBLAS, cuDNN) are created lazily by the rungs that need
/// them, through the accessors of the backend, and bound to `stream`.
struct CudaContext {
  cudaStream_t stream = nullptr;
  int device = 0;
  int arch = 0;                // compute capability as 10*major + minor, e.g. 90
  int sm_count = 0;
  size_t smem_per_block_optin = 0;  // bytes a block can opt in to
  size_t l2_bytes = 0;
  bool cluster_launch = false;      // thread-block clusters (sm_90+)
  void* backend = nullptr;          // the owning backend (for lazily created handles)
};

using GemmRung = core::Rung<core::GemmArgs, CudaContext>;
using SoftmaxRung = core::Rung<core::SoftmaxArgs, CudaContext>;

/// The GEMM ladder (src/cuda/gemm/ladder.cu) and auto's preference for a call.
const core::Ladder<core::GemmArgs, CudaContext>& gemm_ladder();
std::vector<std::string> gemm_auto_order(const core::GemmArgs& args, const CudaContext& ctx);

/// The softmax ladder (src/cuda/softmax/ladder.cu) and auto's preference for a call.
const core::Ladder<core::SoftmaxArgs, CudaContext>& softmax_ladder();
std::vector<std::string> softmax_auto_order(const core::SoftmaxArgs& args, const CudaContext& ctx);

}  // namespace gpukern::cuda
