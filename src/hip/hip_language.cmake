# Finds a compiler for CMake's HIP language; included by the top-level CMakeLists.txt
# before enable_language(HIP), in place of check_language(HIP).
#
# ROCm's own layout (/opt/rocm) needs nothing special: check_language(HIP) finds its
# clang. Debian's packages (hipcc 5.2.3 with clang-15, libamdhip64-dev,
# rocm-device-libs) need three things CMake 3.25 does not do by itself:
#   * the hip-lang package lives in the multiarch directory lib/<triplet>/cmake, where
#     CMake 3.25 does not look (it wants <rocm root>/lib/cmake/hip-lang): we point
#     CMAKE_HIP_COMPILER_ROCM_ROOT at a two-line forwarding package in the build tree;
#   * clang finds neither the HIP headers nor the device libraries unaided: we pass
#     --rocm-path and --hip-device-lib-path in CMAKE_HIP_FLAGS;
#   * the default clang++ may be another version than the one hipcc drives (Debian 12:
#     clang++ is clang-14, hipcc uses clang-15): we take the one hipconfig names.
# Before enabling HIP the compiler is asked to build a small kernel for every entry of
# GPUKERN_HIP_ARCHS (cached), so GPUKERN_HIP=AUTO turns HIP off instead of failing
# later when the toolchain cannot target them.
#
# Sets CMAKE_HIP_COMPILER (NOTFOUND when no usable compiler was found, with the reason
# in GPUKERN_HIP_NOT_FOUND_REASON), and for Debian's layout CMAKE_HIP_FLAGS and
# CMAKE_HIP_COMPILER_ROCM_ROOT.

set(GPUKERN_HIP_NOT_FOUND_REASON "")

find_program(GPUKERN_HIPCONFIG hipconfig HINTS ENV ROCM_PATH PATH_SUFFIXES bin)
if(GPUKERN_HIPCONFIG)
  execute_process(COMMAND ${GPUKERN_HIPCONFIG} --rocmpath OUTPUT_VARIABLE _gk_rocm_path
                  RESULT_VARIABLE _gk_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

if(NOT GPUKERN_HIPCONFIG OR NOT _gk_rocm_path OR EXISTS "${_gk_rocm_path}/lib/cmake/hip-lang/hip-lang-config.cmake")
  # No hipconfig (no ROCm at all, or a layout CMake knows): CMake's own search.
  if(NOT DEFINED CMAKE_HIP_COMPILER)
    check_language(HIP)
  endif()
  if(NOT CMAKE_HIP_COMPILER)
    set(GPUKERN_HIP_NOT_FOUND_REASON "no HIP compiler (clang with ROCm) found")
  endif()
  return()
endif()

# ---- Debian's layout ----
find_file(GPUKERN_HIP_LANG_CONFIG hip-lang-config.cmake
  PATHS "${_gk_rocm_path}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/hip-lang"
  NO_DEFAULT_PATH)
find_path(GPUKERN_HIP_DEVICE_LIBS ockl.bc
  PATHS "${_gk_rocm_path}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode"
        "${_gk_rocm_path}/lib/amdgcn/bitcode" "${_gk_rocm_path}/amdgcn/bitcode"
  NO_DEFAULT_PATH)
if(NOT GPUKERN_HIP_LANG_CONFIG)
  set(GPUKERN_HIP_NOT_FOUND_REASON "hipcc found, but not the hip-lang CMake package (libamdhip64-dev)")
elseif(NOT GPUKERN_HIP_DEVICE_LIBS)
  set(GPUKERN_HIP_NOT_FOUND_REASON "hipcc found, but not the ROCm device libraries (rocm-device-libs)")
endif()
if(GPUKERN_HIP_NOT_FOUND_REASON)
  set(CMAKE_HIP_COMPILER NOTFOUND)
  return()
endif()

if(NOT DEFINED CMAKE_HIP_COMPILER)
  # The clang hipcc drives: hipconfig names its directory and, in the include flags,
  # its version (".../lib/clang/15.0.6").
  execute_process(COMMAND ${GPUKERN_HIPCONFIG} --hipclangpath OUTPUT_VARIABLE _gk_clang_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GPUKERN_HIPCONFIG} --cpp_config OUTPUT_VARIABLE _gk_cpp_config
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(_gk_clang_names clang++)
  if(_gk_cpp_config MATCHES "lib/clang/([0-9]+)")
    set(_gk_clang_names clang++-${CMAKE_MATCH_1} clang++)
    list(APPEND _gk_clang_dir /usr/lib/llvm-${CMAKE_MATCH_1}/bin)
  endif()
  find_program(GPUKERN_HIP_CLANG NAMES ${_gk_clang_names} HINTS ${_gk_clang_dir} NO_DEFAULT_PATH)
  if(NOT GPUKERN_HIP_CLANG)
    set(GPUKERN_HIP_NOT_FOUND_REASON "hipcc found, but not its clang (${_gk_clang_names} in ${_gk_clang_dir})")
    set(CMAKE_HIP_COMPILER NOTFOUND)
    return()
  endif()
  set(_gk_hip_compiler ${GPUKERN_HIP_CLANG})
else()
  set(_gk_hip_compiler ${CMAKE_HIP_COMPILER})
endif()

set(_gk_layout_flags "--rocm-path=${_gk_rocm_path} --hip-device-lib-path=${GPUKERN_HIP_DEVICE_LIBS}")

# Can it build for every target? Asked once per compiler, flags and target list.
set(_gk_probe_key "${_gk_hip_compiler} ${_gk_layout_flags} ${GPUKERN_HIP_ARCHS}")
if(NOT GPUKERN_HIP_PROBE_KEY STREQUAL _gk_probe_key)
  set(_gk_probe_dir ${CMAKE_BINARY_DIR}/CMakeFiles/gpukern-hip-probe)
  file(WRITE ${_gk_probe_dir}/probe.hip
    "#include <hip/hip_runtime.h>\n__global__ void probe(float* x) { x[threadIdx.x] = __AMDGCN_WAVEFRONT_SIZE; }\n")
  set(_gk_arch_flags)
  foreach(_gk_arch IN LISTS GPUKERN_HIP_ARCHS)
    list(APPEND _gk_arch_flags --offload-arch=${_gk_arch})
  endforeach()
  separate_arguments(_gk_flag_list UNIX_COMMAND "${_gk_layout_flags}")
  execute_process(COMMAND ${_gk_hip_compiler} -x hip ${_gk_flag_list} ${_gk_arch_flags} -c probe.hip -o probe.o
                  WORKING_DIRECTORY ${_gk_probe_dir} RESULT_VARIABLE _gk_rc
                  OUTPUT_VARIABLE _gk_out ERROR_VARIABLE _gk_out)
  if(_gk_rc EQUAL 0)
    set(GPUKERN_HIP_PROBE_ERROR "" CACHE INTERNAL "")
  else()
    string(REGEX REPLACE "\n.*" "" _gk_out "${_gk_out}")
    set(GPUKERN_HIP_PROBE_ERROR "${_gk_hip_compiler} cannot build for ${GPUKERN_HIP_ARCHS}: ${_gk_out}"
        CACHE INTERNAL "")
  endif()
  set(GPUKERN_HIP_PROBE_KEY "${_gk_probe_key}" CACHE INTERNAL "")
endif()
if(GPUKERN_HIP_PROBE_ERROR)
  set(GPUKERN_HIP_NOT_FOUND_REASON "${GPUKERN_HIP_PROBE_ERROR}")
  set(CMAKE_HIP_COMPILER NOTFOUND)
  return()
endif()

# The forwarding package CMake loads as <rocm root>/lib/cmake/hip-lang. Its
# dependencies sit beside it, where CMake's try_compile projects would not look either.
get_filename_component(_gk_package_dir "${GPUKERN_HIP_LANG_CONFIG}" DIRECTORY)
get_filename_component(_gk_package_dir "${_gk_package_dir}" DIRECTORY)
set(_gk_root ${CMAKE_BINARY_DIR}/CMakeFiles/gpukern-hip-root)
file(WRITE ${_gk_root}/lib/cmake/hip-lang/hip-lang-config.cmake
  "# Generated by src/hip/hip_language.cmake: forwards to Debian's multiarch hip-lang package.\n"
  "foreach(_gk_dep amd_comgr AMDDeviceLibs hsa-runtime64)\n"
  "  if(NOT DEFINED \${_gk_dep}_DIR AND EXISTS \"${_gk_package_dir}/\${_gk_dep}\")\n"
  "    set(\${_gk_dep}_DIR \"${_gk_package_dir}/\${_gk_dep}\")\n"
  "  endif()\n"
  "endforeach()\n"
  "include(\"${GPUKERN_HIP_LANG_CONFIG}\")\n")

set(CMAKE_HIP_COMPILER ${_gk_hip_compiler} CACHE FILEPATH "HIP compiler")
set(CMAKE_HIP_COMPILER_ROCM_ROOT ${_gk_root})
# A normal variable over the (user's) cache entry, rebuilt at every configure.
set(CMAKE_HIP_FLAGS "$CACHE{CMAKE_HIP_FLAGS} ${_gk_layout_flags}")
