// Helpers of the CPU backend's unit tests: random matrices in each storage type, a
// double-precision reference gemm, and the ISA paths this machine can run.
#pragma once

#include "core/half.hpp"
#include "core/types.hpp"
#include "cpu/cpu_features.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace gpukern::cpu::test {

/// Every path this machine supports, best first.
inline std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (int i = static_cast<int>(cpu_features().best); i >= 0; --i) out.push_back(static_cast<Isa>(i));
  return out;
}

/// A matrix stored as raw 16-bit or 32-bit words, with float views of the stored values.
struct Stored {
  core::DType type = core::DType::F32;
  std::vector<uint32_t> words32;  // f32 storage
  std::vector<uint16_t> words16;  // f16 / bf16 storage

  Stored(core::DType t, std::size_t count) : type(t) {
    if (t == core::DType::F32)
      words32.resize(count);
    else
      words16.resize(count);
  }
  void* data() { return type == core::DType::F32 ? static_cast<void*>(words32.data()) : words16.data(); }
  std::size_t size() const { return type == core::DType::F32 ? words32.size() : words16.size(); }
  float get(std::size_t i) const {
    switch (type) {
      case core::DType::F16:
        return core::f16_to_float(words16[i]);
      case core::DType::BF16:
        return core::bf16_to_float(words16[i]);
      default:
        return core::bits_float(words32[i]);
    }
  }
  void set(std::size_t i, float v) {
    switch (type) {
      case core::DType::F16:
        words16[i] = core::float_to_f16(v);
        break;
      case core::DType::BF16:
        words16[i] = core::float_to_bf16(v);
        break;
      default:
        words32[i] = core::float_bits(v);
        break;
    }
  }
  /// Raw NaN pattern in every element (poison / guard).
  void fill_nan() {
    for (auto& w : words32) w = 0x7fc00001u;
    for (auto& w : words16) w = type == core::DType::F16 ? 0x7e01u : 0x7fc1u;
  }
  void fill_random(std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (std::size_t i = 0; i < size(); ++i) set(i, dist(rng));
  }
};

/// ||out - ref||_F / ||ref||_F; infinity when out has a NaN.
inline double relative_error(const std::vector<double>& ref, const std::vector<double>& out) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(out[i])) return INFINITY;
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

/// Error bound by storage type of C and of the inputs (design.md's bounds).
inline double gemm_bound(core::DType ab, core::DType c) {
  if (ab == core::DType::BF16 || c == core::DType::BF16) return 1e-2;
  if (ab == core::DType::F16 || c == core::DType::F16) return 2e-3;
  return 1e-5;
}

}  // namespace gpukern::cpu::test
