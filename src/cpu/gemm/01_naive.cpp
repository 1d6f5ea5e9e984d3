// CPU GEMM rung 1, `naive`: the textbook i-j-k loop of the seeds, one thread, one f32
// accumulator per output. The baseline every other rung is measured against; it reads
// B down a column (stride ldb) for every output, so it runs at memory latency, not at
// arithmetic speed. Accepts every valid call (the last rung of auto_order), batches and
// the epilogue included: items one after another, act(acc + bias) before C's rounding.
#include "cpu/element.hpp"
#include "cpu/gemm/batch_epilogue.hpp"
#include "cpu/rungs.hpp"

namespace gpukern::cpu {
namespace {

template <class AB, class C>
void naive(const core::GemmArgs& g, const RowEpilogue& epi) {
  const AB* a = static_cast<const AB*>(g.a);
  const AB* b = static_cast<const AB*>(g.b);
  C* c = static_cast<C*>(g.c);
  // op(A)(i, p) and op(B)(p, j) in row-major storage.
  const int64_t a_row = g.trans_a ? 1 : g.lda, a_col = g.trans_a ? g.lda : 1;
  const int64_t b_row = g.trans_b ? 1 : g.ldb, b_col = g.trans_b ? g.ldb : 1;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < g.k; ++p) acc += to_float(a[i * a_row + p * a_col]) * to_float(b[p * b_row + j * b_col]);
      C& out = c[i * g.ldc + j];
      // beta == 0 must not read C: it may hold NaN.
      const float prior = g.beta == 0.0f ? 0.0f : g.beta * to_float(out);
      float v = g.alpha * acc + prior;
      epi.apply(&v, j, 1);
      out = from_float<C>(v);
    }
  }
}

}  // namespace

void scale_c(const core::GemmArgs& g) { scale_c_with_epilogue(g, RowEpilogue{}); }

void gemm::naive_run(const core::GemmArgs& args, const CpuContext&) {
  thread_local ScratchBuffer bias_buffer;
  for (int64_t item = 0; item < args.batch; ++item) {
    const core::GemmArgs one = batch_item(args, item);
    const RowEpilogue epi{bias_f32(one, bias_buffer), one.act};
    if (one.k == 0) {  // alpha * (empty sum) is not computed: C = act(beta * C + bias)
      scale_c_with_epilogue(one, epi);
      continue;
    }
    with_gemm_types(one, [&](auto ab, auto c) { naive<decltype(ab), decltype(c)>(one, epi); });
  }
}

}  // namespace gpukern::cpu
