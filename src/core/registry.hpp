// Backend registry: the built-in CPU backend and the GPU modules, found and probed
// once (thread-safe), each either available or unavailable with a reason.
#pragma once

#include "core/backend.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gpukern::core {

struct BackendEntry {
  std::string name;          // "cuda", "hip", "cpu" (auto's order)
  int device_count = 0;
  std::string reason;        // why unavailable (empty when available)
  std::string note;          // remark shown by gpukern-info
  std::string module_file;   // path of the loaded module ("" for cpu)
  const ModuleApi* api = nullptr;  // null for the built-in cpu backend
  bool available() const { return device_count > 0; }
};

/// All known backends, probed on first use.
const std::vector<BackendEntry>& backends();

/// Comma list of backend names, and of the available ones.
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
/// asked for explicitly → Unavailable with its reason and the available ones.
OpenedBackend open_backend(const std::string& spec);

}  // namespace gpukern::core
