// Host arrays with exact bit control; see host_array.hpp.
#include "support/host_array.hpp"

#include "core/half.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace gpukern::test {

using core::bf16_to_float;
using core::f16_to_float;
using core::float_to_bf16;
using core::float_to_f16;

const char* dtype_label(gk_dtype type) {
  switch (type) {
    case GK_F32:
      return "f32";
    case GK_F16:
      return "f16";
    case GK_BF16:
      return "bf16";
  }
  return "unknown-dtype";
}

std::size_t element_size(gk_dtype type) { return type == GK_F32 ? 4 : 2; }

double round_to(gk_dtype type, double v) {
  const float f = static_cast<float>(v);
  switch (type) {
    case GK_F16:
      return f16_to_float(float_to_f16(f));
    case GK_BF16:
      return bf16_to_float(float_to_bf16(f));
    default:
      return f;
  }
}

double unit_roundoff(gk_dtype type) {
  switch (type) {
    case GK_F16:
      return 1.0 / 2048;  // 10 stored mantissa bits
    case GK_BF16:
      return 1.0 / 256;  // 7 stored mantissa bits
    default:
      return 1.0 / 16777216;  // 23 stored mantissa bits
  }
}

uint32_t pattern_bits(gk_dtype type, Pattern pattern) {
  switch (pattern) {
    case Pattern::Poison:
      return type == GK_F32 ? 0x7fc5a5a5u : type == GK_F16 ? 0x7e5au : 0x7fe5u;
    case Pattern::Padding:
      return type == GK_F32 ? 0x7fc0beefu : type == GK_F16 ? 0x7e11u : 0x7fc1u;
    case Pattern::Guard:  // finite: f32 -2.87e-16, f16 -0.0221, bf16 -2.86e-16
      return type == GK_F32 ? 0xa5a5a5a5u : 0xa5a5u;
  }
  return 0;
}

HostArray::HostArray(gk_dtype type, std::size_t count)
    : type_(type), count_(count), bytes_(count * element_size(type)) {}

double HostArray::get(std::size_t i) const {
  const uint32_t b = bits(i);
  switch (type_) {
    case GK_F16:
      return f16_to_float(static_cast<uint16_t>(b));
    case GK_BF16:
      return bf16_to_float(static_cast<uint16_t>(b));
    default:
      return core::bits_float(b);
  }
}

void HostArray::set(std::size_t i, double v) {
  const float f = static_cast<float>(v);
  switch (type_) {
    case GK_F16:
      set_bits(i, float_to_f16(f));
      break;
    case GK_BF16:
      set_bits(i, float_to_bf16(f));
      break;
    default:
      set_bits(i, core::float_bits(f));
      break;
  }
}

uint32_t HostArray::bits(std::size_t i) const {
  if (type_ == GK_F32) {
    uint32_t u;
    std::memcpy(&u, bytes_.data() + 4 * i, 4);
    return u;
  }
  uint16_t h;
  std::memcpy(&h, bytes_.data() + 2 * i, 2);
  return h;
}

void HostArray::set_bits(std::size_t i, uint32_t bits) {
  if (type_ == GK_F32) {
    std::memcpy(bytes_.data() + 4 * i, &bits, 4);
  } else {
    const uint16_t h = static_cast<uint16_t>(bits);
    std::memcpy(bytes_.data() + 2 * i, &h, 2);
  }
}

void HostArray::fill(Pattern pattern) {
  const uint32_t b = pattern_bits(type_, pattern);
  for (std::size_t i = 0; i < count_; ++i) set_bits(i, b);
}

bool Window::contains(std::size_t i) const {
  if (rows == 0 || cols == 0) return false;
  const int64_t rel = static_cast<int64_t>(i) - offset;
  if (rel < 0 || rel >= (rows - 1) * ld + cols) return false;
  return rel % ld < cols;
}

Window make_window(int64_t rows, int64_t cols, int64_t ld, int64_t guard) {
  Window w;
  w.rows = rows;
  w.cols = cols;
  w.ld = ld;
  w.offset = guard;
  const int64_t extent = (rows > 0 && cols > 0) ? (rows - 1) * ld + cols : 0;
  w.total = static_cast<std::size_t>(std::max<int64_t>(1, guard + extent + guard));
  return w;
}

bool BatchWindows::contains(std::size_t i) const {
  for (int64_t b = 0; b < (stride == 0 ? 1 : items); ++b)
    if (item(b).contains(i)) return true;
  return false;
}

BatchWindows make_batch_windows(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t items, int64_t guard) {
  BatchWindows w;
  w.first = make_window(rows, cols, ld, guard);
  w.stride = stride;
  w.items = items;
  if (items > 1) w.first.total += static_cast<std::size_t>((items - 1) * stride);
  return w;
}

namespace {

/// `outside_of`: a Window or BatchWindows whose cells may change (nullptr: none may).
template <class Windows>
std::string describe_changes(const HostArray& before, const HostArray& after, const Windows* outside_of) {
  if (before.size() != after.size()) return "buffer sizes differ";
  int64_t changed = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (outside_of && outside_of->contains(i)) continue;
    if (before.bits(i) == after.bits(i)) continue;
    if (++changed <= 4)
      first << " [cell " << i << ": 0x" << std::hex << before.bits(i) << " -> 0x" << after.bits(i) << std::dec << "]";
  }
  if (changed == 0) return {};
  std::ostringstream out;
  out << changed << " cell(s) changed" << (outside_of ? " outside the output window" : "") << ", first:" << first.str();
  return out.str();
}

}  // namespace

std::string changes_outside(const HostArray& before, const HostArray& after, const Window& w) {
  return describe_changes(before, after, &w);
}

std::string changes_outside(const HostArray& before, const HostArray& after, const BatchWindows& w) {
  return describe_changes(before, after, &w);
}

std::string changes_anywhere(const HostArray& before, const HostArray& after) {
  return describe_changes<Window>(before, after, nullptr);
}

int64_t count_inside(const HostArray& array, const Window& w, Pattern pattern) {
  const uint32_t b = pattern_bits(array.type(), pattern);
  int64_t count = 0;
  for (int64_t r = 0; r < w.rows; ++r)
    for (int64_t c = 0; c < w.cols; ++c) count += array.bits(w.index(r, c)) == b;
  return count;
}

}  // namespace gpukern::test
