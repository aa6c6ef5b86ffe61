#!/usr/bin/env bash
# Installs the build dependencies from the distribution's packages (Debian 12 / Ubuntu
# 24.04). The CUDA toolkit (nvcc, cudart, cuBLAS, CUPTI, NVTX) is expected under
# /usr/local/cuda. Skips apt-get when everything is already there or when not root.
set -euo pipefail
# python3-dev: the headers and libpython that the harness embeds for --python variants
# (docs/python.md); without it the harness still builds, and refuses --python.
# zlib1g-dev: reading gzip-compressed reports (reports/baselines keeps them so); without it
# the harness still builds, and says how to decompress such a file.
packages=(cmake ninja-build g++ pkg-config libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3-dev zlib1g-dev)
missing=()
for p in "${packages[@]}" "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-deps: missing packages: ${missing[*]} (run as root with apt-get)" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: no CUDA toolkit found (expected /usr/local/cuda/bin/nvcc)" >&2
  exit 1
fi
