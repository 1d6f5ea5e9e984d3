#!/usr/bin/env bash
# Builds and runs the CUDA softmax development driver (src/cuda/softmax/dev): every
# rung x configuration x dtype x shape checked against a double-precision reference
# and timed against a device-to-device copy of the same bytes and against cuDNN.
#
#   scripts/cuda_softmax_device.sh build        # here: nvcc -> build-softmax/softmax_driver
#   scripts/cuda_softmax_device.sh run [ARGS]   # on the GPU machine: logs under $OUT (or ./build-softmax)
#
# The driver needs no module glue: it builds a CudaContext itself and calls the rungs
# through softmax_ladder(). cuDNN is found through GPUKERN_CUDNN_PATH, which `run`
# points at python's nvidia-cudnn wheel when libcudnn.so.9 is not on the search path.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-softmax
ARCH=${GPUKERN_SOFTMAX_ARCH:-"-gencode arch=compute_90a,code=sm_90a"}

build() {
  mkdir -p "$BUILD/obj"
  local flags="-std=c++17 -O3 -I src -I include -Xcompiler -fPIC"
  local objs=()
  for f in src/cuda/softmax/*.cu; do
    local o="$BUILD/obj/$(basename "$f" .cu).o"
    objs+=("$o")
    # shellcheck disable=SC2086
    nvcc $flags $ARCH -Xptxas -warn-spills -c "$f" -o "$o" &
  done
  for f in src/cuda/softmax/dev/*.cpp src/core/dtype.cpp; do
    local o="$BUILD/obj/$(basename "$f" .cpp).o"
    objs+=("$o")
    # shellcheck disable=SC2086
    nvcc $flags -x cu $ARCH -c "$f" -o "$o" &
  done
  wait
  # shellcheck disable=SC2086
  nvcc $ARCH "${objs[@]}" -o "$BUILD/softmax_driver" -ldl -lpthread
  echo "built $BUILD/softmax_driver"
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
    timeout "$limit" "$BUILD/softmax_driver" "--$name" --out "$out" "$@" > "$out/$name.log" 2>&1 || status=$?
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
