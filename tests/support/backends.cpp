// Backend enumeration, shared devices, ISA checks and message matching; see backends.hpp.
#include "support/backends.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace gpukern::test {
namespace {

std::vector<std::string>& selection() {
  static std::vector<std::string> names;
  return names;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

void select_backends(const std::string& names) {
  selection().clear();
  if (names.empty() || names == "all") return;
  selection() = split_list(names);
}

std::vector<BackendState> known_backends() {
  std::vector<BackendState> out;
  for (const auto& info : list_backends()) {
    BackendState b;
    b.name = info.name;
    b.available = info.available != 0;
    b.reason = info.reason;
    const auto& chosen = selection();
    if (!chosen.empty() && std::find(chosen.begin(), chosen.end(), b.name) == chosen.end()) continue;
    out.push_back(b);
  }
  return out;
}

std::string unavailable_message(const BackendState& backend) {
  const std::string prefix = "no " + upper(backend.name) + " device";
  if (backend.reason.rfind(prefix, 0) == 0) return backend.reason;  // already says it
  return prefix + ": " + (backend.reason.empty() ? std::string("(no reason given)") : backend.reason);
}

Device& shared_device(const std::string& backend) {
  static std::mutex mutex;
  // Never destroyed: closing GPU contexts during exit races the runtime's own teardown.
  static auto* devices = new std::map<std::string, std::unique_ptr<Device>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*devices)[backend];
  if (!slot) slot = std::make_unique<Device>(backend);
  return *slot;
}

std::map<std::string, std::string> parse_extra(const std::string& extra) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < extra.size()) {
    std::size_t end = extra.find(';', start);
    if (end == std::string::npos) end = extra.size();
    const std::string item = extra.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text) {
    if (c == ',' || c == ';' || c == '|' || std::isspace(static_cast<unsigned char>(c))) {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

IsaCheck check_requested_cpu_isa(const DeviceInfo& cpu_info) {
  const auto extra = parse_extra(cpu_info.extra);
  const char* env = std::getenv("GPUKERN_CPU_ISA");
  const std::string requested = lower(env ? env : "auto");
  IsaCheck check;
  auto active_it = extra.find("cpu_isa");
  auto supported_it = extra.find("cpu_isa_supported");
  if (active_it == extra.end() || supported_it == extra.end()) {
    check.kind = IsaCheck::Fail;
    check.message =
        "the CPU device info does not report cpu_isa and cpu_isa_supported "
        "(extra = \"" +
        std::string(cpu_info.extra) + "\")";
    return check;
  }
  const std::string active = lower(active_it->second);
  const auto supported = split_list(lower(supported_it->second));
  const bool active_supported = std::find(supported.begin(), supported.end(), active) != supported.end();
  if (requested.empty() || requested == "auto") {
    if (!active_supported) {
      check.kind = IsaCheck::Fail;
      check.message =
          "GPUKERN_CPU_ISA=auto uses " + active + ", which is not in the supported list " + supported_it->second;
    } else {
      check.message = "GPUKERN_CPU_ISA=auto uses " + active;
    }
    return check;
  }
  if (std::find(supported.begin(), supported.end(), requested) == supported.end()) {
    check.kind = IsaCheck::Skip;
    check.message = "this CPU lacks " + requested + " (cpu_isa_supported = " + supported_it->second +
                    "); GPUKERN_CPU_ISA=" + requested + " not tested here";
    return check;
  }
  if (active != requested) {
    check.kind = IsaCheck::Fail;
    check.message = "GPUKERN_CPU_ISA=" + requested + " was requested and the CPU supports it, " +
                    "but the CPU backend reports cpu_isa=" + active;
    return check;
  }
  check.message = "GPUKERN_CPU_ISA=" + requested + " in use";
  return check;
}

bool contains_text(const std::string& text, const std::string& needle) {
  return lower(text).find(lower(needle)) != std::string::npos;
}

bool contains_word(const std::string& text, const std::string& word) {
  const std::string t = lower(text), w = lower(word);
  for (std::size_t pos = t.find(w); pos != std::string::npos; pos = t.find(w, pos + 1)) {
    const bool left = pos == 0 || !is_word_char(t[pos - 1]);
    const bool right = pos + w.size() == t.size() || !is_word_char(t[pos + w.size()]);
    if (left && right) return true;
  }
  return false;
}

DeviceArray::DeviceArray(Device& device, const HostArray& host)
    : device_(&device), buffer_(device.alloc(host.bytes())) {
  upload(host);
}

void DeviceArray::upload(const HostArray& host) {
  device_->upload(buffer_, host.data(), host.bytes());
  device_->synchronize();
}

void DeviceArray::download(HostArray& host) {
  device_->synchronize();
  device_->download(host.data(), buffer_, host.bytes());
}

HostArray DeviceArray::read(gk_dtype type, std::size_t count) {
  HostArray host(type, count);
  download(host);
  return host;
}

}  // namespace gpukern::test
