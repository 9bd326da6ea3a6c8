#!/usr/bin/env bash
# scripts/fuzz.sh [seconds-per-target] [target ...]: build attnscope's libFuzzer harnesses (fuzz/fuzz_*.cpp, with
# ASan + UBSan, fail on first report) and run each target for the given time (default 60 s), one after another.
# scripts/fuzz.sh --runs N [--max-seconds S] [target ...]: run each target for N executions instead (the
# documented long runs: --runs 1000000), with no time limit unless --max-seconds caps each target. A target
# stopped by SIGINT (kill -INT <its pid>, libFuzzer exits 72 after its final stats) is reported "stopped", not
# as a crash. Each result line is also appended to build/fuzz/runs.tsv (date, target, result, runs, seconds,
# exec/s, cov, ft, corpus entries, crash file).
# Corpora: fuzz/corpus/<target> is copied to build/fuzz/corpus/<target> (new inputs stay out of git).
# Prints one line per target; exits 1 if any target crashed (the crash file path is on its line), 2 on setup or
# build errors. Details: fuzz/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/fuzz"
die() { echo "fuzz.sh: $*" >&2; exit 2; }
RUNS=""
RUNS_MODE=""
if [[ "${1:-}" == "--runs" ]]; then
  RUNS_MODE=1
  RUNS="${2:-}"
  shift 2 || true
  SECONDS_PER_TARGET=0
  if [[ "${1:-}" == "--max-seconds" ]]; then
    SECONDS_PER_TARGET="${2:-}"
    shift 2 || true
    [[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || die "--max-seconds needs a positive integer, got '$SECONDS_PER_TARGET'"
  fi
else
  SECONDS_PER_TARGET="${1:-60}"
  shift || true
fi
ALL_TARGETS=(fuzz_tokenize fuzz_bpe fuzz_wordpiece fuzz_tokenizer_json fuzz_safetensors fuzz_attention fuzz_model fuzz_hf_checkpoint fuzz_attention_file fuzz_sentencepiece fuzz_tokenizer_modern fuzz_decoder_config fuzz_hf_shards fuzz_seq2seq_config)
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

if [[ -n "$RUNS_MODE" ]]; then
  [[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive integer, got '$RUNS'"
else
  [[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || die "seconds-per-target must be a positive integer, got '$SECONDS_PER_TARGET'"
fi
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
# FUZZ_SKIP_BUILD=1: run the binaries already in build/fuzz (e.g. a harness linked by hand with only the objects it
# needs while the whole core is still compiling), each must exist.
if [[ -n "${FUZZ_SKIP_BUILD:-}" ]]; then
  for t in "${TARGETS[@]}"; do [[ -x "$BUILD/$t" ]] || die "FUZZ_SKIP_BUILD: $BUILD/$t is not built"; done
elif ! make -C "$ROOT" -f fuzz/Makefile -j"${FUZZ_JOBS:-2}" BUILD="$BUILD" "${TARGETS[@]/#/$BUILD/}" >"$BUILD/build.log" 2>&1; then
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
  limit=(-max_total_time="$SECONDS_PER_TARGET")
  [[ -n "$RUNS" ]] && limit=(-runs="$RUNS" -max_total_time="$SECONDS_PER_TARGET")
  started=$(date +%s)
  set +e
  "$BUILD/$t" "$corpus" "${dict[@]}" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t-" >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - started ))
  # Last status line: "#123456 DONE cov: 1234 ft: 5678 corp: 90/12Kb ..." (or the last pulse before a crash).
  status_line=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  [[ -z "$runs" ]] && runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$status_line")
  cov=$(grep -oE 'cov: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  ft=$(grep -oE 'ft: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  corp=$(grep -oE 'corp: [0-9]+' <<<"$status_line" | grep -oE '[0-9]+' || true)
  rate=$(( ${runs:-0} / (elapsed > 0 ? elapsed : 1) ))
  if [[ $rc -eq 0 || $rc -eq 72 ]]; then
    result=ok
    [[ $rc -eq 72 ]] && result=stopped # interrupted (SIGINT): its numbers so far, no finding
    printf '%-17s %-6s runs=%s cov=%s ft=%s corpus=%s time=%ss exec/s=%s\n' "$t" "$result" "${runs:-?}" "${cov:-?}" \
      "${ft:-?}" "${corp:-?}" "$elapsed" "$rate"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t-\n' "$(date -u +%FT%TZ)" "$t" "$result" "${runs:-?}" "$elapsed" "$rate" \
      "${cov:-?}" "${ft:-?}" "${corp:-?}" >>"$BUILD/runs.tsv"
  else
    failed=1
    crash=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
    what=$(grep -m1 -E 'FUZZ_CHECK failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:' "$log" \
           | sed -E 's/^==[0-9]+==//' | cut -c1-160 || true)
    printf '%-17s CRASH  runs=%s cov=%s ft=%s crash=%s log=%s\n    %s\n    reproduce: %s %s\n' "$t" "${runs:-?}" \
      "${cov:-?}" "${ft:-?}" "${crash:-none}" "$log" "${what:-exit $rc}" "$BUILD/$t" "${crash:-<input>}"
    printf '%s\t%s\tCRASH\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "${runs:-?}" "$elapsed" "$rate" \
      "${cov:-?}" "${ft:-?}" "${corp:-?}" "${crash:-none}" >>"$BUILD/runs.tsv"
  fi
done
exit $failed
