// One gemm case through device buffers; see gemm_runner.hpp.
#include "conformance/gemm_runner.hpp"

#include "conformance/case_flow.hpp"

#include "support/backends.hpp"
#include "support/host_array.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

namespace gpukern::test {

std::string GemmCase::describe() const {
  std::ostringstream s;
  s << (trans_a ? 'T' : 'N') << (trans_b ? 'T' : 'N') << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha
    << " beta=" << beta;
  if (pad_a || pad_b || pad_c) s << " pad a/b/c=" << pad_a << "/" << pad_b << "/" << pad_c;
  if (guard % 32 != 0) s << " misaligned (" << guard << " elements in)";
  if (batch != 1) {
    s << " batch=" << batch;
    if (gap) s << " gap=" << gap;
    if (broadcast_a) s << " broadcast A";
    if (broadcast_b) s << " broadcast B";
    if (interleaved_c) s << " interleaved C";
  }
  if (bias != Bias::None)
    s << " bias " << (bias == Bias::F32 ? "f32" : "C-type") << (bias_per_item ? " per item" : " shared");
  static const char* const kActs[] = {"none", "relu", "gelu_tanh", "gelu_erf", "silu"};
  if (act != GK_ACT_NONE) s << " act=" << kActs[act];
  return s.str();
}

namespace {

/// Host and device copies of the operands of one case (every batch item in one buffer).
struct GemmOperands {
  BatchWindows wa, wb, wc, wbias;
  HostArray a, b, c_initial, bias;
};

/// Elements from an item's first cell to just past its last.
int64_t extent(const Window& w) { return w.rows > 0 && w.cols > 0 ? (w.rows - 1) * w.ld + w.cols : 0; }

/// Windows of `items` rows x cols items with leading dimension ld, `gap` cells apart.
BatchWindows packed_items(int64_t rows, int64_t cols, int64_t ld, int64_t items, int64_t gap, int64_t guard) {
  const Window one = make_window(rows, cols, ld, guard);
  return make_batch_windows(rows, cols, ld, items > 1 ? extent(one) + gap : 0, items, guard);
}

/// Fills every item of `w` with `inside`, every other cell with `outside`.
template <class F>
void fill_items(HostArray& array, const BatchWindows& w, Pattern outside, F&& inside) {
  fill_window(array, w.first, outside, inside);
  for (int64_t item = 1; item < (w.stride == 0 ? 1 : w.items); ++item) {
    const Window wi = w.item(item);
    for (int64_t r = 0; r < wi.rows; ++r)
      for (int64_t c = 0; c < wi.cols; ++c) array.set(wi.index(r, c), inside(r, c));
  }
}

gk_dtype bias_type_of(const RungParam& p, const GemmCase& gc) {
  return gc.bias == GemmCase::Bias::F32 ? GK_F32 : p.output_type;
}

GemmOperands make_operands(const RungParam& p, const GemmCase& gc, Random& rng) {
  GemmOperands o;
  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k).
  const int64_t a_rows = gc.trans_a ? gc.k : gc.m, a_cols = gc.trans_a ? gc.m : gc.k;
  const int64_t b_rows = gc.trans_b ? gc.n : gc.k, b_cols = gc.trans_b ? gc.k : gc.n;
  o.wa = packed_items(a_rows, a_cols, std::max<int64_t>(1, a_cols) + gc.pad_a, gc.broadcast_a ? 1 : gc.batch, gc.gap,
                      gc.guard);
  o.wb = packed_items(b_rows, b_cols, std::max<int64_t>(1, b_cols) + gc.pad_b, gc.broadcast_b ? 1 : gc.batch, gc.gap,
                      gc.guard);
  if (gc.interleaved_c) {
    const int64_t n = std::max<int64_t>(1, gc.n);
    o.wc = make_batch_windows(gc.m, gc.n, gc.batch * n + gc.pad_c, n, gc.batch, gc.guard);
  } else {
    o.wc = packed_items(gc.m, gc.n, std::max<int64_t>(1, gc.n) + gc.pad_c, gc.batch, gc.gap, gc.guard);
  }
  auto random = [&](int64_t, int64_t) { return rng.uniform(-1.0, 1.0); };
  // Cells the call must not read hold NaN (Padding): reading one poisons the result.
  o.a = HostArray(p.input_type, o.wa.first.total);
  fill_items(o.a, o.wa, Pattern::Padding, random);
  o.b = HostArray(p.input_type, o.wb.first.total);
  fill_items(o.b, o.wb, Pattern::Padding, random);
  o.c_initial = HostArray(p.output_type, o.wc.first.total);
  fill_items(o.c_initial, o.wc, Pattern::Guard, random);
  if (gc.bias != GemmCase::Bias::None) {
    o.wbias = packed_items(1, gc.n, std::max<int64_t>(1, gc.n), gc.bias_per_item ? gc.batch : 1, gc.gap, gc.guard);
    o.bias = HostArray(bias_type_of(p, gc), o.wbias.first.total);
    fill_items(o.bias, o.wbias, Pattern::Padding, random);
  }
  if (gc.beta == 0.0f) {  // beta = 0 must not read C: poison it with NaN
    const uint32_t poison = pattern_bits(p.output_type, Pattern::Poison);
    for (int64_t item = 0; item < gc.batch; ++item)
      for (int64_t r = 0; r < gc.m; ++r)
        for (int64_t col = 0; col < gc.n; ++col) o.c_initial.set_bits(o.wc.item(item).index(r, col), poison);
  }
  return o;
}

const char* offset_ptr(const DeviceArray& d, const Window& w, gk_dtype type) {
  return static_cast<const char*>(d.data()) + w.offset * static_cast<int64_t>(element_size(type));
}

GemmDesc make_desc(const RungParam& p, const GemmCase& gc, const GemmOperands& o, const DeviceArray& a,
                   const DeviceArray& b, DeviceArray& c, const DeviceArray* bias) {
  GemmDesc d;
  d.trans_a = gc.trans_a ? GK_TRANS : GK_NO_TRANS;
  d.trans_b = gc.trans_b ? GK_TRANS : GK_NO_TRANS;
  d.m = gc.m;
  d.n = gc.n;
  d.k = gc.k;
  d.alpha = gc.alpha;
  d.beta = gc.beta;
  d.a = offset_ptr(a, o.wa.first, p.input_type);
  d.lda = o.wa.first.ld;
  d.b = offset_ptr(b, o.wb.first, p.input_type);
  d.ldb = o.wb.first.ld;
  d.c = const_cast<char*>(offset_ptr(c, o.wc.first, p.output_type));
  d.ldc = o.wc.first.ld;
  d.ab_type = p.input_type;
  d.c_type = p.output_type;
  d.allow_tf32 = p.allow_tf32 ? 1 : 0;
  d.batch_count = gc.batch;
  d.stride_a = o.wa.stride;
  d.stride_b = o.wb.stride;
  d.stride_c = o.wc.stride;
  if (bias) {
    d.bias = offset_ptr(*bias, o.wbias.first, o.bias.type());
    d.bias_length = gc.n;
    d.bias_type = o.bias.type();
    d.stride_bias = o.wbias.stride;
  }
  d.activation = gc.act;
  return d;
}

/// The plain descriptor of a case without batches or epilogue (gk_gemm's).
gk_gemm_desc plain_desc(const gk_gemm_ex_desc& d) {
  gk_gemm_desc plain{};
  plain.trans_a = d.trans_a;
  plain.trans_b = d.trans_b;
  plain.m = d.m;
  plain.n = d.n;
  plain.k = d.k;
  plain.alpha = d.alpha;
  plain.a = d.a;
  plain.lda = d.lda;
  plain.b = d.b;
  plain.ldb = d.ldb;
  plain.beta = d.beta;
  plain.c = d.c;
  plain.ldc = d.ldc;
  plain.ab_type = d.ab_type;
  plain.c_type = d.c_type;
  plain.allow_tf32 = d.allow_tf32;
  plain.variant = d.variant;
  return plain;
}

/// The double reference of every item, concatenated (item-major, rows of n).
std::vector<double> reference_of(const GemmCase& gc, const GemmOperands& o) {
  std::vector<double> all;
  for (int64_t item = 0; item < gc.batch; ++item) {
    const MatrixView a{&o.a, o.wa.item(item)}, b{&o.b, o.wb.item(item)}, c{&o.c_initial, o.wc.item(item)};
    auto ref = reference_gemm(gc.trans_a, gc.trans_b, gc.m, gc.n, gc.k, gc.alpha, a, b, gc.beta,
                              gc.beta != 0.0f ? &c : nullptr);
    const MatrixView bias{&o.bias, o.wbias.item(item)};
    if (gc.extended())
      reference_epilogue(ref, std::max<int64_t>(1, gc.n), gc.bias != GemmCase::Bias::None ? &bias : nullptr, gc.act);
    all.insert(all.end(), ref.begin(), ref.end());
  }
  return all;
}

/// Checks the output of a successful call; returns false when something failed.
bool check_result(const GemmCase& gc, const GemmOperands& o, const HostArray& c_after, double bound) {
  bool ok = true;
  const std::string outside = changes_outside(o.c_initial, c_after, o.wc);
  if (!outside.empty()) {
    ADD_FAILURE() << "cells outside C were written (guard cells" << (gc.batch > 1 ? ", between items" : "")
                  << "): " << outside;
    ok = false;
  }
  std::vector<double> out;
  int64_t unwritten = 0;
  for (int64_t item = 0; item < gc.batch; ++item) {
    if (gc.beta == 0.0f) unwritten += count_inside(c_after, o.wc.item(item), Pattern::Poison);
    const auto values = read_window(c_after, o.wc.item(item));
    out.insert(out.end(), values.begin(), values.end());
  }
  if (unwritten != 0) {
    ADD_FAILURE() << unwritten << " of " << gc.batch * gc.m * gc.n
                  << " C elements still hold the poison value (never written, or C was "
                     "read although beta = 0)";
    ok = false;
  }
  if (!expect_within_bound(compare(out, reference_of(gc, o), std::max<int64_t>(1, gc.n)), bound)) ok = false;
  return ok;
}

/// The device copies of a case's operands (bias only when the case has one).
struct DeviceOperands {
  DeviceArray a, b, c;
  std::unique_ptr<DeviceArray> bias;
  DeviceOperands(Device& dev, const GemmOperands& o) : a(dev, o.a), b(dev, o.b), c(dev, o.c_initial) {
    if (o.bias.size() > 0) bias = std::make_unique<DeviceArray>(dev, o.bias);
  }
};

Attempt attempt(Device& dev, const RungParam& p, const GemmCase& gc, const GemmOperands& o, const std::string& variant,
                DeviceOperands& d) {
  d.c.upload(o.c_initial);
  GemmDesc desc = make_desc(p, gc, o, d.a, d.b, d.c, d.bias.get());
  desc.variant = variant.c_str();
  // A case without batches or epilogue goes through the plain entry points.
  const gk_gemm_desc plain = plain_desc(desc);
  Attempt result;
  if (variant == "auto") {
    char name[GK_NAME_LEN] = {};
    const gk_status s = gc.extended() ? gk_gemm_ex_select(dev.handle(), &desc, name, sizeof name)
                                      : gk_gemm_select(dev.handle(), &plain, name, sizeof name);
    if (s == GK_SUCCESS) result.selected = name;
  }
  result.status = gc.extended() ? gk_gemm_ex(dev.handle(), &desc) : gk_gemm(dev.handle(), &plain);
  if (result.status != GK_SUCCESS) result.message = gk_last_error();
  result.output = d.c.read(p.output_type, o.wc.first.total);
  return result;
}

/// The shared flow's view of one case on the device copies `d` of its operands.
CaseOps gemm_ops(Device& dev, const RungParam& p, const GemmCase& gc, const GemmOperands& o, DeviceOperands& d) {
  CaseOps ops;
  ops.call = "gk_gemm";
  ops.output = "C";
  ops.description = gc.describe();
  ops.op = GK_OP_GEMM;
  ops.nonempty = gc.m > 0 && gc.n > 0 && gc.batch > 0;
  ops.attempt = [&](const std::string& variant) { return attempt(dev, p, gc, o, variant, d); };
  ops.output_before = &o.c_initial;
  ops.check = [&](const HostArray& c, bool through_auto) {
    // auto may pick a rung with tf32 arithmetic where the forced rung would be exact.
    return check_result(gc, o, c, through_auto ? error_bound(p.arithmetic, p.output_type) : p.bound());
  };
  ops.inputs_unchanged = [&] {
    if (changes_anywhere(o.a, d.a.read(p.input_type, o.wa.first.total)) != "" ||
        changes_anywhere(o.b, d.b.read(p.input_type, o.wb.first.total)) != "" ||
        (d.bias && changes_anywhere(o.bias, d.bias->read(o.bias.type(), o.wbias.first.total)) != "")) {
      ADD_FAILURE() << "the call modified A, B or the bias";
      return false;
    }
    return true;
  };
  return ops;
}

}  // namespace

Outcome run_gemm_case(const RungParam& p, const GemmCase& gc) {
  Random rng;
  SCOPED_TRACE(gc.describe() + " (GPUKERN_TEST_SEED base " + std::to_string(base_seed()) + ", case seed " +
               std::to_string(rng.seed()) + ")");
  Device& dev = shared_device(p.backend);
  const GemmOperands o = make_operands(p, gc, rng);
  DeviceOperands d(dev, o);
  return run_case(p, gemm_ops(dev, p, gc, o, d));
}

void run_gemm_cases(const RungParam& param, const std::vector<GemmCase>& cases) {
  run_all_cases(param, cases, run_gemm_case);
}

void expect_gemm_declined(const RungParam& p, const GemmCase& gc) {
  Random rng;
  SCOPED_TRACE(gc.describe());
  Device& dev = shared_device(p.backend);
  const GemmOperands o = make_operands(p, gc, rng);
  DeviceOperands d(dev, o);
  expect_declined(p, gemm_ops(dev, p, gc, o, d));
}

}  // namespace gpukern::test
