#!/usr/bin/env bash
# Installs gpuprim's CMake package from the current build, builds examples/cpp against it with nothing but
# the prefix of that install (as README's C++ section says), and runs the API example (main.cpp); given a
# folder of AOTInductor packages (examples/export_aoti.py --out DIR), builds and runs aoti_main.cpp on it instead.
# Usage: examples/cpp/build_and_run.sh [python] [aoti_dir]   (python: the interpreter that has torch)
set -euo pipefail
python=${1:-python3}
aoti_dir=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${GPUPRIM_CPP_EXAMPLE_DIR:-$root/examples/cpp/build}
build_dir=${GPUPRIM_BUILD_DIR:-$root/build/cmake}
# Prefer the cmake/ninja that pip installed next to this Python (newer than many system ones).
export PATH="$(dirname "$("$python" -c 'import sys; print(sys.executable)')"):$PATH"
cmake --install "$build_dir" --prefix "$work/install" >/dev/null
cmake -S "$root/examples/cpp" -B "$work/app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/install" >/dev/null
if [ -z "$aoti_dir" ]; then
  cmake --build "$work/app" --target gpuprim_example
  "$work/app/gpuprim_example"
else
  cmake --build "$work/app" --target gpuprim_aoti
  "$work/app/gpuprim_aoti" "$aoti_dir"
fi
