# Installs the build tree into a temporary prefix, then builds and runs the examples
# against that prefix only: examples/gemm_softmax and examples/attention through
# find_package(gpukern CONFIG) and examples/c_api through pkg-config. Runs with GPUKERN_BACKEND=cpu.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... \
#         -DCXX_COMPILER=... -DC_COMPILER=... -DPKG_CONFIG=... -P install_test.cmake
cmake_minimum_required(VERSION 3.21)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER C_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(example_build ${WORK_DIR}/gemm_softmax)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(step description)
  message(STATUS "install test: ${description}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: '${description}' failed (${result})")
  endif()
endfunction()

step("install the build tree into ${prefix}"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# Nothing from the source or build tree may be needed: only the prefix is given.
step("configure examples/gemm_softmax against the prefix"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/gemm_softmax -B ${example_build}
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
step("build examples/gemm_softmax" ${CMAKE_COMMAND} --build ${example_build})
step("run examples/gemm_softmax with GPUKERN_BACKEND=cpu"
  ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=cpu ${example_build}/gemm_softmax)

set(attention_build ${WORK_DIR}/attention)
step("configure examples/attention against the prefix"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/attention -B ${attention_build}
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
step("build examples/attention" ${CMAKE_COMMAND} --build ${attention_build})
step("run examples/attention with GPUKERN_BACKEND=cpu"
  ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=cpu ${attention_build}/attention)
step("run examples/attention --causal --dtype bf16 with GPUKERN_BACKEND=cpu"
  ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=cpu ${attention_build}/attention --causal --dtype bf16 --seq 45)

if(NOT PKG_CONFIG)
  message(STATUS "install test: pkg-config not found; the C example is not built")
  return()
endif()
file(GLOB pc_dirs LIST_DIRECTORIES true ${prefix}/lib*/pkgconfig)
if(NOT pc_dirs)
  message(FATAL_ERROR "install test: no gpukern.pc installed under ${prefix}/lib*/pkgconfig")
endif()
list(JOIN pc_dirs ":" pc_path)
set(ENV{PKG_CONFIG_PATH} ${pc_path})
foreach(query cflags libs)
  execute_process(COMMAND ${PKG_CONFIG} --${query} gpukern
    OUTPUT_VARIABLE flags_${query} OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: pkg-config --${query} gpukern failed")
  endif()
  separate_arguments(flags_${query} UNIX_COMMAND "${flags_${query}}")
endforeach()
execute_process(COMMAND ${PKG_CONFIG} --variable=libdir gpukern
  OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
step("build examples/c_api with pkg-config --cflags --libs gpukern"
  ${C_COMPILER} -std=c99 -Wall -Wextra ${flags_cflags}
    ${SOURCE_DIR}/examples/c_api/main.c -o ${WORK_DIR}/c_api_example
    ${flags_libs} -Wl,-rpath,${libdir} -lm)
step("run examples/c_api with GPUKERN_BACKEND=cpu"
  ${CMAKE_COMMAND} -E env GPUKERN_BACKEND=cpu ${WORK_DIR}/c_api_example)
