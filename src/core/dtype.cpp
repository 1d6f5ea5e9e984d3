// Names of storage and arithmetic types, and of decline reasons.
#include "core/types.hpp"

namespace gpukern::core {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
  }
  return "unknown";
}

const char* gemm_type_name(GemmType t) {
  switch (t) {
    case GemmType::F32:
      return "f32";
    case GemmType::TF32:
      return "tf32";
    case GemmType::F16:
      return "f16";
    case GemmType::BF16:
      return "bf16";
  }
  return "unknown";
}

std::string mask_names(uint32_t mask) {
  static const struct {
    uint32_t bit;
    const char* name;
  } kNames[] = {{kMaskF32, "f32"}, {kMaskTF32, "tf32"}, {kMaskF16, "f16"}, {kMaskBF16, "bf16"}};
  std::string out;
  for (const auto& n : kNames) {
    if ((mask & n.bit) == 0) continue;
    if (!out.empty()) out += ",";
    out += n.name;
  }
  return out;
}

const char* decline_name(Decline d) {
  switch (d) {
    case Decline::None:
      return "None";
    case Decline::Dtype:
      return "Dtype";
    case Decline::WrongArch:
      return "WrongArch";
    case Decline::Misaligned:
      return "Misaligned";
    case Decline::Layout:
      return "Layout";
    case Decline::ShapeLimit:
      return "ShapeLimit";
    case Decline::Resource:
      return "Resource";
    case Decline::LibraryMissing:
      return "LibraryMissing";
    case Decline::Feature:
      return "Feature";
  }
  return "Unknown";
}

}  // namespace gpukern::core
