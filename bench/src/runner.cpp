// Per-device case runner; see runner.hpp.
#include "runner.hpp"

#include "suite.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace gpukern::bench {

namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;
// How long the CPU's threads stream memory before the run's first timing (stream_times).
constexpr double kCpuRampSeconds = 1.0;
// Least warm-up of each rung on the CPU (run).
constexpr double kCpuRungWarmupSeconds = 0.3;
// Rounds of the copy and read stream per byte count on the CPU (stream_times).
constexpr int kCpuStreamRounds = 2;

// FNV-1a of a text under the run's seed.
uint64_t fnv1a(uint64_t seed, const std::string& key) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// A stable per-case seed, so a case gets the same inputs in every run.
uint64_t case_seed(uint64_t seed, const Case& c) {
  return fnv1a(seed, std::to_string(int(c.op)) + type_name(c.type) + c.shape_label());
}

// The seed of gemm's B: the same weights for every T (and layout) of one (dtype, N, K),
// so that consecutive cases of the llm suite share them (DeviceRunner::WeightCache).
uint64_t weight_seed(uint64_t seed, const Case& c) {
  return fnv1a(seed, std::string("B") + type_name(c.type) + std::to_string(c.n) + "x" + std::to_string(c.k));
}

bool name_in(const std::string& name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// --variants fast: per dtype, the rungs auto may pick and this many of the highest rungs
// of the ladder (the ladder climbs from the slowest: the lower SIMT rungs would take
// seconds a call on a suite's large shapes and say nothing new).
constexpr int kFastTopRungs = 3;

// Downloads the checked rows of a row-major output (ld elements per row; batched outputs
// at Reference::row_offset) into a compact host array (cols elements per row), one copy
// when every row is checked and the rows are contiguous.
std::vector<unsigned char> download_rows(Device& device, const void* data, gk_dtype type, const Reference& ref,
                                         int64_t ld) {
  const std::size_t esize = dtype_size(type);
  const std::size_t row_bytes = std::size_t(ref.cols) * esize;
  std::vector<unsigned char> out(ref.rows.size() * row_bytes);
  const auto* base = static_cast<const unsigned char*>(data);
  const bool packed = ref.item_stride == 0 || ref.item_stride == ref.rows_per_item * ref.cols;
  if (int64_t(ref.rows.size()) == ref.total_rows && ld == ref.cols && packed) {
    device.download(out.data(), base, out.size());
    return out;
  }
  for (std::size_t r = 0; r < ref.rows.size(); ++r)
    device.download(out.data() + r * row_bytes, base + std::size_t(ref.row_offset(ref.rows[r], ld)) * esize, row_bytes);
  return out;
}

// The CPU backend's "caches=48K/1024K/32768K" (L1d/L2/L3), else what sysconf says
// (which some virtual machines misreport), capped at 1 GiB.
std::size_t last_level_cache_bytes(const DeviceInfo& info) {
  for (const auto& [key, value] : parse_extra(info.extra)) {
    if (key != "caches") continue;
    const std::string last = value.substr(value.rfind('/') + 1);
    char* end = nullptr;
    const double number = std::strtod(last.c_str(), &end);
    const double unit = *end == 'M' ? double(kMiB) : *end == 'K' ? 1024.0 : 1.0;
    if (number > 0) return std::size_t(number * unit);
  }
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return std::min<std::size_t>(std::size_t(std::max(llc, 0L)), 1024 * kMiB);
}

// "1.5 GiB", "64 MiB": sizes in the messages of check_memory.
std::string bytes_text(uint64_t bytes) {
  const double gib = double(bytes) / double(1ull << 30);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.0f} MiB", std::ceil(double(bytes) / double(kMiB)));
}

// The first number in a file (a /sys or /proc value); nullopt when absent or "max".
std::optional<uint64_t> read_number(const std::string& path) {
  std::ifstream file(path);
  uint64_t value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

// The cgroup v2 directory of this process ("0::/path" in /proc/self/cgroup), or "".
std::string cgroup_dir() {
  std::ifstream file("/proc/self/cgroup");
  for (std::string line; std::getline(file, line);)
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  return "";
}

}  // namespace

void upload_random(Device& device, void* data, uint64_t count, gk_dtype type, float low, float high, uint64_t seed) {
  const std::size_t esize = dtype_size(type);
  const uint64_t chunk = std::max<uint64_t>(1, kUploadChunkBytes / esize);
  std::vector<unsigned char> bytes(std::size_t(std::min(count, chunk)) * esize);
  for (uint64_t first = 0; first < count; first += chunk) {
    const uint64_t n = std::min(chunk, count - first);
    random_bytes(bytes.data(), std::size_t(n), type, low, high, seed, first);
    device.upload(static_cast<unsigned char*>(data) + first * esize, bytes.data(), std::size_t(n) * esize);
  }
}

uint64_t available_host_memory() {
  uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    uint64_t kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib) {
      available = kib * 1024;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (available == 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = uint64_t(pages) * uint64_t(page);
  }
  // A container's limit is lower than what the host has free: the kernel kills a
  // process past it (cgroup v2, then v1).
  const std::string dir = cgroup_dir();
  for (const auto& [limit_file, usage_file] :
       {std::pair<std::string, std::string>{dir + "/memory.max", dir + "/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto limit = read_number(limit_file), used = read_number(usage_file);
    if (!limit || !used) continue;
    const uint64_t left = *limit > *used ? *limit - *used : 0;
    if (available == 0 || left < available) available = left;
    break;
  }
  return available;
}

std::vector<std::pair<std::string, std::string>> parse_extra(const char* extra) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string text = extra ? extra : "";
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(';', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (!item.empty()) {
      if (eq == std::string::npos)
        out.emplace_back(item, "");
      else
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    begin = end + 1;
  }
  return out;
}

DeviceRunner::DeviceRunner(std::string spec, const Options& options)
    : spec_(std::move(spec)), options_(options), device_(spec_), timer_(device_.timer()) {
  info_ = device_.info();
  for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX}) {
    auto& ladder = op == GK_OP_GEMM ? gemm_ladder_ : softmax_ladder_;
    int index = 0;
    for (const auto& v : device_.variants(op)) ladder.push_back(Rung{v, index++});
  }
  naive_max_size_ = options.naive_max_size.value_or(is_cpu() ? 1024 : 4096);

  std::size_t flush_bytes = 0;
  if (options.flush_mb) {
    flush_bytes = std::size_t(*options.flush_mb * double(kMiB));  // at most 1 TiB (options.cpp)
  } else if (is_cpu()) {
    // Twice the last-level cache, so that nothing of the previous run survives.
    flush_bytes = std::max<std::size_t>(64 * kMiB, 2 * last_level_cache_bytes(info_));
  } else {
    // Above the L2 of every current GPU (H100 50 MB, B200 126 MB, MI300X's 256 MB
    // Infinity Cache), capped at 1/8 of device memory for small boards.
    flush_bytes = 512 * kMiB;
    if (info_.memory_bytes > 0) flush_bytes = std::min<std::size_t>(flush_bytes, info_.memory_bytes / 8);
  }
  flush_bytes_ = flush_bytes;
}

bool DeviceRunner::is_cpu() const { return std::strcmp(info_.backend, "cpu") == 0; }

bool DeviceRunner::paired() const { return options_.paired == "on" || (options_.paired == "auto" && !is_cpu()); }

const std::vector<Rung>& DeviceRunner::ladder(gk_op op) const {
  return op == GK_OP_GEMM ? gemm_ladder_ : softmax_ladder_;
}

std::vector<Rung> DeviceRunner::selected(const Case& c) const {
  // The fast set of c's dtype: auto's candidates and the top of the ladder that run here.
  std::vector<int> fast;
  if (options_.fast_variants) {
    int top = 0;
    const auto& rungs = ladder(c.op);
    for (auto r = rungs.rbegin(); r != rungs.rend(); ++r) {
      const VariantInfo& v = r->info;
      if (!v.runs_here || v.experimental || v.is_reference || !takes(v, c.type)) continue;
      if (v.auto_position >= 0 || top < kFastTopRungs) fast.push_back(r->index);
      top += 1;
    }
  }
  std::vector<Rung> out;
  for (const auto& r : ladder(c.op)) {
    const bool every = options_.variants.empty() && !options_.fast_variants && !options_.auto_only;
    const bool listed =
        every || name_in(r.info.name, options_.variants) || std::find(fast.begin(), fast.end(), r.index) != fast.end();
    // The fused-epilogue reference runs where there is an epilogue to compare (and for the
    // epilogue suite's plain cells); plain cases keep their one vendor reference.
    const bool epilogue_ref = kEpilogueReference == std::string(r.info.name);
    const bool reference =
        r.info.is_reference && options_.with_reference && (!epilogue_ref || c.has_epilogue() || c.suite == "epilogue");
    if (listed || reference) out.push_back(r);
  }
  if (options_.with_auto) {
    // The library's own choice, after the ladder (its record names the rung it ran).
    Rung automatic{VariantInfo{}, int(ladder(c.op).size())};
    std::snprintf(automatic.info.name, sizeof automatic.info.name, "auto");
    std::snprintf(automatic.info.description, sizeof automatic.info.description, "the library's own choice");
    std::snprintf(automatic.info.dtypes, sizeof automatic.info.dtypes, "f32,tf32,f16,bf16");
    automatic.info.runs_here = 1;
    automatic.info.auto_position = -1;
    out.push_back(automatic);
  }
  return out;
}

std::vector<std::string> DeviceRunner::unknown_variants() const {
  std::vector<std::string> out;
  for (const auto& name : options_.variants) {
    bool found = false;
    for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX})
      for (const auto& r : ladder(op)) found = found || name == r.info.name;
    if (!found) out.push_back(name);
  }
  return out;
}

std::vector<Case> DeviceRunner::plan() const {
  std::vector<Case> cases;
  for (gk_op op : options_.ops) {
    if (op == GK_OP_GEMM && !options_.suites.empty()) {
      for (const auto& suite : options_.suites) {
        // The attention and epilogue suites are 16-bit work unless --dtype says otherwise.
        const bool sixteen = suite == "attention" || suite == "epilogue";
        const auto types = !options_.types.empty() ? options_.types
                           : sixteen               ? std::vector<BenchType>{BenchType::kBF16, BenchType::kF16}
                                                   : default_types(op, is_cpu());
        const auto more = suite_cases(suite, options_, types);
        cases.insert(cases.end(), more.begin(), more.end());
      }
      continue;
    }
    const auto& op_sizes = op == GK_OP_GEMM ? options_.gemm_sizes : options_.softmax_sizes;
    const auto sizes = !op_sizes.empty()         ? op_sizes
                       : !options_.sizes.empty() ? options_.sizes
                                                 : default_sizes(op, is_cpu());
    const auto types = options_.types.empty() ? default_types(op, is_cpu()) : options_.types;
    for (BenchType type : types) {
      if (op == GK_OP_SOFTMAX && type == BenchType::kTF32) continue;  // tf32 is a gemm mode
      for (const auto& size : sizes) {
        if (!size.fits(op)) continue;
        Case c;
        c.op = op;
        c.type = type;
        if (op == GK_OP_GEMM) {
          c.m = size.dims[0];
          c.n = size.dims.size() == 3 ? size.dims[1] : size.dims[0];
          c.k = size.dims.size() == 3 ? size.dims[2] : size.dims[0];
          c.c_f32 = options_.c_f32 && type != BenchType::kF32 && type != BenchType::kTF32;
          for (const Layout& layout : options_.layouts.empty() ? std::vector<Layout>{Layout{}} : options_.layouts) {
            c.trans_a = layout.trans_a;
            c.trans_b = layout.trans_b;
            const auto more = with_batch_and_epilogues(c, options_);
            cases.insert(cases.end(), more.begin(), more.end());
          }
        } else {
          c.rows = size.dims[0];
          c.cols = size.dims.size() == 2 ? size.dims[1] : size.dims[0];
          c.log_softmax = options_.log_softmax;
          cases.push_back(c);
        }
      }
    }
  }
  // A batch too large for the machine's memory is halved until it fits (the record names
  // the batch asked for); a case of one item that does not fit is refused by check_memory.
  for (Case& c : cases) {
    const int64_t asked = c.batch;
    while (c.op == GK_OP_GEMM && c.batch > 1 && check_memory(c)) c.batch = (c.batch + 1) / 2;
    if (c.batch != asked) c.batch_reduced_from = asked;
  }
  return cases;
}

std::optional<std::string> DeviceRunner::check_memory(const Case& c) const {
  const std::string what =
      fmt::format("{} {} {}", c.op == GK_OP_GEMM ? "gemm" : "softmax", type_name(c.type), c.label());
  const auto need = footprint(c, options_.reference_budget);
  if (!need) return what + ": too large (its element counts overflow 64-bit integers)";
  return check_footprint(what, *need);
}

std::optional<std::string> DeviceRunner::check_footprint(const std::string& what, const Footprint& need) const {
  const std::string too_large = what + ": too large (its element counts overflow 64-bit integers)";
  // On the CPU backend the device buffers and the flush buffer are host memory too.
  uint64_t host = need.host_bytes, device = need.device_bytes;
  if (__builtin_add_overflow(device, uint64_t(flush_bytes_), &device)) return too_large;
  if (is_cpu() && __builtin_add_overflow(host, device, &host)) return too_large;
  const std::string flush = flush_bytes_ ? fmt::format(", the {} cache flush buffer", bytes_text(flush_bytes_)) : "";

  const uint64_t host_free = available_host_memory();
  if (host_free > 0 && host > host_free)
    return fmt::format(
        "{}: needs {} of host memory (inputs, reference{}{}), only {} available; use smaller "
        "--sizes{}",
        what, bytes_text(host), is_cpu() ? ", device buffers" : "", is_cpu() ? flush : "", bytes_text(host_free),
        flush_bytes_ && is_cpu() ? " or --flush-mb" : "");
  if (!is_cpu() && info_.memory_bytes > 0 && device > info_.memory_bytes)
    return fmt::format("{}: needs {} of device memory (inputs, output{}), the device has {}; use smaller --sizes{}",
                       what, bytes_text(device), flush, bytes_text(info_.memory_bytes),
                       flush_bytes_ ? " or --flush-mb" : "");
  return std::nullopt;
}

CacheFlusher* DeviceRunner::flusher() {
  // Allocated at the first case, after check_memory has passed.
  if (flush_bytes_ > 0 && !flusher_) flusher_ = std::make_unique<CacheFlusher>(device_, flush_bytes_);
  return flusher_.get();
}

std::optional<std::string> DeviceRunner::skip_reason(const Case& c, const Rung& rung) const {
  if (!rung.info.runs_here) return std::string(rung.info.reason[0] ? rung.info.reason : "cannot run on this device");
  const std::string name = rung.info.name;
  const bool slow = name_in(name, options_.slow_rungs);
  if (slow && options_.skip_slow) return name + " not run (--skip-slow)";
  if (slow && c.op == GK_OP_GEMM) {
    const double cap = double(naive_max_size_);
    // The work of every batch item counts: 1024 items of 512^2 x 64 are a 4096^3.
    if (double(c.m) * double(c.n) * double(c.k) * double(c.batch) > cap * cap * cap)
      return name + " runs only up to " + std::to_string(naive_max_size_) + "^3 (--naive-max-size)";
  }
  return std::nullopt;
}

const StreamTimes& DeviceRunner::stream_times(uint64_t bytes, CacheFlusher* flusher) {
  if (auto found = streams_.find(bytes); found != streams_.end()) return found->second;
  StreamTimes& times = streams_[bytes];
  // One buffer of `bytes`: the copy reads its first half and writes the second (traffic
  // read + write = bytes); the read stream sums all of it (the CPU: the bench's walks with
  // the backend's threads; GPUs: gk_memread). On a GPU whose L2 holds a copy's written half,
  // the copy's writes stay in L2 within the timed call: the read stream is then the limit
  // of what a read-bound call (decode: weights read once) can reach.
  const std::size_t half = std::max<std::size_t>(1, std::size_t(bytes / 2));
  try {
    Buffer scratch = device_.alloc(2 * half);
    auto* base = static_cast<unsigned char*>(scratch.data());
    device_.memset(base, 1, 2 * half);  // pages touched before timing
    if (is_cpu() && !ramped_) {
      // Before the run's first timing, the backend's threads stream this buffer for
      // kCpuRampSeconds: on a VM whose vCPUs were idle, the first few hundred milliseconds
      // of work run at a fraction of the speed (the copy and the read stream alike), which
      // made the first case's copy a third of every later one.
      const auto start = std::chrono::steady_clock::now();
      uint64_t sum = 0;
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kCpuRampSeconds)
        sum += read_stream(base, 2 * half, std::max(1, info_.compute_units), ReadPattern::Sequential);
      read_checksum_ += sum;
      ramped_ = true;
    }
    // On the CPU two rounds of the copy and the read stream, the faster median of each
    // kept: a shared machine's bursts (other processes, vCPUs the host let idle) otherwise
    // leave a reference far below what the machine reads, and every record of that size
    // above 100% of it.
    const int rounds = is_cpu() ? kCpuStreamRounds : 1;
    for (int round = 0; round < rounds; ++round) {
      const Timing copy =
          measure(device_, timer_, flusher, options_.timing, [&] { device_.copy(base + half, base, half); });
      if (!times.copy || copy.median_ms < times.copy->median_ms) times.copy = copy;
      if (!is_cpu()) {
        times.read = measure(device_, timer_, flusher, options_.timing, [&] { device_.memread(base, 2 * half); });
        continue;
      }
      const int threads = std::max(1, info_.compute_units);
      // Both walks of memory (measure.hpp ReadPattern); the faster is the machine's.
      uint64_t sum = 0;
      for (ReadPattern pattern : {ReadPattern::PageGroups, ReadPattern::Sequential}) {
        const Timing t = measure(device_, timer_, flusher, options_.timing,
                                 [&] { sum += read_stream(base, 2 * half, threads, pattern); });
        if (!times.read || t.median_ms < times.read->median_ms) times.read = t;
      }
      read_checksum_ += sum;
    }
  } catch (const Error&) {
    // No room for the streams: the records go without % of copy.
  }
  return times;
}

std::vector<Record> DeviceRunner::run(const Case& c, const ProgressFn& progress) {
  const uint64_t seed = case_seed(options_.seed, c);
  const gk_dtype in_type = storage_type(c.type);
  const gk_dtype out_type = c.output_storage();
  CacheFlusher* flusher = this->flusher();
  // gemm's B stays from the previous case when it is the same (the llm suite's weights at
  // every T); otherwise it goes now, before the streams' buffer is made.
  const std::size_t weight_count = std::size_t(c.items_b() * c.k * c.n);
  const std::size_t weight_bytes = weight_count * dtype_size(in_type);
  const bool same_weights = c.op == GK_OP_GEMM && weights_.device.data() && weights_.type == in_type &&
                            weights_.count == weight_count && weights_.seed == weight_seed(options_.seed, c);
  if (!same_weights) weights_ = WeightCache{};
  // Baselines of the same bytes, timed the same way in the same run, before A and C are
  // made (their buffer is freed before).
  // (A chained case has none: the streams are single calls, each with its launch on the clock.)
  const StreamTimes streams = c.chain == 1 ? stream_times(uint64_t(c.bytes_moved()), flusher) : StreamTimes{};

  // Inputs, device buffers and the reference: once per case, shared by every rung.
  HostArray a_host;
  Buffer a, out, bias;
  std::vector<Buffer> chain_b;  // --chain: the copies of B the chain's later calls read
  Reference ref;
  int64_t out_ld = 0;
  std::size_t out_bytes = 0;
  std::function<void(const char*)> call;
  std::function<void(const char*)> plain_call;  // gemm with an epilogue: the call without it
  GemmDesc gemm;
  SoftmaxDesc softmax;
  if (c.op == GK_OP_GEMM) {
    // A (every stored item) generated in chunks on the host; the reference recomputes the
    // elements of the rows it checks. B: with one item its host values stay for the next
    // case of the same weights (the llm suite's T); with several, recomputed per checked item.
    if (!same_weights) {
      weights_.type = in_type;
      weights_.count = weight_count;
      weights_.seed = weight_seed(options_.seed, c);
      weights_.device = device_.alloc(weight_bytes);
      if (c.items_b() == 1) {
        weights_.host = random_array(weights_.count, in_type, -1.0f, 1.0f, weights_.seed);
        device_.upload(weights_.device, weights_.host.bytes.data(), weights_.host.bytes.size());
      } else {
        upload_random(device_, weights_.device.data(), weight_count, in_type, -1.0f, 1.0f, weights_.seed);
      }
    }
    const uint64_t a_count = uint64_t(c.items_a() * c.m * c.k);
    a = device_.alloc(std::size_t(a_count) * dtype_size(in_type));
    upload_random(device_, a.data(), a_count, in_type, -1.0f, 1.0f, seed);
    out_ld = c.n;
    out_bytes = std::size_t(c.batch * c.m * c.n) * dtype_size(out_type);
    out = device_.alloc(out_bytes);
    std::vector<float> bias_values;
    if (c.bias != BiasKind::kNone) {
      const HostArray bias_host = random_array(std::size_t(c.n), c.bias_storage(), -1.0f, 1.0f, seed ^ 0xb1a5u);
      bias = device_.alloc(bias_host.bytes.size());
      device_.upload(bias, bias_host.bytes.data(), bias_host.bytes.size());
      bias_values = bias_host.values;
    }
    const OperandSource a_source{nullptr, seed, in_type, -1.0f, 1.0f};
    const OperandSource b_source{weights_.host.values.empty() ? nullptr : weights_.host.values.data(), weights_.seed,
                                 in_type, -1.0f, 1.0f};
    ref = gemm_reference(c, a_source, b_source, bias_values, reference_rows(c, options_.reference_budget, seed));

    gemm.trans_a = c.trans_a ? GK_TRANS : GK_NO_TRANS;
    gemm.trans_b = c.trans_b ? GK_TRANS : GK_NO_TRANS;
    gemm.m = c.m;
    gemm.n = c.n;
    gemm.k = c.k;
    gemm.alpha = c.alpha;
    gemm.a = a.data();
    gemm.lda = c.trans_a ? c.m : c.k;
    gemm.b = weights_.device.data();
    gemm.ldb = c.trans_b ? c.k : c.n;
    gemm.c = out.data();
    gemm.ldc = out_ld;
    gemm.ab_type = in_type;
    gemm.c_type = out_type;
    gemm.allow_tf32 = c.type == BenchType::kTF32;
    gemm.batch_count = c.batch;
    gemm.stride_a = c.stride_a();
    gemm.stride_b = c.stride_b();
    gemm.stride_c = c.stride_c();
    if (c.bias != BiasKind::kNone) {
      gemm.bias = bias.data();
      gemm.bias_length = c.n;
      gemm.bias_type = c.bias_storage();
      gemm.stride_bias = 0;
    }
    gemm.activation = c.act;
    // --chain: the call and chain_b.size() more back to back, each on its own copy of B.
    for (int i = 1; i < c.chain; ++i) {
      chain_b.push_back(device_.alloc(weight_bytes));
      device_.copy(chain_b.back().data(), weights_.device.data(), weight_bytes);
    }
    const auto run_chain = [&](GemmDesc desc) {
      device_.gemm(desc);
      for (const Buffer& b : chain_b) {
        desc.b = b.data();
        device_.gemm(desc);
      }
    };
    call = [&, run_chain](const char* variant) {
      gemm.variant = variant;
      run_chain(gemm);
    };
    if (c.has_epilogue())
      plain_call = [&, run_chain](const char* variant) {  // the same call without its epilogue
        GemmDesc plain = gemm;
        plain.variant = variant;
        plain.bias = nullptr;
        plain.bias_length = 0;
        plain.stride_bias = 0;
        plain.activation = GK_ACT_NONE;
        run_chain(plain);
      };
  } else {
    a_host = random_array(std::size_t(c.rows * c.cols), in_type, -8.0f, 8.0f, seed);
    a = device_.alloc(a_host.bytes.size());
    out_ld = c.cols;
    out_bytes = a_host.bytes.size();
    out = device_.alloc(out_bytes);
    device_.upload(a, a_host.bytes.data(), a_host.bytes.size());
    ref = softmax_reference(c, a_host.values.data(), reference_rows(c, options_.reference_budget, seed));

    softmax.rows = c.rows;
    softmax.cols = c.cols;
    softmax.x = a.data();
    softmax.ldx = c.cols;
    softmax.y = out.data();
    softmax.ldy = c.cols;
    softmax.dtype = in_type;
    softmax.log_softmax = c.log_softmax ? 1 : 0;
    call = [&](const char* variant) {
      softmax.variant = variant;
      device_.softmax(softmax);
    };
  }
  a_host = HostArray{};  // the reference holds what it needs (B stays for the next case)

  // On the CPU each rung warms up for kCpuRungWarmupSeconds (unless --warmup says how many
  // calls): after the OpenBLAS reference
  // rung, the next rung's first few hundred milliseconds ran up to 4x slower on a 2-vCPU VM
  // (whether from OpenBLAS's threads going to sleep or from vCPUs the host parked
  // meanwhile was not pinned down; a short OPENBLAS_THREAD_TIMEOUT did not remove it).
  TimingPolicy rung_timing = options_.timing;
  if (is_cpu() && !options_.warmup_given)
    rung_timing.min_warmup_s = std::max(rung_timing.min_warmup_s, kCpuRungWarmupSeconds);
  // On a GPU (paired()) the case's reference is measured first, and every other rung then
  // times in one loop with it, the two alternating (with an epilogue: the rung's plain call, its
  // fused call and the reference's): the GPU's clock moves between states under its power
  // cap within a case (at microsecond sizes two states ~13% apart, each lasting a fraction
  // of a case), so two rungs timed one after the other could each land in either, and
  // pct_of_reference moved by 10-20 points from case to case; timed together, both see the
  // same mix. The CPU keeps one loop per rung (OpenBLAS's threads spin on after its calls
  // and would slow the rung timed next to it).
  std::vector<Rung> rungs = selected(c);
  std::vector<std::size_t> order(rungs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const Rung* reference = nullptr;
  if (paired()) {
    auto find = [&](bool epilogue) -> const Rung* {
      for (const auto& r : rungs)
        if (r.info.is_reference && (kEpilogueReference == std::string(r.info.name)) == epilogue) return &r;
      return nullptr;
    };
    const Rung* epilogue_reference = c.has_epilogue() ? find(true) : nullptr;
    reference = epilogue_reference ? epilogue_reference : find(false);
    if (reference)
      std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return &rungs[i] == reference; });
  }
  bool reference_ran = false;
  std::vector<Record> records(rungs.size());
  for (const std::size_t index : order) {
    const Rung& rung = rungs[index];
    Record& r = records[index];
    r.test_case = c;
    r.variant = rung.info.name;
    r.rung_index = rung.index;
    r.is_reference = rung.info.is_reference != 0;
    if (auto why = skip_reason(c, rung)) {
      r.reason = *why;
      if (progress) progress(c, r, true);
      continue;
    }
    if (progress) progress(c, r, false);
    try {
      const std::function<void()> fused = [&] { call(rung.info.name); };
      const std::function<void()> plain = [&] { plain_call(rung.info.name); };
      const std::function<void()> vendor = [&] { call(reference->info.name); };
      std::vector<const std::function<void()>*> calls;
      const bool with_reference = reference_ran && &rung != reference;
      if (with_reference) calls.push_back(&vendor);
      if (plain_call) calls.push_back(&plain);
      calls.push_back(&fused);
      std::vector<Timing> t = measure_together(device_, timer_, flusher, rung_timing, calls);
      for (Timing& each : t) each = per_call(each, c.chain);
      r.timing = t.back();
      if (with_reference) r.reference_ms = t.front().median_ms;
      if (plain_call) {
        r.plain_ms = t[calls.size() - 2].median_ms;
        r.pct_of_plain = 100.0 * *r.plain_ms / r.timing.median_ms;
      }
      // The rung's own output, from a call of its own on poisoned memory (NaN in every
      // dtype: unwritten shows; the calls timed with it wrote the same buffer).
      device_.memset(out.data(), 0xff, out_bytes);
      fused();
      if (r.variant == "auto") r.auto_choice = device_.last_variant(c.op);
      const auto host_out = download_rows(device_, out.data(), out_type, ref, out_ld);
      r.rel_error = relative_error(ref, host_out.data(), out_type, ref.cols);
      r.error_rows_checked = int64_t(ref.rows.size());
      r.error_ok = r.rel_error && *r.rel_error <= error_bound(c.type);
      r.measured = true;
      if (&rung == reference) reference_ran = true;
    } catch (const Error& e) {
      note_error(r, e, device_);
    }
    if (r.measured) {
      const double bytes = c.bytes_moved();
      r.rate = c.work() / (r.timing.median_ms * 1e6);
      r.gbps = bytes / (r.timing.median_ms * 1e6);
      if (streams.copy) {
        r.copy_ms = streams.copy->median_ms;
        r.copy_gbps = bytes / (*r.copy_ms * 1e6);
        r.pct_of_copy = 100.0 * *r.copy_ms / r.timing.median_ms;
      }
      if (streams.read) {
        r.read_ms = streams.read->median_ms;
        r.read_gbps = bytes / (*r.read_ms * 1e6);
        r.pct_of_read = 100.0 * *r.read_ms / r.timing.median_ms;
      }
    }
    if (progress) progress(c, r, true);
  }
  finish(records, reference_ran ? &records[static_cast<std::size_t>(reference - rungs.data())] : nullptr);
  return records;
}

bool takes(const VariantInfo& v, BenchType type) {
  const std::string list = std::string(",") + v.dtypes + ",";
  auto has = [&](const char* name) { return list.find(std::string(",") + name + ",") != std::string::npos; };
  return has(type_name(type)) || (type == BenchType::kTF32 && has("f32"));
}

namespace {

/// The case's reference among unpaired records: for an epilogue, the fused-epilogue
/// reference when it ran (a declined one is a skipped cell with its reason); otherwise, and
/// when it did not run, the last vendor rung measured other than it (cuBLAS with the core's
/// epilogue pass). Null: none ran.
const Record* unpaired_reference(const std::vector<Record>& records) {
  const Record* reference = nullptr;
  const Record* epilogue_reference = nullptr;
  for (const auto& r : records) {
    if (!r.is_reference || !r.measured) continue;
    if (r.variant == kEpilogueReference)
      epilogue_reference = &r;
    else
      reference = &r;
  }
  if (epilogue_reference && (records.empty() || records.front().test_case.has_epilogue() || !reference))
    return epilogue_reference;
  return reference;
}

}  // namespace

void DeviceRunner::finish(std::vector<Record>& records, const Record* paired_reference) const {
  // The reference the other rungs were timed with, when they were (their reference_ms
  // comes from those loops, so their ratios and the reference named must be that one).
  const Record* reference = paired_reference ? paired_reference : unpaired_reference(records);

  for (auto& r : records) {
    const Case& c = r.test_case;
    if (c.op == GK_OP_GEMM) {
      // Tensor-core rates for tf32 are half the f16/bf16 rate (NVIDIA Ampere..Blackwell,
      // AMD CDNA3); without tensor cores every dtype runs at the FP32 FMA rate.
      const double tensor = info_.peak_tensor_gflops;
      switch (c.type) {
        case BenchType::kF32:
          r.peak = info_.peak_f32_gflops;
          break;
        case BenchType::kTF32:
          r.peak = tensor > 0 ? tensor / 2 : info_.peak_f32_gflops;
          break;
        default:
          r.peak = tensor > 0 ? tensor : info_.peak_f32_gflops;
      }
    } else {
      r.peak = info_.peak_bandwidth_gbps;
    }
    if (!r.measured) continue;
    if (r.peak > 0) r.pct_of_peak = 100.0 * r.rate / r.peak;
    if (reference) {
      // Timed in the rung's own loop where it was (a GPU), else the reference's record.
      r.reference = reference->variant;
      if (!r.reference_ms || &r == reference) r.reference_ms = reference->timing.median_ms;
      r.pct_of_reference = 100.0 * *r.reference_ms / r.timing.median_ms;
    }
  }
}

}  // namespace gpukern::bench
