#!/usr/bin/env bash
# Installs every system package dist needs, from Debian's apt only.
# Idempotent: prints nothing and exits 0 when everything is already present.
# clang-22 and its runtimes (libclang-rt-22-dev) build the libFuzzer harnesses
# (utils/fuzz.sh) and the ASan+UBSan configuration (utils/check.sh --sanitize).
# clang-format-22 checks the C++ layout (.clang-format; test/format.test).
# OpenBLAS gives the runtime's host matrix products (distRtGemm) CBLAS.
# CUDA/NCCL are optional: they are looked for by CMake, never installed here.
set -euo pipefail

PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  cmake ninja-build g++
  openmpi-bin libopenmpi-dev
  libopenblas-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-pytest python3-numpy
  gnuplot-nox
  clang-22 libclang-rt-22-dev clang-format-22
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || { echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
else
  SUDO=
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! $SUDO apt-get update -qq >"$log" 2>&1; then
  echo "setup.sh: 'apt-get update' failed:" >&2; tail -n 20 "$log" >&2; exit 1
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  echo "setup.sh: 'apt-get install ${missing[*]}' failed:" >&2; tail -n 20 "$log" >&2; exit 1
fi
rm -f "$log"
echo "setup.sh: done"
