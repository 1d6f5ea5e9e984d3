// OpenBLAS, loaded at run time with dlopen so that it stays optional: the reference
// rung of the CPU GEMM ladder. We pick OPENBLAS_CORETYPE from our own cpuid (unless the
// user set it), because DYNAMIC_ARCH builds such as Debian's 0.3.21 detect many newer
// CPUs as an older core (e.g. "Prescott", SSE3 kernels, 4x slower than "SkylakeX" on an
// AVX-512 Xeon) and a crippled reference makes every "% of reference" figure a lie.
// After loading we report the core in use and warn if it is older than the CPU supports.
//
// OpenBLAS reads the variable with getenv in its load-time constructor and offers no
// other way to choose the core, so the variable must be in the environment before the
// dlopen. Changing the environment while another thread may read it is a data race (glibc's
// setenv/unsetenv against getenv), so it is set once, when libgpukern itself is loaded
// (a library constructor: before main for a linked program), and only if the process then
// runs no other thread; it stays set (child processes inherit it). Loaded into a process
// that already runs threads, libgpukern leaves the environment alone: OpenBLAS detects
// the core itself, and the warning below names the OPENBLAS_CORETYPE to set.
#pragma once

#include "cpu/cpu_features.hpp"

#include <mutex>
#include <string>
#include <string_view>

namespace gpukern::cpu {

/// CBLAS constants (values fixed by the CBLAS standard).
enum CblasOrder { kCblasRowMajor = 101 };
enum CblasTranspose { kCblasNoTrans = 111, kCblasTrans = 112 };

struct OpenBlas {
  using SgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                           int lda, const float* b, int ldb, float beta, float* c, int ldc);
  /// cblas_sbgemm: bf16 A and B (as 16-bit words), f32 C. Only in builds with BUILD_BFLOAT16.
  using SbgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float beta, float* c,
                            int ldc);

  /// cblas_sgemv: y = alpha * op(A) x + beta * y.
  using SgemvFn = void (*)(int order, int trans, int m, int n, float alpha, const float* a, int lda, const float* x,
                           int incx, float beta, float* y, int incy);

  bool loaded = false;
  std::string unavailable;    // why not loaded ("libopenblas.so.0: cannot open shared object...")
  std::string library;        // file that was loaded
  std::string core;           // openblas_get_corename()
  std::string config;         // openblas_get_config()
  std::string coretype_note;  // how OPENBLAS_CORETYPE was chosen
  std::string warning;        // non-empty when the core in use is older than the CPU allows

  SgemmFn sgemm = nullptr;
  SbgemmFn sbgemm = nullptr;  // null when absent or when it failed the load-time check
  SgemvFn sgemv = nullptr;    // null when absent (the openblas_gemv rung declines)
  void (*set_num_threads)(int) = nullptr;

  /// OpenBLAS calls are serialized (its thread pool is shared process-wide) and the
  /// thread count set under this lock.
  mutable std::mutex mutex;
  mutable int threads_set = 0;
};

/// Loads OpenBLAS on first use (thread-safe); never throws. Does not change the environment.
GK_CPU_TESTED const OpenBlas& openblas();

/// What happened to OPENBLAS_CORETYPE when libgpukern was loaded (plain data, filled by
/// the library's constructor before any of its code can run).
struct CoretypeAtLoad {
  bool user_set = false;  // OPENBLAS_CORETYPE was already set
  bool set = false;       // we set it, to `core`
  int threads = 0;        // threads of the process then; 0 = could not be counted
  char core[24] = {};     // the core this CPU wants (openblas_coretype_for), "" for none
};
GK_CPU_TESTED const CoretypeAtLoad& openblas_coretype_at_load();

/// The OPENBLAS_CORETYPE to set now, or "" to leave the environment alone: only when the
/// user has not set it (user_value null), the CPU wants a core, and the process runs
/// exactly one thread (the caller's), so no other thread can read the environment.
GK_CPU_TESTED std::string coretype_to_set(const char* user_value, const IsaFlags& flags, int threads);

/// The OPENBLAS_CORETYPE to force for a CPU with these flags, or "" to let OpenBLAS
/// detect: AVX-512 F+BW+DQ+VL -> "SkylakeX"; AVX2+FMA -> "Haswell".
/// ("Cooperlake" runs the same sgemm kernels as SkylakeX and adds only bf16 ones, and
/// older OpenBLAS builds do not know it, so SkylakeX is the safe choice for sgemm.)
GK_CPU_TESTED std::string openblas_coretype_for(const IsaFlags& flags);

/// Vector generation of an OpenBLAS core name: 0 = SSE-era (Prescott, Nehalem, Core2,
/// Barcelona...), 1 = AVX (Sandybridge, Bulldozer family), 2 = AVX2 + FMA (Haswell,
/// Zen, Excavator), 3 = AVX-512 (SkylakeX, Cooperlake, SapphireRapids). -1 = unknown name.
GK_CPU_TESTED int openblas_core_generation(std::string_view core_name);

/// The generation the CPU with these flags could use (same scale).
GK_CPU_TESTED int cpu_generation(const IsaFlags& flags);

}  // namespace gpukern::cpu
