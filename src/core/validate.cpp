// Validation of gemm and softmax descriptors: enum fields (range-checked as raw integers),
// sizes, leading dimensions, pointers (null, element alignment, overflow of the addressed
// extent) and outputs that share memory with an input.
#include "core/validate.hpp"

#include <algorithm>
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

}  // namespace

GemmArgs validate_gemm(const gk_gemm_desc* d) {
  if (!d) throw invalid("gemm descriptor is null");
  GemmArgs a;
  a.trans_a = check_transpose("trans_a", raw_enum(d->trans_a));
  a.trans_b = check_transpose("trans_b", raw_enum(d->trans_b));
  check_size("m", d->m);
  check_size("n", d->n);
  check_size("k", d->k);
  check_product("m * n", d->m, d->n);
  check_product("m * k", d->m, d->k);
  check_product("k * n", d->k, d->n);
  a.m = d->m;
  a.n = d->n;
  a.k = d->k;
  a.ab_type = check_dtype("ab_type", raw_enum(d->ab_type));
  a.c_type = check_dtype("c_type", raw_enum(d->c_type));
  if (a.c_type != a.ab_type && a.c_type != DType::F32)
    throw invalid(std::string("c_type = ") + dtype_name(a.c_type) + " with ab_type = " + dtype_name(a.ab_type) +
                  "; C must be the input type or f32");
  if (d->allow_tf32 && a.ab_type != DType::F32)
    throw invalid(std::string("allow_tf32 applies to f32 inputs only (ab_type = ") + dtype_name(a.ab_type) + ")");
  a.allow_tf32 = d->allow_tf32 != 0;
  a.alpha = d->alpha;
  a.beta = unsigned_zero(d->beta);
  const bool reads_ab = a.m > 0 && a.n > 0 && a.k > 0;
  // Stored shapes: A is m x k (or k x m transposed), B is k x n (or n x k).
  const Extent ea =
      check_matrix("a", d->a, "lda", a.trans_a ? a.k : a.m, a.trans_a ? a.m : a.k, d->lda, a.ab_type, reads_ab);
  const Extent eb =
      check_matrix("b", d->b, "ldb", a.trans_b ? a.n : a.k, a.trans_b ? a.k : a.n, d->ldb, a.ab_type, reads_ab);
  const Extent ec = check_matrix("c", d->c, "ldc", a.m, a.n, d->ldc, a.c_type, true);
  // A and B may alias each other (both are only read); C is written while they are read.
  const std::string rule = "C must not share memory with A or B";
  check_disjoint(ec, ea, rule);
  check_disjoint(ec, eb, rule);
  a.a = d->a;
  a.lda = d->lda;
  a.b = d->b;
  a.ldb = d->ldb;
  a.c = d->c;
  a.ldc = d->ldc;
  return a;
}

SoftmaxArgs validate_softmax(const gk_softmax_desc* d) {
  if (!d) throw invalid("softmax descriptor is null");
  SoftmaxArgs s;
  check_size("rows", d->rows);
  check_size("cols", d->cols);
  check_product("rows * cols", d->rows, d->cols);
  s.rows = d->rows;
  s.cols = d->cols;
  s.dtype = check_dtype("dtype", raw_enum(d->dtype));
  const Extent ex = check_matrix("x", d->x, "ldx", s.rows, s.cols, d->ldx, s.dtype, true);
  const Extent ey = check_matrix("y", d->y, "ldy", s.rows, s.cols, d->ldy, s.dtype, true);
  if (d->x == d->y && d->x && d->ldx != d->ldy)
    throw invalid("in-place softmax (y == x) needs ldy == ldx (" + std::to_string(d->ldx) +
                  " != " + std::to_string(d->ldy) + ")");
  // y == x with the same stride is the in-place call every rung supports; any other
  // sharing lets a rung overwrite input that it, or another row's work, has yet to read.
  if (d->x != d->y) check_disjoint(ey, ex, "only the exact in-place call (y == x, ldy == ldx) may share memory");
  s.x = d->x;
  s.ldx = d->ldx;
  s.y = d->y;
  s.ldy = d->ldy;
  s.log = d->log_softmax != 0;
  return s;
}

}  // namespace gpukern::core
