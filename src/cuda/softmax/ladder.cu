// The CUDA softmax ladder: every rung in ladder order (naive first, the cuDNN reference
// last) with its place in auto's order (rows.cuh). This table is the dispatch.
#include "cuda/softmax/rows.cuh"

namespace gpukern::cuda {

const SoftmaxLadder& softmax_ladder() {
  using namespace softmax;
  static const SoftmaxLadder table = {
      kNaiveRow,
      kSafe3PassRow,
      kOnlineRow,
      kWarpRowRow,
      kBlockRowRow,
      kSplitRowRow,
      core::fusing(SoftmaxRung{"cudnn",
                               "cuDNN cudnnSoftmaxForward (vendor reference, loaded at run time)",
                               kAll,
                               {},
                               core::RungKind::Reference,
                               cudnn_supports,
                               cudnn_run,
                               core::kNeverAuto},
                   core::kFuseBatch),
  };
  return table;
}

}  // namespace gpukern::cuda
