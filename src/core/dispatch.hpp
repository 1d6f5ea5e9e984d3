// Rung selection and running, once for every backend: a forced name (the call's
// descriptor, else GPUKERN_*_VARIANT) or auto's walk over the ladder table, the
// per-call log line, and the contract's guarantee that an accepted call runs.
#pragma once

#include "core/backend.hpp"

#include <string>
#include <vector>

namespace gpukern::core {

/// The dispatch of one opened device. The ladders are read once, when the device opens.
class GK_CORE_API Dispatch {
 public:
  /// `where` names the device in messages ("cuda:0").
  Dispatch(Backend& backend, std::string where);

  /// The rung to run (an index into rungs(op)): `requested` (the descriptor's variant;
  /// null or "auto" = none) or `env_choice` (GPUKERN_*_VARIANT, "auto" = none) forces one,
  /// else auto's first candidate that accepts. Throws InvalidArgument for an unknown
  /// name, Unsupported (with the decline) when the forced rung or every candidate declines.
  int select(const GemmArgs& args, const char* requested, const std::string& env_choice) const;
  int select(const SoftmaxArgs& args, const char* requested, const std::string& env_choice) const;

  /// Runs an accepted, non-empty call (info log: one line with the time).
  void run(const GemmArgs& args, int rung) const;
  void run(const SoftmaxArgs& args, int rung) const;

  const std::vector<RungInfo>& rungs(OpKind op) const { return op == OpKind::Gemm ? gemm_ : softmax_; }
  /// The measured auto table (entries in the order auto consults them).
  const std::vector<AutoEntryInfo>& auto_table(OpKind op) const {
    return op == OpKind::Gemm ? gemm_table_ : softmax_table_;
  }

 private:
  template <class Args>
  int select_in(OpKind op, const Args& args, const char* requested, const std::string& env_choice) const;
  template <class Args, class Run>
  void run_in(OpKind op, const Args& args, int rung, Run&& run) const;

  Backend& backend_;
  std::string where_;
  std::vector<RungInfo> gemm_, softmax_;
  std::vector<int> gemm_auto_, softmax_auto_;  // rung indices in auto's order
  std::vector<AutoEntryInfo> gemm_table_, softmax_table_;
};

GK_CORE_API const char* op_name(OpKind op);                // "gemm", "softmax"
GK_CORE_API std::string shape_text(const GemmArgs& a);     // "NT m=.. n=.. k=.. f16"
GK_CORE_API std::string shape_text(const SoftmaxArgs& a);  // "rows=.. cols=.. f32"

}  // namespace gpukern::core
