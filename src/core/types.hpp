// Internal types shared by the core and every backend: call arguments, errors,
// dtype helpers. Includes no vendor header (backends include this, never the reverse).
#pragma once

#include <gpukern/gpukern.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

/// Marks core functions and types that backend modules use across the shared-library
/// boundary (the library is built with hidden visibility by default).
#define GK_CORE_API __attribute__((visibility("default")))

#define GK_STRINGIFY_(x) #x
#define GK_STRINGIFY(x) GK_STRINGIFY_(x)
/// "0.2.0", from the public header's version macros.
#define GPUKERN_VERSION_TEXT \
  GK_STRINGIFY(GK_VERSION_MAJOR) "." GK_STRINGIFY(GK_VERSION_MINOR) "." GK_STRINGIFY(GK_VERSION_PATCH)

namespace gpukern::core {

/// Error kinds (same values as gk_status).
enum class Status : int {
  Success = GK_SUCCESS,
  InvalidArgument = GK_INVALID_ARGUMENT,
  Unsupported = GK_UNSUPPORTED,
  Unavailable = GK_UNAVAILABLE,
  OutOfMemory = GK_OUT_OF_MEMORY,
  DeviceError = GK_DEVICE_ERROR,
  InternalError = GK_INTERNAL_ERROR,
};

/// Why a rung declines a call (same values as gk_decline).
enum class Decline : int {
  None = GK_DECLINE_NONE,                       ///< accepted
  Dtype = GK_DECLINE_DTYPE,                     ///< the call's data type
  WrongArch = GK_DECLINE_WRONG_ARCH,            ///< the device's architecture
  Misaligned = GK_DECLINE_MISALIGNED,           ///< a pointer or leading dimension's alignment
  Layout = GK_DECLINE_LAYOUT,                   ///< a transpose or stride layout it does not implement
  ShapeLimit = GK_DECLINE_SHAPE_LIMIT,          ///< a size beyond what it handles
  Resource = GK_DECLINE_RESOURCE,               ///< shared memory, clusters, workspace the device lacks
  LibraryMissing = GK_DECLINE_LIBRARY_MISSING,  ///< the vendor library it calls is not there
  Feature = GK_DECLINE_FEATURE,                 ///< a fused feature (softmax scale, mask) it lacks
};
GK_CORE_API const char* decline_name(Decline d);  // "WrongArch", ...

/// A rung's answer to "do you take this call?": accepted, or a typed reason plus detail.
struct Verdict {
  Decline reason = Decline::None;
  std::string detail;

  Verdict() = default;
  Verdict(Decline r, std::string d) : reason(r), detail(std::move(d)) {}
  bool accepted() const { return reason == Decline::None; }
  /// "Misaligned: A not 16-byte aligned" ("" when accepted).
  std::string text() const { return accepted() ? std::string() : std::string(decline_name(reason)) + ": " + detail; }
};

/// Thrown inside the library (core and backend modules); the C API turns it into
/// a status plus the per-thread message. Never escapes a public C function.
/// An Unsupported error from a rung's decline carries the reason.
class GK_CORE_API Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message, Decline decline = Decline::None)
      : std::runtime_error(message), status_(status), decline_(decline) {}
  Status status() const noexcept { return status_; }
  Decline decline() const noexcept { return decline_; }

 private:
  Status status_;
  Decline decline_;
};

enum class DType : int { F32 = GK_F32, F16 = GK_F16, BF16 = GK_BF16 };

/// The fused epilogue's activation (same values as gk_activation); formulas in
/// core/activation.hpp, shared by host and device code.
enum class Activation : int {
  None = GK_ACT_NONE,
  Relu = GK_ACT_RELU,
  GeluTanh = GK_ACT_GELU_TANH,
  GeluErf = GK_ACT_GELU_ERF,
  Silu = GK_ACT_SILU,
};

/// The arithmetic class of a gemm call, used to match rungs: f32 data with
/// allow_tf32 is "tf32" (a rung listing f32 only may still run it exactly).
enum class GemmType : int { F32 = 0, TF32 = 1, F16 = 2, BF16 = 3 };

/// Bit masks for the dtypes a rung takes.
constexpr uint32_t kMaskF32 = 1u << 0;
constexpr uint32_t kMaskTF32 = 1u << 1;
constexpr uint32_t kMaskF16 = 1u << 2;
constexpr uint32_t kMaskBF16 = 1u << 3;

inline std::size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }
GK_CORE_API const char* dtype_name(DType t);         // "f32", "f16", "bf16"
GK_CORE_API const char* gemm_type_name(GemmType t);  // "f32", "tf32", "f16", "bf16"
GK_CORE_API std::string mask_names(uint32_t mask);   // "f32,tf32"

/// Validated gemm call: C = alpha * op(A) * op(B) + beta * C, row-major.
/// op(A) is m x k, op(B) is k x n, C is m x n; leading dimensions in elements.
/// beta is never -0.0 (see unsigned_zero); C shares no byte with A or B when they are read.
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  DType ab_type = DType::F32;
  DType c_type = DType::F32;
  bool allow_tf32 = false;
  // Strided batches: item b reads a + b*stride_a, b + b*stride_b and writes c + b*stride_c
  // (elements). batch >= 1 (the core returns before any rung for 0). stride_a or stride_b
  // 0 broadcasts that operand; the items of C never overlap (validated).
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  // Fused epilogue: C = act(alpha*op(A)*op(B) + beta*C + bias), in f32 before C is rounded.
  // bias: n values (column j gets bias[j]) of bias_type (F32 or c_type), item b's at
  // bias + b*stride_bias; nullptr = none.
  const void* bias = nullptr;
  DType bias_type = DType::F32;
  int64_t stride_bias = 0;
  Activation act = Activation::None;

  bool batched() const { return batch > 1; }
  bool has_epilogue() const { return bias != nullptr || act != Activation::None; }

  GemmType type() const {
    switch (ab_type) {
      case DType::F16:
        return GemmType::F16;
      case DType::BF16:
        return GemmType::BF16;
      default:
        return allow_tf32 ? GemmType::TF32 : GemmType::F32;
    }
  }
};

/// Validated softmax call over `rows` rows of `cols` elements (row strides ldx, ldy).
/// y either is x (same stride) or shares no byte with it.
struct SoftmaxArgs {
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  int64_t ldx = 0;
  void* y = nullptr;
  int64_t ldy = 0;
  DType dtype = DType::F32;
  bool log = false;
  // Strided batches of rows x cols: item b reads x + b*stride_x, writes y + b*stride_y
  // (elements; stride_x 0 broadcasts x). batch >= 1; the items of y never overlap.
  int64_t batch = 1;
  int64_t stride_x = 0, stride_y = 0;
  // softmax(scale * x); with causal, row r (within its item) keeps columns c <= r + causal_offset,
  // masked outputs are 0 (log: -inf) and a row keeping no column is all 0 (log: all -inf).
  float scale = 1.0f;
  bool causal = false;
  int64_t causal_offset = 0;

  bool batched() const { return batch > 1; }
  /// Columns row r keeps: cols without a mask, else clamp(r + causal_offset + 1, 0, cols).
  int64_t kept_cols(int64_t r) const {
    if (!causal) return cols;
    const int64_t kept = r + causal_offset + 1;
    return kept < 0 ? 0 : kept > cols ? cols : kept;
  }
};

/// The integer stored in an enum-typed field or argument of the C API, read as bytes.
/// C callers may store any int there, and loading a value outside the enumeration as the
/// C++ enum type is undefined behaviour, so the raw value is range-checked first.
template <class E>
int32_t raw_enum(const E& value) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int32_t), "C API enums are int-sized");
  int32_t raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

/// v with -0.0 turned into +0.0. A scale factor equal to zero means "do not read" whatever
/// its sign, but vendor libraries test the bits (cuBLAS reads C for beta = -0.0), so the
/// core stores beta this way and vendor rungs pass it on this way.
constexpr float unsigned_zero(float v) { return v == 0.0f ? 0.0f : v; }

/// A pointer as messages print it ("0x7f12...").
inline std::string address_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

/// Integer ceiling division, the one used everywhere.
template <class T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace gpukern::core
