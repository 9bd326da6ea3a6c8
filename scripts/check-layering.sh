#!/usr/bin/env bash
# Makes the layering rules of STYLE 4.2 mechanical: any hit is printed and fails the check.
cd "$(dirname "$0")/.."
bad=0
hit() { echo "layering: $1"; echo "$2"; bad=1; }
out=$(grep -rniE '#include *<emscripten' src/) && hit "src/ must not include Emscripten headers" "$out"
out=$(grep -rnE '#include *"kernels/' src/attention src/model src/tokenizers src/io) && hit "attention/, model/, tokenizers/, io/ must not include kernels/" "$out"
out=$(grep -rnE '#include *"(ops|attention|model|tokenizers|io)/' src/kernels src/core) && hit "kernels/ and core/ must not include higher layers" "$out"
out=$(grep -rnE '#include *"(ops|attention|model|tokenizers)/' src/io) && hit "io/ (safetensors, the JSON readers) depends on core/ only" "$out"
out=$(grep -rnE "(^|[^.])import .*from +['\"]" web --include=*.js | grep -vE "from +['\"](\./|\.\./bindings/js/index\.js|\.\./)" ) && hit "web/ may import only ../bindings/js/index.js and its own files" "$out"
out=$(grep -rnE "from +['\"][^'\"]*(dist/|loader\.js|attnscope\.mjs)" web) && hit "web/ must not import the glue or the loader" "$out"
out=$(grep -rnE 'innerHTML|outerHTML|insertAdjacentHTML|document\.write' web) && hit "web/ must not write HTML from strings" "$out"
exit $bad
