#!/usr/bin/env bash
# README command 2: set up and build if needed, then run every suite and end with one summary line
# "N passed, N failed" (sql.js's Passed:N Failed:M habit):
#   1. Catch2 natively (ctest, build/native; again under ASan+UBSan in build/asan)   2. Catch2 as wasm under node (ctest, build/wasm, SIMD core)
#   3. node --test tests/js against the SIMD build and the scalar build (one suite, every artifact) and
#   4. real-browser tests (playwright-core + Debian chromium) on the site built once, one file per job: 3 and 4 share
#      one queue of two lanes, longest job first (scripts/test-durations.tsv)
#   5. layering and packaging checks.
# Counts: Catch2 test cases, node test cases, one per check. Logs: build/test-logs/. Each phase's wall seconds and
# the machine's CPU seconds over it (all processes, from /proc/stat) are printed and kept in build/test-logs/times.tsv.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=build/test-logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
TIMES=$LOGS/times.tsv
printf 'phase\twall_s\tcpu_s\n' >"$TIMES"

# the machine's busy CPU time so far, in centiseconds (user + nice + system + irq + softirq + steal of /proc/stat)
cpu_cs() { awk '/^cpu / { print int(($2 + $3 + $4 + $7 + $8 + $9) * 100 / '"$(getconf CLK_TCK)"') }' /proc/stat; }
PHASE_NAME='' PHASE_T0=0 PHASE_C0=0
phase() { # phase NAME: ends the running phase (printing its times) and starts NAME ('' only ends)
  if [[ -n $PHASE_NAME ]]; then
    local wall=$((SECONDS - PHASE_T0)) cpu=$(( ($(cpu_cs) - PHASE_C0) / 100 ))
    echo "time: $PHASE_NAME: $wall s wall, $cpu s CPU"
    printf '%s\t%s\t%s\n' "$PHASE_NAME" "$wall" "$cpu" >>"$TIMES"
  fi
  PHASE_NAME=$1 PHASE_T0=$SECONDS PHASE_C0=$(cpu_cs)
}
RUN_T0=$SECONDS RUN_C0=$(cpu_cs)

echo "test: set-up and build (log: $LOGS/build.log)"
phase build
if ! ATTNSCOPE_ASAN=1 ATTNSCOPE_BUILD_TIMES="$LOGS/build-trees.txt" bash scripts/build.sh >"$LOGS/build.log" 2>&1; then
  tail -n 40 "$LOGS/build.log"
  echo "test: build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
[[ -f $LOGS/build-trees.txt ]] && echo "test: build trees (wall s, side by side): $(tr '\n' ' ' <"$LOGS/build-trees.txt")"
export NODE_PATH=/usr/share/nodejs
PASSED=0
FAILED=0
echo "toolchain: $(em++ --version | head -n1); $(g++ --version | head -n1); node $(node --version)"
command -v ccache >/dev/null && echo "ccache: $(ccache --print-stats 2>/dev/null | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 } $1 == "cache_miss" { m = $2 } END { printf "%d hits, %d misses (cache outside the clone, all runs)", h, m }')"

# Catch2 through ctest: sum the test cases Catch2 reports; an executable that died without a summary
# counts as one failure. Its executables run two at a time.
run_ctest() {
  local name=$1 dir=$2 log="$LOGS/$1.log" t0=$SECONDS
  ctest --test-dir "$dir" -V -j2 --timeout 900 >"$log" 2>&1
  local p f crashed
  p=$(grep -oE 'All tests passed \([0-9]+ assertions? in [0-9]+ test cases?\)' "$log" | grep -oE '[0-9]+ test case' | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  p2=$(grep -oE 'test cases: *[0-9]+ \| *[0-9]+ passed' "$log" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  f=$(grep -oE 'test cases: *[0-9]+ \|.*\| *[0-9]+ failed' "$log" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  local summaries ctest_failed
  summaries=$(grep -cE 'All tests passed|test cases: .*failed' "$log")
  ctest_failed=$(grep -oE '[0-9]+ tests failed out of' "$log" | grep -oE '^[0-9]+' || echo 0)
  local total_tests
  total_tests=$(grep -oE 'tests failed out of [0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  crashed=$(( total_tests - summaries ))
  (( crashed < 0 )) && crashed=0
  p=$(( ${p:-0} + ${p2:-0} )); f=$(( ${f:-0} + crashed ))
  echo "$name: $p passed, $f failed ($((SECONDS - t0)) s; ctest: $ctest_failed of $total_tests executables failed)"
  if (( ctest_failed > 0 )); then grep -E 'FAILED|failed|Error' "$log" | head -20; fi
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}

# node --test, its TAP output in $LOGS/NAME.log and its exit code in $LOGS/NAME.code (so that runs started in the
# background can be counted once they end).
node_run() {
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$LOGS/$name.log" 2>&1
  echo "$? $((SECONDS - t0))" >"$LOGS/$name.code"
}
# read its closing "# pass N" / "# fail N"
node_count() {
  local name=$1 log="$LOGS/$1.log" code secs p f
  read -r code secs <"$LOGS/$name.code" 2>/dev/null || { code=1; secs=0; }
  p=$(grep -E '^# pass [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
  f=$(grep -E '^# fail [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
  p=${p:-0}; f=${f:-0}
  if (( code != 0 && f == 0 )); then f=1; fi
  echo "$name: $p passed, $f failed ($secs s)"
  # name each failure (TAP nests subtests, so "not ok" may be indented) and its first error lines
  if (( f > 0 )); then grep -E '^\s*not ok|^#? *(\w*Error|error):' "$log" | head -40; fi
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}

check() {
  local name=$1; shift
  if "$@" >"$LOGS/check-$name.log" 2>&1; then PASSED=$((PASSED + 1)); echo "check $name: ok";
  else FAILED=$((FAILED + 1)); echo "check $name: FAILED"; cat "$LOGS/check-$name.log" | head -20; fi
}

phase catch2
run_ctest catch2-native build/native
run_ctest catch2-asan build/asan
run_ctest catch2-wasm build/wasm

# node --test over tests/js against the SIMD build and the scalar build, and every browser file (each with its own
# server and Chromium, on the site scripts/build.sh built), as jobs in one queue of two lanes: the longest first
# (scripts/test-durations.tsv; a job it does not list counts as long), each next job starting as soon as a lane is
# free. Both lanes stay busy until the queue runs dry and they end close together (the node passes and the browser
# files were two phases, each ending on one busy lane). Each job's wall seconds: $LOGS/jobs.tsv.
phase tests
JOBS_TSV=$LOGS/jobs.tsv
printf 'job\tstart_s\twall_s\texit\n' >"$JOBS_TSV"
declare -A JOB_CMD=()
JS_TESTS=$(ls tests/js/*.test.js 2>/dev/null)
if [[ -n $JS_TESTS ]]; then
  JOB_CMD[js-simd]="env ATTNSCOPE_SIMD=true node --test --test-reporter=tap $(echo $JS_TESTS)"
  JOB_CMD[js-scalar]="env ATTNSCOPE_SIMD=false node --test --test-reporter=tap $(echo $JS_TESTS)"
fi
BROWSER_JOBS=()
for f in tests/browser/*.test.js; do
  [[ -e $f ]] || continue
  name=browser/$(basename "$f" .test.js)
  BROWSER_JOBS+=("$name")
  JOB_CMD[$name]="env ATTNSCOPE_SITE_BUILT=1 node --test --test-reporter=tap $f"
done
mkdir -p "$LOGS/browser"
# longest expected first; unknown jobs (not in the table) before all
ORDER=$(for j in "${!JOB_CMD[@]}"; do
  d=$(awk -F'\t' -v j="$j" '$1 == j { print $2; exit }' scripts/test-durations.tsv 2>/dev/null)
  printf '%s\t%s\n' "${d:-999999}" "$j"
done | sort -t$'\t' -k1,1nr -k2,2 | cut -f2)
TESTS_T0=$SECONDS
job_run() { # job_run NAME: runs JOB_CMD[NAME] through node_run and records its lane time
  local name=$1 t0=$((SECONDS - TESTS_T0))
  node_run "$name" ${JOB_CMD[$name]}
  local code secs; read -r code secs <"$LOGS/$name.code"
  printf '%s\t%s\t%s\t%s\n' "$name" "$t0" "$secs" "$code" >>"$JOBS_TSV"
}
LANES=2
running=0
for j in $ORDER; do
  while (( running >= LANES )); do wait -n; running=$((running - 1)); done
  job_run "$j" &
  running=$((running + 1))
done
wait
[[ -n ${JOB_CMD[js-simd]:-} ]] && node_count js-simd
[[ -n ${JOB_CMD[js-scalar]:-} ]] && node_count js-scalar
if (( ${#BROWSER_JOBS[@]} )); then
  BP=$PASSED BF=$FAILED
  for j in "${BROWSER_JOBS[@]}"; do node_count "$j" >"$LOGS/$j.count"; done
  echo "browser: $((PASSED - BP)) passed, $((FAILED - BF)) failed ($((SECONDS - TESTS_T0)) s for the queue; per file: $JOBS_TSV)"
  for j in "${BROWSER_JOBS[@]}"; do grep -q ' 0 failed' "$LOGS/$j.count" || cat "$LOGS/$j.count"; done
fi

phase checks
check layering bash scripts/check-layering.sh
check glue-identical bash -c 'cmp <(sed "s/attnscope\.simd\.wasm/attnscope.wasm/g" dist/attnscope.simd.mjs) dist/attnscope.mjs'
phase ''
echo "time: whole run: $((SECONDS - RUN_T0)) s wall, $(( ($(cpu_cs) - RUN_C0) / 100 )) s CPU (per phase: $TIMES)"

echo "$PASSED passed, $FAILED failed"
(( FAILED == 0 ))
