#!/usr/bin/env bash
# Rehearses the device check here, on the same script path as the device:
# prepare.sh for GPU (default vulkan0: Mesa's lavapipe here), then a copy
# of what a device call carries (the working tree's tracked and untracked
# files, and .device/) in $REHEARSE_DIR (default /tmp/rehearse), its size
# checked against the 64 MiB limit, then run.sh in it with Go off $PATH and
# an empty $OUT, as on the device.
#
#   scripts/cuda-check/rehearse.sh [GGML_SOURCE]
#
# GGML_LIBS=DIR skips the ggml build, using prebuilt libraries (ggml's
# Vulkan build from @node-llama-cpp/linux-x64-vulkan); BUILD_S and
# DEADLINE_S pass through (a Vulkan build on a few cores takes longer than
# the lease's CUDA one). The build stays in $REHEARSE_DIR.build, as it
# does on a device machine held between calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
export GPU="${GPU:-vulkan0}"
R="${REHEARSE_DIR:-/tmp/rehearse}"
t0=$(date +%s)
scripts/cuda-check/prepare.sh "$@"
t1=$(date +%s)

rm -rf "$R" "$R.out"
mkdir -p "$R" "$R.out" "$R.build"
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - | tar -x -C "$R" -f -
cp -a .device "$R/.device"
ln -s "$R.build" "$R/.device-build"
bytes=$(du -sb --exclude=.device-build "$R" | cut -f1)
echo "== carried: $((bytes >> 20)) MiB ($bytes bytes; the limit is 64 MiB)"
[ "$bytes" -lt $((64 << 20)) ] || { echo "over 64 MiB" >&2; exit 1; }

nogo=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -x "$d/go" ] || nogo="${nogo:+$nogo:}$d"
done
rc=0
( cd "$R" && env PATH="$nogo" OUT="$R.out" bash scripts/cuda-check/run.sh ) || rc=$?
t2=$(date +%s)
echo "== rehearsal: prepare $((t1 - t0)) s, run.sh $((t2 - t1)) s (exit $rc); results in $R.out"
exit $rc
