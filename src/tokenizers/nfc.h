// Unicode NFC / NFKC normalization (UAX #15) with alignment: each output code point keeps the range of input
// positions it came from (a composed character the union of its parts). Tables from scripts/gen_nfc_tables.py.
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::tokenizers {

using Alignment = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// Normalizes cps in place (compat: NFKC, else NFC); from[i] is the source range of cps[i], updated alongside.
void normalize_nfc(std::u32string& cps, Alignment& from, bool compat);

}  // namespace attnscope::tokenizers
