// One softmax case through device buffers; see softmax_runner.hpp.
#include "conformance/softmax_runner.hpp"

#include "conformance/case_flow.hpp"

#include "support/backends.hpp"
#include "support/host_array.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

namespace gpukern::test {

std::string SoftmaxCase::describe() const {
  static const char* const kSpecial[] = {"", " some -inf", " a row of -inf", " a NaN row", " values near 1000"};
  std::ostringstream s;
  s << (log_softmax ? "log_softmax" : "softmax") << " rows=" << rows << " cols=" << cols;
  if (pad_x || pad_y) s << " pad x/y=" << pad_x << "/" << pad_y;
  if (in_place) s << " in place";
  if (guard % 32 != 0) s << " misaligned (" << guard << " elements in)";
  s << kSpecial[static_cast<int>(special)];
  if (batch != 1)
    s << " batch=" << batch << (gap ? " gap=" + std::to_string(gap) : "") << (broadcast_x ? " broadcast x" : "");
  if (scale != 1.0f) s << " scale=" << scale;
  if (causal) s << " causal offset " << causal_offset;
  return s.str();
}

namespace {

struct SoftmaxOperands {
  BatchWindows wx, wy;  // wy == wx in place
  HostArray x;          // the input buffer (also the output buffer in place)
  HostArray y_initial;  // the output buffer before the call (unused in place)
};

void write_specials(HostArray& x, const Window& w, Special special, Random& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (special) {
    case Special::SomeNegativeInfinity:
      for (int64_t r = 0; r < w.rows; ++r) {
        const int64_t keep = rng.index(w.cols);  // at least one finite element per row
        for (int64_t c = 0; c < w.cols; ++c)
          if (c != keep && rng.uniform(0.0, 1.0) < 0.25) x.set(w.index(r, c), -inf);
      }
      break;
    case Special::RowAllNegativeInfinity: {
      const int64_t row = w.rows / 2;
      for (int64_t c = 0; c < w.cols; ++c) x.set(w.index(row, c), -inf);
      // other rows get some -inf too, which must give finite results
      for (int64_t r = 0; r < w.rows; ++r)
        if (r != row && w.cols > 1) x.set(w.index(r, rng.index(w.cols)), -inf);
      break;
    }
    case Special::RowWithNan:
      x.set(w.index(w.rows / 3, rng.index(w.cols)), std::numeric_limits<double>::quiet_NaN());
      break;
    default:
      break;
  }
}

/// Windows of `items` rows x cols items with row stride ld, `gap` cells apart.
BatchWindows batch_of(const SoftmaxCase& sc, int64_t ld, int64_t items) {
  const int64_t extent = sc.rows > 0 && sc.cols > 0 ? (sc.rows - 1) * ld + sc.cols : 0;
  return make_batch_windows(sc.rows, sc.cols, ld, items > 1 ? extent + sc.gap : 0, items, sc.guard);
}

SoftmaxOperands make_operands(const RungParam& p, const SoftmaxCase& sc, Random& rng) {
  SoftmaxOperands o;
  const int64_t ldx = std::max<int64_t>(1, sc.cols) + sc.pad_x;
  const int64_t ldy = sc.in_place ? ldx : std::max<int64_t>(1, sc.cols) + sc.pad_y;
  o.wx = batch_of(sc, ldx, sc.broadcast_x ? 1 : sc.batch);
  o.wy = batch_of(sc, ldy, sc.batch);
  const double center = sc.special == Special::LargeValues ? 1000.0 : 0.0;
  auto random = [&](int64_t, int64_t) { return center + rng.uniform(-4.0, 4.0); };
  o.x = HostArray(p.input_type, o.wx.first.total);
  // In place the buffer is the output: cells around it are guards, not unread padding.
  o.x.fill(sc.in_place ? Pattern::Guard : Pattern::Padding);
  for (int64_t item = 0; item < (sc.broadcast_x ? 1 : sc.batch); ++item) {
    const Window w = o.wx.item(item);
    for (int64_t r = 0; r < w.rows; ++r)
      for (int64_t c = 0; c < w.cols; ++c) o.x.set(w.index(r, c), random(r, c));
    write_specials(o.x, w, sc.special, rng);
  }
  if (!sc.in_place) {
    o.y_initial = HostArray(p.input_type, o.wy.first.total);
    o.y_initial.fill(Pattern::Guard);
    const uint32_t poison = pattern_bits(p.input_type, Pattern::Poison);
    for (int64_t item = 0; item < sc.batch; ++item)
      for (int64_t r = 0; r < sc.rows; ++r)
        for (int64_t c = 0; c < sc.cols; ++c) o.y_initial.set_bits(o.wy.item(item).index(r, c), poison);
  }
  return o;
}

Attempt attempt(Device& dev, const RungParam& p, const SoftmaxCase& sc, const SoftmaxOperands& o,
                const std::string& variant, DeviceArray& dx, DeviceArray* dy) {
  dx.upload(o.x);
  if (dy) dy->upload(o.y_initial);
  const std::size_t es = element_size(p.input_type);
  SoftmaxDesc desc;
  desc.rows = sc.rows;
  desc.cols = sc.cols;
  desc.x = static_cast<const char*>(dx.data()) + o.wx.first.offset * static_cast<int64_t>(es);
  desc.ldx = o.wx.first.ld;
  desc.y = static_cast<char*>(dy ? dy->data() : dx.data()) + o.wy.first.offset * static_cast<int64_t>(es);
  desc.ldy = o.wy.first.ld;
  desc.dtype = p.input_type;
  desc.log_softmax = sc.log_softmax ? 1 : 0;
  desc.variant = variant.c_str();
  desc.batch_count = sc.batch;
  desc.stride_x = o.wx.stride;
  desc.stride_y = o.wy.stride;
  desc.scale = sc.scale;
  desc.causal = sc.causal ? 1 : 0;
  desc.causal_offset = sc.causal_offset;
  // A case without the extended fields goes through the plain entry points.
  const gk_softmax_desc plain{desc.rows, desc.cols,  desc.x,           desc.ldx,    desc.y,
                              desc.ldy,  desc.dtype, desc.log_softmax, desc.variant};
  Attempt result;
  if (variant == "auto") {
    char name[GK_NAME_LEN] = {};
    const gk_status s = sc.extended() ? gk_softmax_ex_select(dev.handle(), &desc, name, sizeof name)
                                      : gk_softmax_select(dev.handle(), &plain, name, sizeof name);
    if (s == GK_SUCCESS) result.selected = name;
  }
  result.status = sc.extended() ? gk_softmax_ex(dev.handle(), &desc) : gk_softmax(dev.handle(), &plain);
  if (result.status != GK_SUCCESS) result.message = gk_last_error();
  result.output = (dy ? *dy : dx).read(p.input_type, o.wy.first.total);
  return result;
}

const HostArray& output_before(const SoftmaxCase& sc, const SoftmaxOperands& o) {
  return sc.in_place ? o.x : o.y_initial;
}

bool check_result(const RungParam& p, const SoftmaxCase& sc, const SoftmaxOperands& o, const HostArray& y_after) {
  bool ok = true;
  const std::string outside = changes_outside(output_before(sc, o), y_after, o.wy);
  if (!outside.empty()) {
    ADD_FAILURE() << "cells outside y were written (guard cells): " << outside;
    ok = false;
  }
  std::vector<double> ref, out;
  int64_t unwritten = 0;
  for (int64_t item = 0; item < sc.batch; ++item) {
    if (!sc.in_place) unwritten += count_inside(y_after, o.wy.item(item), Pattern::Poison);
    const auto r =
        reference_softmax_ex(MatrixView{&o.x, o.wx.item(item)}, sc.log_softmax, sc.scale, sc.causal, sc.causal_offset);
    const auto y = read_window(y_after, o.wy.item(item));
    ref.insert(ref.end(), r.begin(), r.end());
    out.insert(out.end(), y.begin(), y.end());
  }
  if (unwritten != 0) {
    ADD_FAILURE() << unwritten << " of " << sc.batch * sc.rows * sc.cols
                  << " y elements still hold the poison value (never written)";
    ok = false;
  }
  if (!expect_within_bound(compare(out, ref, std::max<int64_t>(1, sc.cols)), p.bound())) ok = false;
  return ok;
}

/// The shared flow's view of one case on the device copies dx and dy (null in place) of
/// its buffers; `before` is the output's initial content.
CaseOps softmax_ops(Device& dev, const RungParam& p, const SoftmaxCase& sc, const SoftmaxOperands& o, DeviceArray& dx,
                    DeviceArray* dy, const HostArray& before) {
  CaseOps ops;
  ops.call = "gk_softmax";
  ops.output = "y";
  ops.description = sc.describe();
  ops.op = GK_OP_SOFTMAX;
  ops.nonempty = sc.rows > 0 && sc.cols > 0;
  ops.attempt = [&, dy](const std::string& variant) { return attempt(dev, p, sc, o, variant, dx, dy); };
  ops.output_before = &before;
  ops.check = [&](const HostArray& y, bool) { return check_result(p, sc, o, y); };
  ops.inputs_unchanged = [&] {
    if (!sc.in_place && changes_anywhere(o.x, dx.read(p.input_type, o.wx.first.total)) != "") {
      ADD_FAILURE() << "the call modified x";
      return false;
    }
    return true;
  };
  return ops;
}

}  // namespace

Outcome run_softmax_case(const RungParam& p, const SoftmaxCase& sc) {
  Random rng;
  SCOPED_TRACE(sc.describe() + " (GPUKERN_TEST_SEED base " + std::to_string(base_seed()) + ", case seed " +
               std::to_string(rng.seed()) + ")");
  Device& dev = shared_device(p.backend);
  const SoftmaxOperands o = make_operands(p, sc, rng);
  DeviceArray dx(dev, o.x);
  std::unique_ptr<DeviceArray> dy;
  if (!sc.in_place) dy = std::make_unique<DeviceArray>(dev, o.y_initial);
  return run_case(p, softmax_ops(dev, p, sc, o, dx, dy.get(), output_before(sc, o)));
}

void run_softmax_cases(const RungParam& param, const std::vector<SoftmaxCase>& cases) {
  run_all_cases(param, cases, run_softmax_case);
}

void expect_softmax_declined(const RungParam& p, const SoftmaxCase& sc) {
  Random rng;
  SCOPED_TRACE(sc.describe());
  Device& dev = shared_device(p.backend);
  const SoftmaxOperands o = make_operands(p, sc, rng);
  DeviceArray dx(dev, o.x), dy(dev, o.y_initial);
  expect_declined(p, softmax_ops(dev, p, sc, o, dx, &dy, o.y_initial));
}

}  // namespace gpukern::test
