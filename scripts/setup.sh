#!/usr/bin/env bash
# Installs what attnscope needs on a fresh Debian 12 machine, then the npm dev dependencies.
# Idempotent: does nothing when everything is present. Needs root (or sudo) only when a Debian
# package is missing. The package list and why each is there: README.md "Dependencies".
# `setup.sh debian` does only the Debian part and `setup.sh npm` only the npm one (scripts/build.sh runs the npm
# install beside the C++ builds, which need none of it); no argument does both.
set -euo pipefail
cd "$(dirname "$0")/.."
PART=${1:-all}

# fonts-wqy-microhei: a CJK font, so headless Chromium draws the 中文 page and CJK tokens (tests and screenshots)
# clang-16 + lld-16: build the relaxed-SIMD (fused multiply-add) kernel module, kernels-relaxed/ (TOOLCHAIN.md 15)
# ninja-build + ccache: the build's generator and its compile cache (scripts/build.sh says why)
# jupyter-core, jupyter-nbconvert, python3-nbformat, python3-ipykernel: the notebook test runs a notebook calling
# attnscope.show() with `jupyter nbconvert --execute --to html` (tests/browser/notebook.test.js)
# python3-torch (+ python3-numpy): the notebook test and attnfile.test.js's live round trip make their attention
# tensors with torch at test time (a fresh machine without it failed both); also the fixture generators and training/
if [[ $PART != npm ]]; then
DEB_PACKAGES=(emscripten binaryen wabt catch2 nlohmann-json3-dev cmake g++ make chromium fonts-wqy-microhei python3
  clang-16 lld-16 ninja-build ccache jupyter-core jupyter-nbconvert python3-nbformat python3-ipykernel python3-torch python3-numpy)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "setup: error: missing Debian packages (${missing[*]}) and not root; run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
fi

command -v node >/dev/null || { echo "setup: error: node (>= 20) is required" >&2; exit 1; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then echo "setup: error: node >= 20 is required, found $(node --version)" >&2; exit 1; fi

[[ $PART == debian ]] && exit 0
# npm dev dependencies (playwright-core, the GPT-2 reference encoder, colour scales): reinstall when the lock changed.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
