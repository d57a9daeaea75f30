#!/usr/bin/env bash
# Installs NVRTC (libnvrtc.so.12) and ptxas from PyPI into .venv-cuda (idempotent; no
# CUDA toolkit or GPU needed) and prints the environment the compile checks use:
#   eval "$(scripts/cuda_tools.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-cuda
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" >&2
fi
site=$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')
if [ ! -e "$site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -x "$site/nvidia/cuda_nvcc/bin/ptxas" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    'nvidia-cuda-nvrtc-cu12>=12.4,<13' 'nvidia-cuda-nvcc-cu12>=12.4,<13' >&2
fi
echo "export LD_LIBRARY_PATH=$PWD/${site#$PWD/}/nvidia/cuda_nvrtc/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
echo "export SPGEMM_PTXAS=$PWD/${site#$PWD/}/nvidia/cuda_nvcc/bin/ptxas"
