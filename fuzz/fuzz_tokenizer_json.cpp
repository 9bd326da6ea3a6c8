// fuzz_tokenizer_json.cpp: tokenizers::HfTokenizer::from_json (Hugging Face tokenizer.json) and the tokenizer it
// makes. Byte 0 % 4 picks how the rest (split at its first 0x00 into a file part and a text to encode) becomes a
// tokenizer.json: 0 the file part as is; 1 a valid BERT file (BertNormalizer options from byte 1) with the file
// part spliced in as extra vocab members; 2 the same with the part as the added_tokens array; 3 a byte-level BPE
// file over the 256 byte tokens with the part as the merges array.
// Invariants: no crash/UB/leak; errors name "loadPretrained" and start "loadPretrained: tokenizer"; a created
// tokenizer encodes exactly the valid UTF-8 texts, with every id known, id_of(token_text(id)) == id,
// offsets inside the text, decode ok and valid UTF-8 for its own ids, and vocab_size() >= the ids seen.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "fuzz_tokenizer_check.h"
#include "tokenizers/hf_tokenizer.h"

namespace {

using attnscope::tokenizers::HfTokenizer;

std::string bert_file(std::uint8_t flags, const std::string& extra_vocab, const std::string& added) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  const char* strip = (flags & 6) == 0 ? "null" : (flags & 6) == 2 ? "false" : "true";
  return std::string(R"({"version":"1.0","added_tokens":)") +
         (added.empty() ? R"([{"id":0,"content":"[PAD]","special":true},{"id":4,"content":"[MASK]","special":true}])"
                        : added) +
         R"(,"normalizer":{"type":"BertNormalizer","clean_text":)" + b(flags & 8) + R"(,"handle_chinese_chars":)" +
         b(flags & 16) + R"(,"strip_accents":)" + strip + R"(,"lowercase":)" + b(flags & 1) +
         R"(},"pre_tokenizer":{"type":"BertPreTokenizer"},"decoder":{"type":"WordPiece","cleanup":)" + b(flags & 32) +
         R"(},"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",)"
         R"("max_input_chars_per_word":)" + std::to_string((flags & 64) ? 6 : 100) +
         R"(,"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"[MASK]":4,"hello":5,"##s":6,"a":7,"##b":8,"中":9,)"
         R"("cafe":10,".":11)" + (extra_vocab.empty() ? "" : "," + extra_vocab) + "}}}";
}

std::string bpe_file(const std::string& merges) {
  return R"({"added_tokens":[{"id":256,"content":"<|endoftext|>","special":true}],"normalizer":null,)"
         R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},"decoder":null,)"
         R"("model":{"type":"BPE","dropout":null,"vocab":{)" + fuzz::base_vocab_members() +
         R"(,"<|endoftext|>":256,"he":257,"ll":258,"hell":259,"hello":260,"Ġt":261},"merges":)" + merges + "}}";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto [part, text] = fuzz::part_and_text(data, size, "hello a中 cafe.");
  std::string file;
  switch (data[0] % 4) {
    case 0: file = part; break;
    case 1: file = bert_file(data[1], part, ""); break;
    case 2: file = bert_file(data[1], "", part); break;
    default: file = bpe_file(part); break;
  }
  auto r = HfTokenizer::from_json(file, "loadPretrained", "tokenizer");
  if (!fuzz::tokenizer_made(r)) return 0;
  fuzz::check_tokenizer(*r.value(), text, true);
  return 0;
}
