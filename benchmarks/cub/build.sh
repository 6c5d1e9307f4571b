#!/usr/bin/env bash
# Builds the CUB anchor harness: bash benchmarks/cub/build.sh BUILD_DIR  ->  BUILD_DIR/cub_anchors
# CUB_ARCH overrides the target (default sm_90, the H200); NVCC overrides the compiler.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$1
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${CUB_ARCH:-sm_90}
mkdir -p "$build_dir"
set -x
"$nvcc" -O3 -std=c++17 -arch="$arch" -o "$build_dir/cub_anchors" "$source_dir/cub_anchors.cu"
