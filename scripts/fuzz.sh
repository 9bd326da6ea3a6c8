#!/usr/bin/env bash
# scripts/fuzz.sh [seconds-per-target] [target ...]: build attnscope's libFuzzer harnesses (fuzz/fuzz_*.cpp, with
# ASan + UBSan, fail on first report) and run each target for the given time (default 60 s), one after another.
# Corpora: fuzz/corpus/<target> is copied to build/fuzz/corpus/<target> (new inputs stay out of git).
# Prints one line per target; exits 1 if any target crashed (the crash file path is on its line), 2 on setup or
# build errors. Details: fuzz/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/fuzz"
SECONDS_PER_TARGET="${1:-60}"
shift || true
ALL_TARGETS=(fuzz_tokenize fuzz_bpe fuzz_wordpiece fuzz_tokenizer_json fuzz_safetensors fuzz_attention fuzz_model fuzz_hf_checkpoint)
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

die() { echo "fuzz.sh: $*" >&2; exit 2; }
[[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || die "seconds-per-target must be a positive integer, got '$SECONDS_PER_TARGET'"
for t in "${TARGETS[@]}"; do
  [[ -f "$ROOT/fuzz/$t.cpp" ]] || die "unknown target '$t' (known: ${ALL_TARGETS[*]})"
done

# ---- toolchain: clang-14 + libFuzzer runtime (libclang-rt-14-dev), nlohmann/json (TOOLCHAIN.md 12)
fuzzer_rt() { compgen -G "/usr/lib/llvm-14/lib/clang/14*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; }
missing=()
command -v clang++-14 >/dev/null || missing+=(clang-14)
fuzzer_rt || missing+=(libclang-rt-14-dev)
[[ -f /usr/include/nlohmann/json.hpp ]] || missing+=(nlohmann-json3-dev)
command -v make >/dev/null || missing+=(make)
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    die "missing ${missing[*]}; install them as root: apt-get install -y ${missing[*]}"
  fi
  echo "fuzz.sh: installing ${missing[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
  command -v clang++-14 >/dev/null && fuzzer_rt || die "clang-14 / libclang_rt.fuzzer still missing after install"
fi

# ---- build (incremental; 2 jobs: the machine has 2 shared cores)
mkdir -p "$BUILD"
if ! make -C "$ROOT" -f fuzz/Makefile -j2 BUILD="$BUILD" "${TARGETS[@]/#/$BUILD/}" >"$BUILD/build.log" 2>&1; then
  tail -n 40 "$BUILD/build.log" >&2
  die "build failed (full log: $BUILD/build.log)"
fi

# ---- run
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
failed=0
mkdir -p "$BUILD/corpus" "$BUILD/artifacts" "$BUILD/logs"
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  [[ -d "$ROOT/fuzz/corpus/$t" ]] && cp "$ROOT/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  dict=()
  [[ -f "$ROOT/fuzz/dict/$t.dict" ]] && dict=("-dict=$ROOT/fuzz/dict/$t.dict")
  log="$BUILD/logs/$t.log"
  rm -f "$BUILD/artifacts/$t-"*
  set +e
  "$BUILD/$t" "$corpus" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t-" >"$log" 2>&1
  rc=$?
  set -e
  # Last status line: "#123456 DONE cov: 1234 ft: 5678 corp: 90/12Kb ..." (or the last pulse before a crash).
  status_line=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  [[ -z "$runs" ]] && runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$status_line")
  cov=$(grep -oE 'cov: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  ft=$(grep -oE 'ft: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  corp=$(grep -oE 'corp: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  if [[ $rc -eq 0 ]]; then
    printf '%-17s ok     runs=%s cov=%s ft=%s corpus=%s time=%ss\n' "$t" "${runs:-?}" "${cov:-?}" "${ft:-?}" \
      "${corp:-?}" "$SECONDS_PER_TARGET"
  else
    failed=1
    crash=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
    what=$(grep -m1 -E 'FUZZ_CHECK failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:' "$log" \
           | sed -E 's/^==[0-9]+==//' | cut -c1-160 || true)
    printf '%-17s CRASH  runs=%s cov=%s ft=%s crash=%s log=%s\n    %s\n    reproduce: %s %s\n' "$t" "${runs:-?}" \
      "${cov:-?}" "${ft:-?}" "${crash:-none}" "$log" "${what:-exit $rc}" "$BUILD/$t" "${crash:-<input>}"
  fi
done
exit $failed
