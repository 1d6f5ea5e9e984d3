// Host-side arrays of one storage type (f32, f16, bf16) kept as raw bytes, so tests can
// write exact bit patterns (poison, guards), read values back as doubles, and compare
// buffers bit for bit; plus the layout of a matrix embedded in a larger, guarded buffer.
#pragma once

#include <gpukern/gpukern.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpukern::test {

/// "f32", "f16", "bf16".
const char* dtype_label(gk_dtype type);
/// Bytes per element.
std::size_t element_size(gk_dtype type);
/// v rounded to the storage type and widened back (what the library will read).
double round_to(gk_dtype type, double v);
/// Unit roundoff of the storage type (half an ulp at 1): 2^-24, 2^-11, 2^-8.
double unit_roundoff(gk_dtype type);

/// Bit patterns written by the tests, one per role. All three are NaNs with distinct
/// payloads (so a read of any of them poisons a result), except the guard, which is a
/// finite value (so a kernel that scales it by beta would change it visibly).
enum class Pattern {
  Poison,   // output cells before a beta = 0 call: must all be overwritten
  Padding,  // input cells the call must not read (row padding, cells around A/B/x)
  Guard,    // output-buffer cells outside the output window: must stay bit-identical
};
uint32_t pattern_bits(gk_dtype type, Pattern pattern);

class HostArray {
 public:
  HostArray() = default;
  HostArray(gk_dtype type, std::size_t count);

  gk_dtype type() const { return type_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  /// The stored value, exactly (f16/bf16 widen exactly to double).
  double get(std::size_t i) const;
  /// Stores v rounded to nearest even in the storage type.
  void set(std::size_t i, double v);
  /// Raw bits (low 16 bits for f16/bf16).
  uint32_t bits(std::size_t i) const;
  void set_bits(std::size_t i, uint32_t bits);
  void fill(Pattern pattern);

  bool operator==(const HostArray& other) const { return type_ == other.type_ && bytes_ == other.bytes_; }

 private:
  gk_dtype type_ = GK_F32;
  std::size_t count_ = 0;
  std::vector<unsigned char> bytes_;
};

/// A rows x cols matrix with leading dimension ld, stored at element `offset` of a
/// buffer of `total` elements: `offset` guard cells before it, at least as many after,
/// and ld - cols padding cells after every row.
struct Window {
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t offset = 0;
  std::size_t total = 0;

  std::size_t index(int64_t row, int64_t col) const { return static_cast<std::size_t>(offset + row * ld + col); }
  bool contains(std::size_t i) const;
};

/// The window for rows x cols with leading dimension ld and `guard` cells on each side.
/// The buffer never has zero elements (an empty matrix still gets its guards).
Window make_window(int64_t rows, int64_t cols, int64_t ld, int64_t guard);

/// The windows of `items` batch items in one buffer: item b is `first` moved b * stride
/// elements on (stride 0: every item is the same window, a broadcast operand). first.total
/// covers every item plus the guard cells after the last.
struct BatchWindows {
  Window first;
  int64_t stride = 0, items = 1;

  Window item(int64_t b) const {
    Window w = first;
    w.offset += b * stride;
    return w;
  }
  /// Whether cell i belongs to any item.
  bool contains(std::size_t i) const;
};

/// `items` rows x cols windows with leading dimension ld, `stride` elements apart, with
/// `guard` cells before the first and after the last.
BatchWindows make_batch_windows(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t items, int64_t guard);

/// Fills every cell of `array` outside `w` with `pattern`, and every cell inside with
/// what `inside` returns for (row, col).
template <class F>
void fill_window(HostArray& array, const Window& w, Pattern outside, F&& inside) {
  array.fill(outside);
  for (int64_t r = 0; r < w.rows; ++r)
    for (int64_t c = 0; c < w.cols; ++c) array.set(w.index(r, c), inside(r, c));
}

/// "" when every cell outside the window is bit-identical in `before` and `after`;
/// otherwise how many changed and where the first few are.
std::string changes_outside(const HostArray& before, const HostArray& after, const Window& w);
/// The same for cells outside every item of a batch.
std::string changes_outside(const HostArray& before, const HostArray& after, const BatchWindows& w);
/// "" when the arrays are bit-identical; otherwise how many cells changed and where.
std::string changes_anywhere(const HostArray& before, const HostArray& after);
/// Cells inside the window that still hold `pattern` (never written).
int64_t count_inside(const HostArray& array, const Window& w, Pattern pattern);

}  // namespace gpukern::test
