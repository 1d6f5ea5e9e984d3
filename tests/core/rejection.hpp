// Shared by the argument tests: device buffers filled with a known byte pattern (so a
// rejected call can be checked to have written nothing, anywhere in them), the list of
// available backends to run on, and the check that a call was rejected with the named
// status and a message naming the argument.
#pragma once

#include "support/backends.hpp"

#include <gpukern/gpukern.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gpukern::test {

/// Stores `value` in an enum field of a C descriptor as its bytes, the way C code can:
/// a C++ cast of an out-of-range value to the enum type would itself be undefined.
template <class E>
void set_raw(E& field, int32_t value) {
  static_assert(sizeof(E) == sizeof value, "C enums are int-sized");
  std::memcpy(&field, &value, sizeof value);
}

/// `ptr` moved by `bytes` (before it when negative), as a writable pointer.
inline void* byte_offset(const void* ptr, std::ptrdiff_t bytes) {
  return const_cast<char*>(static_cast<const char*>(ptr)) + bytes;
}

/// Names of the backends that can be opened here ("cpu" always).
inline std::vector<std::string> available_backend_names() {
  std::vector<std::string> out;
  for (const auto& b : known_backends())
    if (b.available) out.push_back(b.name);
  return out;
}

/// gtest's name generator for a backend-name parameter: the name itself.
struct BackendName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const { return info.param; }
};

/// A device buffer of `bytes` filled with 0xa5; `untouched()` says whether it still is.
class PatternedBuffer {
 public:
  PatternedBuffer(Device& device, std::size_t bytes) : device_(&device), bytes_(bytes), buffer_(device.alloc(bytes)) {
    std::vector<unsigned char> pattern(bytes, kByte);
    device.upload(buffer_, pattern.data(), bytes);
    device.synchronize();
  }
  void* data() const { return buffer_.data(); }
  /// A pointer `elements` elements of `element_bytes` into the buffer.
  void* at(std::size_t elements, std::size_t element_bytes) const {
    return static_cast<char*>(buffer_.data()) + elements * element_bytes;
  }
  /// "" when every byte still holds the pattern, else how many bytes changed.
  std::string changes() const {
    device_->synchronize();
    std::vector<unsigned char> now(bytes_);
    device_->download(now.data(), buffer_, bytes_);
    std::size_t changed = 0;
    for (unsigned char b : now) changed += b != kByte;
    return changed ? std::to_string(changed) + " byte(s) changed" : std::string();
  }

 private:
  static constexpr unsigned char kByte = 0xa5;
  Device* device_;
  std::size_t bytes_;
  Buffer buffer_;
};

/// Expects `status` == `expected` and, for failures, a message (gk_last_error) that
/// contains at least one of `any_word` as a whole word (case-insensitive). Returns the message.
inline std::string expect_status(gk_status status, gk_status expected, const std::vector<const char*>& any_word) {
  const std::string message = status == GK_SUCCESS ? std::string() : gk_last_error();
  EXPECT_EQ(status, expected) << "got " << gk_status_name(status) << " (\"" << message << "\"), expected "
                              << gk_status_name(expected);
  if (expected != GK_SUCCESS && status != GK_SUCCESS) {
    EXPECT_FALSE(message.empty()) << "no message";
    bool named = any_word.size() == 0;
    std::string wanted;
    for (const char* w : any_word) {
      named = named || contains_word(message, w);
      wanted += std::string(wanted.empty() ? "" : " or ") + "'" + w + "'";
    }
    EXPECT_TRUE(named) << "the message \"" << message << "\" does not name " << wanted;
  }
  return message;
}

/// Expects a call that forced the rung `name` (unknown) to fail with InvalidArgument and a
/// message that names it and lists every rung of `op` on `dev`.
inline void expect_unknown_rung_rejected(gk_status status, Device& dev, gk_op op, const char* name) {
  const std::string message = expect_status(status, GK_INVALID_ARGUMENT, {});
  EXPECT_TRUE(contains_text(message, name)) << message;
  for (const auto& rung : dev.variants(op))
    EXPECT_TRUE(contains_word(message, rung.name)) << "message does not list '" << rung.name << "': " << message;
}

}  // namespace gpukern::test
