// Which vendor's compiler is compiling: includes its runtime and storage-type headers
// and defines GPUKERN_CUDA or GPUKERN_HIP. The first include of portable.cuh and of
// every cuda/arch/ header (which must not include portable.cuh: portable.cuh includes
// them).
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>  // hip_bfloat16 (HIP 5.2 has no hip_bf16.h)
#define GPUKERN_HIP 1
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define GPUKERN_CUDA 1
#endif
