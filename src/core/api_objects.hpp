// The objects the C API hands out (handles, timers, gk_malloc blocks) and the registry
// of the live ones, consulted before every use.
//
// gk_handle and gk_timer values are tokens, a tag and a serial number that is never
// reused, not addresses: the library looks them up here and never dereferences what the
// application passes, so a closed, destroyed, never-opened or made-up value is a named
// error, and a stale value can never reach an object opened later. gk_free is checked
// against the blocks the handle's gk_malloc returned. One mutex guards the tables; each
// call holds a shared_ptr to its object, so a gk_close on another thread cannot destroy
// a backend under a running call.
#pragma once

#include <gpukern/gpukern.h>

#include "core/backend.hpp"
#include "core/dispatch.hpp"
#include "core/registry.hpp"

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

/// What a gk_handle stands for: an opened backend device.
struct gk_handle_s {
  gpukern::core::OpenedBackend opened;
  std::unique_ptr<gpukern::core::Dispatch> dispatch;  // the ladders of `opened`, read once
  std::mutex mutex;                                   // guards the last-variant names
  std::string last_gemm, last_softmax;
};

/// What a gk_timer stands for. start/stop/elapsed of one timer are serialized by `mutex`,
/// which also guards the two flags that say whether elapsed_ms has a start and a stop.
struct gk_timer_s {
  std::shared_ptr<gk_handle_s> handle;  // first member: the backend outlives the timer
  std::unique_ptr<gpukern::core::Timer> timer;
  std::mutex mutex;
  bool started = false, stopped = false;
};

namespace gpukern::core {

static_assert(sizeof(void*) == 8, "handle tokens take the top 16 bits of a 64-bit value");

/// An open handle for the length of one API call: keeps the handle's backend alive even
/// if another thread closes the handle meanwhile.
class LiveHandle {
 public:
  explicit LiveHandle(std::shared_ptr<gk_handle_s> handle) : handle_(std::move(handle)) {}
  gk_handle_s* operator->() const noexcept { return handle_.get(); }
  const std::shared_ptr<gk_handle_s>& shared() const noexcept { return handle_; }

 private:
  std::shared_ptr<gk_handle_s> handle_;
};

/// What gk_close takes out of the registry: the handle and what it still owned.
struct ClosedHandle {
  std::shared_ptr<gk_handle_s> handle;
  std::vector<void*> blocks;                        // to free through the handle's backend
  std::vector<std::shared_ptr<gk_timer_s>> timers;  // destroyed before the backend
};

class LiveObjects {
 public:
  /// The process's registry. Never destroyed: handles still open at exit are left to
  /// the operating system, as before (closing GPU contexts during exit races the runtime).
  static LiveObjects& instance() {
    static LiveObjects* objects = new LiveObjects();
    return *objects;
  }

  gk_handle add_handle(std::shared_ptr<gk_handle_s> handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t token = next_token(kHandleTag);
    handles_.emplace(token, std::move(handle));
    return reinterpret_cast<gk_handle>(token);
  }

  LiveHandle handle(gk_handle value) const {
    const std::uint64_t token = reinterpret_cast<std::uint64_t>(value);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = handles_.find(token);
    if (it == handles_.end()) throw not_live(token, kHandleTag, "handle");
    return LiveHandle(it->second);
  }

  /// Removes the handle with its blocks and timers (gk_close does the freeing).
  ClosedHandle remove_handle(gk_handle value) {
    const std::uint64_t token = reinterpret_cast<std::uint64_t>(value);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = handles_.find(token);
    if (it == handles_.end()) throw not_live(token, kHandleTag, "handle");
    ClosedHandle closed;
    closed.handle = std::move(it->second);
    handles_.erase(it);
    for (auto b = blocks_.begin(); b != blocks_.end();) {
      if (b->second.owner != token) {
        ++b;
        continue;
      }
      closed.blocks.push_back(reinterpret_cast<void*>(b->first));
      b = blocks_.erase(b);
    }
    for (auto t = timers_.begin(); t != timers_.end();) {
      if (t->second.owner != token) {
        ++t;
        continue;
      }
      closed.timers.push_back(std::move(t->second.timer));
      t = timers_.erase(t);
    }
    return closed;
  }

  /// Registers a timer of `owner`; throws when `owner` was closed meanwhile.
  gk_timer add_timer(gk_handle owner, std::shared_ptr<gk_timer_s> timer) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open(owner);
    const std::uint64_t token = next_token(kTimerTag);
    timers_.emplace(token, OwnedTimer{reinterpret_cast<std::uint64_t>(owner), std::move(timer)});
    return reinterpret_cast<gk_timer>(token);
  }

  std::shared_ptr<gk_timer_s> timer(gk_timer value) const {
    const std::uint64_t token = reinterpret_cast<std::uint64_t>(value);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = timers_.find(token);
    if (it == timers_.end()) throw not_live(token, kTimerTag, "timer");
    return it->second.timer;
  }

  std::shared_ptr<gk_timer_s> remove_timer(gk_timer value) {
    const std::uint64_t token = reinterpret_cast<std::uint64_t>(value);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = timers_.find(token);
    if (it == timers_.end()) throw not_live(token, kTimerTag, "timer");
    std::shared_ptr<gk_timer_s> timer = std::move(it->second.timer);
    timers_.erase(it);
    return timer;
  }

  /// Registers a block of `owner`; throws when `owner` was closed meanwhile.
  void add_block(gk_handle owner, void* ptr, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open(owner);
    const Block block{reinterpret_cast<std::uint64_t>(owner), bytes};
    blocks_[reinterpret_cast<std::uintptr_t>(ptr)] = block;
  }

  /// Takes `ptr` out of `owner`'s blocks, or says why it is not one of them.
  void remove_block(gk_handle owner, const void* ptr) {
    const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(address);
    if (it != blocks_.end() && it->second.owner == reinterpret_cast<std::uint64_t>(owner)) {
      blocks_.erase(it);
      return;
    }
    const std::string head = "ptr = " + address_text(ptr) + " ";
    if (it != blocks_.end())
      throw Error(Status::InvalidArgument, head + "was allocated on another handle; gk_free it with that handle");
    auto after = blocks_.upper_bound(address);
    if (after != blocks_.begin()) {
      const auto& [start, block] = *std::prev(after);
      if (address < start + block.bytes)
        throw Error(Status::InvalidArgument, head + "is inside a block gk_malloc returned (" +
                                                 std::to_string(address - start) + " bytes into " +
                                                 std::to_string(block.bytes) + "); gk_free takes the block's start");
    }
    throw Error(Status::InvalidArgument,
                head + "is not a block gk_malloc returned on this handle, or was already freed");
  }

 private:
  // Tags in the top 16 bits: never a user-space address on x86-64 or AArch64, so a token
  // cannot be mistaken for a pointer, and one kind of token never for the other.
  static constexpr std::uint64_t kHandleTag = std::uint64_t{0x6b68} << 48;  // "kh"
  static constexpr std::uint64_t kTimerTag = std::uint64_t{0x6b74} << 48;   // "kt"
  static constexpr std::uint64_t kSerialMask = (std::uint64_t{1} << 48) - 1;

  struct Block {
    std::uint64_t owner;  // the handle's token
    std::size_t bytes;
  };
  struct OwnedTimer {
    std::uint64_t owner;  // the handle's token
    std::shared_ptr<gk_timer_s> timer;
  };

  std::uint64_t next_token(std::uint64_t tag) {
    if (next_serial_ > kSerialMask) throw Error(Status::InternalError, "more than 2^48 handles and timers created");
    return tag | next_serial_++;
  }

  /// Throws when `owner` is no longer open (call with mutex_ held).
  void check_open(gk_handle owner) const {
    const std::uint64_t token = reinterpret_cast<std::uint64_t>(owner);
    if (handles_.find(token) == handles_.end()) throw not_live(token, kHandleTag, "handle");
  }

  /// The error for a token that is not in its table: closed/destroyed when it is one this
  /// registry handed out, else not a value the library returned at all.
  Error not_live(std::uint64_t token, std::uint64_t tag, const char* kind) const {
    if (token == 0) return Error(Status::InvalidArgument, std::string(kind) + " is null");
    const bool issued = (token & ~kSerialMask) == tag && (token & kSerialMask) < next_serial_;
    const bool is_handle = tag == kHandleTag;
    if (issued)
      return Error(Status::InvalidArgument, is_handle ? "handle was closed (gk_close) and cannot be used again"
                                                      : "timer was destroyed (gk_timer_destroy, or gk_close of its "
                                                        "handle) and cannot be used again");
    return Error(Status::InvalidArgument, is_handle ? "handle is not a value returned by gk_open"
                                                    : "timer is not a value returned by gk_timer_create");
  }

  mutable std::mutex mutex_;
  std::uint64_t next_serial_ = 1;
  std::unordered_map<std::uint64_t, std::shared_ptr<gk_handle_s>> handles_;
  std::unordered_map<std::uint64_t, OwnedTimer> timers_;
  std::map<std::uintptr_t, Block> blocks_;  // ordered: a pointer inside a block is found
};

}  // namespace gpukern::core
