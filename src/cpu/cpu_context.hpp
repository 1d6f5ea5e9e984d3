// What every CPU rung receives besides its arguments: the code path and thread count of
// this call (GPUKERN_CPU_ISA and GPUKERN_NUM_THREADS are read at each call, so tests and
// benchmarks can change them between calls), and the detected CPU.
#pragma once

#include "core/rung_table.hpp"
#include "cpu/cpu_features.hpp"

namespace gpukern::cpu {

struct CpuContext {
  Isa isa = Isa::Scalar;                  // path for this call, cap applied
  int threads = 1;                        // >= 1
  const CpuFeatures* features = nullptr;  // never null in a call
};

/// The context of a call made now.
inline CpuContext current_context() {
  CpuContext ctx;
  ctx.features = &cpu_features();
  ctx.isa = capped_isa(ctx.features->best, core::cpu_isa_cap());
  ctx.threads = resolved_threads();
  return ctx;
}

using GemmRung = core::Rung<core::GemmArgs, CpuContext>;
using SoftmaxRung = core::Rung<core::SoftmaxArgs, CpuContext>;

}  // namespace gpukern::cpu

namespace gpukern::core {
/// The CPU's part of the core's generic paths (core/decompose.hpp), in cpu/epilogue_pass.cpp:
/// the epilogue pass over OpenMP threads, the workspace from a per-thread buffer.
template <>
struct GenericPaths<cpu::CpuContext> {
  static constexpr std::size_t kWorkspaceAlignment = 64;
  static void epilogue_pass(const EpiloguePassArgs& args, const cpu::CpuContext& ctx);
  static void* workspace(std::size_t bytes, const cpu::CpuContext& ctx);
  static void release(void* workspace, const cpu::CpuContext& ctx) noexcept;
};
}  // namespace gpukern::core
