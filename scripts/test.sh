#!/usr/bin/env bash
# README command 2: set up and build if needed, then run every suite and end with one summary line
# "N passed, N failed" (sql.js's Passed:N Failed:M habit):
#   1. Catch2 natively (ctest, build/native; again under ASan+UBSan in build/asan)   2. Catch2 as wasm under node (ctest, build/wasm, SIMD core)
#   3. node --test tests/js against the SIMD build, then the scalar build (one suite, every artifact)
#   4. real-browser tests (playwright-core + Debian chromium)   5. layering and packaging checks.
# Counts: Catch2 test cases, node test cases, one per check. Logs: build/test-logs/.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=build/test-logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
echo "test: set-up and build (log: $LOGS/build.log)"
T0=$SECONDS
if ! ATTNSCOPE_ASAN=1 bash scripts/build.sh >"$LOGS/build.log" 2>&1; then
  tail -n 40 "$LOGS/build.log"
  echo "test: build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "test: set-up and build took $((SECONDS - T0)) s"
export NODE_PATH=/usr/share/nodejs
PASSED=0
FAILED=0
echo "toolchain: $(em++ --version | head -n1); $(g++ --version | head -n1); node $(node --version)"

# Catch2 through ctest: sum the test cases Catch2 reports; an executable that died without a summary
# counts as one failure.
run_ctest() {
  local name=$1 dir=$2 log="$LOGS/$1.log" t0=$SECONDS
  ctest --test-dir "$dir" -V --timeout 900 >"$log" 2>&1
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

# node --test: read its closing "# pass N" / "# fail N".
run_node() {
  local name=$1; shift
  local log="$LOGS/$name.log" t0=$SECONDS
  "$@" >"$log" 2>&1
  local code=$? p f
  p=$(grep -E '^# pass [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
  f=$(grep -E '^# fail [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
  p=${p:-0}; f=${f:-0}
  if (( code != 0 && f == 0 )); then f=1; fi
  echo "$name: $p passed, $f failed ($((SECONDS - t0)) s)"
  # name each failure (TAP nests subtests, so "not ok" may be indented) and its first error lines
  if (( f > 0 )); then grep -E '^\s*not ok|^#? *(\w*Error|error):' "$log" | head -40; fi
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}

check() {
  local name=$1; shift
  if "$@" >"$LOGS/check-$name.log" 2>&1; then PASSED=$((PASSED + 1)); echo "check $name: ok";
  else FAILED=$((FAILED + 1)); echo "check $name: FAILED"; cat "$LOGS/check-$name.log" | head -20; fi
}

run_ctest catch2-native build/native
run_ctest catch2-asan build/asan
run_ctest catch2-wasm build/wasm
JS_TESTS=$(ls tests/js/*.test.js 2>/dev/null)
if [[ -n $JS_TESTS ]]; then
  ATTNSCOPE_SIMD=true run_node js-simd node --test --test-reporter=tap $JS_TESTS
  ATTNSCOPE_SIMD=false run_node js-scalar node --test --test-reporter=tap $JS_TESTS
fi
BROWSER_TESTS=$(ls tests/browser/*.test.js 2>/dev/null)
[[ -n $BROWSER_TESTS ]] && run_node browser node --test --test-reporter=tap --test-concurrency=1 $BROWSER_TESTS
check layering bash scripts/check-layering.sh
check glue-identical bash -c 'cmp <(sed "s/attnscope\.simd\.wasm/attnscope.wasm/g" dist/attnscope.simd.mjs) dist/attnscope.mjs'

echo "$PASSED passed, $FAILED failed"
(( FAILED == 0 ))
