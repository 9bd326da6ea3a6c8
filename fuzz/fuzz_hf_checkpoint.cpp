// fuzz_hf_checkpoint.cpp: model::HfCheckpointLoader (JS `as.loadPretrained`): begin(config.json, tokenizer, header,
// file size) -> feed(offset, chunk)... -> finish(), then run() on the model it builds.
//
// Seeds (fuzz/corpus/fuzz_hf_checkpoint, each < 4096 bytes, fuzz.sh's -max_len): tiny checkpoints in
// tests/fixtures/hf's layout with its configs shrunk (GPT-2: d 2, 1 layer, 8 positions, vocab 300; BERT: d 4, 2 heads,
// 1 layer, 8 positions, vocab 24) — gpt2 F16 `transformer.` names + BOOL attn.bias + 0-dim masked_bias in 7-byte
// chunks; gpt2 BF16 unprefixed with U8 attn.bias, whole file as header; BertModel F32 in 5-byte chunks; BertForMaskedLM
// BF16 `bert.` names, old gamma/beta, cls.predictions in 3-byte chunks; faults (wrong offset, stop early, 8-byte header);
// and tests/fixtures/hf/bad's configs (llama, silu, relative_key) and bert-truncated-header.safetensors, plus a
// BPE tokenizer larger than a BERT config's vocab_size. ATTNSCOPE_FUZZ_VERBOSE=1 prints what each input reached.
//
// Input layout:
//   byte 0      flags: bit 0 tokenizer (0: the small byte-level BPE of fuzz_common.h, 1: a small WordPiece vocab.txt);
//               bits 1-2 header given to begin (0: 8 + the declared length, capped as pretrained.js does; 1: only the
//               first min(8, size) bytes; 2: the whole file; 3: as 0 minus one byte); bit 3 feed one chunk at a wrong
//               offset first; bit 4 stop feeding one chunk early
//   bytes 1-2   chunk size, little-endian (0: the whole file in one feed)
//   bytes 3-4   config.json length, little-endian (capped to what is left)
//   then        config.json, then model.safetensors (the rest of the input)
// Invariants: no crash/UB/leak; every error is a Status of kind != ok naming "loadPretrained", its argument one of
// config / tokenizer / weights and its message "loadPretrained: <argument>..."; a wrong-offset chunk and a short
// file are errors; the chunk size (and a header longer than needed) change nothing: the one-chunk load gives the
// same error message or the same parameters, every bit; a model that loads runs:
// a run error names "run", else every layer has [heads, n, n] attention rows that are distributions (GPT-2: keys
// after the query exactly 0), finite outputs, and a second run is bit-identical.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "model/hf_checkpoint.h"
#include "tokenizers/hf_tokenizer.h"

namespace {

using attnscope::core::Status;
using attnscope::model::HfCheckpointLoader;
using attnscope::model::TextEncoder;
using attnscope::model::TraceLevel;
using attnscope::model::Transformer;
using attnscope::tokenizers::HfTokenizer;

constexpr const char* kFn = "loadPretrained";
constexpr std::uint64_t kMaxHeader = 100u << 20;  // pretrained.js MAX_HEADER
// ATTNSCOPE_FUZZ_VERBOSE=1: print what each input did (for checking what a seed reaches).
const bool kVerbose = std::getenv("ATTNSCOPE_FUZZ_VERBOSE") != nullptr;

// The WordPiece vocabulary (ids 0-4 as bert-base-chinese's specials, so hard-coded 101/102 would fail).
constexpr const char* kVocabTxt =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nthe\ncafe\n,\n.\n!\na\nb\nc\nd\ne\n##s\n##ing\n##e\n中\n文\n1\n2\n";

// The checkpoint's error contract: named op, argument among the loader's, message "<op>: <argument>...".
void check_load_error(const Status& s) {
  fuzz::check_error(s, kFn);
  FUZZ_CHECK(s.argument == "config" || s.argument == "tokenizer" || s.argument == "weights",
             "error argument '%s' is not config/tokenizer/weights: %s", s.argument.c_str(), s.message.c_str());
  FUZZ_CHECK(s.detail().compare(0, s.argument.size(), s.argument) == 0,
             "error detail does not start with its argument '%s': %s", s.argument.c_str(), s.message.c_str());
}

std::unique_ptr<HfTokenizer> make_tokenizer(bool wordpiece) {
  static const fuzz::SmallBpe bpe = fuzz::small_bpe();
  auto t = wordpiece ? HfTokenizer::from_vocab_txt(kVocabTxt, true, kFn, "tokenizer")
                     : HfTokenizer::from_bpe_files(bpe.vocab, bpe.merges, kFn, "tokenizer");
  FUZZ_CHECK(t.ok(), "harness tokenizer rejected: %s", t.status().message.c_str());
  return std::move(t).value();
}

struct Load {
  Status status;  // ok, or the first error (begin, feed or finish)
  std::unique_ptr<Transformer> model;
};

// What pretrained.js does, with the fault options of the flags byte.
Load load(std::string_view config, std::span<const std::uint8_t> file, bool wordpiece, int header_mode,
          std::size_t chunk, bool wrong_offset, bool stop_early) {
  const std::uint64_t size = file.size();
  std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(8, size));
  if (header_mode == 2) {
    head = file.size();
  } else if (header_mode != 1 && head == 8) {
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = (len << 8) | file[static_cast<std::size_t>(i)];
    head = static_cast<std::size_t>(std::min<std::uint64_t>(size, 8 + std::min(len, kMaxHeader)));
    if (header_mode == 3 && head > 0) --head;
  }
  Load out;
  auto begun = HfCheckpointLoader::begin(config, TextEncoder::checkpoint(make_tokenizer(wordpiece)), file.first(head),
                                         size, kFn);
  if (!begun.ok()) {
    out.status = begun.status();
    return out;
  }
  HfCheckpointLoader& l = *begun.value();
  FUZZ_CHECK(l.file_size() == size, "file_size %llu != %llu", static_cast<unsigned long long>(l.file_size()),
             static_cast<unsigned long long>(size));
  FUZZ_CHECK(l.data_offset() >= 8 && l.data_offset() <= size, "data_offset %llu outside [8, %llu]",
             static_cast<unsigned long long>(l.data_offset()), static_cast<unsigned long long>(size));
  if (chunk == 0) chunk = file.size();
  if (wrong_offset && !file.empty()) {
    const Status s = l.feed(1, file.subspan(1, std::min(chunk, file.size() - 1)));
    check_load_error(s);
    FUZZ_CHECK(s.message.find("chunk at byte 1 arrived, expected byte 0") != std::string::npos,
               "wrong-offset chunk: unexpected message '%s'", s.message.c_str());
    out.status = s;
    return out;
  }
  bool stopped = false;
  for (std::size_t at = 0; at < file.size(); at += chunk) {
    const std::size_t n = std::min(chunk, file.size() - at);
    if (stop_early && at + n == file.size()) {
      stopped = true;
      break;
    }
    const Status s = l.feed(at, file.subspan(at, n));
    if (!s.ok()) {
      out.status = s;
      return out;
    }
  }
  auto model = l.finish();
  if (stopped) {
    FUZZ_CHECK(!model.ok(), "finish accepted a file that stopped one chunk early");
    FUZZ_CHECK(model.status().message.find("the file ended after") != std::string::npos,
               "short file: unexpected message '%s'", model.status().message.c_str());
  }
  if (!model.ok()) {
    out.status = model.status();
    return out;
  }
  out.model = std::move(model).value();
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_run(const Transformer& model, const std::string& text) {
  auto r = model.run(text, TraceLevel::kWeights);
  if (kVerbose) std::fprintf(stderr, "  run '%s': %s\n", text.c_str(), r.ok() ? "ok" : r.status().message.c_str());
  if (!r.ok()) {
    fuzz::check_error(r.status(), "run");
    return;
  }
  const auto& t = r.value();
  const auto& m = model.description();
  const bool causal = m.architecture == "gpt2";
  const int n = t.main.n, heads = t.num_heads;
  FUZZ_CHECK(n >= 1 && n <= m.embedding.max_positions, "run: n = %d outside [1, %d]", n, m.embedding.max_positions);
  FUZZ_CHECK(t.d_model == m.d_model && heads >= 1, "run: d_model %d != %d or heads %d", t.d_model, m.d_model, heads);
  FUZZ_CHECK(t.main.layers.size() == m.main.blocks.size(), "run: %zu layers, expected %zu", t.main.layers.size(),
             m.main.blocks.size());
  const std::size_t nn = static_cast<std::size_t>(n), h = static_cast<std::size_t>(heads);
  for (std::size_t l = 0; l < t.main.layers.size(); ++l) {
    const auto& w = t.main.layers[l].attention.weights;
    fuzz::check_prob_rows(w, h * nn, nn, "attention weights");
    for (std::size_t q = 0; q < h * nn; ++q) {
      const std::size_t i = q % nn;
      for (std::size_t j = i + 1; causal && j < nn; ++j) {
        FUZZ_CHECK(w[q * nn + j] == 0.0f, "layer %zu: GPT-2 weight [%zu][%zu] = %g, must be 0 (causal)", l, i, j,
                   static_cast<double>(w[q * nn + j]));
      }
    }
    FUZZ_CHECK(t.main.layers[l].output.size() == nn * static_cast<std::size_t>(t.d_model), "layer %zu output size", l);
    FUZZ_CHECK(fuzz::all_finite(t.main.layers[l].output), "layer %zu output not finite with an ok run", l);
  }
  FUZZ_CHECK(fuzz::all_finite(t.main.output), "output not finite with an ok run");
  auto again = model.run(text, TraceLevel::kWeights);
  FUZZ_CHECK(again.ok() && same_bits(again.value().main.output, t.main.output) &&
                 again.value().next.ids == t.next.ids && same_bits(again.value().next.probs, t.next.probs),
             "a second run differs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t chunk = static_cast<std::size_t>(data[1] | (data[2] << 8));
  std::size_t config_len = static_cast<std::size_t>(data[3] | (data[4] << 8));
  config_len = std::min(config_len, size - 5);
  const std::string config(reinterpret_cast<const char*>(data + 5), config_len);
  // the file in its own allocation, so ASan sees any read past its end
  const std::vector<std::uint8_t> file(data + 5 + config_len, data + size);
  const bool wordpiece = flags & 1, wrong_offset = flags & 8, stop_early = (flags & 16) && chunk != 0;
  const int header_mode = (flags >> 1) & 3;

  Load got = load(config, file, wordpiece, header_mode, chunk, wrong_offset, stop_early);
  if (kVerbose) {
    std::fprintf(stderr, "load (%s, chunk %zu, header mode %d): %s\n", wordpiece ? "WordPiece" : "BPE", chunk, header_mode,
                 got.status.ok() ? got.model->description().architecture.c_str() : got.status.message.c_str());
  }
  if (!got.status.ok()) check_load_error(got.status);
  // Chunk size and a header longer than needed change nothing: the same file in one chunk with the plain header
  // gives the same error, or the same parameters bit for bit.
  const bool comparable = !wrong_offset && !stop_early && (header_mode == 0 || header_mode == 2);
  Load whole;
  if (comparable && (chunk != 0 || header_mode != 0)) {
    whole = load(config, file, wordpiece, 0, 0, false, false);
    FUZZ_CHECK(whole.status.ok() == got.status.ok() && whole.status.message == got.status.message,
               "chunk %zu / header mode %d gave '%s', one chunk gave '%s'", chunk, header_mode,
               got.status.ok() ? "ok" : got.status.message.c_str(), whole.status.ok() ? "ok" : whole.status.message.c_str());
  }
  if (!got.status.ok()) return 0;
  FUZZ_CHECK(got.model != nullptr, "ok load without a model");
  FUZZ_CHECK(!stop_early && !wrong_offset, "a faulty feed loaded");
  if (whole.model) {
    const auto& a = got.model->parameters().tensors();
    const auto& b = whole.model->parameters().tensors();
    FUZZ_CHECK(a.size() == b.size(), "parameter count differs: %zu vs %zu", a.size(), b.size());
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      FUZZ_CHECK(ia->first == ib->first && ia->second.shape == ib->second.shape &&
                     same_bits(ia->second.data, ib->second.data),
                 "parameter '%s' differs between chunk size %zu and one chunk", ia->first.c_str(), chunk);
    }
  }
  for (const char* text : {"hello world", "Hello, café 中文 12!", "the"}) check_run(*got.model, text);
  return 0;
}
