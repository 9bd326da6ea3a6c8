// Word and character tokenizers: grapheme clusters, whitespace skipped, letter/digit runs joined for kWord.
// Layer: tokenizers (depends on core/ only).
#include "tokenizers/word_char.h"

#include "tokenizers/unicode.h"

namespace attnscope::tokenizers {

core::Result<Tokenization> tokenize(std::string_view utf8, Kind kind) {
  auto decoded = decode_utf8(utf8, "tokenize", "text");
  if (!decoded.ok()) return decoded.status();
  const DecodedText& t = decoded.value();
  const std::vector<std::size_t> bounds = grapheme_boundaries(t.cps);

  Tokenization out;
  // Emits code points [a, b) as one token.
  auto emit = [&](std::size_t a, std::size_t b) {
    const auto byte_a = static_cast<std::size_t>(t.byte_offset[a]);
    const auto byte_b = static_cast<std::size_t>(t.byte_offset[b]);
    out.tokens.emplace_back(utf8.substr(byte_a, byte_b - byte_a));
    out.offsets.push_back(t.utf16_offset[a]);
    out.offsets.push_back(t.utf16_offset[b]);
  };

  bool in_run = false;  // kWord: a letter/digit run is open and started at run_start
  std::size_t run_start = 0;
  for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
    const std::size_t a = bounds[c], b = bounds[c + 1];
    bool all_space = true;
    for (std::size_t p = a; p < b && all_space; ++p) all_space = is_space(t.cps[p]);
    const Category first = category_of(t.cps[a]);
    const bool wordish = kind == Kind::kWord && (first == Category::kLetter || first == Category::kNumber);
    if (in_run && !wordish) {
      emit(run_start, a);
      in_run = false;
    }
    if (wordish) {
      if (!in_run) {
        in_run = true;
        run_start = a;
      }
    } else if (!all_space) {
      emit(a, b);
    }
  }
  if (in_run) emit(run_start, t.cps.size());
  return out;
}

}  // namespace attnscope::tokenizers
