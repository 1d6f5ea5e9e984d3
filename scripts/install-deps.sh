#!/usr/bin/env bash
# Installs the Debian packages libgpukern builds with (skips what is present).
# CUDA (nvcc) is not a Debian package here: the CUDA backend is built when nvcc is found.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config ccache git
          libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
          libopenblas-dev python3 python3-matplotlib hipcc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The SASS check of the tensor-core rungs (ctest cuda.tc_sass) needs cuobjdump, which a
# bare nvcc install may lack: take NVIDIA's wheel of it from PyPI.
if command -v nvcc >/dev/null && ! command -v cuobjdump >/dev/null && command -v python3 >/dev/null &&
   ! python3 -c 'import glob, nvidia, sys; sys.exit(not any(glob.glob(d + "/*/bin/cuobjdump") for d in nvidia.__path__))' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-cuobjdump >&2 ||
    echo "warning: could not install nvidia-cuda-cuobjdump; ctest cuda.tc_sass will skip" >&2
fi
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
