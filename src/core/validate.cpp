// Validation of gemm and softmax descriptors (sizes, leading dimensions, pointers,
// types, overflow of the addressed extent).
#include "core/validate.hpp"

#include <limits>
#include <string>

namespace gpukern::core {
namespace {

Error invalid(const std::string& message) { return Error(Status::InvalidArgument, message); }

void check_size(const char* name, int64_t v) {
  if (v < 0) throw invalid(std::string(name) + " = " + std::to_string(v) + " is negative");
}

DType check_dtype(const char* name, int v) {
  if (v != GK_F32 && v != GK_F16 && v != GK_BF16)
    throw invalid(std::string(name) + " = " + std::to_string(v) +
                  " is not a dtype (GK_F32, GK_F16, GK_BF16)");
  return static_cast<DType>(v);
}

bool check_transpose(const char* name, int v) {
  if (v != GK_NO_TRANS && v != GK_TRANS)
    throw invalid(std::string(name) + " = " + std::to_string(v) + " is not GK_NO_TRANS or GK_TRANS");
  return v == GK_TRANS;
}

/// A stored rows x cols matrix with leading dimension ld: ld >= cols, and the last
/// element's byte offset must fit in int64 / size_t.
void check_matrix(const char* ptr_name, const void* ptr, const char* ld_name, int64_t rows,
                  int64_t cols, int64_t ld, std::size_t elem_size, bool used) {
  if (ld < std::max<int64_t>(1, cols))
    throw invalid(std::string(ld_name) + " = " + std::to_string(ld) + " is smaller than " +
                  std::to_string(std::max<int64_t>(1, cols)) + " (the stored row length)");
  if (!used || rows == 0 || cols == 0) return;
  if (!ptr) throw invalid(std::string(ptr_name) + " is null");
  int64_t extent = 0;  // elements spanned: (rows - 1) * ld + cols
  if (__builtin_mul_overflow(rows - 1, ld, &extent) ||
      __builtin_add_overflow(extent, cols, &extent) ||
      __builtin_mul_overflow(extent, static_cast<int64_t>(elem_size), &extent))
    throw invalid(std::string(ptr_name) + ": " + std::to_string(rows) + " rows with " +
                  ld_name + " = " + std::to_string(ld) + " overflow the address space");
}

void check_product(const char* what, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw invalid(std::string(what) + " overflows 64 bits");
}

}  // namespace

GemmArgs validate_gemm(const gk_gemm_desc* d) {
  if (!d) throw invalid("gemm descriptor is null");
  GemmArgs a;
  a.trans_a = check_transpose("trans_a", d->trans_a);
  a.trans_b = check_transpose("trans_b", d->trans_b);
  check_size("m", d->m);
  check_size("n", d->n);
  check_size("k", d->k);
  check_product("m * n", d->m, d->n);
  check_product("m * k", d->m, d->k);
  check_product("k * n", d->k, d->n);
  a.m = d->m;
  a.n = d->n;
  a.k = d->k;
  a.ab_type = check_dtype("ab_type", d->ab_type);
  a.c_type = check_dtype("c_type", d->c_type);
  if (a.c_type != a.ab_type && a.c_type != DType::F32)
    throw invalid(std::string("c_type = ") + dtype_name(a.c_type) + " with ab_type = " +
                  dtype_name(a.ab_type) + "; C must be the input type or f32");
  if (d->allow_tf32 && a.ab_type != DType::F32)
    throw invalid(std::string("allow_tf32 applies to f32 inputs only (ab_type = ") +
                  dtype_name(a.ab_type) + ")");
  a.allow_tf32 = d->allow_tf32 != 0;
  a.alpha = d->alpha;
  a.beta = d->beta;
  const std::size_t ab = dtype_size(a.ab_type);
  const bool reads_ab = a.m > 0 && a.n > 0 && a.k > 0;
  // Stored shapes: A is m x k (or k x m transposed), B is k x n (or n x k).
  check_matrix("a", d->a, "lda", a.trans_a ? a.k : a.m, a.trans_a ? a.m : a.k, d->lda, ab, reads_ab);
  check_matrix("b", d->b, "ldb", a.trans_b ? a.n : a.k, a.trans_b ? a.k : a.n, d->ldb, ab, reads_ab);
  check_matrix("c", d->c, "ldc", a.m, a.n, d->ldc, dtype_size(a.c_type), true);
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
  s.dtype = check_dtype("dtype", d->dtype);
  const std::size_t es = dtype_size(s.dtype);
  check_matrix("x", d->x, "ldx", s.rows, s.cols, d->ldx, es, true);
  check_matrix("y", d->y, "ldy", s.rows, s.cols, d->ldy, es, true);
  if (d->x == d->y && d->x && d->ldx != d->ldy)
    throw invalid("in-place softmax (y == x) needs ldy == ldx (" + std::to_string(d->ldx) +
                  " != " + std::to_string(d->ldy) + ")");
  s.x = d->x;
  s.ldx = d->ldx;
  s.y = d->y;
  s.ldy = d->ldy;
  s.log = d->log_softmax != 0;
  return s;
}

}  // namespace gpukern::core
