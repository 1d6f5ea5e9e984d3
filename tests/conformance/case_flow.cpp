// The flow shared by the gemm and softmax conformance cases; see case_flow.hpp.
#include "conformance/case_flow.hpp"

#include "support/backends.hpp"

#include <gtest/gtest.h>

#include <iostream>

namespace gpukern::test {

Outcome run_case(const RungParam& p, const CaseOps& ops) {
  Attempt first = ops.attempt(p.rung);
  if (first.status == GK_UNSUPPORTED && p.forced()) {
    EXPECT_FALSE(first.message.empty()) << "rung '" << p.rung << "' declined without a message";
    EXPECT_EQ(changes_anywhere(*ops.output_before, first.output), "")
        << "rung '" << p.rung << "' declined but wrote to " << ops.output;
    std::cout << "[ DECLINED ] " << p.test_name() << " " << ops.description << ": " << first.message << "\n";
    // auto must accept every valid call.
    Attempt fallback = ops.attempt("auto");
    if (fallback.status != GK_SUCCESS) {
      ADD_FAILURE() << "auto failed a case that rung '" << p.rung << "' declined: " << gk_status_name(fallback.status)
                    << ": " << fallback.message;
      return Outcome::Failed;
    }
    ops.check(fallback.output, true);
    return Outcome::Declined;
  }
  if (first.status != GK_SUCCESS) {
    ADD_FAILURE() << ops.call << " with variant '" << p.rung << "' returned " << gk_status_name(first.status) << ": "
                  << first.message;
    return Outcome::Failed;
  }
  bool ok = ops.check(first.output, false);
  if (ops.nonempty) {
    const std::string used = shared_device(p.backend).last_variant(ops.op);
    const std::string expected = p.forced() ? p.rung : first.selected;
    if (used != expected) {
      ADD_FAILURE() << "last_variant is '" << used << "', expected '" << expected << "'"
                    << (p.forced() ? " (the forced rung)" : std::string(" (what ") + ops.call + "_select chose)");
      ok = false;
    }
  }
  if (!ops.inputs_unchanged()) ok = false;
  return ok ? Outcome::Passed : Outcome::Failed;
}

void expect_declined(const RungParam& p, const CaseOps& ops) {
  const Attempt result = ops.attempt(p.rung);
  EXPECT_EQ(result.status, GK_UNSUPPORTED)
      << "rung '" << p.rung << "' lists dtypes '" << p.dtypes << "' but was called with " << p.arithmetic
      << " and returned " << gk_status_name(result.status) << ": " << result.message;
  if (result.status != GK_SUCCESS) {
    EXPECT_FALSE(result.message.empty());
    std::cout << "[ DECLINED ] " << p.test_name() << ": " << result.message << "\n";
  }
  EXPECT_EQ(changes_anywhere(*ops.output_before, result.output), "") << ops.output << " was modified";
}

bool expect_within_bound(const Comparison& cmp, double bound) {
  if (cmp.passes(bound)) return true;
  ADD_FAILURE() << "result differs from the double reference: relative error " << cmp.relative_error << " (bound "
                << bound << ")"
                << (cmp.special_mismatches ? ", " + std::to_string(cmp.special_mismatches) +
                                                 " NaN/inf mismatches, first: " + cmp.first_problem
                                           : std::string());
  return false;
}

}  // namespace gpukern::test
