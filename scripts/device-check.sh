#!/usr/bin/env bash
# Device check: runs graphc's device tests against ggml's CUDA device 0 on
# a machine with an NVIDIA GPU, as CI runs them against Vulkan (lavapipe).
# Needs Go, npm, the NVIDIA driver and the CUDA 12 runtime libraries
# (libcudart.so.12, libcublas.so.12) on the library path. The libraries are
# node-llama-cpp's ggml build with CUDA, fetched once into the cache.
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
DIR="$CACHE/node-llama-cpp-${PKG#linux-x64-}"
if [ ! -d "$DIR/package/bins/$PKG" ]; then
  mkdir -p "$DIR"
  ( cd "$DIR" && npm pack -q "@node-llama-cpp/$PKG@3.22.1" >/dev/null && tar xzf "node-llama-cpp-$PKG-3.22.1.tgz" )
fi
export GRAPHC_GGML_PATH="$DIR/package/bins/$PKG" GRAPHC_TEST_GPU="$GPU" GRAPHC_REQUIRE_GGML=1
LOG="${TMPDIR:-/tmp}/device-check-$GPU-$(date +%Y%m%d-%H%M%S).log"
{
  go run ./cmd/graphc devices
  go test -count=1 -v ./runtime/ggml -run 'TestOpsMatchCPU|TestDevices'
  go test -count=1 -v ./cmd/graphc/internal/cli -run 'TestGPULlama|TestGPUQuantized|TestGGMLCheckGPU'
} 2>&1 | tee "$LOG"
echo "log: $LOG"
