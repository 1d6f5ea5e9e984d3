// Finds backend modules (GPUKERN_MODULE_PATH, then the directory of libgpukern.so, then
// LD_LIBRARY_PATH), checks each file before loading it, loads it with dlopen, checks its
// ABI version and name, and asks for devices. Each GPU backend is probed on its own, the
// first time it is needed: opening "cpu" loads no module at all. Any failure of a module
// (a damaged file, a failed load, an exception of any type from its code) makes that
// backend unavailable with the reason, and never reaches the other backends.
#include "core/registry.hpp"

#include "core/config.hpp"
#include "core/log.hpp"
#include "cpu/cpu_backend.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

namespace gpukern::core {
namespace {

// ---- the module file check ----

#if defined(__x86_64__)
constexpr int kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kHostMachine = EM_PPC64;
#else
constexpr int kHostMachine = -1;  // machine not checked
#endif
constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kHostByteOrder = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

using ElfHeader = ElfW(Ehdr);
using ProgramHeader = ElfW(Phdr);

/// Closes a file descriptor when it goes out of scope.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

/// Reads exactly `bytes` at `offset` (pread: never maps the file, so a short file is an
/// error here, not a SIGBUS).
bool read_exactly(int fd, void* out, std::size_t bytes, uint64_t offset) {
  auto* dst = static_cast<char*>(out);
  errno = 0;
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, dst, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

/// Why a read_exactly failed: the system's error, or a file that shrank meanwhile.
std::string read_failure() {
  return errno != 0 ? "cannot be read: " + std::string(std::strerror(errno))
                    : std::string("changed while it was being checked");
}

std::string segment_type_name(uint32_t type) {
  switch (type) {
    case PT_LOAD:
      return "PT_LOAD";
    case PT_DYNAMIC:
      return "PT_DYNAMIC";
    case PT_INTERP:
      return "PT_INTERP";
    case PT_NOTE:
      return "PT_NOTE";
    case PT_PHDR:
      return "PT_PHDR";
    case PT_TLS:
      return "PT_TLS";
    case PT_GNU_EH_FRAME:
      return "PT_GNU_EH_FRAME";
    default: {
      char text[24];
      std::snprintf(text, sizeof text, "type 0x%x", type);
      return text;
    }
  }
}

/// The ELF checks of check_module_file, on an open regular file of `size` bytes.
std::string check_elf(int fd, uint64_t size) {
  ElfHeader header{};
  if (size < sizeof header)
    return "is truncated: " + std::to_string(size) + " bytes, less than an ELF header (" +
           std::to_string(sizeof header) + " bytes)";
  if (!read_exactly(fd, &header, sizeof header, 0)) return read_failure();
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "is not an ELF file";
  const unsigned char file_class = header.e_ident[EI_CLASS];
  if (file_class != kHostClass)
    return std::string("is ") +
           (file_class == ELFCLASS32   ? "a 32-bit"
            : file_class == ELFCLASS64 ? "a 64-bit"
                                       : "an unknown-class") +
           " ELF file; this process is " + (kHostClass == ELFCLASS64 ? "64" : "32") + "-bit";
  if (header.e_ident[EI_DATA] != kHostByteOrder) return "has the other byte order than this machine";
  if (header.e_type != ET_DYN) return "is not a shared library (ELF type " + std::to_string(header.e_type) + ")";
  if (kHostMachine >= 0 && header.e_machine != kHostMachine)
    return "is built for another machine (ELF machine " + std::to_string(header.e_machine) +
           ", this process: " + std::to_string(kHostMachine) + ")";
  if (header.e_phentsize != sizeof(ProgramHeader) || header.e_phnum == 0 || header.e_phnum == PN_XNUM)
    return "has a damaged program header table (" + std::to_string(header.e_phnum) + " entries of " +
           std::to_string(header.e_phentsize) + " bytes)";
  const uint64_t table_bytes = uint64_t{header.e_phnum} * sizeof(ProgramHeader);
  if (header.e_phoff > size || table_bytes > size - header.e_phoff)
    return "is truncated: its program headers end at byte " + std::to_string(header.e_phoff + table_bytes) +
           ", the file has " + std::to_string(size) + " bytes";
  std::vector<ProgramHeader> segments(header.e_phnum);
  if (!read_exactly(fd, segments.data(), table_bytes, header.e_phoff)) return read_failure();
  const ProgramHeader* dynamic = nullptr;
  bool loadable = false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const ProgramHeader& s = segments[i];
    if (s.p_filesz > 0 && (s.p_offset > size || s.p_filesz > size - s.p_offset))
      return "is truncated or damaged: segment " + std::to_string(i) + " (" + segment_type_name(s.p_type) +
             ") needs bytes " + std::to_string(s.p_offset) + " to " + std::to_string(s.p_offset + s.p_filesz) +
             ", the file has " + std::to_string(size) + " bytes";
    if (s.p_type == PT_LOAD) {
      loadable = true;
      if (s.p_filesz > s.p_memsz)
        return "is damaged: segment " + std::to_string(i) + " (PT_LOAD) has more bytes in the file than in memory";
    }
    if (s.p_type == PT_DYNAMIC) dynamic = &s;
  }
  if (!loadable) return "has no loadable segment";
  if (!dynamic) return "has no dynamic section (not a shared library)";
  // The loader reads the dynamic section from the mapped file: it must lie inside the
  // file-backed part of a loadable segment.
  for (const ProgramHeader& s : segments)
    if (s.p_type == PT_LOAD && dynamic->p_vaddr >= s.p_vaddr && dynamic->p_vaddr - s.p_vaddr <= s.p_filesz &&
        dynamic->p_memsz <= s.p_filesz - (dynamic->p_vaddr - s.p_vaddr))
      return {};
  return "is damaged: its dynamic section lies outside every loadable segment";
}

// ---- finding and probing modules ----

constexpr std::array<const char*, 2> kGpuBackends = {"cuda", "hip"};

std::string this_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_library_dir), &info) == 0 || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// Directories searched for modules, most specific first.
std::vector<std::string> module_dirs(const std::string& module_path) {
  std::vector<std::string> out;
  auto add_list = [&](const std::string& list) {
    std::stringstream dirs(list);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  };
  add_list(module_path);
  add_list(this_library_dir());
  const char* loader_path = std::getenv("LD_LIBRARY_PATH");
  if (loader_path) add_list(loader_path);
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// Asks a loaded module for its API and devices. Every call into the module is guarded:
/// whatever it throws makes this backend unavailable with the reason.
void query_module(void* handle, BackendEntry& e) {
  const std::string where = "module " + e.module_file;
  try {
    auto entry = reinterpret_cast<gpukern_module_api_fn>(dlsym(handle, GPUKERN_MODULE_ENTRY));
    if (!entry) {
      e.reason = where + " has no " GPUKERN_MODULE_ENTRY " entry point";
      return;
    }
    const ModuleApi* api = entry();
    if (!api || api->abi_version != kModuleAbiVersion) {
      e.reason = where + " has ABI version " + std::to_string(api ? api->abi_version : -1) +
                 ", this libgpukern needs " + std::to_string(kModuleAbiVersion) + " (mixed installations?)";
      return;
    }
    if (!api->name || e.name != api->name || !api->device_count || !api->create) {
      e.reason =
          where + " is not a complete " + e.name + " module (it calls itself '" + (api->name ? api->name : "") + "')";
      return;
    }
    e.note = api->note ? api->note : "";
    std::string reason;
    const int count = api->device_count(&reason);
    if (count <= 0) {
      e.reason = reason.empty() ? "no " + e.name + " device" : reason;
      return;
    }
    e.device_count = count;
    e.api = api;
  } catch (const std::exception& ex) {
    e.reason = where + " failed while probing devices: " + ex.what();
  } catch (...) {
    e.reason = where + " failed while probing devices: it threw an exception that is not a std::exception";
  }
}

/// Looks for, checks and loads the module of backend `name`. Sets *loaded when dlopen
/// succeeded (the module then stays loaded for the life of the process: its code may
/// be in use).
BackendEntry probe_module(const std::string& name, const ModulePath& path, bool* loaded) {
  BackendEntry e;
  e.name = name;
  const std::string file = "libgpukern_" + name + ".so";
  const auto dirs = module_dirs(path.value);
  void* handle = nullptr;
  std::string problems;
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + file;
    if (!file_exists(candidate)) continue;
    const std::string bad = check_module_file(candidate);
    if (!bad.empty()) {
      problems += std::string(problems.empty() ? "" : "; ") + candidate + " " + bad;
      continue;
    }
    dlerror();
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      e.module_file = candidate;
      break;
    }
    const char* err = dlerror();
    problems += std::string(problems.empty() ? "" : "; ") + (err ? std::string(err) : candidate + ": dlopen failed");
  }
  if (!handle) {
    if (!problems.empty()) {
      e.reason = "module " + file + " not loaded: " + problems;
    } else {
      // Setting GPUKERN_MODULE_PATH helps only while it can still change.
      const std::string hint = path.fixed_by.empty()
                                   ? "libgpukern was built without " + name + ", or set GPUKERN_MODULE_PATH"
                                   : "libgpukern was built without " + name + "; GPUKERN_MODULE_PATH is fixed since " +
                                         path.fixed_by + " was loaded";
      e.reason = "module " + file + " not found (" + hint +
                 "; searched: " + (dirs.empty() ? std::string("no directory") : join(dirs)) + ")";
    }
    return e;
  }
  *loaded = true;
  query_module(handle, e);
  return e;
}

/// One GPU backend's probe state: probed at first need, again only while its module is
/// not loaded and the module path it was looked for with has changed.
struct Slot {
  std::mutex mutex;
  bool probed = false;
  bool loaded = false;
  ModulePath probed_with;
  BackendEntry entry;
};

std::array<Slot, kGpuBackends.size()>& slots() {
  static std::array<Slot, kGpuBackends.size()> all;
  return all;
}

BackendEntry gpu_backend(std::size_t i) {
  Slot& slot = slots()[i];
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.loaded) return slot.entry;
  with_module_path([&](const ModulePath& path) -> std::string {
    if (slot.probed && path.value == slot.probed_with.value &&
        path.fixed_by.empty() == slot.probed_with.fixed_by.empty())
      return {};
    bool loaded = false;
    slot.entry = probe_module(kGpuBackends[i], path, &loaded);
    slot.probed = true;
    slot.loaded = loaded;
    slot.probed_with = path;
    const BackendEntry& e = slot.entry;
    if (log_enabled(LogLevel::Debug))
      log_line(LogLevel::Debug, "backend " + e.name + ": " +
                                    (e.available() ? std::to_string(e.device_count) + " device(s) via " + e.module_file
                                                   : "unavailable: " + e.reason));
    return loaded ? e.module_file : std::string();
  });
  return slot.entry;
}

BackendEntry cpu_entry() {
  BackendEntry cpu;
  cpu.name = "cpu";
  cpu.device_count = 1;
  return cpu;
}

/// Opens device `index` of an available GPU backend; any failure is an Error with the
/// reason (the module's own status for an Error it threw, else DeviceError).
OpenedBackend open_gpu_device(const BackendEntry& e, int index) {
  const std::string what = "backend '" + e.name + "' failed to open device " + std::to_string(index) + ": ";
  OpenedBackend out;
  out.name = e.name;
  out.index = index;
  try {
    out.backend.reset(e.api->create(index));
  } catch (const Error& ex) {
    throw Error(ex.status(), what + ex.what());
  } catch (const std::exception& ex) {
    throw Error(Status::DeviceError, what + ex.what());
  } catch (...) {
    throw Error(Status::DeviceError, what + "the module threw an exception that is not a std::exception");
  }
  if (!out.backend) throw Error(Status::DeviceError, what + "the module returned no device");
  return out;
}

OpenedBackend open_cpu() {
  OpenedBackend out;
  out.name = "cpu";
  out.index = 0;
  out.backend = cpu::create_backend();
  return out;
}

Error index_out_of_range(const std::string& spec, int index, const BackendEntry& e) {
  return Error(Status::InvalidArgument, "backend '" + spec + "': device index " + std::to_string(index) +
                                            " out of range (" + e.name + " has " + std::to_string(e.device_count) +
                                            " device(s))");
}

/// auto: the first of cuda, hip, cpu whose device `index` opens.
OpenedBackend open_auto(const std::string& spec, int index) {
  for (std::size_t i = 0; i < kGpuBackends.size(); ++i) {
    const BackendEntry e = gpu_backend(i);
    if (!e.available()) continue;  // the probe's debug line says why
    std::string why;
    if (index >= e.device_count) {
      why = index_out_of_range(spec, index, e).what();
    } else {
      try {
        return open_gpu_device(e, index);
      } catch (const Error& ex) {
        why = ex.what();
      }
    }
    if (log_enabled(LogLevel::Info)) log_line(LogLevel::Info, "auto passes over " + e.name + ": " + why);
  }
  if (index >= 1) throw index_out_of_range(spec, index, cpu_entry());
  return open_cpu();
}

}  // namespace

std::string check_module_file(const std::string& path) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return "cannot be read: " + std::string(std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return "cannot be read: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  return check_elf(file.fd, static_cast<uint64_t>(st.st_size));
}

std::vector<BackendEntry> backends() {
  std::vector<BackendEntry> out;
  for (std::size_t i = 0; i < kGpuBackends.size(); ++i) out.push_back(gpu_backend(i));
  out.push_back(cpu_entry());
  return out;
}

std::string backend_names() {
  std::string out;
  for (const char* name : kGpuBackends) out += std::string(name) + ", ";
  return out + "cpu";
}

std::string available_backend_names() {
  std::string out;
  for (const auto& e : backends())
    if (e.available()) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

OpenedBackend open_backend(const std::string& spec_in) {
  std::string spec = spec_in.empty() ? std::string("auto") : spec_in;
  for (char& c : spec) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string name = spec;
  int index = 0;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    const std::string num = spec.substr(colon + 1);
    long long v = 0;
    if (!parse_whole_number(num, 1024, &v))
      throw Error(Status::InvalidArgument,
                  "backend '" + spec_in + "': device index '" + num + "' is not a whole number from 0 to 1024");
    index = static_cast<int>(v);
  }
  if (name == "auto") return open_auto(spec_in, index);
  if (name == "cpu") {
    if (index >= 1) throw index_out_of_range(spec_in, index, cpu_entry());
    return open_cpu();
  }
  for (std::size_t i = 0; i < kGpuBackends.size(); ++i) {
    if (name != kGpuBackends[i]) continue;
    const BackendEntry e = gpu_backend(i);
    if (!e.available())
      throw Error(Status::Unavailable, "backend '" + e.name + "' is unavailable: " + e.reason +
                                           " (available: " + available_backend_names() + ")");
    if (index >= e.device_count) throw index_out_of_range(spec_in, index, e);
    return open_gpu_device(e, index);
  }
  throw Error(Status::InvalidArgument, "unknown backend '" + spec_in + "'; valid backends: auto, " + backend_names());
}

}  // namespace gpukern::core
