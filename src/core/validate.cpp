// Validation of gemm and softmax descriptors: enum fields (range-checked as raw integers),
// sizes, leading dimensions, pointers (null, element alignment, overflow of the addressed
// extent) and outputs that share memory with an input.
#include "core/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <string>

namespace gpukern::core {
namespace {

Error invalid(const std::string& message) { return Error(Status::InvalidArgument, message); }

void check_size(const char* name, int64_t v) {
  if (v < 0) throw invalid(std::string(name) + " = " + std::to_string(v) + " is negative");
}

// The enum checks take the raw integer (raw_enum): the value is converted to the enum
// type only once it is known to be one of its enumerators.
DType check_dtype(const char* name, int32_t v) {
  if (v != GK_F32 && v != GK_F16 && v != GK_BF16)
    throw invalid(std::string(name) + " = " + std::to_string(v) + " is not a dtype (GK_F32, GK_F16, GK_BF16)");
  return static_cast<DType>(v);
}

bool check_transpose(const char* name, int32_t v) {
  if (v != GK_NO_TRANS && v != GK_TRANS)
    throw invalid(std::string(name) + " = " + std::to_string(v) + " is not GK_NO_TRANS or GK_TRANS");
  return v == GK_TRANS;
}

/// The bytes a stored matrix covers: `rows` rows of `row_bytes` bytes, `stride` bytes
/// apart, from `base`. Empty when the call does not touch the matrix.
struct Extent {
  const char* name = "";  // the pointer argument: "a", "x", ...
  std::uintptr_t base = 0;
  int64_t rows = 0, row_bytes = 0, stride = 0;

  bool empty() const { return rows == 0 || row_bytes == 0; }
  /// One past the last byte (fits: check_matrix bounded the extent by INT64_MAX bytes).
  __int128 end() const { return __int128(base) + __int128(rows - 1) * stride + row_bytes; }
};

/// A stored rows x cols matrix with leading dimension ld. As in BLAS, ld >= max(1, cols)
/// even when the matrix is empty. When the call touches the matrix (`used`), its pointer
/// must be non-null and aligned to its element type, and its last byte's offset must fit
/// in int64; the extent it covers is returned (empty otherwise).
Extent check_matrix(const char* ptr_name, const void* ptr, const char* ld_name, int64_t rows, int64_t cols, int64_t ld,
                    DType type, bool used) {
  if (ld < std::max<int64_t>(1, cols))
    throw invalid(std::string(ld_name) + " = " + std::to_string(ld) + " is smaller than " +
                  (cols >= 1 ? std::to_string(cols) + " (the stored row length)"
                             : std::string("1 (a leading dimension is at least 1, as in "
                                           "BLAS, even for an empty matrix)")));
  Extent extent;
  extent.name = ptr_name;
  if (!used || rows == 0 || cols == 0) return extent;
  if (!ptr) throw invalid(std::string(ptr_name) + " is null");
  const int64_t elem_size = static_cast<int64_t>(dtype_size(type));
  if (reinterpret_cast<std::uintptr_t>(ptr) % static_cast<std::uintptr_t>(elem_size) != 0)
    throw invalid(std::string(ptr_name) + " = " + address_text(ptr) + " is not aligned to its " +
                  std::to_string(elem_size) + "-byte " + dtype_name(type) + " elements");
  int64_t elements = 0, bytes = 0;  // elements spanned: (rows - 1) * ld + cols
  if (__builtin_mul_overflow(rows - 1, ld, &elements) || __builtin_add_overflow(elements, cols, &elements) ||
      __builtin_mul_overflow(elements, elem_size, &bytes))
    throw invalid(std::string(ptr_name) + ": " + std::to_string(rows) + " rows with " + ld_name + " = " +
                  std::to_string(ld) + " overflow the address space");
  extent.base = reinterpret_cast<std::uintptr_t>(ptr);
  extent.rows = rows;
  extent.row_bytes = cols * elem_size;
  extent.stride = ld * elem_size;
  return extent;
}

void check_product(const char* what, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw invalid(std::string(what) + " overflows 64 bits");
}

/// floor(a / b) for b > 0.
__int128 floor_div(__int128 a, __int128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Whether two extents share a byte. Exact when either has one row or both have the same
/// row stride (blocks of one parent matrix, the usual case); with two different strides,
/// any intersection of the spans counts.
bool share_bytes(const Extent& p, const Extent& q) {
  if (p.empty() || q.empty()) return false;
  if (p.end() <= __int128(q.base) || q.end() <= __int128(p.base)) return false;  // disjoint spans
  if (p.rows == 1 && q.rows == 1) return true;
  if (p.rows > 1 && q.rows > 1 && p.stride != q.stride) return true;
  // Row i of p starts at p.base + i*S and row j of q at q.base + j*S; they overlap when
  // -q.row_bytes < d + k*S < p.row_bytes with d = q.base - p.base and k = j - i in
  // [-(p.rows - 1), q.rows - 1]. d + k*S grows with k: take the smallest k above the lower
  // bound and test it against the upper one.
  const __int128 stride = p.rows > 1 ? p.stride : q.stride;
  const __int128 d = __int128(q.base) - __int128(p.base);
  __int128 k = floor_div(-__int128(q.row_bytes) - d, stride) + 1;
  k = std::max<__int128>(k, -(p.rows - 1));
  return k <= q.rows - 1 && d + k * stride < p.row_bytes;
}

/// Rejects an output extent that shares a byte with an input extent.
void check_disjoint(const Extent& out, const Extent& in, const std::string& rule) {
  if (share_bytes(out, in)) throw invalid(std::string(out.name) + " overlaps " + in.name + ": " + rule);
}

void check_stride(const char* name, int64_t v) {
  if (v < 0) throw invalid(std::string(name) + " = " + std::to_string(v) + " is negative");
}

/// The bytes `batch` items of `item` cover, `stride` elements of `elem_size` bytes apart: the
/// item itself for one item or a broadcast (stride 0), else one span from the first item's
/// first byte to the last item's last byte (checked to fit in int64).
Extent batch_extent(const Extent& item, int64_t batch, int64_t stride, int64_t elem_size, const char* stride_name) {
  if (item.empty() || batch <= 1 || stride == 0) return item;
  int64_t offset = 0, span = 0;
  if (__builtin_mul_overflow(batch - 1, stride, &offset) || __builtin_mul_overflow(offset, elem_size, &offset) ||
      __builtin_add_overflow(offset, int64_t((item.rows - 1) * item.stride + item.row_bytes), &span))
    throw invalid(std::string(item.name) + ": " + std::to_string(batch) + " batch items with " + stride_name + " = " +
                  std::to_string(stride) + " overflow the address space");
  Extent out = item;
  out.rows = 1;
  out.row_bytes = span;
  out.stride = span;
  return out;
}

/// The batch items of an output (rows x cols, leading dimension ld, items `stride` apart) must
/// not share an element: blocked items (stride >= (rows - 1) * ld + cols) or interleaved rows
/// (stride >= cols and ld >= (batch - 1) * stride + cols).
void check_batch_items_disjoint(const char* stride_name, const char* ld_name, int64_t batch, int64_t rows, int64_t cols,
                                int64_t ld, int64_t stride) {
  if (batch <= 1 || rows == 0 || cols == 0) return;
  const __int128 item_span = __int128(rows - 1) * ld + cols;
  if (__int128(stride) >= item_span) return;
  if (stride >= cols && __int128(ld) >= __int128(batch - 1) * stride + cols) return;
  throw invalid(std::string(stride_name) + " = " + std::to_string(stride) + " makes the " + std::to_string(batch) +
                " batch items of the output overlap (" + ld_name + " = " + std::to_string(ld) +
                "; items need stride >= " + std::to_string(static_cast<long long>(item_span)) +
                ", or interleaved rows: stride >= " + std::to_string(cols) + " and " + ld_name +
                " >= (batch_count - 1) * stride + " + std::to_string(cols) + ")");
}

/// Reads an extended descriptor of `size` bytes into the library's version of the struct:
/// a smaller size than the first version is refused, a larger one (an application built
/// against a newer header) only when every byte this library does not know is zero.
template <class Desc>
Desc read_sized(const Desc* d, const char* what, const char* init) {
  if (!d) throw invalid(std::string(what) + " descriptor is null");
  std::size_t size = 0;
  std::memcpy(&size, d, sizeof size);
  constexpr std::size_t kMaxSize = 4096;  // no descriptor will grow this far: the value is garbage
  if (size < sizeof(Desc) || size > kMaxSize)
    throw invalid(std::string("size = ") + std::to_string(size) + " is not a " + what +
                  " descriptor size (this library's " + what + " is " + std::to_string(sizeof(Desc)) +
                  " bytes; set size with " + init + ")");
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(d);
  for (std::size_t i = sizeof(Desc); i < size; ++i)
    if (bytes[i] != 0)
      throw invalid(std::string("size = ") + std::to_string(size) + ": the descriptor sets fields at byte " +
                    std::to_string(i) + ", past the " + std::to_string(sizeof(Desc)) + " bytes this library (" +
                    GPUKERN_VERSION_TEXT + ") knows; a newer library is needed");
  Desc out;
  std::memcpy(&out, d, sizeof out);
  return out;
}

}  // namespace

GemmArgs validate_gemm(const gk_gemm_ex_desc& d) {
  GemmArgs a;
  a.trans_a = check_transpose("trans_a", raw_enum(d.trans_a));
  a.trans_b = check_transpose("trans_b", raw_enum(d.trans_b));
  check_size("m", d.m);
  check_size("n", d.n);
  check_size("k", d.k);
  check_product("m * n", d.m, d.n);
  check_product("m * k", d.m, d.k);
  check_product("k * n", d.k, d.n);
  a.m = d.m;
  a.n = d.n;
  a.k = d.k;
  a.ab_type = check_dtype("ab_type", raw_enum(d.ab_type));
  a.c_type = check_dtype("c_type", raw_enum(d.c_type));
  if (a.c_type != a.ab_type && a.c_type != DType::F32)
    throw invalid(std::string("c_type = ") + dtype_name(a.c_type) + " with ab_type = " + dtype_name(a.ab_type) +
                  "; C must be the input type or f32");
  if (d.allow_tf32 && a.ab_type != DType::F32)
    throw invalid(std::string("allow_tf32 applies to f32 inputs only (ab_type = ") + dtype_name(a.ab_type) + ")");
  a.allow_tf32 = d.allow_tf32 != 0;
  a.alpha = d.alpha;
  a.beta = unsigned_zero(d.beta);
  check_size("batch_count", d.batch_count);
  check_stride("stride_a", d.stride_a);
  check_stride("stride_b", d.stride_b);
  check_stride("stride_c", d.stride_c);
  check_stride("stride_bias", d.stride_bias);
  a.batch = d.batch_count;
  const bool writes = a.m > 0 && a.n > 0 && a.batch > 0;
  const bool reads_ab = writes && a.k > 0;
  // Stored shapes: A is m x k (or k x m transposed), B is k x n (or n x k).
  const int64_t ab_size = static_cast<int64_t>(dtype_size(a.ab_type));
  const int64_t c_size = static_cast<int64_t>(dtype_size(a.c_type));
  const Extent ea = batch_extent(
      check_matrix("a", d.a, "lda", a.trans_a ? a.k : a.m, a.trans_a ? a.m : a.k, d.lda, a.ab_type, reads_ab), a.batch,
      d.stride_a, ab_size, "stride_a");
  const Extent eb = batch_extent(
      check_matrix("b", d.b, "ldb", a.trans_b ? a.n : a.k, a.trans_b ? a.k : a.n, d.ldb, a.ab_type, reads_ab), a.batch,
      d.stride_b, ab_size, "stride_b");
  const Extent c_item = check_matrix("c", d.c, "ldc", a.m, a.n, d.ldc, a.c_type, writes);
  if (writes) check_batch_items_disjoint("stride_c", "ldc", a.batch, a.m, a.n, d.ldc, d.stride_c);
  const Extent ec = batch_extent(c_item, a.batch, d.stride_c, c_size, "stride_c");
  // A and B may alias each other (both are only read); C is written while they are read.
  // Batched operands are compared by the span from their first to their last item.
  const std::string rule = "C must not share memory with A or B";
  check_disjoint(ec, ea, rule);
  check_disjoint(ec, eb, rule);

  // The fused epilogue.
  const int32_t act = raw_enum(d.activation);
  if (act < GK_ACT_NONE || act > GK_ACT_SILU)
    throw invalid("activation = " + std::to_string(act) +
                  " is not a gk_activation (GK_ACT_NONE, GK_ACT_RELU, GK_ACT_GELU_TANH, GK_ACT_GELU_ERF, GK_ACT_SILU)");
  a.act = static_cast<Activation>(act);
  if (d.bias) {
    if (d.bias_length != d.n)
      throw invalid("bias_length = " + std::to_string(d.bias_length) +
                    " with a bias: it must equal n = " + std::to_string(d.n) + " (one value per column of C)");
    a.bias_type = check_dtype("bias_type", raw_enum(d.bias_type));
    if (a.bias_type != DType::F32 && a.bias_type != a.c_type)
      throw invalid(std::string("bias_type = ") + dtype_name(a.bias_type) + " with c_type = " + dtype_name(a.c_type) +
                    "; the bias is f32 or C's type");
    const Extent ebias =
        batch_extent(check_matrix("bias", d.bias, "bias_length", 1, d.n, d.n, a.bias_type, writes), a.batch,
                     d.stride_bias, static_cast<int64_t>(dtype_size(a.bias_type)), "stride_bias");
    check_disjoint(ec, ebias, "C must not share memory with the bias");
    a.bias = d.bias;
    a.stride_bias = a.batch > 1 ? d.stride_bias : 0;
  } else if (d.bias_length != 0) {
    throw invalid("bias_length = " + std::to_string(d.bias_length) + " without a bias (bias is null)");
  }
  a.a = d.a;
  a.lda = d.lda;
  a.b = d.b;
  a.ldb = d.ldb;
  a.c = d.c;
  a.ldc = d.ldc;
  // Strides of a single item are never used; keep them 0 so rungs see one canonical form.
  a.stride_a = a.batch > 1 ? d.stride_a : 0;
  a.stride_b = a.batch > 1 ? d.stride_b : 0;
  a.stride_c = a.batch > 1 ? d.stride_c : 0;
  return a;
}

GemmArgs validate_gemm(const gk_gemm_ex_desc* d) {
  return validate_gemm(read_sized(d, "gemm", "gk_gemm_ex_desc_init"));
}

GemmArgs validate_gemm(const gk_gemm_desc* d) {
  if (!d) throw invalid("gemm descriptor is null");
  return validate_gemm(widen(*d));
}

SoftmaxArgs validate_softmax(const gk_softmax_ex_desc& d) {
  SoftmaxArgs s;
  check_size("rows", d.rows);
  check_size("cols", d.cols);
  check_product("rows * cols", d.rows, d.cols);
  s.rows = d.rows;
  s.cols = d.cols;
  s.dtype = check_dtype("dtype", raw_enum(d.dtype));
  check_size("batch_count", d.batch_count);
  check_stride("stride_x", d.stride_x);
  check_stride("stride_y", d.stride_y);
  s.batch = d.batch_count;
  if (!std::isfinite(d.scale)) throw invalid("scale = " + std::to_string(d.scale) + " is not finite");
  const bool used = s.batch > 0;
  const int64_t size = static_cast<int64_t>(dtype_size(s.dtype));
  const Extent x_item = check_matrix("x", d.x, "ldx", s.rows, s.cols, d.ldx, s.dtype, used);
  const Extent y_item = check_matrix("y", d.y, "ldy", s.rows, s.cols, d.ldy, s.dtype, used);
  const bool in_place = d.x == d.y && d.x;
  if (in_place && d.ldx != d.ldy)
    throw invalid("in-place softmax (y == x) needs ldy == ldx (" + std::to_string(d.ldx) +
                  " != " + std::to_string(d.ldy) + ")");
  if (in_place && s.batch > 1 && d.stride_x != d.stride_y)
    throw invalid("in-place softmax (y == x) needs stride_y == stride_x (" + std::to_string(d.stride_x) +
                  " != " + std::to_string(d.stride_y) + ")");
  if (used) check_batch_items_disjoint("stride_y", "ldy", s.batch, s.rows, s.cols, d.ldy, d.stride_y);
  const Extent ex = batch_extent(x_item, s.batch, d.stride_x, size, "stride_x");
  const Extent ey = batch_extent(y_item, s.batch, d.stride_y, size, "stride_y");
  // y == x with the same strides is the in-place call every rung supports; any other
  // sharing lets a rung overwrite input that it, or another row's work, has yet to read.
  if (!in_place) check_disjoint(ey, ex, "only the exact in-place call (y == x, ldy == ldx) may share memory");
  s.x = d.x;
  s.ldx = d.ldx;
  s.y = d.y;
  s.ldy = d.ldy;
  s.log = d.log_softmax != 0;
  s.stride_x = s.batch > 1 ? d.stride_x : 0;
  s.stride_y = s.batch > 1 ? d.stride_y : 0;
  s.scale = d.scale;
  s.causal = d.causal != 0;
  // Offsets beyond [-rows - 1, cols] mask every column or none, as the bounds do; clamping
  // keeps r + offset + 1 far from overflow.
  s.causal_offset = s.causal ? std::clamp<int64_t>(d.causal_offset, -s.rows - 1, s.cols) : 0;
  return s;
}

SoftmaxArgs validate_softmax(const gk_softmax_ex_desc* d) {
  return validate_softmax(read_sized(d, "softmax", "gk_softmax_ex_desc_init"));
}

SoftmaxArgs validate_softmax(const gk_softmax_desc* d) {
  if (!d) throw invalid("softmax descriptor is null");
  return validate_softmax(widen(*d));
}

gk_gemm_ex_desc widen(const gk_gemm_desc& d) {
  gk_gemm_ex_desc e;
  gk_gemm_ex_desc_init(&e);
  e.trans_a = d.trans_a;
  e.trans_b = d.trans_b;
  e.m = d.m;
  e.n = d.n;
  e.k = d.k;
  e.alpha = d.alpha;
  e.a = d.a;
  e.lda = d.lda;
  e.b = d.b;
  e.ldb = d.ldb;
  e.beta = d.beta;
  e.c = d.c;
  e.ldc = d.ldc;
  e.ab_type = d.ab_type;
  e.c_type = d.c_type;
  e.allow_tf32 = d.allow_tf32;
  e.variant = d.variant;
  return e;
}

gk_softmax_ex_desc widen(const gk_softmax_desc& d) {
  gk_softmax_ex_desc e;
  gk_softmax_ex_desc_init(&e);
  e.rows = d.rows;
  e.cols = d.cols;
  e.x = d.x;
  e.ldx = d.ldx;
  e.y = d.y;
  e.ldy = d.ldy;
  e.dtype = d.dtype;
  e.log_softmax = d.log_softmax;
  e.variant = d.variant;
  return e;
}

}  // namespace gpukern::core
