// Strided batches and the fused epilogue of the `omp_simd` GEMM algorithm, for every ISA
// path this machine supports: forced small blocks (every edge, depth slice and A block at
// small sizes) and the chosen ones, items over the threads and items one after another on
// the whole team, padded / broadcast / interleaved items, every activation, bias types and
// per-item bias, k = 0; against the double reference with C poisoned and guarded.
#include "cpu/gemm/blocking.hpp"
#include "gemm_batch_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpukern::cpu::test {
namespace {

using core::Activation;
using core::DType;

constexpr Activation kActs[] = {Activation::None, Activation::Relu, Activation::GeluTanh, Activation::GeluErf,
                                Activation::Silu};

struct Types {
  DType ab, c;
};
constexpr Types kTypes[] = {
    {DType::F32, DType::F32}, {DType::F16, DType::F16}, {DType::BF16, DType::F32}, {DType::BF16, DType::BF16}};

void check_blocked(const BatchCase& t, const GemmKernel& kernel, const GemmBlocking& blocking, int threads) {
  const std::string label = std::string(kernel.name) + " blocks " + std::to_string(blocking.mc) + "/" +
                            std::to_string(blocking.kc) + "/" + std::to_string(blocking.nc) + " threads " +
                            std::to_string(threads);
  check_batch(
      t, [&](const core::GemmArgs& g) { gemm_blocked(g, kernel, blocking, threads); }, label);
}

TEST(GemmBatchEpilogue, EveryActivationBiasAndTypeEveryPath) {
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    const GemmBlocking tiny{2 * kernel.mr, 16, kernel.nr};
    for (const Types& types : kTypes)
      for (int a = 0; a < 5; ++a)
        for (int bias = 0; bias < 3; ++bias) {
          BatchCase t;
          t.batch = 3;
          t.m = kernel.mr * 2 + 3;
          t.n = kernel.nr + 5;
          t.k = 37;
          t.ab = types.ab;
          t.c = types.c;
          t.act = kActs[a];
          t.bias = bias;
          t.bias_per_item = bias == 2;
          t.alpha = 0.75f;
          t.beta = (a + bias) % 2 == 0 ? 0.0f : -1.25f;
          t.tb = a % 2 == 1;
          check_blocked(t, kernel, tiny, 2);  // items over the threads
          t.batch = 1;
          check_blocked(t, kernel, tiny, 3);  // one call with an epilogue, on the team
        }
  }
}

TEST(GemmBatchEpilogue, LayoutsOfTheItemsEveryPath) {
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    const GemmBlocking tiny{2 * kernel.mr, 16, kernel.nr};
    for (int64_t batch : {2, 3, 17})
      for (int trans = 0; trans < 4; ++trans)
        for (int layout = 0; layout < 4; ++layout) {
          BatchCase t;
          t.batch = batch;
          t.m = 19;
          t.n = 23;
          t.k = 40;
          t.ta = (trans & 1) != 0;
          t.tb = (trans & 2) != 0;
          t.a_items = layout == 1 ? ItemLayout::Broadcast : ItemLayout::Padded;
          t.b_items = layout == 2 ? ItemLayout::Broadcast : ItemLayout::Padded;
          t.c_items = layout == 3 ? CLayout::Interleaved : CLayout::Apart;
          t.beta = trans == 1 ? 0.5f : 0.0f;
          t.bias = 1;
          t.bias_per_item = layout % 2 == 0;
          t.act = kActs[(trans + layout) % 5];
          for (const Types& types : {kTypes[0], kTypes[1]}) {
            t.ab = types.ab;
            t.c = types.c;
            check_blocked(t, kernel, tiny, 3);  // batch 2 < 3 threads: items one after another
            check_blocked(t, kernel, tiny, 1);
          }
        }
  }
}

TEST(GemmBatchEpilogue, ChosenBlockingLargerItems) {
  const GemmKernel& kernel = gemm_kernel_for(cpu_features().best);
  for (const Types& types : {kTypes[0], kTypes[3]}) {
    BatchCase t;
    t.batch = 3;
    t.m = 150;
    t.n = 211;
    t.k = 300;
    t.ab = types.ab;
    t.c = types.c;
    t.beta = 1.5f;
    t.bias = 2;
    t.act = Activation::GeluTanh;
    const GemmBlocking chosen = choose_blocking(cpu_features().caches, kernel, t.m, t.n, t.k, t.c == DType::F32, 2);
    check_blocked(t, kernel, chosen, 2);  // item flops above the small-item bound: items one after another
    t.batch = 9;
    check_blocked(t, kernel, chosen, 2);  // several items per thread: items over the threads
  }
}

TEST(GemmBatchEpilogue, DepthZeroAppliesTheEpilogue) {
  const GemmKernel& kernel = gemm_kernel_for(cpu_features().best);
  for (const Types& types : kTypes)
    for (float beta : {0.0f, -2.0f}) {
      BatchCase t;
      t.batch = 4;
      t.m = 5;
      t.n = 9;
      t.k = 0;
      t.ab = types.ab;
      t.c = types.c;
      t.beta = beta;
      t.bias = 2;
      t.bias_per_item = true;
      t.act = Activation::Silu;
      check_blocked(t, kernel, {14, 16, 32}, 2);
    }
}

}  // namespace
}  // namespace gpukern::cpu::test
