// A failed CUDA runtime call in a test's own set-up (allocation, copy, fill, sync) as an
// exception: the test stops with the call and the runtime's message, and it never
// reads as a failure of the code under test.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gpukern::test {

/// Throws std::runtime_error "what: <error string>" unless `e` is cudaSuccess.
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace gpukern::test

/// check_cuda with the call's own text as the message.
#define GK_TEST_CUDA_OK(call) ::gpukern::test::check_cuda((call), #call)
