#!/usr/bin/env bash
# Prepares the device check's bundle in .device/ (ignored by git), here,
# where Go is, for a GPU machine without Go or network that gets the
# working tree and .device/ (under 64 MiB) and runs scripts/cuda-check/run.sh
# once (see docs/backends.md, "Device tests"):
#
#   scripts/cuda-check/prepare.sh GGML_SOURCE
#
# GGML_SOURCE is ggml's source: a git directory of github.com/ggml-org/ggml
# (a clone, or the git directory of a mirror), archived at $GGML_REF
# (default v0.21.0, the newest release there; graphc supports 0.9.0 to
# 0.25.x), or a .tar.gz of it with one top directory. Without the argument
# a bundle already holding ggml.tar.gz keeps it.
#
# The bundle: ggml's source, to build on the device; the test binaries
# (CGO_ENABLED=0 go test -c) of runtime/ggml, runtime/cuda (runtime/vulkan
# for GPU=vulkan*), cmd/graphc/internal/cli and examples/llamavulkan
# regenerated for $GPU (the pipelined plan, 4 copies); graphc; and every
# program those tests and the bench run, built here into $GRAPHC_PROGRAMS
# (the tests' prepare mode), with the two 1B-class files' headers they are
# compiled for. GPU=vulkan0 prepares the same for a Vulkan device: the
# rehearsal (scripts/cuda-check/rehearse.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GPU="${GPU:-cuda0}"
case "$GPU" in
  cuda[0-9]*) SUPPORTS=./runtime/cuda ;;
  vulkan[0-9]*) SUPPORTS=./runtime/vulkan ;;
  *) echo "GPU=$GPU: want cuda<N> or vulkan<N>" >&2; exit 2 ;;
esac
B=.device
GGML_REF="${GGML_REF:-v0.21.0}"
start=$(date +%s)
say() { echo "== $* ($(($(date +%s) - start)) s)"; }

src="${1:-}"
mkdir -p "$B"
if [ -n "$src" ]; then
  rm -f "$B/ggml.tar.gz" "$B/ggml.commit"
  if [ -d "$src" ] && git --git-dir="$src" rev-parse -q --verify "$GGML_REF^{commit}" >/dev/null 2>&1; then
    git --git-dir="$src" archive --format=tar.gz --prefix=ggml/ "$GGML_REF" >"$B/ggml.tar.gz"
    git --git-dir="$src" rev-parse --short=7 "$GGML_REF^{commit}" >"$B/ggml.commit"
  elif [ -d "$src/.git" ] && git -C "$src" rev-parse -q --verify "$GGML_REF^{commit}" >/dev/null 2>&1; then
    git -C "$src" archive --format=tar.gz --prefix=ggml/ "$GGML_REF" >"$B/ggml.tar.gz"
    git -C "$src" rev-parse --short=7 "$GGML_REF^{commit}" >"$B/ggml.commit"
  elif [ -f "$src" ]; then
    cp "$src" "$B/ggml.tar.gz"
    echo unknown >"$B/ggml.commit"
  else
    echo "$src: neither a git directory of ggml with $GGML_REF nor a .tar.gz" >&2
    exit 2
  fi
elif [ ! -f "$B/ggml.tar.gz" ]; then
  cat >&2 <<EOF
no ggml source: give a git directory of github.com/ggml-org/ggml (git clone
https://github.com/ggml-org/ggml; it is archived at \$GGML_REF, default
$GGML_REF) or a .tar.gz of its source:
  $0 /path/to/ggml
EOF
  exit 2
fi
tar -tzf "$B/ggml.tar.gz" | grep '^[^/]*/src/ggml-cuda/CMakeLists.txt$' >/dev/null ||
  { echo "$B/ggml.tar.gz has no src/ggml-cuda/CMakeLists.txt: not ggml's source" >&2; exit 2; }
echo "$GPU" >"$B/gpu"

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/bin" "$W/programs"
export CGO_ENABLED=0 # the device may lack a C library matching this one's

say "test binaries and graphc"
go build -o "$W/bin/graphc" ./cmd/graphc
go test -c -o "$W/bin/ggml.test" ./runtime/ggml
go test -c -o "$W/bin/supports.test" "$SUPPORTS"
go test -c -o "$W/bin/cli.test" ./cmd/graphc/internal/cli

say "examples/llamavulkan regenerated for $GPU (the pipelined plan, 4 copies), in a copy of the tree"
T="$W/tree"
mkdir -p "$T"
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - | tar -x -C "$T" -f -
( cd "$T/examples/llamavulkan"
  sed -i "s/^const gpu = \"vulkan0\"$/const gpu = \"$GPU\"/" llamavulkan_test.go
  grep -q "^const gpu = \"$GPU\"$" llamavulkan_test.go || { echo "llamavulkan_test.go has no line const gpu = \"vulkan0\"" >&2; exit 1; }
  rm -f llama_gen.go
  "$W/bin/graphc" compile -backends "$GPU,cpu" -n-copies 4 -ot 'blk\.[01]\.=cpu' -ot 'cache_._l[01]=cpu' \
    -ot "blk\.[23]\.=$GPU" -ot "cache_._l[23]=$GPU" -ot "output=$GPU" -pkg llamavulkan -o . ../llama/llama.g
  go test -count=1 -run '^TestGeneratedUpToDate$' .
  go test -c -o "$W/bin/pipelined.test" . )

say "the device tests' programs (cli.test in prepare mode: each run that needs $GPU skips)"
rc=0
( cd cmd/graphc/internal/cli &&
  GRAPHC_PROGRAMS="$W/programs" GRAPHC_TEST_PREPARE=1 GRAPHC_TEST_GPU="$GPU" \
    "$W/bin/cli.test" -test.count=1 -test.v -test.run '^(TestGPULlama|TestGPUQuantized|TestGGMLCheckGPU)$' ) >"$W/prepare.log" 2>&1 || rc=$?
grep -E '^ *--- ' "$W/prepare.log" | sed 's/ (.*//' | sort | uniq -c | sed 's/^/  /'
[ "$rc" = 0 ] || { cat "$W/prepare.log" >&2; echo "the device tests failed preparing" >&2; exit 1; }
echo "  $(ls "$W/programs" | wc -l) programs"

say "the bench's programs: 1B-class llama files (q4_0, f16) on $GPU"
# The files' headers are what the programs are compiled for; run.sh writes
# the same files on the device with the same command (bench1b.sh).
BENCH_DIR="${GRAPHC_BENCH_FILES:-${XDG_CACHE_HOME:-$HOME/.cache}/graphc/cuda-check}"
mkdir -p "$BENCH_DIR"
for t in q4_0 f16; do
  f="$BENCH_DIR/llama-1b-$t.gguf"
  [ -f "$f" ] || GRAPHC=$W/bin/graphc scripts/cuda-check/bench1b.sh gguf "$t" "$f"
  before=$(ls "$W/programs" | wc -l)
  GRAPHC_PROGRAMS="$W/programs" GRAPHC=$W/bin/graphc scripts/cuda-check/bench1b.sh bench "$GPU" "$f" >/dev/null 2>"$W/bench.err" || true
  after=$(ls "$W/programs" | wc -l)
  [ "$after" -gt "$before" ] || { cat "$W/bench.err" >&2; echo "the bench built no program for $f" >&2; exit 1; }
done

say "packing"
( cd "$W" && tar -c bin programs | xz -T0 -9 >"$ROOT/$B/payload.tar.xz" )
ls -l "$B"
tree_bytes=$(git ls-files -co --exclude-standard -z | du --files0-from=- -cb | tail -1 | cut -f1)
bundle_bytes=$(du -sb "$B" | cut -f1)
total=$((tree_bytes + bundle_bytes))
echo "carried: working tree $((tree_bytes >> 20)) MiB + $B $((bundle_bytes >> 20)) MiB = $((total >> 20)) MiB ($total bytes; the limit is 64 MiB)"
[ "$total" -lt $((64 << 20)) ] || { echo "over 64 MiB" >&2; exit 1; }
say "done"
