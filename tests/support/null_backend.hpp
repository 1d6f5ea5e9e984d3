// A Backend without a device, for tests of the core's dispatch (tests/core): memory and
// stream calls do nothing, there is no timer and no rung. A test's fake derives from it
// and overrides the ladder side it exercises.
#pragma once

#include "core/backend.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace gpukern::test {

class NullBackend : public core::Backend {
 public:
  core::DeviceInfo device_info() const override { return {}; }
  void* alloc(std::size_t) override { return nullptr; }
  void free(void*) noexcept override {}
  void copy(void*, const void*, std::size_t, core::CopyKind) override {}
  void memset(void*, int, std::size_t) override {}
  void memread(const void*, std::size_t, uint64_t*) override {}
  void synchronize() override {}
  void set_stream(void*) override {}
  std::unique_ptr<core::Timer> create_timer() override { return nullptr; }
  std::vector<core::RungInfo> variants(core::OpKind) const override { return {}; }
  core::Verdict supports(const core::GemmArgs&, int) const override { return {}; }
  core::Verdict supports(const core::SoftmaxArgs&, int) const override { return {}; }
  bool auto_candidate(const core::GemmArgs&, int) const override { return false; }
  bool auto_candidate(const core::SoftmaxArgs&, int) const override { return false; }
  std::vector<core::AutoEntryInfo> auto_table(core::OpKind) const override { return {}; }
  core::AutoPick auto_pick(const core::GemmArgs&) const override { return {}; }
  core::AutoPick auto_pick(const core::SoftmaxArgs&) const override { return {}; }
  void gemm(const core::GemmArgs&, int) override {}
  void softmax(const core::SoftmaxArgs&, int) override {}
};

}  // namespace gpukern::test
