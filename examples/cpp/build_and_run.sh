#!/usr/bin/env bash
# Installs gpuprim's CMake package from the current build, builds examples/cpp against it, runs it.
# Usage: examples/cpp/build_and_run.sh [python]   (python: the interpreter that has torch)
set -euo pipefail
python=${1:-python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${GPUPRIM_CPP_EXAMPLE_DIR:-$root/examples/cpp/build}
build_dir=${GPUPRIM_BUILD_DIR:-$root/build/cmake}
torch_prefix=$("$python" -c "import torch.utils; print(torch.utils.cmake_prefix_path)")
# Prefer the cmake/ninja that pip installed next to this Python (newer than many system ones).
export PATH="$(dirname "$("$python" -c 'import sys; print(sys.executable)')"):$PATH"
# pip's torch finds NCCL, cuDNN, ... in site-packages/nvidia/*/lib at run time (RUNPATH $ORIGIN);
# the linker needs those folders spelled out, or it may bind an older system copy.
rpath_link=$("$python" - <<'PY'
import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join(sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")) + glob.glob(os.path.join(site, "nvidia", "*", "*", "lib")))))
PY
)
# Without an arch list, torch's CMake probes for a GPU with a test program; name one instead.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
cmake --install "$build_dir" --prefix "$work/install" >/dev/null
cmake -S "$root/examples/cpp" -B "$work/app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/install;$torch_prefix" ${rpath_link:+"-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$rpath_link"} >/dev/null
cmake --build "$work/app"
"$work/app/gpuprim_example"
