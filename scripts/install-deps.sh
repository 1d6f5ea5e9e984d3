#!/usr/bin/env bash
# Installs what libgpukern builds and tests with, skipping what is present: Debian's
# packages, and where a CUDA compiler is found, the two NVIDIA tools the SASS check of
# the tensor-core rungs (ctest cuda.tc_sass) runs: cuobjdump, and the nvdisasm it calls.
# CUDA (nvcc) itself is not a Debian package here: the CUDA backend is built when nvcc
# is found.
#   GPUKERN_CUDA_TOOLS_DIR  where the NVIDIA tools go (default /usr/local/lib/gpukern-cuda-tools)
#   GPUKERN_BIN_DIR         where links to them go, a directory on PATH (default /usr/local/bin)
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config ccache git
          libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
          libopenblas-dev python3 python3-pip python3-matplotlib hipcc)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# cuobjdump -sass runs nvdisasm, which it looks for beside its own (link-resolved) file,
# on PATH and in NVDISASM_PATH; without it cuobjdump fails ("Could not find executable
# file 'nvdisasm'"). A bare nvcc install may have neither tool. NVIDIA's PyPI wheels of
# the two (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) unpack side by side into
# nvidia/<cuda>/bin/. pip --target puts them in a directory of their own, whatever
# manages the system's Python (a Debian Python refuses plain pip installs), and links
# in a directory on PATH make them the ones the check finds.
have_cuda_compiler() {
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDACXX:-}" ]
}
# True when the cuobjdump found on PATH can disassemble: nvdisasm beside it or on PATH.
sass_tools_work() {
  local cuobjdump
  cuobjdump=$(command -v cuobjdump) || return 1
  [ -x "$(dirname "$(readlink -f "$cuobjdump")")/nvdisasm" ] || command -v nvdisasm >/dev/null
}
if have_cuda_compiler && ! sass_tools_work; then
  tools_dir=${GPUKERN_CUDA_TOOLS_DIR:-/usr/local/lib/gpukern-cuda-tools}
  bin_dir=${GPUKERN_BIN_DIR:-/usr/local/bin}
  echo "installing NVIDIA cuobjdump and nvdisasm (PyPI wheels) into $tools_dir" >&2
  # One pip call, so that the two come in the same version, into the same directory.
  if $SUDO python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir \
       --root-user-action=ignore --upgrade --target "$tools_dir" \
       nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2; then
    for tool in cuobjdump nvdisasm; do
      found=$(ls "$tools_dir"/nvidia/*/bin/"$tool" 2>/dev/null | sort | head -n 1 || true)
      if [ -n "$found" ]; then $SUDO ln -sf "$found" "$bin_dir/$tool"; fi
    done
  fi
  if sass_tools_work; then
    echo "cuobjdump for the SASS check: $(command -v cuobjdump)" >&2
  else
    echo "warning: no working cuobjdump + nvdisasm on PATH; ctest cuda.tc_sass will skip" >&2
  fi
fi
