// What every conformance case does around its op's own call and checks: the forced rung
// (or auto) first; a decline must write nothing, say why, and leave the case to auto,
// whose result is checked instead; a call that ran must give a correct result, report
// the rung it was asked for (or the one gk_*_select chose) and leave its inputs as they
// were. gemm_runner.cpp and softmax_runner.cpp describe their op with a CaseOps.
#pragma once

#include "conformance/params.hpp"
#include "support/host_array.hpp"
#include "support/reference.hpp"

#include <gpukern/gpukern.hpp>

#include <functional>
#include <string>

namespace gpukern::test {

/// One call of a case through the C API.
struct Attempt {
  gk_status status = GK_SUCCESS;
  std::string message;   // gk_last_error after a failed call
  std::string selected;  // auto's choice, asked (gk_*_select) before the call
  HostArray output;      // the output buffer after the call
};

/// One case of one op, as the shared flow sees it.
struct CaseOps {
  const char* call;         // "gk_gemm", "gk_softmax"
  const char* output;       // the output's name in messages: "C", "y"
  std::string description;  // the case, for the decline line
  gk_op op;
  bool nonempty;  // the call has outputs (else no rung runs, and none is reported)
  /// Uploads the inputs and the output's initial content, then calls with `variant`.
  std::function<Attempt(const std::string& variant)> attempt;
  /// The output's initial content (what a decline must leave).
  const HostArray* output_before;
  /// Checks a successful call's output (ADD_FAILURE for each problem); `through_auto`:
  /// auto ran the case that the forced rung declined. False when a check failed.
  std::function<bool(const HostArray& output, bool through_auto)> check;
  /// Checks that the call left its inputs unchanged (ADD_FAILURE when not); false if not.
  std::function<bool()> inputs_unchanged;
};

/// The case through p's rung (auto when that declines): Passed, Declined (checked
/// through auto) or Failed.
Outcome run_case(const RungParam& p, const CaseOps& ops);

/// p's rung is called with a dtype it does not list: it must decline, say why and write
/// nothing.
void expect_declined(const RungParam& p, const CaseOps& ops);

/// ADD_FAILURE unless `cmp` passes `bound`; returns whether it passed.
bool expect_within_bound(const Comparison& cmp, double bound);

}  // namespace gpukern::test
