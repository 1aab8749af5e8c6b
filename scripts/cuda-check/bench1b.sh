#!/usr/bin/env bash
# The 1B-class bench's two commands, for prepare.sh (here) and run.sh (on
# the device) alike: the programs prepared here are the ones whose source
# the device's bench generates only if the file's header and the bench's
# compile flags are the same on both machines.
#
#   bench1b.sh gguf q4_0|f16 FILE   Llama-3.2-1B's shape, random weights
#   bench1b.sh bench GPU FILE...    graphc bench -llama on GPU, -ngl 99
#
# $GRAPHC is the graphc binary; $BENCH_THREADS (4) and $BENCH_REPS (2) are
# the run's, not the compile's.
set -euo pipefail
cmd="$1"
shift
case "$cmd" in
  gguf)
    exec "$GRAPHC" gguf new -arch llama -layers 16 -embd 2048 -heads 32 -kv-heads 8 -ff 8192 -vocab 128256 \
      -ctx 131072 -rope-theta 500000 -tied -seed 1 -type "$1" "$2" ;;
  bench)
    gpu="$1"
    shift
    files=()
    for f in "$@"; do files+=(-file "$f"); done
    exec "$GRAPHC" bench -llama -backends "$gpu,cpu" -ngl 99 -pp 512 -tg 128 \
      -threads "${BENCH_THREADS:-4}" -reps "${BENCH_REPS:-2}" "${files[@]}" ;;
  *) echo "usage: $0 gguf TYPE FILE | bench GPU FILE..." >&2; exit 2 ;;
esac
