#!/usr/bin/env bash
# Builds everything, idempotently: set-up if needed, the native core + tests + benchmark (build/native),
# the two wasm modules into dist/ and the wasm tests (build/wasm), and the static site (build/site).
# Toolchain pitfalls handled here are explained in shared/TOOLCHAIN.md (sections in brackets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

JOBS=${JOBS:-$(nproc)}
export NODE_PATH=/usr/share/nodejs   # emcc needs acorn from Debian's node modules for -O2+ links [2]

if [[ ${ATTNSCOPE_SKIP_NATIVE:-0} != 1 ]]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release ${ATTNSCOPE_CMAKE_ARGS:-} >/dev/null
  cmake --build build/native -j"$JOBS"
fi

# The same Catch2 tests under AddressSanitizer + UBSan (test command only: ATTNSCOPE_ASAN=1).
if [[ ${ATTNSCOPE_ASAN:-0} == 1 ]]; then
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_SANITIZE=ON -DATTNSCOPE_BENCH=OFF >/dev/null
  cmake --build build/asan -j"$JOBS"
fi

# Pass the emulator explicitly: emcmake's default adds a flag Node 20 rejects [4].
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node \
  ${ATTNSCOPE_CMAKE_ARGS:-} >/dev/null
cmake --build build/wasm -j"$JOBS"

node scripts/build-site.mjs
