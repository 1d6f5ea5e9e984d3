// An empty softmax ladder for gemm_check builds, which compile the GEMM ladder alone.
#include "cuda/context.cuh"

namespace gpukern::cuda {

const core::Ladder<core::SoftmaxArgs, CudaContext>& softmax_ladder() {
  static const core::Ladder<core::SoftmaxArgs, CudaContext> table;
  return table;
}

std::vector<std::string> softmax_auto_order(const core::SoftmaxArgs&, const CudaContext&) { return {}; }

}  // namespace gpukern::cuda
