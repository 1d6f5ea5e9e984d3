// Enumerates the conformance parameters from the library itself; see params.hpp.
#include "conformance/params.hpp"

#include "support/backends.hpp"
#include "support/reference.hpp"

#include <algorithm>
#include <cctype>

namespace gpukern::test {
namespace {

struct TypeConfig {
  const char* arithmetic;  // token in a rung's dtypes string
  gk_dtype input_type, output_type;
  bool allow_tf32;
};

// GEMM: f32, tf32 (f32 data with allow_tf32), f16 and bf16 inputs with C in the
// input type and in f32.
const TypeConfig kGemmTypes[] = {
    {"f32", GK_F32, GK_F32, false}, {"tf32", GK_F32, GK_F32, true},    {"f16", GK_F16, GK_F16, false},
    {"f16", GK_F16, GK_F32, false}, {"bf16", GK_BF16, GK_BF16, false}, {"bf16", GK_BF16, GK_F32, false},
};
const TypeConfig kSoftmaxTypes[] = {
    {"f32", GK_F32, GK_F32, false},
    {"f16", GK_F16, GK_F16, false},
    {"bf16", GK_BF16, GK_BF16, false},
};

/// The rows of one of the tables above, for range-for.
struct TypeTable {
  const TypeConfig *first, *last;
  const TypeConfig* begin() const { return first; }
  const TypeConfig* end() const { return last; }
};

bool listed(const std::vector<std::string>& dtypes, const std::string& name) {
  return std::find(dtypes.begin(), dtypes.end(), name) != dtypes.end();
}

RungParam with_type(RungParam p, const TypeConfig& t) {
  p.arithmetic = t.arithmetic;
  p.input_type = t.input_type;
  p.output_type = t.output_type;
  p.allow_tf32 = t.allow_tf32;
  return p;
}

/// "f16_to_f32" for f16 inputs with an f32 C; otherwise the arithmetic class.
std::string type_label_of(const RungParam& p) {
  std::string label = p.arithmetic;
  if (p.arithmetic != "f32" && p.arithmetic != "tf32" && p.output_type == GK_F32) label += "_to_f32";
  return label;
}

enum class Which { Listed, Unlisted };

std::vector<RungParam> enumerate(gk_op op, Which which) {
  const bool gemm = op == GK_OP_GEMM;
  // A view of the op's table (copying it into a vector drew a false -Wnonnull from g++ 12).
  const TypeTable types = gemm ? TypeTable{std::begin(kGemmTypes), std::end(kGemmTypes)}
                               : TypeTable{std::begin(kSoftmaxTypes), std::end(kSoftmaxTypes)};

  std::vector<RungParam> out;
  for (const auto& backend : known_backends()) {
    RungParam base;
    base.backend = backend.name;
    if (!backend.available) {  // one parameter that skips with the reason, in every suite
      base.backend_available = false;
      base.backend_reason = backend.reason;
      base.rung = "unavailable";
      out.push_back(base);
      continue;
    }
    std::vector<VariantInfo> rungs;
    try {
      rungs = shared_device(backend.name).variants(op);
    } catch (const Error& e) {
      base.backend_available = false;
      base.backend_reason = std::string("listed as available but failed to open: ") + e.what();
      base.rung = "open_failed";
      out.push_back(base);
      continue;
    }
    for (const auto& info : rungs) {
      RungParam p = base;
      p.rung = info.name;
      p.dtypes = info.dtypes;
      p.is_reference = info.is_reference != 0;
      const auto dtypes = split_list(info.dtypes);
      if (!info.runs_here) {
        if (which == Which::Unlisted) continue;
        p.runs_here = false;
        p.rung_reason = info.reason;
        out.push_back(p);
        continue;
      }
      for (const auto& t : types) {
        const std::string arithmetic = t.arithmetic;
        bool accepted = listed(dtypes, arithmetic);
        bool exact = false;
        if (arithmetic == "tf32" && !accepted && listed(dtypes, "f32")) {
          accepted = true;  // tf32 is a permission; an f32 rung runs it exactly
          exact = true;
        }
        if (which == Which::Listed && accepted) {
          RungParam q = with_type(p, t);
          q.exact_f32 = exact;
          out.push_back(q);
        }
        // Declines are checked once per missing storage type (C in the input type).
        if (which == Which::Unlisted && !accepted && t.input_type == t.output_type) out.push_back(with_type(p, t));
      }
    }
    if (which == Which::Listed) {
      // auto must accept every valid call, whatever the rungs list.
      RungParam a = base;
      a.rung = "auto";
      a.dtypes = "all";
      for (const auto& t : types) out.push_back(with_type(a, t));
    }
  }
  return out;
}

}  // namespace

double RungParam::bound() const { return error_bound(exact_f32 ? std::string("f32") : arithmetic, output_type); }

std::string RungParam::test_name() const {
  std::string name = backend + "_" + rung;
  if (backend_available && runs_here)
    name += "_" + type_label_of(*this);
  else if (!runs_here)
    name += "_not_here";
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

void PrintTo(const RungParam& param, std::ostream* out) { *out << param.test_name(); }

std::string skip_reason(const RungParam& param, bool* fail) {
  *fail = false;
  if (!param.backend_available) {
    if (param.rung == "open_failed") {
      *fail = true;
      return param.backend + ": " + param.backend_reason;
    }
    return unavailable_message({param.backend, false, param.backend_reason});
  }
  if (!param.runs_here)
    return "rung '" + param.rung + "' cannot run on this " + param.backend + " device: " + param.rung_reason;
  if (param.backend == "cpu") {
    static const IsaCheck check = check_requested_cpu_isa(shared_device("cpu").info());
    if (check.kind == IsaCheck::Fail) *fail = true;
    if (check.kind != IsaCheck::Run) return check.message;
  }
  return {};
}

std::vector<RungParam> gemm_params() { return enumerate(GK_OP_GEMM, Which::Listed); }
std::vector<RungParam> softmax_params() { return enumerate(GK_OP_SOFTMAX, Which::Listed); }
std::vector<RungParam> gemm_unlisted_params() { return enumerate(GK_OP_GEMM, Which::Unlisted); }
std::vector<RungParam> softmax_unlisted_params() { return enumerate(GK_OP_SOFTMAX, Which::Unlisted); }

}  // namespace gpukern::test
