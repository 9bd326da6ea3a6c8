#!/usr/bin/env bash
# Builds everything, idempotently: set-up if needed, the native core + tests + benchmark (build/native),
# the two wasm modules into dist/ and the wasm tests (build/wasm), and the static site (build/site).
# Toolchain pitfalls handled here are explained in shared/TOOLCHAIN.md (sections in brackets).
#
# What keeps it fast (issue 24, measured in the README's test-time table): Ninja; the core libraries as unity builds
# (CMakeLists.txt); the test units at -O1 (tests/cpp/CMakeLists.txt); ccache for g++ and em++ with its cache outside
# the clone (~/.cache/ccache unless CCACHE_DIR says otherwise; ATTNSCOPE_CCACHE=0 turns it off); and the native and
# wasm trees built side by side, so that one tree's single-threaded links (wasm-opt) overlap the other's compiles.
# ATTNSCOPE_BUILD_TIMES=FILE appends "tree wall-seconds" lines for scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh debian
# the npm install runs beside the C++ builds, which need none of it (emcc's acorn is Debian's); the site needs it
bash scripts/setup.sh npm &
npm_pid=$!

JOBS=${JOBS:-$(nproc)}
export NODE_PATH=/usr/share/nodejs   # emcc needs acorn from Debian's node modules for -O2+ links [2]

GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
LAUNCHER=()
if [[ ${ATTNSCOPE_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  # Paths relative to the clone and no working directory in the hash: a clean clone in another folder (CI's) hits
  # what an earlier clone compiled. The cache itself never lives in the clone.
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# configure DIR CMAKE-ARGS...: a tree configured by another generator (an older checkout's Makefiles) is made anew,
# since CMake refuses to switch generators in place.
configure() {
  local dir=$1; shift
  local want=${GEN[1]:-Unix Makefiles}
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=$want" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  "$@" -B "$dir" "${GEN[@]}" "${LAUNCHER[@]}" >/dev/null
}

# build NAME DIR JOBS: builds one tree and records its wall time.
build() {
  local name=$1 dir=$2 jobs=$3 t0=$SECONDS
  cmake --build "$dir" -j"$jobs"
  [[ -n ${ATTNSCOPE_BUILD_TIMES:-} ]] && echo "$name $((SECONDS - t0))" >>"$ATTNSCOPE_BUILD_TIMES"
  return 0
}

native() {
  if [[ ${ATTNSCOPE_SKIP_NATIVE:-0} != 1 ]]; then
    configure build/native cmake -S . -DCMAKE_BUILD_TYPE=Release ${ATTNSCOPE_CMAKE_ARGS:-}
    build native build/native "$1"
  fi
  # The same Catch2 tests under AddressSanitizer + UBSan (test command only: ATTNSCOPE_ASAN=1).
  if [[ ${ATTNSCOPE_ASAN:-0} == 1 ]]; then
    configure build/asan cmake -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_SANITIZE=ON -DATTNSCOPE_BENCH=OFF
    build asan build/asan "$1"
  fi
}

wasm() {
  # Pass the emulator explicitly: emcmake's default adds a flag Node 20 rejects [4].
  configure build/wasm emcmake cmake -S . -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node \
    ${ATTNSCOPE_CMAKE_ARGS:-}
  build wasm build/wasm "$1"
}

if [[ ${ATTNSCOPE_SKIP_NATIVE:-0} == 1 && ${ATTNSCOPE_ASAN:-0} != 1 ]] || (( JOBS < 2 )); then
  native "$JOBS"
  wasm "$JOBS"
else
  # Side by side, each in a background subshell (where set -e holds) with every core: a tree whose work is a
  # single-threaded link leaves its core to the other, and the tree that ends first leaves none idle. Either one
  # failing fails the build, after both have ended.
  native "$JOBS" &
  native_pid=$!
  wasm "$JOBS" &
  wasm_pid=$!
  native_ok=0 wasm_ok=0
  wait "$native_pid" || native_ok=$?
  wait "$wasm_pid" || wasm_ok=$?
  (( native_ok == 0 && wasm_ok == 0 )) || { echo "build: failed (native: exit $native_ok, wasm: exit $wasm_ok)" >&2; exit 1; }
fi

wait "$npm_pid" || { echo "build: the npm install failed (scripts/setup.sh npm)" >&2; exit 1; }
node scripts/build-site.mjs
# the notebook viewer attnscope.show() embeds (python/attnscope/viewer, before `pip install ./python`)
node scripts/build-notebook.mjs
