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
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
