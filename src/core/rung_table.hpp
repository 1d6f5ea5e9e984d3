// A ladder as data: each backend keeps, per operation, a constexpr table of rungs
// (name, description, dtypes, minimum architecture, supports, run) and implements
// Backend's ladder methods through these helpers instead of switches.
#pragma once

#include "core/backend.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpukern::core {

/// One rung of `Args` (GemmArgs / SoftmaxArgs) for a backend whose per-device
/// state is `Ctx` (stream, device properties, library handles...).
template <class Args, class Ctx>
struct Rung {
  const char* name;
  const char* description;
  uint32_t dtypes;   // kMask* bits accepted
  int min_arch;      // e.g. 80 for sm_80, 90 for sm_90a; 0 = any
  const char* min_arch_name;  // "sm_80", "" when min_arch == 0
  bool is_reference;
  /// Extra checks (alignment, shape limits, library present); nullptr = accepts all. Returns "" or a reason.
  std::string (*supports)(const Args& args, const Ctx& ctx);
  void (*run)(const Args& args, const Ctx& ctx);
};

inline uint32_t type_mask(const GemmArgs& a) {
  switch (a.type()) {
    case GemmType::F16: return kMaskF16;
    case GemmType::BF16: return kMaskBF16;
    case GemmType::TF32: return kMaskTF32 | kMaskF32;  // tf32 is a permission: exact f32 rungs qualify
    default: return kMaskF32;
  }
}
inline uint32_t type_mask(const SoftmaxArgs& a) {
  return a.dtype == DType::F16 ? kMaskF16 : a.dtype == DType::BF16 ? kMaskBF16 : kMaskF32;
}
inline std::string type_label(const GemmArgs& a) { return gemm_type_name(a.type()); }
inline std::string type_label(const SoftmaxArgs& a) { return dtype_name(a.dtype); }

/// A ladder: the rungs in ladder order (naive first, reference last).
template <class Args, class Ctx>
using Ladder = std::vector<Rung<Args, Ctx>>;

template <class Args, class Ctx>
const Rung<Args, Ctx>* find_rung(const Ladder<Args, Ctx>& table, std::string_view name) {
  for (const auto& r : table)
    if (name == r.name) return &r;
  return nullptr;
}

/// The common part of supports(): dtype and architecture, then the rung's own check.
template <class Args, class Ctx>
std::string rung_supports(const Rung<Args, Ctx>& r, const Args& args, const Ctx& ctx, int arch) {
  if ((r.dtypes & type_mask(args)) == 0)
    return std::string("no ") + type_label(args) + " support (takes " + mask_names(r.dtypes) + ")";
  if (r.min_arch > arch) return std::string("needs ") + r.min_arch_name;
  return r.supports ? r.supports(args, ctx) : std::string();
}

/// Backend::supports through a ladder: "" when rung `name` accepts the call, else why not.
/// Names are checked against variants() by the core, so a missing one is a bug.
template <class Args, class Ctx>
std::string ladder_supports(const Ladder<Args, Ctx>& table, const Args& args, const Ctx& ctx,
                            int arch, std::string_view name) {
  const Rung<Args, Ctx>* r = find_rung(table, name);
  return r ? rung_supports(*r, args, ctx, arch) : "no rung named '" + std::string(name) + "'";
}

/// Backend::gemm / softmax through a ladder: runs rung `name`.
template <class Args, class Ctx>
void ladder_run(const Ladder<Args, Ctx>& table, const Args& args, const Ctx& ctx,
                std::string_view name) {
  const Rung<Args, Ctx>* r = find_rung(table, name);
  if (!r) throw Error(Status::InternalError, "no rung named '" + std::string(name) + "'");
  r->run(args, ctx);
}

template <class Args, class Ctx>
std::vector<RungInfo> rung_infos(const Ladder<Args, Ctx>& table, int arch) {
  std::vector<RungInfo> out;
  for (const auto& r : table) {
    RungInfo i;
    i.name = r.name;
    i.description = r.description;
    i.dtypes = r.dtypes;
    i.min_arch = r.min_arch_name ? r.min_arch_name : "";
    i.is_reference = r.is_reference;
    if (r.min_arch > arch) i.unavailable = std::string("needs ") + r.min_arch_name;
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace gpukern::core
