// Backend registry: the built-in CPU backend and the GPU modules, each GPU module found
// and probed the first time its backend is needed (thread-safe), each backend either
// available or unavailable with a reason.
#pragma once

#include "core/backend.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gpukern::core {

struct BackendEntry {
  std::string name;  // "cuda", "hip", "cpu" (auto's order)
  int device_count = 0;
  std::string reason;              // why unavailable (empty when available)
  std::string note;                // remark shown by gpukern-info
  std::string module_file;         // path of the loaded module ("" for cpu)
  const ModuleApi* api = nullptr;  // null for the built-in cpu backend
  bool available() const { return device_count > 0; }
};

/// All known backends, in auto's order; probes every GPU module not probed yet.
std::vector<BackendEntry> backends();

/// Comma list of every backend name (probes nothing), and of the available ones.
std::string backend_names();
std::string available_backend_names();

/// An opened device: the backend object plus where it came from.
struct OpenedBackend {
  std::unique_ptr<Backend> backend;
  std::string name;  // "cuda"
  int index = 0;
};

/// Opens a spec: "auto", "cpu", "cuda", "cuda:1", "hip", "hip:0".
/// Unknown names → InvalidArgument listing the valid ones; an unavailable backend
/// asked for explicitly → Unavailable with its reason and the available ones; a device
/// that fails to open → DeviceError (or the module's own status) with the reason.
/// "cpu" loads no GPU module; "auto" takes the first of cuda, hip, cpu whose device
/// opens, saying at info level why it passed over the others.
OpenedBackend open_backend(const std::string& spec);

/// Checks a module file before it is loaded: empty when `path` looks like a shared
/// library this process can map (ELF header, class, byte order and machine of this
/// process, a dynamic section, every file-backed segment inside the file); otherwise
/// why not, e.g. "is truncated or damaged: segment 3 (PT_LOAD) ...". Loading a file
/// whose segments reach past its end would kill the process (SIGBUS) inside dlopen.
GK_CORE_API std::string check_module_file(const std::string& path);

}  // namespace gpukern::core
