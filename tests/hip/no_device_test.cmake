# ctest hip.no_device: on a machine without an AMD GPU the HIP module loads, reports
# itself unavailable with the reason ("no HIP device: ..."), `GPUKERN_BACKEND=hip
# gpukern-info` prints that reason and exits non-zero, and `auto` moves on (to cpu
# here: the CUDA module is not part of this check).
# Run as: cmake -DINFO=<gpukern-info> -P no_device_test.cmake. Exit 77 (skipped) where
# an AMD GPU may be present (/dev/kfd exists).

cmake_minimum_required(VERSION 3.25)

if(EXISTS /dev/kfd)
  message("SKIPPED: /dev/kfd exists (an AMD GPU may be present); this test is for machines without one")
  cmake_language(EXIT 77)
endif()

set(failures "")
macro(fail text)
  message("FAIL: ${text}")
  string(APPEND failures "${text}\n")
endmacro()

execute_process(COMMAND ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=hip ${INFO}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("GPUKERN_BACKEND=hip gpukern-info: exit ${rc}\n${out}${err}")
if(rc EQUAL 0)
  fail("GPUKERN_BACKEND=hip gpukern-info exited 0 without an AMD GPU")
endif()
if(NOT err MATCHES "backend 'hip' is unavailable: no HIP device: ")
  fail("GPUKERN_BACKEND=hip: the error does not give the HIP module's reason")
endif()
if(NOT out MATCHES "backend hip: unavailable: no HIP device: [^\n]* - compile-verified only: shares the CUDA-tested kernel sources; not run on AMD hardware")
  fail("gpukern-info does not list hip as unavailable with its reason and note (module not loaded?)")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=auto ${INFO}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  fail("GPUKERN_BACKEND=auto gpukern-info exited ${rc}: ${err}")
endif()
if(out MATCHES "selects hip")
  fail("auto selected the unavailable hip backend")
endif()
if(NOT out MATCHES "GPUKERN_BACKEND=auto selects (cpu|cuda):0")
  fail("auto did not move on to another backend:\n${out}")
endif()

if(failures)
  message(FATAL_ERROR "hip.no_device failed:\n${failures}")
endif()
message("hip.no_device: OK")
