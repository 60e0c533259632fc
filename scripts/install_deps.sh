#!/usr/bin/env bash
# Installs the Debian packages hearth needs to build and test, and only those
# that are missing, so `make test` on a prepared machine touches nothing.
# Usage: scripts/install_deps.sh [extra-package ...]
set -euo pipefail

packages=(
  cmake make g++                   # the build
  libopenblas-dev                  # GEMM for the CPU backend (cblas.h)
  libdnnl-dev                      # oneDNN: the CPU backend's convolutions (optional: the build
                                   # falls back to im2col + OpenBLAS without it)
  nlohmann-json3-dev               # JSON: configs, metrics, safetensors headers
  libcli11-dev                     # the `hearth` command line
  zlib1g-dev                       # gzipped dataset files
  libutf8proc-dev                  # Unicode data for the BERT tokenizer
  libpcre2-dev                     # the split patterns of byte-level BPE tokenizers (tokenizer.json)
  libjpeg62-turbo-dev libpng-dev   # decoding JPEG and PNG images (hearth/data/image_io)
  googletest libgtest-dev libgmock-dev  # the test suite
  dataset-fashion-mnist            # the data `hearth` trains on out of the box
  python3                          # helper scripts, the kill-and-resume test
  pkg-config                       # the packaging test builds a program with hearth.pc
  qemu-user                        # the test that hearth runs on a CPU without AVX (emulated)
  clang-14 libclang-rt-14-dev libomp-14-dev  # the libFuzzer targets (make fuzz): clang, its
                                   # fuzzer and sanitizer runtimes, and OpenMP for clang
  libgloo-dev                      # data-parallel training on the CPU (the gloo process group)
  libvulkan-dev libvulkan-volk-dev glslc spirv-tools  # the Vulkan backend: headers, volk (opens the
                                   # loader at run time), the GLSL compiler for its kernels
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools  # its tests: lavapipe (software
                                   # Vulkan), the validation layer, vulkaninfo
)
packages+=("$@")

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_deps: not a Debian-family system (no dpkg-query/apt-get); install the equivalents of:" >&2
  echo "  ${packages[*]}" >&2
  echo "install_deps: continuing; CMake will name anything still missing." >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "install_deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install_deps: need root to install ${missing[*]}, and sudo is not available; run as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
