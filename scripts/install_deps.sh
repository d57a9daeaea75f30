#!/usr/bin/env bash
# Installs the system packages a target needs when they are missing (Debian/Ubuntu, as
# root), or says in one line exactly what to install. Idempotent: nothing is done when all
# are present.
#   scripts/install_deps.sh demo    what `make demo` needs (C compiler, hwloc, udev)
#   scripts/install_deps.sh check   what `make check` needs as well (Fortran, CMake, clang's
#                                   libFuzzer, valgrind, Python venv, Open MPI and
#                                   libclang for the distributed tests)
set -euo pipefail
what=${1:-demo}
pkgs=(gcc make pkg-config libhwloc-dev libudev-dev)
if [ "$what" = check ]; then
  pkgs+=(g++ gfortran cmake python3 python3-venv clang libclang-rt-14-dev valgrind \
    openmpi-bin libopenmpi-dev libclang-dev)
fi
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "missing system packages; install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "Rust is missing; install it with: curl --proto '=https' -sSf https://sh.rustup.rs | sh -s -- -y (then open a new shell)" >&2
  exit 1
fi
if [ "$what" = check ] && command -v rustup >/dev/null 2>&1; then
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
fi
