#!/usr/bin/env bash
# Device check on a machine with Go and a GPU: runs graphc's device tests
# against ggml's CUDA device 0, as CI runs them against Vulkan (lavapipe).
# ggml's libraries are $GRAPHC_GGML_PATH's where it is set; otherwise
# node-llama-cpp's ggml build with CUDA, fetched once into the cache with
# npm, which needs the CUDA 12 runtime libraries (libcudart.so.12,
# libcublas.so.12) on the library path. A GPU machine without Go or network
# (the CUDA lease) runs scripts/cuda-check instead: prepared here, one call
# there (docs/backends.md, "Device tests").
#
#   scripts/device-check.sh            # cuda0
#   GPU=vulkan0 scripts/device-check.sh  # the same tests on a Vulkan GPU
#
# The log goes to stdout and to $TMPDIR/device-check-<gpu>-<date>.log; record the
# measured differences in the table of docs/backends.md, "Device tests".
set -euo pipefail
cd "$(dirname "$0")/.."
GPU="${GPU:-cuda0}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/graphc"
case "$GPU" in
  cuda*) PKG=linux-x64-cuda ;;
  vulkan*) PKG=linux-x64-vulkan ;;
  *) echo "GPU=$GPU: want cuda<N> or vulkan<N>" >&2; exit 2 ;;
esac
if [ -z "${GRAPHC_GGML_PATH:-}" ]; then
  DIR="$CACHE/node-llama-cpp-${PKG#linux-x64-}"
  if [ ! -d "$DIR/package/bins/$PKG" ]; then
    mkdir -p "$DIR"
    ( cd "$DIR" && npm pack -q "@node-llama-cpp/$PKG@3.22.1" >/dev/null && tar xzf "node-llama-cpp-$PKG-3.22.1.tgz" )
  fi
  export GRAPHC_GGML_PATH="$DIR/package/bins/$PKG"
fi
export GRAPHC_TEST_GPU="$GPU" GRAPHC_REQUIRE_GGML=1
LOG="${TMPDIR:-/tmp}/device-check-$GPU-$(date +%Y%m%d-%H%M%S).log"
{
  go run ./cmd/graphc devices
  go test -count=1 -v ./runtime/ggml -run 'TestOpsMatchCPU|TestDevices|TestCopyBetweenDevices'
  go test -count=1 -v "./runtime/${GPU%%[0-9]*}" -run TestDescriptionsMatchDevices
  go test -count=1 -v ./cmd/graphc/internal/cli -run 'TestGPULlama|TestGPUQuantized|TestGGMLCheckGPU'
} 2>&1 | tee "$LOG"
echo "log: $LOG"
