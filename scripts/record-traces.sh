#!/usr/bin/env bash
# Records ggml's own scheduling of graphs as ggmltrace traces
# (docs/ggml-traces.md): fetches ggml at a commit, switches on the
# scheduler's cause codes in that local checkout, builds ggml's CPU and RPC
# libraries and tools/tracerec against them, starts ggml's rpc-server as
# the GPU and runs the recorder once per case.
#
#   scripts/record-traces.sh [-o DIR] [CASE...]   record (default: the moe_* cases, into ggmltrace/testdata)
#   scripts/record-traces.sh -check               re-record llama_partial and llama_full into a temporary
#                                                 directory and compare them with the committed traces
#   scripts/record-traces.sh -list                the cases tools/tracerec knows
#
# Environment:
#   GGML_SRC           where to clone ggml from: a URL or a local git directory (default https://github.com/ggml-org/ggml)
#   GGML_COMMIT        the commit (default d99724f2b141fed9e1a9f402213506c081433465, that of the committed traces)
#   TRACEREC_DIR       work directory: the checkout, its build and the recorder (default ${TMPDIR:-/tmp}/graphc-tracerec)
#   GRAPHC_RPC_SERVER  ggml's rpc-server built from the same commit (default: rpc-server on $PATH)
#   RPC_PORT           the server's loopback port (default 50052; the backend's name, RPC0[127.0.0.1:PORT], is recorded)
#   JOBS               parallel build jobs (default 2)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
GGML_SRC=${GGML_SRC:-https://github.com/ggml-org/ggml}
GGML_COMMIT=${GGML_COMMIT:-d99724f2b141fed9e1a9f402213506c081433465}
TRACEREC_DIR=${TRACEREC_DIR:-${TMPDIR:-/tmp}/graphc-tracerec}
RPC_PORT=${RPC_PORT:-50052}
JOBS=${JOBS:-2}

out="$root/ggmltrace/testdata"
mode=record
cases=()
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2; shift 2 ;;
	-check) mode=check; shift ;;
	-list) mode=list; shift ;;
	-h | -help | --help) sed -n '2,19p' "$0"; exit 0 ;;
	-*) echo "record-traces.sh: unknown flag $1" >&2; exit 2 ;;
	*) cases+=("$1"); shift ;;
	esac
done

src="$TRACEREC_DIR/ggml"
bin="$TRACEREC_DIR/tracerec"
mkdir -p "$TRACEREC_DIR"

# The checkout, at GGML_COMMIT.
if [ ! -e "$src/.git" ]; then
	git clone --quiet --no-checkout "$GGML_SRC" "$src"
fi
git -C "$src" checkout --quiet -- . 2>/dev/null || true
git -C "$src" checkout --quiet --detach "$GGML_COMMIT"

# The local edit, never committed anywhere: ggml's own SET_CAUSE debug
# block switched on (the "#if 0" right above GGML_SCHED_MAX_SPLITS_DEBUG),
# and tools/tracerec/sched_access.cpp appended for read-only access to the
# scheduler's causes and splits.
be="$src/src/ggml-backend.cpp"
awk '
	prev_if0 && /^#define GGML_SCHED_MAX_SPLITS_DEBUG/ { print "#if 1"; n++ }
	prev_if0 && !/^#define GGML_SCHED_MAX_SPLITS_DEBUG/ { print "#if 0" }
	{ prev_if0 = ($0 == "#if 0") }
	!prev_if0 { print }
	END { if (n != 1) { print "record-traces.sh: no SET_CAUSE debug block found" > "/dev/stderr"; exit 1 } }
' "$be" > "$be.tmp"
mv "$be.tmp" "$be"
cat "$root/tools/tracerec/sched_access.cpp" >> "$be"

# ggml's CPU and RPC libraries, static, with the CPU features of the
# rpc-server the traces were recorded against (AVX2, FMA, F16C, no OpenMP).
if [ ! -f "$src/build/CMakeCache.txt" ]; then
	cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
		-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF \
		-DGGML_RPC=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$src/build" -j"$JOBS" --target ggml ggml-base ggml-cpu ggml-rpc >/dev/null
lib="$src/build/src"
g++ -std=c++17 -O1 -Wall -Wextra -I"$src/include" "$root/tools/tracerec/tracerec.cpp" -o "$bin" \
	"$lib/libggml.a" "$lib/libggml-cpu.a" "$lib/ggml-rpc/libggml-rpc.a" "$lib/libggml-base.a" -lpthread -lm

if [ "$mode" = list ]; then
	"$bin" -list
	exit 0
fi

# ggml's rpc-server as the GPU, killed by its pid however this ends.
server=${GRAPHC_RPC_SERVER:-$(command -v rpc-server || true)}
if [ -z "$server" ] || [ ! -x "$server" ]; then
	echo "record-traces.sh: no rpc-server: set GRAPHC_RPC_SERVER to ggml's rpc-server built from $GGML_COMMIT" >&2
	exit 1
fi
"$server" -H 127.0.0.1 -p "$RPC_PORT" -t 1 >"$TRACEREC_DIR/rpc-server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$RPC_PORT") 2>/dev/null; then
		break
	fi
	kill -0 "$pid" 2>/dev/null || { cat "$TRACEREC_DIR/rpc-server.log" >&2; exit 1; }
	sleep 0.1
done

record() { # case dir
	"$bin" -case "$1" -rpc "127.0.0.1:$RPC_PORT" -commit "$GGML_COMMIT" -o "$2/$1.json"
	echo "recorded $2/$1.json"
}

if [ "$mode" = check ]; then
	tmp=$(mktemp -d)
	for c in llama_partial llama_full; do
		record "$c" "$tmp"
	done
	cd "$root"
	status=0
	GGMLTRACE_RECORDED="$tmp" go test ./ggmltrace -run TestRecorderReproduces -count=1 -v || status=$?
	rm -rf "$tmp"
	exit $status
fi

if [ ${#cases[@]} -eq 0 ]; then
	mapfile -t cases < <("$bin" -list | grep '^moe_')
fi
mkdir -p "$out"
for c in "${cases[@]}"; do
	record "$c" "$out"
done
