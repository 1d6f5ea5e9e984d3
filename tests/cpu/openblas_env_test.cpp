// OPENBLAS_CORETYPE without racing other threads: the first use of OpenBLAS must leave the
// environment alone (another thread may be reading it, and glibc's setenv/unsetenv race with
// getenv: ThreadSanitizer reports it), and the core is chosen when libgpukern is loaded,
// while the process still runs a single thread. The decision itself (who sets what when)
// is tested with made-up inputs in isa_test.cpp.
#include "cpu/cpu_features.hpp"
#include "cpu/openblas.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace gpukern::cpu {
namespace {

/// Whether some OpenBLAS is in the process already (then openblas() loaded it earlier,
/// or the program did).
bool openblas_in_process() {
  for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libblas.so.3"})
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(handle);  // drops the reference RTLD_NOLOAD took
      return true;
    }
  return false;
}

std::vector<std::string> environment_entries() {
  std::vector<std::string> out;
  for (char** entry = environ; *entry; ++entry) out.emplace_back(*entry);
  return out;
}

TEST(OpenBlasEnvironment, FirstUseLeavesTheEnvironmentAlone) {
  if (openblas_in_process())
    GTEST_SKIP() << "OpenBLAS is already loaded in this process: run this test on its own (as ctest does)";
  // A thread reads the environment throughout the first use, as an application's threads
  // may (walking `environ` here, so that ThreadSanitizer sees the reads: it reports the
  // array a setenv allocates meanwhile as written by one thread and read by another).
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      long entries = 0;
      for (char** entry = environ; *entry; ++entry) entries += (*entry)[0] != '\0';
      if (entries > 0 || std::getenv("OPENBLAS_CORETYPE") != nullptr) ++reads;
    }
  });
  while (reads.load() == 0) std::this_thread::yield();  // the reader is running
  char** const array_before = environ;
  const std::vector<std::string> before = environment_entries();
  const OpenBlas& ob = openblas();
  done = true;
  reader.join();
  // setenv of a new variable moves the environment to a new array, and unsetenv removes
  // the variable again: the entries alone would look untouched.
  EXPECT_EQ(environ, array_before) << "the first use of OpenBLAS reallocated the environment (setenv)";
  EXPECT_EQ(environment_entries(), before) << "the first use of OpenBLAS changed the environment";
  EXPECT_TRUE(ob.loaded || !ob.unavailable.empty());
}

TEST(OpenBlasEnvironment, CoreChosenWhenTheLibraryWasLoaded) {
  const CoretypeAtLoad& at = openblas_coretype_at_load();
  const std::string wanted = openblas_coretype_for(cpu_features().flags);
  EXPECT_EQ(std::string(at.core), wanted);
  if (at.user_set) GTEST_SKIP() << "OPENBLAS_CORETYPE was set before this test program started";
  if (wanted.empty()) GTEST_SKIP() << "this CPU wants no particular OpenBLAS core (no AVX2)";
  // This program starts no thread before main: libgpukern was loaded by a single thread.
  EXPECT_EQ(at.threads, 1);
  EXPECT_TRUE(at.set);
  const char* now = std::getenv("OPENBLAS_CORETYPE");
  ASSERT_NE(now, nullptr) << "OPENBLAS_CORETYPE is not in the environment";
  EXPECT_EQ(std::string(now), wanted);

  const bool loaded_before = openblas_in_process();
  const OpenBlas& ob = openblas();
  if (!ob.loaded) GTEST_SKIP() << "OpenBLAS not available here: " << ob.unavailable;
  if (loaded_before) GTEST_SKIP() << "OpenBLAS was loaded before this test: its core was chosen then";
  EXPECT_NE(ob.coretype_note.find("chosen from cpuid when libgpukern was loaded"), std::string::npos)
      << ob.coretype_note;
  EXPECT_EQ(openblas_core_generation(ob.core), cpu_generation(cpu_features().flags))
      << "OpenBLAS runs core " << ob.core << " (" << ob.coretype_note << ")";
}

}  // namespace
}  // namespace gpukern::cpu
