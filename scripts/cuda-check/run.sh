#!/usr/bin/env bash
# The device check, in one command on a GPU machine without Go or network
# (docs/backends.md, "Device tests"): from the bundle scripts/cuda-check/
# prepare.sh made in .device/, it builds ggml's source for the GPU, then
# runs every device check against it and the bench, each phase time-boxed
# so that the whole ends within $DEADLINE_S (default 560 s), and writes its
# log and figures to $OUT: run.log, one log per phase, summary.md and
# summary.json.
#
#   bash scripts/cuda-check/run.sh
#
# GPU (default: the one prepared) is cuda<N>, built with nvcc for
# $CUDA_ARCH (default 90, the H100/H200); or vulkan<N>, ggml built with
# its Vulkan backend. GGML_LIBS=DIR uses prebuilt libraries there instead
# of building; GGML_KIND=cpu builds ggml with its CPU backend alone (the
# rehearsal of the build where neither CUDA nor new enough Vulkan headers
# are: the device checks then stop at "no device"). The build goes to .device-build/,
# not carried, so a second call on the same machine continues it. The
# CUDA build has no flash-attention kernels, so the op test expects
# flash_attn_ext refused (GRAPHC_TEST_GGML_WITHOUT, set here unless given).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=$ROOT/.device
W=$ROOT/.device-build
OUT="${OUT:-$W/out}"
mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run.log") 2>&1
start=$(date +%s)
DEADLINE_S="${DEADLINE_S:-560}"
BUILD_S="${BUILD_S:-360}"
elapsed() { echo $(($(date +%s) - start)); }
left() { echo $((DEADLINE_S - $(elapsed))); }
say() { echo "== $* (at $(elapsed) s)"; }

GPU="${GPU:-$(cat "$B/gpu" 2>/dev/null)}"
case "$GPU" in
  cuda[0-9]*) KIND=cuda SUPPORTS=runtime/cuda ;;
  vulkan[0-9]*) KIND=vulkan SUPPORTS=runtime/vulkan ;;
  *) echo "GPU=$GPU: want cuda<N> or vulkan<N> (is .device/ prepared? scripts/cuda-check/prepare.sh)"; exit 2 ;;
esac
if [ "$(cat "$B/gpu" 2>/dev/null)" != "$GPU" ]; then
  echo "the bundle was prepared for $(cat "$B/gpu" 2>/dev/null || echo nothing), not $GPU: GPU=$GPU scripts/cuda-check/prepare.sh"
  exit 2
fi

# phase NAME SECONDS CMD...: runs CMD with at most SECONDS (less when the
# deadline is nearer, keeping 20 s for the summary), its output in
# $OUT/NAME.log, and records NAME, exit status and seconds. Status 124 is
# the time box; "skipped" means no time was left.
: >"$OUT/phases.tsv"
phase() {
  local name="$1" limit="$2" t0 rc
  shift 2
  local room=$(($(left) - 20))
  [ "$room" -lt "$limit" ] && limit=$room
  if [ "$limit" -lt 5 ]; then
    printf '%s\tskipped\t0\n' "$name" >>"$OUT/phases.tsv"
    say "$name: skipped, no time left"
    return 1
  fi
  say "$name (at most $limit s)"
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" $(($(date +%s) - t0)) >>"$OUT/phases.tsv"
  tail -n 25 "$OUT/$name.log"
  say "$name: exit $rc"
  return $rc
}

say "machine"
uname -a
echo "cores: $(nproc)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
  [ -x "$d/nvcc" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac
done
export PATH
for tool in cmake ninja nvcc glslc ccache xz go; do printf '%s: %s\n' "$tool" "$(command -v $tool || echo none)"; done
command -v nvcc >/dev/null && nvcc --version | tail -n 2
if [ "$(uname -m)" != x86_64 ]; then
  echo "this machine is $(uname -m); the bundle's binaries are linux/amd64: prepare with GOARCH set"
fi

say "unpacking the bundle"
rm -rf "$W/payload" && mkdir -p "$W/payload"
if command -v xz >/dev/null; then
  xz -dc "$B/payload.tar.xz" | tar -x -C "$W/payload"
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$B/payload.tar.xz" "$W/payload"
fi || { echo "cannot unpack $B/payload.tar.xz"; exit 1; }
BIN=$W/payload/bin
export GRAPHC="$BIN/graphc"
ls -l "$BIN"
echo "$(ls "$W/payload/programs" | wc -l) prebuilt programs"

# The bench's files are written while ggml builds: graphc needs no ggml
# for that, and the f16 one is 2.5 GB.
BENCH_FILES=$W/bench
mkdir -p "$BENCH_FILES"
(
  for t in q4_0 f16; do
    f="$BENCH_FILES/llama-1b-$t.gguf"
    # Written under its own name (the file's name is in its metadata, so
    # in the program compiled for it), then moved: whole or not at all.
    if [ ! -f "$f" ]; then
      mkdir -p "$BENCH_FILES/new" && nice scripts/cuda-check/bench1b.sh gguf "$t" "$BENCH_FILES/new/${f##*/}" &&
        mv "$BENCH_FILES/new/${f##*/}" "$f"
    fi
  done
) >"$OUT/bench-files.log" 2>&1 &
files_pid=$!

GGML_KIND="${GGML_KIND:-$KIND}"
build_ggml() {
  local src=$W/ggml-src build=$W/ggml-$GGML_KIND commit opts=() targets=(ggml ggml-cpu) gen=()
  commit=$(cat "$B/ggml.commit" 2>/dev/null || echo unknown)
  if [ "$(cat "$build/.commit" 2>/dev/null)" != "$commit" ] || [ ! -d "$src" ]; then
    rm -rf "$src" "$build"
    mkdir -p "$src" "$build"
    tar -xzf "$B/ggml.tar.gz" -C "$src" --strip-components=1 || return 1
    echo "$commit" >"$build/.commit"
  fi
  command -v cmake >/dev/null || { echo "no cmake on this machine: ggml cannot be built (GGML_LIBS=DIR uses libraries built elsewhere)"; return 1; }
  command -v ninja >/dev/null && gen=(-G Ninja)
  case "$GGML_KIND" in
    # Flash attention's kernels off (ggml v0.21.0 has no option building
    # fewer of them) and one architecture: the build fits the lease. The
    # build then refuses flash_attn_ext (plans with -fa on), which the op
    # test checks instead of running it: GRAPHC_TEST_GGML_WITHOUT below.
    cuda) opts=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DGGML_CUDA_FA=OFF
      -DGGML_CUDA_FA_ALL_QUANTS=OFF -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=none) targets+=(ggml-cuda) ;;
    vulkan) opts=(-DGGML_VULKAN=ON) targets+=(ggml-vulkan) ;;
  esac
  # BACKEND_DL: the backends are modules beside libggml, loaded by
  # ggml_backend_load_all_from_path as graphc does; it wants GGML_NATIVE off.
  # GIT_EXE off: the archive is no repository, and ggml would ask git for
  # the commit it then reports as unknown.
  cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
    -DGIT_EXE=OFF -DGGML_BUILD_COMMIT="$commit" -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$build/bin" \
    -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$build/bin" "${opts[@]}" || return 1
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
}

# The ops the ggml under test lacks: the op test asks the device about
# them and wants a refusal (runtime/ggml's TestOpsMatchCPU). Libraries
# from elsewhere are taken as complete unless the caller says otherwise.
without=""
if [ -n "${GGML_LIBS:-}" ]; then
  LIBS=$GGML_LIBS
  echo "ggml: the libraries in $LIBS (GGML_LIBS), not built"
  printf 'ggml-build\tprebuilt\t0\n' >>"$OUT/phases.tsv"
else
  LIBS=$W/ggml-$GGML_KIND/bin
  [ "$GGML_KIND" = cuda ] && without=flash_attn_ext
  export -f build_ggml
  export W B GGML_KIND CUDA_ARCH
  phase ggml-build "$BUILD_S" bash -c build_ggml
fi
ls -l "$LIBS" 2>/dev/null

export GRAPHC_GGML_PATH=$LIBS GRAPHC_TEST_GPU=$GPU GRAPHC_REQUIRE_GGML=1 GRAPHC_ROOT=$ROOT \
  GRAPHC_PROGRAMS=$W/payload/programs GRAPHC_TEST_GGML_WITHOUT="${GRAPHC_TEST_GGML_WITHOUT-$without}"
echo "ops this ggml lacks (GRAPHC_TEST_GGML_WITHOUT): ${GRAPHC_TEST_GGML_WITHOUT:-none}"
[ "$KIND" = vulkan ] && export GGML_VK_VISIBLE_DEVICES="${GGML_VK_VISIBLE_DEVICES:-0}"
want=$(echo "$GPU" | sed 's/^cuda/CUDA/; s/^vulkan/Vulkan/')

if phase devices 30 "$GRAPHC" devices && grep -q "^  $want " "$OUT/devices.log"; then
  ( cd runtime/ggml && phase ggml-ops 90 "$BIN/ggml.test" -test.count=1 -test.v \
    -test.run '^(TestDevices|TestEveryKernelConstructs|TestOpsMatchCPU|TestCopyBetweenDevices)$' )
  ( cd "$SUPPORTS" && phase supports-op 60 "$BIN/supports.test" -test.count=1 -test.v -test.run '^TestDescriptionsMatchDevices$' )
  ( cd cmd/graphc/internal/cli && phase device-tests 180 "$BIN/cli.test" -test.count=1 -test.v \
    -test.run '^(TestGPULlama|TestGPUQuantized|TestGGMLCheckGPU)$' )
  ( cd examples/llamavulkan && phase pipelined 60 "$BIN/pipelined.test" -test.count=1 -test.v -test.run '^TestPipelined$' )
  say "waiting for the bench's files"
  wait "$files_pid"
  cat "$OUT/bench-files.log"
  phase bench 150 scripts/cuda-check/bench1b.sh bench "$GPU" "$BENCH_FILES/llama-1b-q4_0.gguf" "$BENCH_FILES/llama-1b-f16.gguf"
else
  echo "ggml has no device $want: the device checks are not run"
  kill "$files_pid" 2>/dev/null
fi

say "summary"
{
  echo "# Device check: $GPU"
  echo
  echo "ggml $(cat "$B/ggml.commit" 2>/dev/null), $(sed -n 's/^ggml \([^ ]*\) .*/\1/p' "$OUT/devices.log" 2>/dev/null | head -n 1); $(elapsed) s in all"
  echo
  echo "Ops this ggml lacks, asked and refused rather than run (GRAPHC_TEST_GGML_WITHOUT): ${GRAPHC_TEST_GGML_WITHOUT:-none}"
  echo
  echo "| phase | exit | seconds |"
  echo "| --- | --- | --- |"
  sed 's/\t/ | /g; s/^/| /; s/$/ |/' "$OUT/phases.tsv"
  echo
  echo "## Figures"
  echo
  echo '```'
  grep -h "^  $want \|^ggml [0-9]" "$OUT/devices.log" 2>/dev/null
  grep -h -E "ops asked|refused, as|logits within|within .* of the cpu-only run|evaluations still computing|^\s*--- (FAIL|SKIP)" \
    "$OUT"/ggml-ops.log "$OUT"/supports-op.log "$OUT"/device-tests.log "$OUT"/pipelined.log 2>/dev/null | sed 's/^ *//'
  echo '```'
  echo
  echo "## Bench"
  echo
  echo '```'
  grep -v '^graphc: bench: .* rep [0-9]' "$OUT/bench.log" 2>/dev/null
  echo '```'
} >"$OUT/summary.md"
{
  printf '{"gpu": "%s", "ggml_commit": "%s", "ggml_without": "%s", "seconds": %s, "phases": [' "$GPU" "$(cat "$B/ggml.commit" 2>/dev/null)" \
    "$GRAPHC_TEST_GGML_WITHOUT" "$(elapsed)"
  sep=""
  while IFS=$'\t' read -r name rc secs; do
    printf '%s{"name": "%s", "exit": "%s", "seconds": %s}' "$sep" "$name" "$rc" "$secs"
    sep=", "
  done <"$OUT/phases.tsv"
  printf ']}\n'
} >"$OUT/summary.json"
cat "$OUT/summary.md"
# Exit 0 only if every phase did.
awk -F'\t' '$2 != "0" && $2 != "prebuilt" { bad = 1 } END { exit bad }' "$OUT/phases.tsv"
