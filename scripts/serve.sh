#!/usr/bin/env bash
# README command 1: set up and build if needed, then serve the page on localhost (PORT, default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
ATTNSCOPE_SKIP_NATIVE=1 bash scripts/build.sh
exec node scripts/serve.mjs --port "${PORT:-8080}"
