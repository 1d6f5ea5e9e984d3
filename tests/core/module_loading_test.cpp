// Loading backend modules (src/core/registry.cpp): a damaged module file is refused
// before dlopen (never a SIGBUS), "cpu" loads no module at all, whatever a module
// throws stays inside its backend, `auto` passes over a device that fails to open, and
// GPUKERN_MODULE_PATH set at run time applies until a module is loaded, then is refused.
// The registry steps run in a fresh process (tests/core/modules/registry_driver.cpp)
// with a copy of libgpukern alone in its library directory and the stand-in module
// (tests/core/modules/fake_module.cpp) copied in as libgpukern_cuda.so or _hip.so.
#include "core/registry.hpp"
#include "core/rejection.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

extern char** environ;

namespace gpukern::test {
namespace {

namespace fs = std::filesystem;

/// A fresh directory, removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/gpukern-modules-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  /// A subdirectory, created.
  std::string dir(const std::string& name) const {
    fs::create_directories(path_ / name);
    return (path_ / name).string();
  }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes the first `bytes` bytes of `from` (all of it when bytes is npos) to `to`.
void copy_prefix(const std::string& from, const std::string& to, std::size_t bytes = std::string::npos) {
  const std::string data = read_file(from);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(std::min(bytes, data.size())));
}

/// The file-backed segments of an ELF file of this process's class: {offset, bytes}.
std::vector<std::pair<uint64_t, uint64_t>> file_segments(const std::string& path) {
  const std::string data = read_file(path);
  std::vector<std::pair<uint64_t, uint64_t>> out;
  ElfW(Ehdr) header;
  if (data.size() < sizeof header) return out;
  std::memcpy(&header, data.data(), sizeof header);
  for (int i = 0; i < header.e_phnum; ++i) {
    ElfW(Phdr) segment;
    const std::size_t at = header.e_phoff + static_cast<std::size_t>(i) * sizeof segment;
    if (at + sizeof segment > data.size()) break;
    std::memcpy(&segment, data.data() + at, sizeof segment);
    if (segment.p_type == PT_LOAD && segment.p_filesz > 0) out.emplace_back(segment.p_offset, segment.p_filesz);
  }
  return out;
}

/// Sizes to cut a module file at: inside the ELF header, inside the program headers,
/// and inside every loadable segment (its middle and its last byte).
std::vector<std::size_t> cut_points(const std::string& path) {
  std::vector<std::size_t> cuts = {0, 16, sizeof(ElfW(Ehdr)) - 1, sizeof(ElfW(Ehdr)) + 8};
  for (const auto& [offset, bytes] : file_segments(path)) {
    cuts.push_back(offset + bytes / 2);
    cuts.push_back(offset + bytes - 1);
  }
  return cuts;
}

struct Finished {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string output;  // stdout and stderr together
  std::string describe() const {
    std::ostringstream text;
    if (signal)
      text << "killed by signal " << signal << " (" << strsignal(signal) << ")";
    else
      text << "exit code " << exit_code;
    return text.str() + "; output:\n" + output;
  }
  bool has_line(const std::string& text) const { return output.find(text) != std::string::npos; }
  /// The driver's line that starts with `prefix` ("open cuda:"), or "".
  std::string line(const std::string& prefix) const {
    std::istringstream in(output);
    for (std::string l; std::getline(in, l);)
      if (l.rfind(prefix, 0) == 0) return l;
    return {};
  }
};

/// Runs the registry driver with `steps`, in the environment of this process less
/// every GPUKERN_* variable, plus `env`.
Finished run_driver(const std::vector<std::string>& steps, const std::map<std::string, std::string>& env) {
  std::vector<std::string> variables;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("GPUKERN_", 0) == 0 || env.count(name)) continue;
    variables.push_back(entry);
  }
  for (const auto& [name, value] : env) variables.push_back(name + "=" + value);
  std::vector<char*> envp, argv;
  for (auto& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string program = GPUKERN_TEST_REGISTRY_DRIVER;
  argv.push_back(program.data());
  std::vector<std::string> args = steps;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  Finished result;
  if (spawned != 0) {
    close(pipe_fds[0]);
    result.output = "cannot start " + program + ": " + std::strerror(spawned);
    return result;
  }
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    result.signal = WTERMSIG(status);
  else
    result.exit_code = WEXITSTATUS(status);
  return result;
}

/// A temporary installation: lib/ holds a copy of libgpukern alone (the driver's
/// LD_LIBRARY_PATH, so the directory of libgpukern.so has no module in it), modules/ is
/// GPUKERN_MODULE_PATH, and the fake module's load marker lives beside them.
class ModuleLoading : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_ = temp_.dir("lib");
    modules_ = temp_.dir("modules");
    marker_ = (temp_.path() / "loaded.txt").string();
    const std::string library = GPUKERN_TEST_LIBRARY;
    copy_prefix(library, lib_ + "/" + fs::path(library).filename().string());
  }

  /// The fake module placed as libgpukern_<backend>.so in `dir` (default modules/).
  std::string install_fake(const std::string& backend, std::string dir = {}) const {
    const std::string path = (dir.empty() ? modules_ : dir) + "/libgpukern_" + backend + ".so";
    copy_prefix(GPUKERN_TEST_FAKE_MODULE, path);
    return path;
  }

  Finished run(const std::vector<std::string>& steps, std::map<std::string, std::string> env = {}) const {
    env["LD_LIBRARY_PATH"] = lib_;
    env["GPUKERN_TEST_MODULE_MARKER"] = marker_;
    if (!env.count("GPUKERN_MODULE_PATH")) env["GPUKERN_MODULE_PATH"] = modules_;
    return run_driver(steps, env);
  }

  bool module_was_loaded() const { return fs::exists(marker_); }

  TempDir temp_;
  std::string lib_, modules_, marker_;
};

// ---- the file check itself ----

TEST(ModuleFile, AcceptsWholeModules) {
  EXPECT_EQ(core::check_module_file(GPUKERN_TEST_FAKE_MODULE), "");
  EXPECT_EQ(core::check_module_file(GPUKERN_TEST_LIBRARY), "");
#ifdef GPUKERN_TEST_CUDA_MODULE
  EXPECT_EQ(core::check_module_file(GPUKERN_TEST_CUDA_MODULE), "");
#endif
}

void expect_truncations_refused(const std::string& module) {
  TempDir temp;
  const std::string copy = (temp.path() / "libgpukern_cuda.so").string();
  const auto cuts = cut_points(module);
  ASSERT_GE(cuts.size(), 6u) << module << " has fewer than two loadable segments";
  for (std::size_t cut : cuts) {
    SCOPED_TRACE(module + " cut to " + std::to_string(cut) + " bytes");
    copy_prefix(module, copy, cut);
    const std::string why = core::check_module_file(copy);
    EXPECT_TRUE(contains_word(why, "truncated")) << "reason: \"" << why << "\"";
  }
}

TEST(ModuleFile, RefusesTruncatedCopies) {
  expect_truncations_refused(GPUKERN_TEST_FAKE_MODULE);
#ifdef GPUKERN_TEST_CUDA_MODULE
  expect_truncations_refused(GPUKERN_TEST_CUDA_MODULE);
#endif
}

TEST(ModuleFile, RefusesWhatIsNotALibraryOfThisMachine) {
  TempDir temp;
  const std::string file = (temp.path() / "module.so").string();
  const std::string whole = read_file(GPUKERN_TEST_FAKE_MODULE);
  auto write = [&](const std::string& data) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  };
  auto patched = [&](std::size_t at, const void* bytes, std::size_t n) {
    std::string data = whole;
    std::memcpy(data.data() + at, bytes, n);
    return data;
  };
  write("not a library, just text that is long enough to fill an ELF header's 64 bytes ...");
  EXPECT_TRUE(contains_text(core::check_module_file(file), "not an ELF file"));
  const unsigned char other_class = sizeof(void*) == 8 ? ELFCLASS32 : ELFCLASS64;
  write(patched(EI_CLASS, &other_class, 1));
  EXPECT_TRUE(
      contains_text(core::check_module_file(file), sizeof(void*) == 8 ? "a 32-bit ELF file" : "a 64-bit ELF file"));
  const unsigned char other_order = ELFDATA2LSB + ELFDATA2MSB - whole[EI_DATA];
  write(patched(EI_DATA, &other_order, 1));
  EXPECT_TRUE(contains_text(core::check_module_file(file), "byte order"));
  const uint16_t other_machine = 0x4242, executable = ET_EXEC, bad_entry_size = 7;
  write(patched(offsetof(ElfW(Ehdr), e_machine), &other_machine, 2));
  EXPECT_TRUE(contains_text(core::check_module_file(file), "another machine"));
  write(patched(offsetof(ElfW(Ehdr), e_type), &executable, 2));
  EXPECT_TRUE(contains_text(core::check_module_file(file), "not a shared library"));
  write(patched(offsetof(ElfW(Ehdr), e_phentsize), &bad_entry_size, 2));
  EXPECT_TRUE(contains_text(core::check_module_file(file), "program header table"));
  EXPECT_TRUE(contains_text(core::check_module_file(temp.path().string()), "not a regular file"));
  EXPECT_TRUE(contains_text(core::check_module_file(file + ".missing"), "cannot be read"));
}

// ---- loading, in a fresh process ----

TEST_F(ModuleLoading, DamagedModuleMakesItsBackendUnavailableNotTheProcessDie) {
  std::vector<std::string> modules = {GPUKERN_TEST_FAKE_MODULE};
#ifdef GPUKERN_TEST_CUDA_MODULE
  modules.push_back(GPUKERN_TEST_CUDA_MODULE);
#endif
  for (const std::string& module : modules) {
    for (std::size_t cut : cut_points(module)) {
      SCOPED_TRACE(module + " cut to " + std::to_string(cut) + " bytes as libgpukern_cuda.so");
      copy_prefix(module, modules_ + "/libgpukern_cuda.so", cut);
      const Finished r = run({"open", "cpu", "list", "open", "auto", "open", "cuda"});
      ASSERT_EQ(r.exit_code, 0) << r.describe();
      EXPECT_EQ(r.line("open cpu:"), "open cpu: Success cpu:0") << r.output;
      EXPECT_EQ(r.line("open auto:"), "open auto: Success cpu:0") << r.output;
      EXPECT_TRUE(contains_text(r.line("backend cuda "), "available=0")) << r.output;
      EXPECT_TRUE(contains_text(r.line("backend cuda "), "truncated")) << r.output;
      const std::string cuda = r.line("open cuda:");
      EXPECT_TRUE(contains_text(cuda, "Unavailable") && contains_text(cuda, "truncated")) << r.output;
    }
  }
}

TEST_F(ModuleLoading, CpuLoadsNoGpuModule) {
  install_fake("cuda");
  install_fake("hip");
  Finished r = run({"open", "cpu", "open", "cpu:0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.line("open cpu:"), "open cpu: Success cpu:0") << r.output;
  r = run({"open", "-"}, {{"GPUKERN_BACKEND", "cpu"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.line("open -:"), "open -: Success cpu:0") << r.output;
  EXPECT_FALSE(module_was_loaded()) << "opening the CPU backend loaded: " << read_file(marker_);
  // The marker works: asking for cuda loads its module (and no other).
  r = run({"open", "cuda"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains_text(r.line("open cuda:"), "fake module: no device")) << r.output;
  EXPECT_TRUE(contains_text(read_file(marker_), "loaded " + modules_ + "/libgpukern_cuda.so\n")) << read_file(marker_);
}

class ThrowingProbe : public ModuleLoading, public ::testing::WithParamInterface<const char*> {};

// Whatever a module's probe throws, and whatever its type, that backend is unavailable
// with the reason; the others open.
TEST_P(ThrowingProbe, StaysInsideItsBackend) {
  install_fake("cuda");
  const std::string behaviour = GetParam();
  const Finished r =
      run({"list", "open", "auto", "open", "cpu", "open", "cuda"}, {{"GPUKERN_TEST_MODULE_CUDA", behaviour}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string expected_reason =
      behaviour == "probe_throws_std" ? "fake module: probe failed" : "not a std::exception";
  EXPECT_TRUE(contains_text(r.line("backend cuda "), "available=0")) << r.output;
  EXPECT_TRUE(contains_text(r.line("backend cuda "), expected_reason)) << r.output;
  EXPECT_EQ(r.line("open auto:"), "open auto: Success cpu:0") << r.output;
  EXPECT_EQ(r.line("open cpu:"), "open cpu: Success cpu:0") << r.output;
  const std::string cuda = r.line("open cuda:");
  EXPECT_TRUE(contains_text(cuda, "Unavailable") && contains_text(cuda, expected_reason)) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Registry, ThrowingProbe,
                         ::testing::Values("probe_throws_int", "probe_throws_std", "entry_throws_int"));

class FailingDevice : public ModuleLoading, public ::testing::WithParamInterface<const char*> {};

// A module reports a device that then fails to open: auto moves on (saying why at
// info level); asking for that backend by name is an error with the reason.
TEST_P(FailingDevice, AutoMovesOnExplicitChoiceFails) {
  install_fake("cuda");
  const std::string behaviour = GetParam();
  const Finished r =
      run({"list", "open", "auto", "open", "cuda"}, {{"GPUKERN_TEST_MODULE_CUDA", behaviour}, {"GPUKERN_LOG", "info"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string reason = behaviour == "create_returns_null" ? "returned no device"
                             : behaviour == "create_throws_int" ? "not a std::exception"
                                                                : "fake module: device lost";
  EXPECT_TRUE(contains_text(r.line("backend cuda "), "available=1")) << r.output;
  EXPECT_EQ(r.line("open auto:"), "open auto: Success cpu:0") << r.output;
  const std::string info = r.line("[gpukern info] auto passes over cuda");
  EXPECT_TRUE(contains_text(info, reason)) << "no info line with the reason:\n" << r.output;
  const std::string cuda = r.line("open cuda:");
  EXPECT_TRUE(contains_text(cuda, "DeviceError") && contains_text(cuda, reason)) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Registry, FailingDevice,
                         ::testing::Values("create_returns_null", "create_throws_int", "create_throws_error"));

// gk_set_option("GPUKERN_MODULE_PATH") after a probe found nothing applies (the module
// is looked for again); once a module is loaded the path is fixed, a change is refused,
// and "not found" no longer suggests setting it.
TEST_F(ModuleLoading, ModulePathAppliesUntilAModuleIsLoaded) {
  const std::string empty = temp_.dir("empty"), other = temp_.dir("other");
  install_fake("cuda", other);
  const Finished r =
      run({"set", "GPUKERN_MODULE_PATH", empty, "open", "cuda", "set", "GPUKERN_MODULE_PATH", other, "open", "cuda",
           "set", "GPUKERN_MODULE_PATH", empty, "set", "GPUKERN_MODULE_PATH", other, "open", "hip"},
          {{"GPUKERN_MODULE_PATH", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::istringstream lines(r.output);
  std::vector<std::string> steps;
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("open ", 0) == 0 || l.rfind("set ", 0) == 0) steps.push_back(l);
  ASSERT_EQ(steps.size(), 7u) << r.output;
  EXPECT_EQ(steps[0], "set GPUKERN_MODULE_PATH: Success");
  EXPECT_TRUE(contains_text(steps[1], "not found") && contains_text(steps[1], "set GPUKERN_MODULE_PATH")) << steps[1];
  EXPECT_EQ(steps[2], "set GPUKERN_MODULE_PATH: Success");
  EXPECT_TRUE(contains_text(steps[3], "fake module: no device"))
      << "the new GPUKERN_MODULE_PATH did not apply: " << steps[3];
  EXPECT_TRUE(contains_text(steps[4], "InvalidArgument") &&
              contains_text(steps[4], "GPUKERN_MODULE_PATH='" + empty + "'") &&
              contains_text(steps[4], other + "/libgpukern_cuda.so"))
      << "a change after the module was loaded: " << steps[4];
  EXPECT_EQ(steps[5], "set GPUKERN_MODULE_PATH: Success") << "setting the value in effect again";
  EXPECT_TRUE(contains_text(steps[6], "not found")) << steps[6];
  EXPECT_FALSE(contains_text(steps[6], "set GPUKERN_MODULE_PATH"))
      << "suggests a setting that can no longer take effect: " << steps[6];
  EXPECT_TRUE(contains_text(steps[6], "fixed")) << steps[6];
}

}  // namespace
}  // namespace gpukern::test
