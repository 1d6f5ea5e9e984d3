// The out-of-line parts of tensor_core_common.cuh: the degenerate calls of the
// tensor-core rungs (M or N = 0; K = 0, which scales C) through the module's epilogue
// pass (epilogue_pass.cu), in one unit of the module's fat binary.
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {

core::EpiloguePassArgs c_pass_args(const core::GemmArgs& args, const Epilogue& epi, int64_t batch) {
  core::EpiloguePassArgs pa;
  pa.m = args.m;
  pa.n = args.n;
  pa.batch = batch;
  pa.c = args.c;
  pa.ldc = args.ldc;
  pa.stride_c = batch > 1 ? args.stride_c : 0;
  pa.c_type = args.c_type;
  pa.bias = epi.bias;
  pa.bias_type = static_cast<core::DType>(epi.bias_type);
  pa.stride_bias = epi.stride_bias;
  pa.act = static_cast<core::Activation>(epi.act);
  return pa;
}

bool tc_trivial_call(const core::GemmArgs& args, const CudaContext& ctx, const Epilogue& epi, int64_t batch) {
  if (args.m == 0 || args.n == 0 || batch == 0) return true;
  if (args.k != 0) return false;
  core::EpiloguePassArgs pa = c_pass_args(args, epi, batch);  // W = 0: C = act(beta * C + bias)
  pa.beta = args.beta;
  core::GenericPaths<CudaContext>::epilogue_pass(pa, ctx);
  return true;
}

}  // namespace gpukern::cuda::gemm
