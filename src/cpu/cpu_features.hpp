// What the host CPU can do: instruction-set paths (cpuid AND operating-system support),
// cache sizes, core count, clock, brand string. Detected once; the GPUKERN_CPU_ISA cap
// is applied at each call (tests change it at run time through gk_set_option).
#pragma once

#include "core/config.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

/// Marks internal CPU-backend functions that tests/cpu calls directly (the library
/// hides every other symbol). Not public API: no header under include/ declares them.
#define GK_CPU_TESTED GK_CORE_API

namespace gpukern::cpu {

/// The code paths of the CPU kernels, ordered: a larger value needs more of the CPU.
enum class Isa : int { Scalar = 0, Avx2 = 1, Avx512 = 2 };

/// Raw feature bits, kept separate from the decision so that the decision
/// (best_isa) can be tested with made-up CPUs.
struct IsaFlags {
  // cpuid
  bool fma = false, f16c = false, avx = false, osxsave = false;
  bool avx2 = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512_bf16 = false, amx_bf16 = false;
  // XCR0 (what the OS saves on a context switch): xmm|ymm, and opmask|zmm_hi256|hi16_zmm
  bool os_ymm = false, os_zmm = false;
};

struct CacheSizes {
  std::size_t l1d = 32 * 1024;       // per core
  std::size_t l2 = 1024 * 1024;      // per core
  std::size_t l3 = 8 * 1024 * 1024;  // per socket (shared)
};

struct CpuFeatures {
  IsaFlags flags;
  Isa best = Isa::Scalar;  // best path this CPU and OS support
  std::string vendor;      // "GenuineIntel", "AuthenticAMD"
  std::string name;        // cpuid brand string (or /proc/cpuinfo model name)
  CacheSizes caches;
  int logical_cpus = 1;    // CPUs this process may run on
  int physical_cores = 1;  // logical_cpus / SMT ways
  int clock_mhz = 0;       // measured (dependent-add chain) or reported, the larger
  std::uint64_t memory_bytes = 0;
};

/// Detected on first use (thread-safe), then constant. The clock is measured lazily
/// (about 10 ms) by clock_mhz() below, not here.
GK_CPU_TESTED const CpuFeatures& cpu_features();

/// Clock in MHz: the larger of the reported clock and a measurement of a chain of
/// dependent integer adds (one per cycle), so turbo clocks in VMs are not missed.
GK_CPU_TESTED int measured_clock_mhz();

/// Reads cpuid and xgetbv of this CPU.
GK_CPU_TESTED IsaFlags detect_isa_flags();

/// The best path that flags allow. AVX2 path: AVX2 + FMA + F16C + OS ymm state.
/// AVX-512 path: AVX-512 F/BW/DQ/VL + OS opmask/zmm state + the AVX2 path.
GK_CPU_TESTED Isa best_isa(const IsaFlags& flags);

/// The best path <= cap that `best` allows (GPUKERN_CPU_ISA semantics: a cap above
/// what the CPU has is not an error, it gives what the CPU has).
GK_CPU_TESTED Isa capped_isa(Isa best, core::CpuIsa cap);

/// The path the kernels use now: capped_isa(cpu_features().best, core::cpu_isa_cap()).
GK_CPU_TESTED Isa active_isa();

GK_CPU_TESTED const char* isa_name(Isa isa);  // "scalar", "avx2", "avx512"
/// Paths this CPU supports, best first: "avx512,avx2,scalar".
GK_CPU_TESTED std::string supported_isa_list(Isa best);

/// Threads a call uses: GPUKERN_NUM_THREADS, 0 = all CPUs this process may run on.
GK_CPU_TESTED int resolved_threads();

}  // namespace gpukern::cpu
