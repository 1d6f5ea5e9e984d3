// The CPU's part of the core's generic paths (core/decompose.hpp): the GEMM epilogue as a
// separate pass, C = act(W + beta*C + bias) in f32 with C rounded once, rows over OpenMP
// threads; and the f32 workspace W the core's decomposition has a rung fill for 16-bit C.
#include "core/activation.hpp"
#include "cpu/cpu_context.hpp"
#include "cpu/element.hpp"
#include "cpu/scratch.hpp"

namespace gpukern::core {
namespace {

/// The pass for C's storage type C and the bias's type Bias.
template <class C, class Bias>
void pass(const EpiloguePassArgs& p, int threads) {
  const int64_t rows = p.batch * p.m;
  // A team costs more than the pass on small outputs.
  const bool parallel = threads > 1 && rows * p.n >= (int64_t{1} << 15);
  const int act = static_cast<int>(p.act);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t item = row / p.m, r = row - item * p.m;
    const float* w = p.w + item * p.stride_w + r * p.ldw;
    C* c = static_cast<C*>(p.c) + item * p.stride_c + r * p.ldc;
    const Bias* bias = p.bias ? static_cast<const Bias*>(p.bias) + item * p.stride_bias : nullptr;
    for (int64_t j = 0; j < p.n; ++j) {
      float v = w[j];  // read before C[j] is written: W may be C itself
      if (p.beta != 0.0f) v += p.beta * cpu::to_float(c[j]);
      if (bias) v += cpu::to_float(bias[j]);
      c[j] = cpu::from_float<C>(activate(v, act));
    }
  }
}

/// W's buffer, one per calling thread (the rungs' own scratch buffers are separate).
cpu::ScratchBuffer& workspace_buffer() {
  thread_local cpu::ScratchBuffer buffer;
  return buffer;
}

}  // namespace

void GenericPaths<cpu::CpuContext>::epilogue_pass(const EpiloguePassArgs& args, const cpu::CpuContext& ctx) {
  cpu::with_element_type(args.c_type, [&](auto c) {
    cpu::with_element_type(args.bias_type, [&](auto bias) { pass<decltype(c), decltype(bias)>(args, ctx.threads); });
  });
}

void* GenericPaths<cpu::CpuContext>::workspace(std::size_t bytes, const cpu::CpuContext&) {
  return workspace_buffer().get(ceil_div(bytes, sizeof(float)));
}

void GenericPaths<cpu::CpuContext>::release(void*, const cpu::CpuContext&) noexcept {
  workspace_buffer().trim(cpu::ScratchBuffer::kKeepFloats);
}

}  // namespace gpukern::core
