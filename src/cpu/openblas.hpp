// OpenBLAS, loaded at run time with dlopen so that it stays optional: the reference
// rung of the CPU GEMM ladder. Before the first load we pick OPENBLAS_CORETYPE from our
// own cpuid (unless the user set it), because DYNAMIC_ARCH builds such as Debian's 0.3.21
// detect many newer CPUs as an older core (e.g. "Prescott", SSE3 kernels, 4x slower
// than "SkylakeX" on an AVX-512 Xeon) and a crippled reference makes every "% of
// reference" figure a lie. After loading we report the core in use and warn if it is
// older than the CPU supports.
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
  using SgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                           const float* a, int lda, const float* b, int ldb, float beta, float* c,
                           int ldc);
  /// cblas_sbgemm: bf16 A and B (as 16-bit words), f32 C. Only in builds with BUILD_BFLOAT16.
  using SbgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb,
                            float beta, float* c, int ldc);

  bool loaded = false;
  std::string unavailable;  // why not loaded ("libopenblas.so.0: cannot open shared object...")
  std::string library;      // file that was loaded
  std::string core;         // openblas_get_corename()
  std::string config;       // openblas_get_config()
  std::string coretype_note;  // how OPENBLAS_CORETYPE was chosen
  std::string warning;      // non-empty when the core in use is older than the CPU allows

  SgemmFn sgemm = nullptr;
  SbgemmFn sbgemm = nullptr;  // null when absent or when it failed the load-time check
  void (*set_num_threads)(int) = nullptr;

  /// OpenBLAS calls are serialized (its thread pool is shared process-wide) and the
  /// thread count set under this lock.
  mutable std::mutex mutex;
  mutable int threads_set = 0;
};

/// Loads OpenBLAS on first use (thread-safe); never throws.
GK_CPU_TESTED const OpenBlas& openblas();

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
