// One gemm case through device buffers; see gemm_runner.hpp.
#include "conformance/gemm_runner.hpp"

#include "support/backends.hpp"
#include "support/host_array.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace gpukern::test {

std::string GemmCase::describe() const {
  std::ostringstream s;
  s << (trans_a ? 'T' : 'N') << (trans_b ? 'T' : 'N') << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha
    << " beta=" << beta;
  if (pad_a || pad_b || pad_c) s << " pad a/b/c=" << pad_a << "/" << pad_b << "/" << pad_c;
  if (guard % 32 != 0) s << " misaligned (" << guard << " elements in)";
  return s.str();
}

namespace {

/// Host and device copies of the three operands of one case.
struct GemmOperands {
  Window wa, wb, wc;
  HostArray a, b, c_initial;
};

GemmOperands make_operands(const RungParam& p, const GemmCase& gc, Random& rng) {
  GemmOperands o;
  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k).
  const int64_t a_rows = gc.trans_a ? gc.k : gc.m, a_cols = gc.trans_a ? gc.m : gc.k;
  const int64_t b_rows = gc.trans_b ? gc.n : gc.k, b_cols = gc.trans_b ? gc.k : gc.n;
  o.wa = make_window(a_rows, a_cols, std::max<int64_t>(1, a_cols) + gc.pad_a, gc.guard);
  o.wb = make_window(b_rows, b_cols, std::max<int64_t>(1, b_cols) + gc.pad_b, gc.guard);
  o.wc = make_window(gc.m, gc.n, std::max<int64_t>(1, gc.n) + gc.pad_c, gc.guard);
  auto random = [&](int64_t, int64_t) { return rng.uniform(-1.0, 1.0); };
  // Cells the call must not read hold NaN (Padding): reading one poisons the result.
  o.a = HostArray(p.input_type, o.wa.total);
  fill_window(o.a, o.wa, Pattern::Padding, random);
  o.b = HostArray(p.input_type, o.wb.total);
  fill_window(o.b, o.wb, Pattern::Padding, random);
  o.c_initial = HostArray(p.output_type, o.wc.total);
  fill_window(o.c_initial, o.wc, Pattern::Guard, random);
  if (gc.beta == 0.0f) {  // beta = 0 must not read C: poison it with NaN
    const uint32_t poison = pattern_bits(p.output_type, Pattern::Poison);
    for (int64_t r = 0; r < gc.m; ++r)
      for (int64_t col = 0; col < gc.n; ++col) o.c_initial.set_bits(o.wc.index(r, col), poison);
  }
  return o;
}

const char* offset_ptr(const DeviceArray& d, const Window& w, gk_dtype type) {
  return static_cast<const char*>(d.data()) + w.offset * static_cast<int64_t>(element_size(type));
}

GemmDesc make_desc(const RungParam& p, const GemmCase& gc, const GemmOperands& o, const DeviceArray& a,
                   const DeviceArray& b, DeviceArray& c) {
  GemmDesc d;
  d.trans_a = gc.trans_a ? GK_TRANS : GK_NO_TRANS;
  d.trans_b = gc.trans_b ? GK_TRANS : GK_NO_TRANS;
  d.m = gc.m;
  d.n = gc.n;
  d.k = gc.k;
  d.alpha = gc.alpha;
  d.beta = gc.beta;
  d.a = offset_ptr(a, o.wa, p.input_type);
  d.lda = o.wa.ld;
  d.b = offset_ptr(b, o.wb, p.input_type);
  d.ldb = o.wb.ld;
  d.c = const_cast<char*>(offset_ptr(c, o.wc, p.output_type));
  d.ldc = o.wc.ld;
  d.ab_type = p.input_type;
  d.c_type = p.output_type;
  d.allow_tf32 = p.allow_tf32 ? 1 : 0;
  return d;
}

/// Checks the output of a successful call; returns false when something failed.
bool check_result(const GemmCase& gc, const GemmOperands& o, const HostArray& c_after, double bound) {
  bool ok = true;
  const std::string outside = changes_outside(o.c_initial, c_after, o.wc);
  if (!outside.empty()) {
    ADD_FAILURE() << "cells outside C were written (guard cells): " << outside;
    ok = false;
  }
  if (gc.beta == 0.0f) {
    const int64_t unwritten = count_inside(c_after, o.wc, Pattern::Poison);
    if (unwritten != 0) {
      ADD_FAILURE() << unwritten << " of " << gc.m * gc.n
                    << " C elements still hold the poison value (never written, or C was "
                       "read although beta = 0)";
      ok = false;
    }
  }
  const MatrixView a{&o.a, o.wa}, b{&o.b, o.wb}, c{&o.c_initial, o.wc};
  const auto ref =
      reference_gemm(gc.trans_a, gc.trans_b, gc.m, gc.n, gc.k, gc.alpha, a, b, gc.beta, gc.beta != 0.0f ? &c : nullptr);
  const auto out = read_window(c_after, o.wc);
  const Comparison cmp = compare(out, ref, std::max<int64_t>(1, gc.n));
  if (!cmp.passes(bound)) {
    ADD_FAILURE() << "result differs from the double reference: relative error " << cmp.relative_error << " (bound "
                  << bound << ")"
                  << (cmp.special_mismatches ? ", " + std::to_string(cmp.special_mismatches) +
                                                   " NaN/inf mismatches, first: " + cmp.first_problem
                                             : std::string());
    ok = false;
  }
  return ok;
}

struct Attempt {
  gk_status status = GK_SUCCESS;
  std::string message;
  std::string selected;  // auto's choice, asked before the call
  HostArray c_after;
};

Attempt attempt(Device& dev, const RungParam& p, const GemmCase& gc, const GemmOperands& o, const std::string& variant,
                DeviceArray& da, DeviceArray& db, DeviceArray& dc) {
  dc.upload(o.c_initial);
  GemmDesc desc = make_desc(p, gc, o, da, db, dc);
  desc.variant = variant.c_str();
  Attempt result;
  if (variant == "auto") {
    char name[GK_NAME_LEN] = {};
    if (gk_gemm_ex_select(dev.handle(), &desc, name, sizeof name) == GK_SUCCESS) result.selected = name;
  }
  result.status = gk_gemm_ex(dev.handle(), &desc);
  if (result.status != GK_SUCCESS) result.message = gk_last_error();
  result.c_after = dc.read(p.output_type, o.wc.total);
  return result;
}

}  // namespace

Outcome run_gemm_case(const RungParam& p, const GemmCase& gc) {
  Random rng;
  SCOPED_TRACE(gc.describe() + " (GPUKERN_TEST_SEED base " + std::to_string(base_seed()) + ", case seed " +
               std::to_string(rng.seed()) + ")");
  Device& dev = shared_device(p.backend);
  const GemmOperands o = make_operands(p, gc, rng);
  DeviceArray da(dev, o.a), db(dev, o.b), dc(dev, o.c_initial);
  const bool nonempty = gc.m > 0 && gc.n > 0;

  Attempt first = attempt(dev, p, gc, o, p.rung, da, db, dc);
  if (first.status == GK_UNSUPPORTED && p.forced()) {
    EXPECT_FALSE(first.message.empty()) << "rung '" << p.rung << "' declined without a message";
    EXPECT_EQ(changes_anywhere(o.c_initial, first.c_after), "") << "rung '" << p.rung << "' declined but wrote to C";
    std::cout << "[ DECLINED ] " << p.test_name() << " " << gc.describe() << ": " << first.message << "\n";
    // auto must accept every valid call.
    Attempt fallback = attempt(dev, p, gc, o, "auto", da, db, dc);
    if (fallback.status != GK_SUCCESS) {
      ADD_FAILURE() << "auto failed a case that rung '" << p.rung << "' declined: " << gk_status_name(fallback.status)
                    << ": " << fallback.message;
      return Outcome::Failed;
    }
    // auto may pick a rung with tf32 arithmetic where the forced rung would be exact.
    check_result(gc, o, fallback.c_after, error_bound(p.arithmetic, p.output_type));
    return Outcome::Declined;
  }
  if (first.status != GK_SUCCESS) {
    ADD_FAILURE() << "gk_gemm with variant '" << p.rung << "' returned " << gk_status_name(first.status) << ": "
                  << first.message;
    return Outcome::Failed;
  }
  bool ok = check_result(gc, o, first.c_after, p.bound());
  if (nonempty) {
    const std::string used = dev.last_variant(GK_OP_GEMM);
    const std::string expected = p.forced() ? p.rung : first.selected;
    if (used != expected) {
      ADD_FAILURE() << "last_variant is '" << used << "', expected '" << expected << "'"
                    << (p.forced() ? " (the forced rung)" : " (what gk_gemm_select chose)");
      ok = false;
    }
  }
  if (changes_anywhere(o.a, da.read(p.input_type, o.wa.total)) != "" ||
      changes_anywhere(o.b, db.read(p.input_type, o.wb.total)) != "") {
    ADD_FAILURE() << "the call modified A or B";
    ok = false;
  }
  return ok ? Outcome::Passed : Outcome::Failed;
}

void run_gemm_cases(const RungParam& param, const std::vector<GemmCase>& cases) {
  run_all_cases(param, cases, run_gemm_case);
}

void expect_gemm_declined(const RungParam& p, const GemmCase& gc) {
  Random rng;
  SCOPED_TRACE(gc.describe());
  Device& dev = shared_device(p.backend);
  const GemmOperands o = make_operands(p, gc, rng);
  DeviceArray da(dev, o.a), db(dev, o.b), dc(dev, o.c_initial);
  Attempt result = attempt(dev, p, gc, o, p.rung, da, db, dc);
  EXPECT_EQ(result.status, GK_UNSUPPORTED)
      << "rung '" << p.rung << "' lists dtypes '" << p.dtypes << "' but was called with " << p.arithmetic
      << " and returned " << gk_status_name(result.status) << ": " << result.message;
  if (result.status != GK_SUCCESS) {
    EXPECT_FALSE(result.message.empty());
    std::cout << "[ DECLINED ] " << p.test_name() << ": " << result.message << "\n";
  }
  EXPECT_EQ(changes_anywhere(o.c_initial, result.c_after), "") << "C was modified";
}

}  // namespace gpukern::test
