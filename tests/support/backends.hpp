// What the tests need to know about backends: which exist and why some are unavailable,
// one opened Device per backend per process, device copies of host arrays, the CPU
// ISA check for the per-ISA conformance runs, and message matching.
#pragma once

#include "support/host_array.hpp"

#include <gpukern/gpukern.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpukern::test {

struct BackendState {
  std::string name;
  bool available = false;
  std::string reason;  // why not, when unavailable
};

/// Every backend the library knows (cpu, cuda, hip), in registry order, restricted to
/// the ones chosen with select_backends() when that was called.
std::vector<BackendState> known_backends();
/// Restricts known_backends() to a comma list ("cpu", "cuda,hip"); "" or "all" = all.
void select_backends(const std::string& names);
/// The skip message for an unavailable backend: "no CUDA device: <reason>".
std::string unavailable_message(const BackendState& backend);

/// One Device per backend name, opened on first use and kept for the whole process
/// (opening a GPU context per test would dominate the run time).
Device& shared_device(const std::string& backend);

/// "key=value;key=value;" (gk_device_info::extra) as a map.
std::map<std::string, std::string> parse_extra(const std::string& extra);
/// Splits on commas, semicolons, '|' and whitespace; drops empty items.
std::vector<std::string> split_list(const std::string& text);

/// Whether the CPU conformance run may proceed under the ISA that GPUKERN_CPU_ISA asks for.
struct IsaCheck {
  enum Kind { Run, Skip, Fail } kind = Run;
  std::string message;  // the reason for Skip/Fail; for Run, what is in use
};
/// Reads cpu_isa and cpu_isa_supported from the CPU device's info: Skip when the
/// machine lacks the requested ISA, Fail when the ISA in use is not the one requested
/// (or not reported at all).
IsaCheck check_requested_cpu_isa(const DeviceInfo& cpu_info);

/// Case-insensitive substring test.
bool contains_text(const std::string& text, const std::string& needle);
/// Case-insensitive whole-word test (word characters: letters, digits, '_').
bool contains_word(const std::string& text, const std::string& word);

/// A device buffer holding a copy of a host array.
class DeviceArray {
 public:
  DeviceArray(Device& device, const HostArray& host);
  void* data() const { return buffer_.data(); }
  void upload(const HostArray& host);
  /// Copies back into `host` (same size), after synchronizing the device.
  void download(HostArray& host);
  /// A host array of the same type and size holding the device contents.
  HostArray read(gk_dtype type, std::size_t count);

 private:
  Device* device_;
  Buffer buffer_;
};

}  // namespace gpukern::test
