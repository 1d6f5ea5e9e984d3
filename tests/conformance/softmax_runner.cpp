// One softmax case through device buffers; see softmax_runner.hpp.
#include "conformance/softmax_runner.hpp"

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
  return s.str();
}

namespace {

struct SoftmaxOperands {
  Window wx, wy;        // wy == wx in place
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

SoftmaxOperands make_operands(const RungParam& p, const SoftmaxCase& sc, Random& rng) {
  SoftmaxOperands o;
  const int64_t ldx = std::max<int64_t>(1, sc.cols) + sc.pad_x;
  const int64_t ldy = sc.in_place ? ldx : std::max<int64_t>(1, sc.cols) + sc.pad_y;
  o.wx = make_window(sc.rows, sc.cols, ldx, sc.guard);
  o.wy = make_window(sc.rows, sc.cols, ldy, sc.guard);
  const double center = sc.special == Special::LargeValues ? 1000.0 : 0.0;
  auto random = [&](int64_t, int64_t) { return center + rng.uniform(-4.0, 4.0); };
  o.x = HostArray(p.input_type, o.wx.total);
  // In place the buffer is the output: cells around it are guards, not unread padding.
  fill_window(o.x, o.wx, sc.in_place ? Pattern::Guard : Pattern::Padding, random);
  write_specials(o.x, o.wx, sc.special, rng);
  if (!sc.in_place) {
    o.y_initial = HostArray(p.input_type, o.wy.total);
    fill_window(o.y_initial, o.wy, Pattern::Guard, [](int64_t, int64_t) { return 0.0; });
    const uint32_t poison = pattern_bits(p.input_type, Pattern::Poison);
    for (int64_t r = 0; r < sc.rows; ++r)
      for (int64_t c = 0; c < sc.cols; ++c) o.y_initial.set_bits(o.wy.index(r, c), poison);
  }
  return o;
}

struct Attempt {
  gk_status status = GK_SUCCESS;
  std::string message;
  std::string selected;
  HostArray y_after;
};

Attempt attempt(Device& dev, const RungParam& p, const SoftmaxCase& sc, const SoftmaxOperands& o,
                const std::string& variant, DeviceArray& dx, DeviceArray* dy) {
  dx.upload(o.x);
  if (dy) dy->upload(o.y_initial);
  const std::size_t es = element_size(p.input_type);
  SoftmaxDesc desc;
  desc.rows = sc.rows;
  desc.cols = sc.cols;
  desc.x = static_cast<const char*>(dx.data()) + o.wx.offset * static_cast<int64_t>(es);
  desc.ldx = o.wx.ld;
  desc.y = static_cast<char*>(dy ? dy->data() : dx.data()) + o.wy.offset * static_cast<int64_t>(es);
  desc.ldy = o.wy.ld;
  desc.dtype = p.input_type;
  desc.log_softmax = sc.log_softmax ? 1 : 0;
  desc.variant = variant.c_str();
  Attempt result;
  if (variant == "auto") {
    char name[GK_NAME_LEN] = {};
    if (gk_softmax_ex_select(dev.handle(), &desc, name, sizeof name) == GK_SUCCESS) result.selected = name;
  }
  result.status = gk_softmax_ex(dev.handle(), &desc);
  if (result.status != GK_SUCCESS) result.message = gk_last_error();
  result.y_after = (dy ? *dy : dx).read(p.input_type, o.wy.total);
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
  if (!sc.in_place) {
    const int64_t unwritten = count_inside(y_after, o.wy, Pattern::Poison);
    if (unwritten != 0) {
      ADD_FAILURE() << unwritten << " of " << sc.rows * sc.cols
                    << " y elements still hold the poison value (never written)";
      ok = false;
    }
  }
  const auto ref = reference_softmax(MatrixView{&o.x, o.wx}, sc.log_softmax);
  const auto out = read_window(y_after, o.wy);
  const Comparison cmp = compare(out, ref, std::max<int64_t>(1, sc.cols));
  if (!cmp.passes(p.bound())) {
    ADD_FAILURE() << "result differs from the double reference: relative error " << cmp.relative_error << " (bound "
                  << p.bound() << ")"
                  << (cmp.special_mismatches ? ", " + std::to_string(cmp.special_mismatches) +
                                                   " NaN/inf mismatches, first: " + cmp.first_problem
                                             : std::string());
    ok = false;
  }
  return ok;
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

  Attempt first = attempt(dev, p, sc, o, p.rung, dx, dy.get());
  if (first.status == GK_UNSUPPORTED && p.forced()) {
    EXPECT_FALSE(first.message.empty()) << "rung '" << p.rung << "' declined without a message";
    EXPECT_EQ(changes_anywhere(output_before(sc, o), first.y_after), "")
        << "rung '" << p.rung << "' declined but wrote to y";
    std::cout << "[ DECLINED ] " << p.test_name() << " " << sc.describe() << ": " << first.message << "\n";
    Attempt fallback = attempt(dev, p, sc, o, "auto", dx, dy.get());
    if (fallback.status != GK_SUCCESS) {
      ADD_FAILURE() << "auto failed a case that rung '" << p.rung << "' declined: " << gk_status_name(fallback.status)
                    << ": " << fallback.message;
      return Outcome::Failed;
    }
    check_result(p, sc, o, fallback.y_after);
    return Outcome::Declined;
  }
  if (first.status != GK_SUCCESS) {
    ADD_FAILURE() << "gk_softmax with variant '" << p.rung << "' returned " << gk_status_name(first.status) << ": "
                  << first.message;
    return Outcome::Failed;
  }
  bool ok = check_result(p, sc, o, first.y_after);
  if (sc.rows > 0 && sc.cols > 0) {
    const std::string used = dev.last_variant(GK_OP_SOFTMAX);
    const std::string expected = p.forced() ? p.rung : first.selected;
    if (used != expected) {
      ADD_FAILURE() << "last_variant is '" << used << "', expected '" << expected << "'";
      ok = false;
    }
  }
  if (!sc.in_place && changes_anywhere(o.x, dx.read(p.input_type, o.wx.total)) != "") {
    ADD_FAILURE() << "the call modified x";
    ok = false;
  }
  return ok ? Outcome::Passed : Outcome::Failed;
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
  Attempt result = attempt(dev, p, sc, o, p.rung, dx, &dy);
  EXPECT_EQ(result.status, GK_UNSUPPORTED)
      << "rung '" << p.rung << "' lists dtypes '" << p.dtypes << "' but was called with " << p.arithmetic
      << " and returned " << gk_status_name(result.status) << ": " << result.message;
  if (result.status != GK_SUCCESS) {
    EXPECT_FALSE(result.message.empty());
    std::cout << "[ DECLINED ] " << p.test_name() << ": " << result.message << "\n";
  }
  EXPECT_EQ(changes_anywhere(o.y_initial, result.y_after), "") << "y was modified";
}

}  // namespace gpukern::test
