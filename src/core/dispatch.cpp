// Rung selection for every backend (see dispatch.hpp). The backend's tables answer
// supports() and auto_candidate() by rung index; names are matched only when a caller
// forces a rung, once per call.
#include "core/dispatch.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace gpukern::core {
namespace {

std::vector<int> auto_positions(const std::vector<RungInfo>& rungs) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(rungs.size()); ++i)
    if (rungs[static_cast<std::size_t>(i)].auto_position >= 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return rungs[static_cast<std::size_t>(a)].auto_position < rungs[static_cast<std::size_t>(b)].auto_position;
  });
  return order;
}

/// The activation as shape_text prints it.
const char* activation_text(Activation act) {
  switch (act) {
    case Activation::Relu:
      return "relu";
    case Activation::GeluTanh:
      return "gelu_tanh";
    case Activation::GeluErf:
      return "gelu_erf";
    case Activation::Silu:
      return "silu";
    default:
      return "none";
  }
}

}  // namespace

const char* op_name(OpKind op) { return op == OpKind::Gemm ? "gemm" : "softmax"; }

std::string shape_text(const GemmArgs& a) {
  std::ostringstream s;
  s << (a.trans_a ? 'T' : 'N') << (a.trans_b ? 'T' : 'N') << " m=" << a.m << " n=" << a.n << " k=" << a.k << " "
    << gemm_type_name(a.type());
  if (a.c_type != a.ab_type) s << "->" << dtype_name(a.c_type);
  if (a.batched()) s << " batch=" << a.batch;
  if (a.bias) s << " bias=" << dtype_name(a.bias_type);
  if (a.act != Activation::None) s << " act=" << activation_text(a.act);
  return s.str();
}

std::string shape_text(const SoftmaxArgs& a) {
  std::ostringstream s;
  s << "rows=" << a.rows << " cols=" << a.cols << " " << dtype_name(a.dtype) << (a.log ? " log" : "");
  if (a.batched()) s << " batch=" << a.batch;
  if (a.scale != 1.0f) s << " scale=" << a.scale;
  if (a.causal) s << " causal(" << (a.causal_offset >= 0 ? "+" : "") << a.causal_offset << ")";
  return s.str();
}

Dispatch::Dispatch(Backend& backend, std::string where)
    : backend_(backend),
      where_(std::move(where)),
      gemm_(backend.variants(OpKind::Gemm)),
      softmax_(backend.variants(OpKind::Softmax)),
      gemm_auto_(auto_positions(gemm_)),
      softmax_auto_(auto_positions(softmax_)),
      gemm_table_(backend.auto_table(OpKind::Gemm)),
      softmax_table_(backend.auto_table(OpKind::Softmax)) {}

template <class Args>
int Dispatch::select_in(OpKind op, const Args& args, const char* requested, const std::string& env_choice) const {
  const std::vector<RungInfo>& table = rungs(op);
  const bool from_desc = requested && *requested && std::strcmp(requested, "auto") != 0;
  const std::string name = from_desc ? std::string(requested) : env_choice;
  if (name != "auto") {
    // A name taken from the environment is reported with its variable (errors only).
    auto origin = [&] {
      return from_desc ? std::string()
                       : std::string(op == OpKind::Gemm ? "GPUKERN_GEMM_VARIANT" : "GPUKERN_SOFTMAX_VARIANT") + "=" +
                             name + ": ";
    };
    int index = -1;
    for (int i = 0; i < static_cast<int>(table.size()) && index < 0; ++i)
      if (table[static_cast<std::size_t>(i)].name == name) index = i;
    if (index < 0) {
      std::string valid;  // built only for the error
      for (const RungInfo& r : table) valid += (valid.empty() ? "" : ", ") + r.name;
      throw Error(Status::InvalidArgument, origin() + "unknown " + op_name(op) + " variant '" + name + "' on " +
                                               where_ + "; valid: auto, " + valid);
    }
    const Verdict v = backend_.supports(args, index);
    if (!v.accepted())
      throw Error(Status::Unsupported,
                  origin() + op_name(op) + " variant '" + name + "' declines " + shape_text(args) + ": " + v.text(),
                  v.reason);
    return index;
  }
  const bool debug = log_enabled(LogLevel::Debug);
  // Debug lines only: no string is built on the call path unless the level asks for it.
  auto prefix = [&] { return std::string(op_name(op)) + " " + where_ + " auto: "; };
  // The measured table first: the rung of the entry this call falls in.
  const AutoPick pick = backend_.auto_pick(args);
  if (pick.rung >= 0) {
    const AutoEntryInfo& entry = auto_table(op)[static_cast<std::size_t>(pick.entry)];
    const Verdict v = backend_.supports(args, pick.rung);
    if (debug)
      log_line(LogLevel::Debug,
               prefix() + "table entry '" + entry.label + "' (" + entry.shape + ") picks " + entry.rung + " for " +
                   shape_text(args) +
                   (v.accepted() ? std::string() : ", which declines: " + v.text() + "; ranked order"));
    if (v.accepted()) return pick.rung;
  }
  std::string declined;
  Decline last = Decline::None;
  for (int i : op == OpKind::Gemm ? gemm_auto_ : softmax_auto_) {
    if (!backend_.auto_candidate(args, i)) continue;
    const Verdict v = backend_.supports(args, i);
    const std::string& n = table[static_cast<std::size_t>(i)].name;
    if (v.accepted()) {
      if (debug)
        log_line(LogLevel::Debug, prefix() + n + " (ranked #" +
                                      std::to_string(table[static_cast<std::size_t>(i)].auto_position + 1) + ") for " +
                                      shape_text(args));
      return i;
    }
    if (debug) log_line(LogLevel::Debug, prefix() + n + " declines " + shape_text(args) + ": " + v.text());
    declined += (declined.empty() ? "" : "; ") + n + ": " + v.text();
    last = v.reason;
  }
  throw Error(
      Status::Unsupported,
      std::string("no ") + op_name(op) + " rung on " + where_ + " accepts " + shape_text(args) + " (" + declined + ")",
      last);
}

int Dispatch::select(const GemmArgs& args, const char* requested, const std::string& env_choice) const {
  return select_in(OpKind::Gemm, args, requested, env_choice);
}
int Dispatch::select(const SoftmaxArgs& args, const char* requested, const std::string& env_choice) const {
  return select_in(OpKind::Softmax, args, requested, env_choice);
}

template <class Args, class Run>
void Dispatch::run_in(OpKind op, const Args& args, int rung, Run&& run) const {
  const std::string& name = rungs(op)[static_cast<std::size_t>(rung)].name;
  const bool info = log_enabled(LogLevel::Info);
  const auto t0 = info ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  try {
    run();
  } catch (const Error& e) {
    // The contract: supports() is authoritative, so an accepted call never comes back
    // Unsupported. If it does, that is the rung's bug, not the caller's.
    if (e.status() != Status::Unsupported) throw;
    throw Error(Status::InternalError, std::string(op_name(op)) + " rung '" + name + "' accepted " + shape_text(args) +
                                           " and then declined it: " + e.what());
  }
  if (info) {
    backend_.synchronize();  // so the time covers the work, not the launch
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    log_line(LogLevel::Info,
             std::string(op_name(op)) + " " + where_ + " rung=" + name + " " + shape_text(args) + " " + buf);
  }
}

void Dispatch::run(const GemmArgs& args, int rung) const {
  run_in(OpKind::Gemm, args, rung, [&] { backend_.gemm(args, rung); });
}
void Dispatch::run(const SoftmaxArgs& args, int rung) const {
  run_in(OpKind::Softmax, args, rung, [&] { backend_.softmax(args, rung); });
}

}  // namespace gpukern::core
