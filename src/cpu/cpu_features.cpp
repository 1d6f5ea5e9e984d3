// Host CPU detection: cpuid + xgetbv for the instruction-set paths, sysfs (then sysconf)
// for cache sizes, sched affinity for the usable CPUs, a dependent-add chain for the clock.
#include "cpu/cpu_features.hpp"

#include <cpuid.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace gpukern::cpu {
namespace {

struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf = 0) {
  CpuidRegs r;
  // __get_cpuid_count checks the maximum leaf and leaves zeros when it is not there.
  __get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx);
  return r;
}

bool bit(unsigned value, int index) { return ((value >> index) & 1u) != 0; }

/// XCR0: which register states the OS saves. Only valid when cpuid reports OSXSAVE.
std::uint64_t read_xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\n");
  return s.substr(first, last - first + 1);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

/// "48K", "1024K", "32M" -> bytes; 0 when unparsable.
std::size_t parse_size(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  std::size_t scale = 1;
  if (end && (*end == 'K' || *end == 'k')) scale = 1024;
  if (end && (*end == 'M' || *end == 'm')) scale = 1024 * 1024;
  return static_cast<std::size_t>(v) * scale;
}

std::string brand_string() {
  if (cpuid(0x80000000u).eax < 0x80000004u) return {};
  char text[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const CpuidRegs r = cpuid(0x80000002u + i);
    const unsigned words[4] = {r.eax, r.ebx, r.ecx, r.edx};
    for (int w = 0; w < 4; ++w)
      for (int b = 0; b < 4; ++b) text[i * 16 + w * 4 + b] = static_cast<char>(words[w] >> (8 * b));
  }
  return trim(text);
}

std::string proc_cpuinfo_value(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, std::char_traits<char>::length(key), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return trim(line.substr(colon + 1));
  }
  return {};
}

/// sysfs first: glibc's sysconf reports the L3 of the whole package (or worse, in VMs).
CacheSizes detect_caches() {
  CacheSizes c;
  bool found_sysfs = false;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_first_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_first_line(dir + "type");
    const std::size_t size = parse_size(read_first_line(dir + "size"));
    if (size == 0 || type == "Instruction") continue;
    found_sysfs = true;
    if (level == "1") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
  }
  if (!found_sysfs) {
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE),
               l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l1 > 0) c.l1d = static_cast<std::size_t>(l1);
    if (l2 > 0) c.l2 = static_cast<std::size_t>(l2);
    if (l3 > 0) c.l3 = static_cast<std::size_t>(l3);
  }
  return c;
}

int count_allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

/// SMT ways from cpu0's sibling list ("0-1", "0,64", "0"): the number of CPUs named.
int smt_ways() {
  const std::string list = read_first_line("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
  if (list.empty()) return 1;
  int ways = 0;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos)
      ++ways;
    else
      ways += std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
  }
  return std::max(1, ways);
}

CpuFeatures detect() {
  CpuFeatures f;
  f.flags = detect_isa_flags();
  f.best = best_isa(f.flags);
  const CpuidRegs v = cpuid(0);
  char vendor[13] = {};
  for (int b = 0; b < 4; ++b) {
    vendor[b] = static_cast<char>(v.ebx >> (8 * b));
    vendor[4 + b] = static_cast<char>(v.edx >> (8 * b));
    vendor[8 + b] = static_cast<char>(v.ecx >> (8 * b));
  }
  f.vendor = vendor;
  f.name = brand_string();
  if (f.name.empty()) f.name = proc_cpuinfo_value("model name");
  if (f.name.empty()) f.name = "x86-64 CPU";
  f.caches = detect_caches();
  f.logical_cpus = count_allowed_cpus();
  f.physical_cores = std::max(1, f.logical_cpus / smt_ways());
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) f.memory_bytes = static_cast<std::uint64_t>(pages) * page;
  return f;
}

/// One add per cycle: each add depends on the previous one (1-cycle latency on every
/// x86-64 core since the P6), so adds / seconds is the clock of the core we run on.
double time_dependent_adds_mhz() {
  constexpr long kIterations = 100'000;  // x 10 adds = 1 M cycles, about 0.3 ms at 3 GHz
  std::uint64_t x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i) {
    __asm__ volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(x));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return seconds > 0 ? static_cast<double>(kIterations) * 10.0 / seconds / 1e6 : 0.0;
}

}  // namespace

IsaFlags detect_isa_flags() {
  IsaFlags f;
  const unsigned max_leaf = cpuid(0).eax;
  if (max_leaf < 1) return f;
  const CpuidRegs l1 = cpuid(1);
  f.fma = bit(l1.ecx, 12);
  f.osxsave = bit(l1.ecx, 27);
  f.avx = bit(l1.ecx, 28);
  f.f16c = bit(l1.ecx, 29);
  if (max_leaf >= 7) {
    const CpuidRegs l7 = cpuid(7, 0);
    f.avx2 = bit(l7.ebx, 5);
    f.avx512f = bit(l7.ebx, 16);
    f.avx512dq = bit(l7.ebx, 17);
    f.avx512bw = bit(l7.ebx, 30);
    f.avx512vl = bit(l7.ebx, 31);
    f.amx_bf16 = bit(l7.edx, 22);
    if (l7.eax >= 1) f.avx512_bf16 = bit(cpuid(7, 1).eax, 5);
  }
  if (f.osxsave) {
    const std::uint64_t xcr0 = read_xcr0();
    f.os_ymm = (xcr0 & 0x6u) == 0x6u;    // bit 1 SSE (xmm), bit 2 AVX (ymm upper halves)
    f.os_zmm = (xcr0 & 0xe6u) == 0xe6u;  // + bit 5 opmask, 6 zmm_hi256, 7 hi16_zmm
  }
  return f;
}

Isa best_isa(const IsaFlags& f) {
  const bool avx2_path = f.avx && f.avx2 && f.fma && f.f16c && f.osxsave && f.os_ymm;
  if (!avx2_path) return Isa::Scalar;
  const bool avx512_path = f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.os_zmm;
  return avx512_path ? Isa::Avx512 : Isa::Avx2;
}

Isa capped_isa(Isa best, core::CpuIsa cap) {
  Isa limit = Isa::Avx512;
  switch (cap) {
    case core::CpuIsa::Scalar:
      limit = Isa::Scalar;
      break;
    case core::CpuIsa::Avx2:
      limit = Isa::Avx2;
      break;
    case core::CpuIsa::Avx512:
    case core::CpuIsa::Auto:
      limit = Isa::Avx512;
      break;
  }
  return static_cast<Isa>(std::min(static_cast<int>(best), static_cast<int>(limit)));
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

int measured_clock_mhz() {
  static const int mhz = [] {
    // Many short trials, keeping the fastest: on a busy machine most trials are cut by
    // preemption, and a 0.3 ms trial often escapes it.
    double best = 0;
    for (int trial = 0; trial < 40; ++trial) best = std::max(best, time_dependent_adds_mhz());
    const double reported = std::atof(proc_cpuinfo_value("cpu MHz").c_str());
    const double max_khz = std::atof(read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").c_str());
    return static_cast<int>(std::max({best, reported, max_khz / 1000.0}) + 0.5);
  }();
  return mhz;
}

Isa active_isa() { return capped_isa(cpu_features().best, core::cpu_isa_cap()); }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    default:
      return "scalar";
  }
}

std::string supported_isa_list(Isa best) {
  std::string out;
  for (int i = static_cast<int>(best); i >= 0; --i) {
    if (!out.empty()) out += ",";
    out += isa_name(static_cast<Isa>(i));
  }
  return out;
}

int resolved_threads() {
  const int requested = core::num_threads();
  return requested > 0 ? requested : cpu_features().logical_cpus;
}

}  // namespace gpukern::cpu
