// Driver of the conformance suite.
//   gpukern_conformance_tests [--backend=cpu|cuda|hip|all] [gtest flags]
// --backend limits the parameters to one backend (ctest runs each backend, and the CPU
// once per GPUKERN_CPU_ISA path). Exit status 77 (ctest's SKIP_RETURN_CODE) when every
// test was skipped: no device, or a CPU without the requested ISA.
#include "support/backends.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const char* prefix = "--backend=";
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0)
      gpukern::test::select_backends(argv[i] + std::strlen(prefix));
    else
      args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  ::testing::InitGoogleTest(&count, args.data());

  const char* isa = std::getenv("GPUKERN_CPU_ISA");
  std::cout << "conformance: GPUKERN_TEST_SEED=" << gpukern::test::base_seed()
            << " GPUKERN_CPU_ISA=" << (isa ? isa : "(unset)") << "\n";
  const int status = RUN_ALL_TESTS();
  const auto& unit = *::testing::UnitTest::GetInstance();
  if (status == 0 && unit.test_to_run_count() == 0) {
    std::cout << "conformance: nothing to run here (for the declines groups: every rung lists every dtype)\n";
    return 77;
  }
  if (status == 0 && unit.successful_test_count() == 0 && unit.skipped_test_count() > 0) {
    std::cout << "conformance: every test was skipped (see the reasons above)\n";
    return 77;
  }
  return status;
}
