// ISA detection and capping, and the OpenBLAS core choice: the decisions are tested with
// made-up CPUs (flag sets), the detection against this machine, the cap through the
// public option (GPUKERN_CPU_ISA) as applications set it.
#include "core/config.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/openblas.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace gpukern::cpu {
namespace {

IsaFlags avx2_cpu() {
  IsaFlags f;
  f.avx = f.avx2 = f.fma = f.f16c = f.osxsave = f.os_ymm = true;
  return f;
}
IsaFlags avx512_cpu() {
  IsaFlags f = avx2_cpu();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.os_zmm = true;
  return f;
}

TEST(IsaDecision, NeedsCpuidAndOsSupport) {
  EXPECT_EQ(best_isa(IsaFlags{}), Isa::Scalar);
  EXPECT_EQ(best_isa(avx2_cpu()), Isa::Avx2);
  EXPECT_EQ(best_isa(avx512_cpu()), Isa::Avx512);

  // The OS does not save zmm state (e.g. a kernel booted without AVX-512 support).
  IsaFlags no_zmm = avx512_cpu();
  no_zmm.os_zmm = false;
  EXPECT_EQ(best_isa(no_zmm), Isa::Avx2);
  // Nor ymm state: not even AVX2 may run.
  IsaFlags no_ymm = avx512_cpu();
  no_ymm.os_ymm = false;
  EXPECT_EQ(best_isa(no_ymm), Isa::Scalar);
  IsaFlags no_osxsave = avx2_cpu();
  no_osxsave.osxsave = false;
  EXPECT_EQ(best_isa(no_osxsave), Isa::Scalar);

  // AVX2 without FMA or F16C (some VMs mask them): the AVX2 kernels use both.
  IsaFlags no_fma = avx2_cpu();
  no_fma.fma = false;
  EXPECT_EQ(best_isa(no_fma), Isa::Scalar);
  IsaFlags no_f16c = avx2_cpu();
  no_f16c.f16c = false;
  EXPECT_EQ(best_isa(no_f16c), Isa::Scalar);

  // AVX-512F alone (Knights Landing style, no BW/DQ/VL) is not our AVX-512 path.
  IsaFlags only_f = avx2_cpu();
  only_f.avx512f = only_f.os_zmm = true;
  EXPECT_EQ(best_isa(only_f), Isa::Avx2);
}

TEST(IsaDecision, CapGivesTheBestPathBelowIt) {
  EXPECT_EQ(capped_isa(Isa::Avx512, core::CpuIsa::Auto), Isa::Avx512);
  EXPECT_EQ(capped_isa(Isa::Avx512, core::CpuIsa::Avx512), Isa::Avx512);
  EXPECT_EQ(capped_isa(Isa::Avx512, core::CpuIsa::Avx2), Isa::Avx2);
  EXPECT_EQ(capped_isa(Isa::Avx512, core::CpuIsa::Scalar), Isa::Scalar);
  // A cap above what the CPU has is not an error: the CPU's best.
  EXPECT_EQ(capped_isa(Isa::Avx2, core::CpuIsa::Avx512), Isa::Avx2);
  EXPECT_EQ(capped_isa(Isa::Scalar, core::CpuIsa::Avx2), Isa::Scalar);
}

TEST(IsaDetection, AgreesWithProcCpuinfo) {
  // The kernel's flags line lists what cpuid reports and the OS enables.
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line";
  auto has = [&](const char* f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
  const IsaFlags d = detect_isa_flags();
  EXPECT_EQ(d.avx2, has("avx2"));
  EXPECT_EQ(d.fma, has("fma"));
  EXPECT_EQ(d.f16c, has("f16c"));
  EXPECT_EQ(d.avx512f, has("avx512f"));
  EXPECT_EQ(d.avx512bw, has("avx512bw"));
  EXPECT_EQ(d.avx512_bf16, has("avx512_bf16"));
  EXPECT_EQ(d.amx_bf16, has("amx_bf16"));
  const bool linux_avx512 = has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl");
  EXPECT_EQ(cpu_features().best == Isa::Avx512, linux_avx512);
}

TEST(IsaDetection, OptionCapsTheActivePath) {
  const Isa best = cpu_features().best;
  core::set_option("GPUKERN_CPU_ISA", "scalar");
  EXPECT_EQ(active_isa(), Isa::Scalar);
  core::set_option("GPUKERN_CPU_ISA", "avx2");
  EXPECT_EQ(active_isa(), capped_isa(best, core::CpuIsa::Avx2));
  core::set_option("GPUKERN_CPU_ISA", "avx512");
  EXPECT_EQ(active_isa(), best);
  core::set_option("GPUKERN_CPU_ISA", "");  // back to the environment / auto
  EXPECT_EQ(active_isa(), capped_isa(best, core::cpu_isa_cap()));
}

TEST(IsaDetection, NamesAndLists) {
  EXPECT_STREQ(isa_name(Isa::Avx512), "avx512");
  EXPECT_STREQ(isa_name(Isa::Avx2), "avx2");
  EXPECT_STREQ(isa_name(Isa::Scalar), "scalar");
  EXPECT_EQ(supported_isa_list(Isa::Avx512), "avx512,avx2,scalar");
  EXPECT_EQ(supported_isa_list(Isa::Scalar), "scalar");
}

TEST(CpuFeatures, CachesAndCoresArePlausible) {
  const CpuFeatures& f = cpu_features();
  EXPECT_GE(f.caches.l1d, 16u << 10);
  EXPECT_GE(f.caches.l2, f.caches.l1d);
  EXPECT_GE(f.logical_cpus, 1);
  EXPECT_GE(f.logical_cpus, f.physical_cores);
  EXPECT_FALSE(f.name.empty());
  EXPECT_GT(measured_clock_mhz(), 500);
}

// ---- OpenBLAS core choice ----

TEST(OpenBlasCore, ChosenFromCpuid) {
  EXPECT_EQ(openblas_coretype_for(avx512_cpu()), "SkylakeX");
  EXPECT_EQ(openblas_coretype_for(avx2_cpu()), "Haswell");
  EXPECT_EQ(openblas_coretype_for(IsaFlags{}), "");  // let OpenBLAS detect
  // An AVX-512 CPU whose OS does not save zmm must not get AVX-512 kernels.
  IsaFlags no_zmm = avx512_cpu();
  no_zmm.os_zmm = false;
  EXPECT_EQ(openblas_coretype_for(no_zmm), "Haswell");
}

TEST(OpenBlasCore, EnvironmentSetOnlyWhenUnsetAndAlone) {
  // Set only when the user has not, the CPU wants a core, and the process runs one thread.
  EXPECT_EQ(coretype_to_set(nullptr, avx512_cpu(), 1), "SkylakeX");
  EXPECT_EQ(coretype_to_set(nullptr, avx2_cpu(), 1), "Haswell");
  EXPECT_EQ(coretype_to_set("Haswell", avx512_cpu(), 1), "");  // the user's choice stands
  EXPECT_EQ(coretype_to_set("", avx512_cpu(), 1), "");         // set, even if empty
  EXPECT_EQ(coretype_to_set(nullptr, IsaFlags{}, 1), "");      // let OpenBLAS detect
  EXPECT_EQ(coretype_to_set(nullptr, avx512_cpu(), 2), "");    // another thread could read it
  EXPECT_EQ(coretype_to_set(nullptr, avx512_cpu(), 0), "");    // threads unknown: as unsafe
}

TEST(OpenBlasCore, GenerationsDetectACrippledCore) {
  // The misdetection this code exists for: an AVX-512 CPU run with Prescott (SSE3) kernels.
  EXPECT_LT(openblas_core_generation("Prescott"), cpu_generation(avx512_cpu()));
  EXPECT_LT(openblas_core_generation("Haswell"), cpu_generation(avx512_cpu()));
  EXPECT_EQ(openblas_core_generation("SkylakeX"), cpu_generation(avx512_cpu()));
  EXPECT_EQ(openblas_core_generation("COOPERLAKE"), 3);  // names compare case-insensitively
  EXPECT_EQ(openblas_core_generation("Zen"), cpu_generation(avx2_cpu()));
  EXPECT_EQ(openblas_core_generation("Sandybridge"), 1);
  EXPECT_EQ(openblas_core_generation("NoSuchCore"), -1);
  // The chosen core is never older than the CPU allows.
  for (const IsaFlags& f : {avx2_cpu(), avx512_cpu()})
    EXPECT_EQ(openblas_core_generation(openblas_coretype_for(f)), cpu_generation(f));
}

TEST(OpenBlasCore, LoadedOrSaysWhyNot) {
  const OpenBlas& ob = openblas();
  if (!ob.loaded) {
    EXPECT_FALSE(ob.unavailable.empty());
    GTEST_SKIP() << "OpenBLAS not available here: " << ob.unavailable;
  }
  EXPECT_FALSE(ob.core.empty());
  EXPECT_NE(ob.sgemm, nullptr);
  EXPECT_FALSE(ob.coretype_note.empty());
  // Either the core matches the CPU, or a warning says it does not.
  if (openblas_core_generation(ob.core) < cpu_generation(cpu_features().flags))
    EXPECT_FALSE(ob.warning.empty()) << ob.core;
  else
    EXPECT_TRUE(ob.warning.empty()) << ob.warning;
}

TEST(CpuBackend, DeviceInfoNamesPathAndReference) {
  auto backend = create_backend();
  const core::DeviceInfo info = backend->device_info();
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(info.arch.rfind("x86_64-", 0), 0u) << info.arch;
  EXPECT_GT(info.peak_f32_gflops, 0.0);
  EXPECT_GE(info.compute_units, 1);
  std::string keys;
  for (const auto& kv : info.extra) keys += kv.first + ",";
  for (const char* key : {"cpu_isa", "cpu_isa_supported", "threads", "openblas_core", "openblas_config"})
    EXPECT_NE(keys.find(std::string(key) + ","), std::string::npos) << "missing extra key " << key;
}

}  // namespace
}  // namespace gpukern::cpu
