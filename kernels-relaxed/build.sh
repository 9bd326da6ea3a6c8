#!/usr/bin/env bash
# Builds the relaxed-SIMD leaf kernel module (TOOLCHAIN.md 15): usage build.sh <source.c> <output.wasm> [shared].
# `shared`: the variant for the threaded module, whose memory is shared (a module importing a memory must declare
# it shared to accept a shared one): the import becomes (memory 2 65536 shared), up to the main module's 4 GiB.
# clang-16 -c then wasm-ld-16 (a one-step clang link would run binaryen's wasm-opt, which cannot read the
# relaxed opcodes). wasm-ld 16 always defines a __stack_pointer global and a one-slot function table, even
# when nothing uses them; the kernel uses neither, so they are removed through wabt's text form, leaving a
# module whose only import is the memory and whose only export is the micro-kernel. Called by CMakeLists.txt.
set -euo pipefail
src=$1
out=$2
shared=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clang-16 --target=wasm32 -O3 -msimd128 -mrelaxed-simd -nostdlib -Wall -Wextra -Werror -c "$src" -o "$tmp/k.o"
wasm-ld-16 --no-entry --import-memory --strip-all "$tmp/k.o" -o "$tmp/k.wasm"
wasm2wat --enable-relaxed-simd "$tmp/k.wasm" -o "$tmp/k.wat"
# the unused table and stack pointer: fail loudly if the code refers to either
if grep -Eq 'global\.(get|set)|call_indirect|table\.' "$tmp/k.wat"; then
  echo "build.sh: error: $src uses a global or the table; the kernel must be a leaf" >&2
  exit 1
fi
sed -E '/^ *\((table|global) /d' "$tmp/k.wat" > "$tmp/leaf.wat"
features=(--enable-relaxed-simd)
if [[ $shared == shared ]]; then
  grep -Eq '^ *\(import "env" "memory" \(memory \(;0;\) [0-9]+\)\)$' "$tmp/leaf.wat" \
    || { echo "build.sh: error: unexpected memory import in $src" >&2; exit 1; }
  sed -E -i 's/^( *\(import "env" "memory" \(memory \(;0;\) [0-9]+)\)\)$/\1 65536 shared))/' "$tmp/leaf.wat"
  features+=(--enable-threads)
fi
wat2wasm "${features[@]}" "$tmp/leaf.wat" -o "$out"
wasm-validate "${features[@]}" "$out"
