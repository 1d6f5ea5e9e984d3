// The CPU backend: host memory, a steady_clock timer, and the GEMM and softmax ladders
// (tables of the rungs in src/cpu/gemm and src/cpu/softmax), built into libgpukern.
#include "cpu/cpu_backend.hpp"

#include "cpu/cpu_context.hpp"
#include "cpu/gemm/skinny.hpp"
#include "cpu/openblas.hpp"
#include "cpu/parallel_copy.hpp"
#include "cpu/rungs.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace gpukern::cpu {
namespace {

using core::kMaskBF16;
using core::kMaskF16;
using core::kMaskF32;
using core::kMaskTF32;

constexpr uint32_t kAllGemmTypes = kMaskF32 | kMaskTF32 | kMaskF16 | kMaskBF16;
constexpr uint32_t kAllSoftmaxTypes = kMaskF32 | kMaskF16 | kMaskBF16;

// Ladder order: naive first, references last. tf32 calls run as exact f32 everywhere.
// Auto: the measured table first (skinny when m or n is at most kSkinnyAutoMaxT: it
// streams the large operand once, where omp_simd packs it for 14-row tiles), then
// omp_simd, which takes every call, then naive; the references are never picked.
const core::Ladder<core::GemmArgs, CpuContext>& gemm_ladder() {
  using core::RungKind;
  static const core::Ladder<core::GemmArgs, CpuContext> ladder = {
      {
          core::fusing(GemmRung{"naive",
                                "i-j-k triple loop, one thread, f32 accumulation (the baseline)",
                                kAllGemmTypes,
                                {},
                                RungKind::Ladder,
                                nullptr,
                                gemm::naive_run,
                                1},
                       core::kFuseBatch | core::kFuseEpilogue),
          core::fusing(
              GemmRung{"omp_simd",
                       "packed, cache-blocked, register-blocked micro-kernel (AVX-512 14x32 / AVX2 6x16 / scalar), "
                       "OpenMP",
                       kAllGemmTypes,
                       {},
                       RungKind::Ladder,
                       nullptr,
                       gemm::omp_simd_run,
                       0},
              core::kFuseBatch | core::kFuseEpilogue),
          {"skinny",
           "m or n <= 16: streams the large operand once, vectorized along its rows (NN) or depth (NT), "
           "OpenMP over the long side",
           kAllGemmTypes,
           {},
           RungKind::Ladder,
           gemm::skinny_supports,
           gemm::skinny_run,
           core::kNeverAuto},
          core::fusing(GemmRung{"openblas",
                                "OpenBLAS cblas_sgemm (loaded at run time; f16/bf16 converted to f32 first)",
                                kAllGemmTypes,
                                {},
                                RungKind::Reference,
                                gemm::openblas_supports,
                                gemm::openblas_run,
                                core::kNeverAuto},
                       core::kFuseBatch),
          {"openblas_gemv",
           "OpenBLAS cblas_sgemv, f32 with m == 1 or n == 1 (loaded at run time)",
           kMaskF32 | kMaskTF32,
           {},
           RungKind::Reference,
           gemm::openblas_gemv_supports,
           gemm::openblas_gemv_run,
           core::kNeverAuto},
      },
      {
          // Any batch count: skinny does not fuse batches, so the core runs a batch item by
          // item and every item is the single call the llm runs measured.
          {"skinny (T <= 16)", kAllGemmTypes, {}, {1, kSkinnyAutoMaxT}, {}, {}, "skinny"},
      }};
  return ladder;
}

const core::Ladder<core::SoftmaxArgs, CpuContext>& softmax_ladder() {
  using core::RungKind;
  // Both rungs fuse batches, the input scale and the causal mask.
  constexpr uint32_t kSoftmaxFuses = core::kFuseBatch | core::kFuseScale | core::kFuseCausal;
  static const core::Ladder<core::SoftmaxArgs, CpuContext> ladder = {
      core::fusing(SoftmaxRung{"naive",
                               "three scalar passes per row (max, sum of exp, output), one thread",
                               kAllSoftmaxTypes,
                               {},
                               RungKind::Ladder,
                               nullptr,
                               softmax::naive_run,
                               1},
                   kSoftmaxFuses),
      core::fusing(SoftmaxRung{"omp_simd",
                               "online max+sum pass and output pass per row, vectorized exp (AVX-512 / AVX2 / "
                               "scalar), OpenMP over rows",
                               kAllSoftmaxTypes,
                               {},
                               RungKind::Ladder,
                               nullptr,
                               softmax::omp_simd_run,
                               0},
                   kSoftmaxFuses),
  };
  return ladder;
}

/// The CPU as a rung's architecture: every CPU rung runs on every host.
const core::DeviceArch& host_arch() {
  static const core::DeviceArch arch{core::Vendor::Host, 0, 0, "x86-64"};
  return arch;
}

/// Steady-clock timer: CPU work is synchronous, so wall time between start and stop is it.
class CpuTimer final : public core::Timer {
 public:
  void start() override { start_ = Clock::now(); }
  void stop() override { stop_ = Clock::now(); }
  double elapsed_ms() override { return std::chrono::duration<double, std::milli>(stop_ - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_{}, stop_{};
};

/// FP32 lanes per FMA instruction of a path. The scalar path's baseline x86-64 code
/// still has 4-lane SSE2 (with separate multiply and add units).
int simd_lanes(Isa isa) { return isa == Isa::Avx512 ? 16 : isa == Isa::Avx2 ? 8 : 4; }

class CpuBackend final : public core::Backend {
 public:
  core::DeviceInfo device_info() const override {
    const CpuFeatures& cpu = cpu_features();
    const CpuContext ctx = current_context();
    core::DeviceInfo info;
    info.backend = "cpu";
    info.index = 0;
    info.name = cpu.name;
    info.arch = std::string("x86_64-") + isa_name(ctx.isa);
    info.arch_number = 0;
    info.compute_units = ctx.threads;
    info.clock_mhz = measured_clock_mhz();
    info.memory_bytes = cpu.memory_bytes;
#ifdef _OPENMP
    info.runtime_version = "OpenMP " + std::to_string(_OPENMP);
#endif
    // Peak = cores x lanes x FMA units x 2 flops x clock, with the CPU's widest vectors
    // (the hardware's peak, whatever GPUKERN_CPU_ISA caps) and an assumed 2 FMA units per
    // core: true of Skylake-SP and later Xeons with 2 AVX-512 ports, Zen 2-5 and Haswell+;
    // Xeons with one 512-bit FMA port and Zen 4 (256-bit units) reach half of it.
    constexpr int kFmaUnitsPerCore = 2;
    const int cores = std::min(ctx.threads, cpu.physical_cores);
    info.peak_f32_gflops =
        static_cast<double>(cores) * simd_lanes(cpu.best) * kFmaUnitsPerCore * 2 * info.clock_mhz / 1e3;
    info.peak_tensor_gflops = 0;   // no AMX rung
    info.peak_bandwidth_gbps = 0;  // not knowable from the CPU alone

    const OpenBlas& ob = openblas();
    info.extra = {
        {"cpu_isa", isa_name(ctx.isa)},
        {"cpu_isa_supported", supported_isa_list(cpu.best)},
        {"threads", std::to_string(ctx.threads)},
        {"caches", std::to_string(cpu.caches.l1d / 1024) + "K/" + std::to_string(cpu.caches.l2 / 1024) + "K/" +
                       std::to_string(cpu.caches.l3 / 1024) + "K"},
        {"openblas_core", ob.loaded ? ob.core : "not loaded: " + ob.unavailable},
        {"openblas_config", ob.loaded ? ob.config : ""},
    };
    if (!ob.warning.empty()) info.extra.emplace_back("openblas_warning", "core older than the CPU");
    return info;
  }

  void* alloc(std::size_t bytes) override {
    // 64-byte aligned (a cache line, an AVX-512 vector); aligned_alloc needs a multiple.
    constexpr std::size_t kAlign = 64;
    if (bytes > std::numeric_limits<std::size_t>::max() - kAlign)  // the rounding would wrap
      throw core::Error(core::Status::OutOfMemory,
                        "cpu: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    const std::size_t rounded = core::ceil_div<std::size_t>(bytes == 0 ? 1 : bytes, kAlign) * kAlign;
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p)
      throw core::Error(core::Status::OutOfMemory,
                        "cpu: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return p;
  }
  void free(void* ptr) noexcept override { std::free(ptr); }
  void copy(void* dst, const void* src, std::size_t bytes, core::CopyKind) override {
    // Every kind is host memory: the backend's threads, streaming stores past the caches;
    // overlapping ranges stay defined (memmove).
    parallel_copy(dst, src, bytes, current_context().threads);
  }
  void memset(void* dst, int value, std::size_t bytes) override { std::memset(dst, value, bytes); }
  void memread(const void* src, std::size_t bytes, uint64_t* sum) override {
    const uint64_t total = parallel_byte_sum(src, bytes, current_context().threads);
    if (sum) *sum = total;
  }
  void synchronize() override {}      // every CPU call has finished when it returns
  void set_stream(void*) override {}  // no streams on the CPU
  std::unique_ptr<core::Timer> create_timer() override { return std::make_unique<CpuTimer>(); }

  std::vector<core::RungInfo> variants(core::OpKind op) const override {
    if (op == core::OpKind::Softmax) return softmax_ladder().infos(host_arch());
    auto infos = gemm_ladder().infos(host_arch());
    for (auto& info : infos)
      if ((info.name == "openblas" || info.name == "openblas_gemv") && !openblas().loaded)
        info.unavailable = {core::Decline::LibraryMissing, openblas().unavailable};
    return infos;
  }

  core::Verdict supports(const core::GemmArgs& args, int rung) const override {
    return gemm_ladder().supports(rung, args, current_context(), host_arch());
  }
  core::Verdict supports(const core::SoftmaxArgs& args, int rung) const override {
    return softmax_ladder().supports(rung, args, current_context(), host_arch());
  }
  bool auto_candidate(const core::GemmArgs& args, int rung) const override {
    return gemm_ladder().auto_candidate(rung, args, current_context());
  }
  bool auto_candidate(const core::SoftmaxArgs& args, int rung) const override {
    return softmax_ladder().auto_candidate(rung, args, current_context());
  }
  std::vector<core::AutoEntryInfo> auto_table(core::OpKind op) const override {
    return op == core::OpKind::Gemm ? gemm_ladder().auto_table() : softmax_ladder().auto_table();
  }
  core::AutoPick auto_pick(const core::GemmArgs& args) const override {
    return gemm_ladder().auto_pick(args, host_arch());
  }
  core::AutoPick auto_pick(const core::SoftmaxArgs& args) const override {
    return softmax_ladder().auto_pick(args, host_arch());
  }
  void gemm(const core::GemmArgs& args, int rung) override { gemm_ladder().run(rung, args, current_context()); }
  void softmax(const core::SoftmaxArgs& args, int rung) override {
    softmax_ladder().run(rung, args, current_context());
  }
};

}  // namespace

std::unique_ptr<core::Backend> create_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gpukern::cpu
