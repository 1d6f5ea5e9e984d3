// Run-time loading of OpenBLAS and the choice of its core (see openblas.hpp for why).
#include "cpu/openblas.hpp"

#include "core/half.hpp"
#include "core/log.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gpukern::cpu {
namespace {

struct CoreGeneration {
  const char* name;
  int generation;
};

// Names as OpenBLAS's DYNAMIC_ARCH corename table spells them.
constexpr CoreGeneration kCoreGenerations[] = {
    {"Katmai", 0},         {"Coppermine", 0},  {"Northwood", 0},    {"Prescott", 0},   {"Banias", 0},
    {"Atom", 0},           {"Core2", 0},       {"Penryn", 0},       {"Dunnington", 0}, {"Nehalem", 0},
    {"Athlon", 0},         {"Opteron", 0},     {"Opteron_SSE3", 0}, {"Barcelona", 0},  {"Nano", 0},
    {"Bobcat", 0},         {"Sandybridge", 1}, {"Bulldozer", 1},    {"Piledriver", 1}, {"Steamroller", 1},
    {"Haswell", 2},        {"Excavator", 2},   {"Zen", 2},          {"SkylakeX", 3},   {"Cooperlake", 3},
    {"SapphireRapids", 3},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

/// Threads of this process (entries of /proc/self/task); 0 when it cannot be read.
int process_threads() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return 0;
  int count = 0;
  while (const dirent* entry = readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  closedir(tasks);
  return count;
}

// Filled once by choose_coretype_at_load; constant-initialized, so no C++ initializer of
// this file can run after the constructor and overwrite it.
CoretypeAtLoad coretype_at_load;

/// Runs when libgpukern is loaded: sets OPENBLAS_CORETYPE if coretype_to_set says it is
/// wanted and safe (see openblas.hpp).
__attribute__((constructor)) void choose_coretype_at_load() {
  const IsaFlags flags = detect_isa_flags();
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  CoretypeAtLoad& at = coretype_at_load;
  at.user_set = user != nullptr;
  at.threads = process_threads();
  const std::string wanted = openblas_coretype_for(flags);
  std::strncpy(at.core, wanted.c_str(), sizeof(at.core) - 1);
  const std::string to_set = coretype_to_set(user, flags, at.threads);
  at.set = !to_set.empty() && setenv("OPENBLAS_CORETYPE", to_set.c_str(), 0) == 0;
}

/// How the core OpenBLAS starts with was chosen, for gpukern-info and the warning.
std::string coretype_note() {
  const CoretypeAtLoad& at = coretype_at_load;
  const char* now = std::getenv("OPENBLAS_CORETYPE");  // a read: never races with other reads
  if (now && at.set && at.core == std::string(now))
    return "OPENBLAS_CORETYPE=" + std::string(now) + " chosen from cpuid when libgpukern was loaded";
  if (now) return "OPENBLAS_CORETYPE=" + std::string(now) + " set by the user";
  if (at.core[0] == '\0') return "core detected by OpenBLAS";
  std::string why;
  if (at.threads > 1)
    why = "libgpukern was loaded while the process ran " + std::to_string(at.threads) +
          " threads (setting it then could race with them)";
  else if (at.threads == 0)
    why = "libgpukern could not count the threads of the process when it was loaded";
  else
    why = "it was unset after libgpukern was loaded";
  return "core detected by OpenBLAS: OPENBLAS_CORETYPE=" + std::string(at.core) + " not set, as " + why +
         "; set it before the program starts";
}

template <class Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

/// sbgemm is new in OpenBLAS and has had wrong-result bugs on some cores: keep it only
/// if it matches sgemm on a small product of bf16-exact values.
bool sbgemm_matches_sgemm(const OpenBlas& ob) {
  constexpr int kM = 5, kN = 19, kK = 37;  // odd sizes: not multiples of any unroll
  std::vector<float> a(kM * kK), b(kK * kN), c_ref(kM * kN), c_bf(kM * kN);
  std::vector<std::uint16_t> a16(a.size()), b16(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  for (std::size_t i = 0; i < a.size(); ++i) a16[i] = core::float_to_bf16(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) b16[i] = core::float_to_bf16(b[i]);
  ob.sgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, kM, kN, kK, 1.0f, a.data(), kK, b.data(), kN, 0.0f,
           c_ref.data(), kN);
  ob.sbgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, kM, kN, kK, 1.0f, a16.data(), kK, b16.data(), kN, 0.0f,
            c_bf.data(), kN);
  for (int i = 0; i < kM * kN; ++i)
    if (!(std::fabs(c_ref[i] - c_bf[i]) <= 1e-4f * (1.0f + std::fabs(c_ref[i])))) return false;
  return true;
}

void load(OpenBlas& ob) {
  const CpuFeatures& cpu = cpu_features();
  // OpenBLAS reads OPENBLAS_CORETYPE in its load-time constructor: whatever the
  // environment holds now (set when libgpukern was loaded, or by the user) chooses.
  ob.coretype_note = coretype_note();

  void* lib = nullptr;
  std::string errors;
  for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libblas.so.3"}) {
    // Already loaded by the application: its core was chosen then; we can only report it.
    void* already = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    const bool preloaded = already != nullptr;
    if (already) dlclose(already);  // drops the reference RTLD_NOLOAD took
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      errors += std::string(errors.empty() ? "" : "; ") + dlerror();
      continue;
    }
    if (!dlsym(handle, "openblas_get_corename")) {  // a reference BLAS or another vendor's
      errors += std::string(errors.empty() ? "" : "; ") + name + " is not OpenBLAS";
      dlclose(handle);
      continue;
    }
    if (preloaded) ob.coretype_note = "already loaded by the application (core chosen then)";
    lib = handle;
    ob.library = name;
    break;
  }
  if (!lib) {
    ob.unavailable = "OpenBLAS not found (" + errors + ")";
    return;
  }

  ob.sgemm = symbol<OpenBlas::SgemmFn>(lib, "cblas_sgemm");
  ob.sgemv = symbol<OpenBlas::SgemvFn>(lib, "cblas_sgemv");
  ob.set_num_threads = symbol<void (*)(int)>(lib, "openblas_set_num_threads");
  auto corename = symbol<char* (*)()>(lib, "openblas_get_corename");
  auto config = symbol<char* (*)()>(lib, "openblas_get_config");
  if (!ob.sgemm) {
    ob.unavailable = ob.library + " has no cblas_sgemm";
    return;  // the handle stays open: unloading OpenBLAS while its threads exist is unsafe
  }
  ob.core = corename ? corename() : "unknown";
  ob.config = config ? config() : "";
  ob.loaded = true;

  const int have = openblas_core_generation(ob.core), could = cpu_generation(cpu.flags);
  if (have < could) {
    ob.warning = "OpenBLAS uses core \"" + ob.core + "\", older than this CPU supports (" +
                 openblas_coretype_for(cpu.flags) + "); OpenBLAS figures understate the CPU (" + ob.coretype_note + ")";
    core::log_line(core::LogLevel::Warn, ob.warning);
  }

  ob.sbgemm = symbol<OpenBlas::SbgemmFn>(lib, "cblas_sbgemm");
  if (ob.sbgemm && !sbgemm_matches_sgemm(ob)) {
    core::log_line(core::LogLevel::Warn, "OpenBLAS cblas_sbgemm disagrees with cblas_sgemm; bf16 uses converted sgemm");
    ob.sbgemm = nullptr;
  }
}

}  // namespace

std::string openblas_coretype_for(const IsaFlags& f) {
  if (best_isa(f) == Isa::Avx512) return "SkylakeX";
  if (best_isa(f) == Isa::Avx2) return "Haswell";
  return {};
}

std::string coretype_to_set(const char* user_value, const IsaFlags& flags, int threads) {
  if (user_value != nullptr || threads != 1) return {};
  return openblas_coretype_for(flags);
}

const CoretypeAtLoad& openblas_coretype_at_load() { return coretype_at_load; }

int openblas_core_generation(std::string_view core_name) {
  for (const auto& entry : kCoreGenerations)
    if (iequals(core_name, entry.name)) return entry.generation;
  return -1;
}

int cpu_generation(const IsaFlags& f) {
  switch (best_isa(f)) {
    case Isa::Avx512:
      return 3;
    case Isa::Avx2:
      return 2;
    default:
      return f.avx && f.os_ymm ? 1 : 0;
  }
}

const OpenBlas& openblas() {
  static OpenBlas* instance = [] {
    auto* ob = new OpenBlas;  // never destroyed: OpenBLAS threads may outlive static destructors
    load(*ob);
    return ob;
  }();
  return *instance;
}

}  // namespace gpukern::cpu
