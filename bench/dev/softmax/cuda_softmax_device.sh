#!/usr/bin/env bash
# Builds and runs the CUDA softmax development driver (bench/dev/softmax): every rung's
# policy and the development candidates checked against a double-precision reference
# and timed against a device-to-device copy of the same bytes and against cuDNN.
#
#   bench/dev/softmax/cuda_softmax_device.sh build        # here: the CMake build with -DGPUKERN_BUILD_DEV=ON
#   bench/dev/softmax/cuda_softmax_device.sh run [ARGS]   # on the GPU machine: logs under $OUT (or the build folder)
#
# BUILD (default: build) is the CMake build folder; GPUKERN_CUDA_ARCHS (default: 90a) the
# targets of a build it configures. cuDNN is found through GPUKERN_CUDNN_PATH, which `run`
# points at python's nvidia-cudnn wheel when libcudnn.so.9 is not on the search path.
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUILD=${BUILD:-build}

build() {
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKERN_HIP=OFF \
      -DGPUKERN_CUDA_ARCHS="${GPUKERN_CUDA_ARCHS:-90a}" -DGPUKERN_BUILD_DEV=ON
  else
    cmake "$BUILD" -DGPUKERN_BUILD_DEV=ON
  fi
  cmake --build "$BUILD" --target softmax_driver softmax_phase_probe
  echo "built $BUILD/bin/softmax_driver and $BUILD/bin/softmax_phase_probe"
}

run() {
  local out=${OUT:-$BUILD}
  mkdir -p "$out"
  if ! ldconfig -p 2>/dev/null | grep -q 'libcudnn.so.9' && [ -z "${GPUKERN_CUDNN_PATH:-}" ]; then
    local dir
    dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)
    [ -n "$dir" ] && export GPUKERN_CUDNN_PATH="$dir/lib"
  fi
  echo "GPUKERN_CUDNN_PATH=${GPUKERN_CUDNN_PATH:-}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv || true
  # Phases, each with its own time limit (seconds) and log: perf first, it is the
  # part that matters most when the lease is short.
  local phases=${PHASES:-"perf:${PERF_LIMIT:-110} tests:${TESTS_LIMIT:-60} big:${BIG_LIMIT:-40}"}
  local status=0
  for p in $phases; do
    local name=${p%%:*} limit=${p##*:}
    timeout "$limit" "$BUILD/bin/softmax_driver" "--$name" --out "$out" "$@" > "$out/$name.log" 2>&1 || status=$?
    echo "---- $name (exit $status) ----"
    grep -E "^(\[|tests:|big tests:|PASSED|FAILED|  FAIL|  big )" "$out/$name.log" | tail -n 40 || true
  done
  # The summary table last: the reply carries the end of the output.
  [ -f "$out/perf.log" ] && sed -n '/^shape /,$p' "$out/perf.log"
  return $status
}

case "${1:-}" in
  build) build ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 build | run [driver args]" >&2; exit 2 ;;
esac
