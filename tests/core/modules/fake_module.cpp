// A stand-in GPU backend module for the registry tests: built like libgpukern_cuda.so
// (it exports gpukern_module_api and links the core), and copied by the tests under the
// name of the backend it plays (libgpukern_cuda.so, libgpukern_hip.so), whose name it
// reports. What it does is chosen by GPUKERN_TEST_MODULE_<NAME> (e.g. ..._CUDA):
//   no_device            (default) no devices, reason "fake module: no device"
//   probe_throws_int     device_count throws an int (not a std::exception)
//   probe_throws_std     device_count throws std::runtime_error
//   entry_throws_int     gpukern_module_api itself throws an int
//   create_returns_null  one device; create returns nullptr
//   create_throws_int    one device; create throws an int
//   create_throws_error  one device; create throws core::Error(DeviceError)
// When loaded it appends "loaded <its file>" to the file GPUKERN_TEST_MODULE_MARKER
// names, so a test can tell whether the library loaded it at all.
#include "core/backend.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

/// This file's path, as the loader knows it.
std::string own_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_file), &info) == 0 || !info.dli_fname) return {};
  return info.dli_fname;
}

/// "cuda" for .../libgpukern_cuda.so.
std::string own_name() {
  std::string file = own_file();
  const auto slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  const std::string prefix = "libgpukern_", suffix = ".so";
  if (file.rfind(prefix, 0) != 0 || file.size() < prefix.size() + suffix.size()) return "fake";
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

std::string behaviour() {
  std::string variable = "GPUKERN_TEST_MODULE_";
  for (char c : own_name()) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* value = std::getenv(variable.c_str());
  return value && *value ? value : "no_device";
}

__attribute__((constructor)) void note_loaded() {
  const char* marker = std::getenv("GPUKERN_TEST_MODULE_MARKER");
  if (!marker || !*marker) return;
  if (std::FILE* f = std::fopen(marker, "a")) {
    std::fprintf(f, "loaded %s\n", own_file().c_str());
    std::fclose(f);
  }
}

int device_count(std::string* reason) {
  const std::string b = behaviour();
  if (b == "probe_throws_int") throw 42;
  if (b == "probe_throws_std") throw std::runtime_error("fake module: probe failed");
  if (b.rfind("create_", 0) == 0) return 1;
  *reason = "fake module: no device";
  return 0;
}

gpukern::core::Backend* create(int) {
  const std::string b = behaviour();
  if (b == "create_throws_int") throw 7;
  if (b == "create_throws_error")
    throw gpukern::core::Error(gpukern::core::Status::DeviceError, "fake module: device lost");
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const gpukern::core::ModuleApi* gpukern_module_api() {
  if (behaviour() == "entry_throws_int") throw 1;
  static const std::string name = own_name();
  static const gpukern::core::ModuleApi api = {gpukern::core::kModuleAbiVersion, name.c_str(),
                                               "fake module for the registry tests", device_count, create};
  return &api;
}
