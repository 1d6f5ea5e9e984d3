// Finds backend modules (GPUKERN_MODULE_PATH, then the directory of libgpukern.so,
// then the loader's search path), loads them with dlopen, checks their ABI version
// and asks for devices. Any failure makes that backend unavailable with a reason.
#include "core/registry.hpp"

#include "core/log.hpp"
#include "cpu/cpu_backend.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <sstream>

namespace gpukern::core {
namespace {

const char* const kGpuBackends[] = {"cuda", "hip"};

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

/// Candidate module paths, most specific first.
std::vector<std::string> module_candidates(const std::string& file) {
  std::vector<std::string> out;
  std::stringstream dirs(module_path());
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty()) out.push_back(dir + "/" + file);
  std::string own = this_library_dir();
  if (!own.empty()) out.push_back(own + "/" + file);
  return out;
}

BackendEntry probe_module(const std::string& name) {
  BackendEntry e;
  e.name = name;
  const std::string file = "libgpukern_" + name + ".so";
  void* handle = nullptr;
  std::string load_errors;
  for (const auto& path : module_candidates(file)) {
    if (!file_exists(path)) continue;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      e.module_file = path;
      break;
    }
    const char* err = dlerror();
    load_errors += std::string(load_errors.empty() ? "" : "; ") + (err ? err : path);
  }
  if (!handle && load_errors.empty()) {
    // Last chance: the dynamic loader's own search path.
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) e.module_file = file;
  }
  if (!handle) {
    e.reason = load_errors.empty()
                   ? "module " + file + " not found (libgpukern was built without " + name +
                         ", or set GPUKERN_MODULE_PATH)"
                   : "module " + file + " failed to load: " + load_errors;
    return e;
  }
  auto entry = reinterpret_cast<gpukern_module_api_fn>(dlsym(handle, GPUKERN_MODULE_ENTRY));
  if (!entry) {
    e.reason = "module " + e.module_file + " has no " GPUKERN_MODULE_ENTRY " entry point";
    return e;
  }
  const ModuleApi* api = entry();
  if (!api || api->abi_version != kModuleAbiVersion) {
    e.reason = "module " + e.module_file + " has ABI version " +
               std::to_string(api ? api->abi_version : -1) + ", this libgpukern needs " +
               std::to_string(kModuleAbiVersion) + " (mixed installations?)";
    return e;
  }
  e.note = api->note ? api->note : "";
  try {
    std::string reason;
    e.device_count = api->device_count(&reason);
    if (e.device_count <= 0) {
      e.device_count = 0;
      e.reason = reason.empty() ? "no " + name + " device" : reason;
    }
  } catch (const std::exception& ex) {
    e.device_count = 0;
    e.reason = std::string("probing devices failed: ") + ex.what();
  }
  e.api = e.device_count > 0 ? api : nullptr;
  // The module stays loaded for the life of the process (its code may be in use).
  return e;
}

std::vector<BackendEntry> probe_all() {
  std::vector<BackendEntry> out;
  for (const char* name : kGpuBackends) {
    out.push_back(probe_module(name));
    const auto& e = out.back();
    if (log_enabled(LogLevel::Debug))
      log_line(LogLevel::Debug, "backend " + e.name + ": " +
                                    (e.available() ? std::to_string(e.device_count) +
                                                         " device(s) via " + e.module_file
                                                   : "unavailable: " + e.reason));
  }
  BackendEntry cpu;
  cpu.name = "cpu";
  cpu.device_count = 1;
  out.push_back(cpu);
  return out;
}

std::string join_names(bool only_available) {
  std::string out;
  for (const auto& e : backends()) {
    if (only_available && !e.available()) continue;
    out += (out.empty() ? "" : ", ") + e.name;
  }
  return out;
}

}  // namespace

const std::vector<BackendEntry>& backends() {
  static const std::vector<BackendEntry> entries = probe_all();  // thread-safe init
  return entries;
}

std::string backend_names() { return join_names(false); }
std::string available_backend_names() { return join_names(true); }

OpenedBackend open_backend(const std::string& spec_in) {
  std::string spec = spec_in.empty() ? std::string("auto") : spec_in;
  for (char& c : spec) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string name = spec;
  int index = 0;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    const std::string num = spec.substr(colon + 1);
    char* end = nullptr;
    long v = std::strtol(num.c_str(), &end, 10);
    if (num.empty() || *end != '\0' || v < 0 || v > 1024)
      throw Error(Status::InvalidArgument,
                  "backend '" + spec_in + "': device index '" + num + "' is not a number");
    index = static_cast<int>(v);
  }
  const BackendEntry* chosen = nullptr;
  if (name == "auto") {
    for (const auto& e : backends())
      if (e.available()) {
        chosen = &e;
        break;
      }
  } else {
    for (const auto& e : backends())
      if (e.name == name) chosen = &e;
    if (!chosen)
      throw Error(Status::InvalidArgument, "unknown backend '" + spec_in +
                                               "'; valid backends: auto, " + backend_names());
    if (!chosen->available())
      throw Error(Status::Unavailable, "backend '" + chosen->name + "' is unavailable: " +
                                           chosen->reason + " (available: " +
                                           available_backend_names() + ")");
  }
  if (index >= chosen->device_count)
    throw Error(Status::InvalidArgument,
                "backend '" + spec_in + "': device index " + std::to_string(index) +
                    " out of range (" + std::to_string(chosen->device_count) + " device(s))");
  OpenedBackend out;
  out.name = chosen->name;
  out.index = index;
  if (chosen->api) {
    out.backend.reset(chosen->api->create(index));
    if (!out.backend)
      throw Error(Status::DeviceError, "backend '" + chosen->name + "' failed to open device " +
                                           std::to_string(index));
  } else {
    out.backend = cpu::create_backend();
  }
  return out;
}

}  // namespace gpukern::core
