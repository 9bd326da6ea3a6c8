// fuzz_model.cpp: model::Transformer::create(config) + run(text) with a small config decoded from the input
// (d_model <= 16, <= 2 layers, <= 64 tokens), user embedding rows, safetensors weights (the seeded parameters
// written back with a few values replaced, or raw input bytes) and the rest of the input as the text.
// Invariants: no crash/UB; a config built valid is accepted, errors otherwise name "createModel"; run fails only
// for the documented reasons (invalid UTF-8, no tokens, too many tokens, bad padTo) with "run: ..." messages;
// loaded weights equal what was written (non-finite ones rejected); every trace vector has its documented size
// and is finite; attention weight rows sum to 1 or are zero, padded keys and causal-future keys get weight 0;
// offsets lie inside the UTF-16 length; next-token probs are descending in [0, 1] with sum <= 1; a second run
// at trace 'none' gives the same output bit for bit; with padTo the real rows match the unpadded run.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "tokenizers/bpe.h"
#include "tokenizers/word_char.h"

namespace {

using namespace attnscope::model;

const fuzz::SmallBpe& small() {
  static const fuzz::SmallBpe s = fuzz::small_bpe();
  return s;
}

// Tokens the model will see for `text`, or -1 when the tokenizer rejects it.
long long count_tokens(const ModelConfig& c, std::string_view text) {
  if (c.tokenizer == TokenizerKind::kBpe) {
    static const auto tok = attnscope::tokenizers::BpeTokenizer::create(small().vocab, small().merges);
    auto r = tok.value()->encode(text);
    return r.ok() ? static_cast<long long>(r.value().tokens.size()) : -1;
  }
  auto r = attnscope::tokenizers::tokenize(
      text, c.tokenizer == TokenizerKind::kChar ? attnscope::tokenizers::Kind::kChar : attnscope::tokenizers::Kind::kWord);
  return r.ok() ? static_cast<long long>(r.value().tokens.size()) : -1;
}

bool side_ok(const ModelConfig& c, std::string_view text, int pad_to) {
  const long long n = count_tokens(c, text);
  if (n < 1 || n > c.max_tokens) return false;
  if (c.positional == PositionalKind::kLearned && n > c.max_positions) return false;
  if (pad_to != 0 && (pad_to < n || pad_to > c.max_tokens ||
                      (c.positional == PositionalKind::kLearned && pad_to > c.max_positions)))
    return false;
  return true;
}

void check_weights_tensor(const std::vector<float>& w, std::size_t heads, std::size_t n, std::size_t m,
                          int keys_real, bool causal, const char* what) {
  FUZZ_CHECK(w.size() == heads * n * m, "%s: weights size %zu != %zu*%zu*%zu", what, w.size(), heads, n, m);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::vector<float> wh(w.begin() + static_cast<long>(h * n * m), w.begin() + static_cast<long>((h + 1) * n * m));
    fuzz::check_prob_rows(wh, n, m, what);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) {
        if (static_cast<int>(j) >= keys_real)
          FUZZ_CHECK(wh[i * m + j] == 0.0f, "%s: pad key %zu has weight %g", what, j, static_cast<double>(wh[i * m + j]));
        if (causal && j > i) FUZZ_CHECK(wh[i * m + j] == 0.0f, "%s: future key %zu of query %zu has weight", what, j, i);
      }
  }
}

void check_side(const RunTrace& t, const SideTrace& s, const ModelConfig& c, std::string_view text, int pad_to,
                bool is_decoder_stack, const SideTrace* memory, TraceLevel level, const char* what) {
  const std::size_t d = static_cast<std::size_t>(c.d_model);
  FUZZ_CHECK(s.n == std::max(s.n_real, pad_to) && s.n_real >= 1, "%s: n %d, n_real %d, padTo %d", what, s.n,
             s.n_real, pad_to);
  FUZZ_CHECK(static_cast<int>(s.tokens.size()) == s.n && s.ids.size() == s.tokens.size() &&
                 s.offsets.size() == 2 * s.tokens.size(),
             "%s: token arrays (n %d, %zu tokens, %zu ids, %zu offsets)", what, s.n, s.tokens.size(), s.ids.size(),
             s.offsets.size());
  const std::int64_t len16 = fuzz::utf16_length(text);
  for (std::size_t i = 0; i < s.tokens.size(); ++i) {
    if (static_cast<int>(i) >= s.n_real) {  // '<pad>': id -1, empty range at the end of the text
      FUZZ_CHECK(s.tokens[i] == "<pad>" && s.ids[i] == -1 && s.offsets[2 * i] == len16 &&
                     s.offsets[2 * i + 1] == len16,
                 "%s: pad token %zu is '%s' id %d [%d, %d)", what, i, s.tokens[i].c_str(), s.ids[i], s.offsets[2 * i],
                 s.offsets[2 * i + 1]);
      continue;
    }
    FUZZ_CHECK(0 <= s.offsets[2 * i] && s.offsets[2 * i] < s.offsets[2 * i + 1] && s.offsets[2 * i + 1] <= len16,
               "%s: token %zu offsets [%d, %d) outside [0, %lld]", what, i, s.offsets[2 * i], s.offsets[2 * i + 1],
               static_cast<long long>(len16));
  }
  const std::size_t n = static_cast<std::size_t>(s.n);
  for (const auto* v : {&s.embeddings, &s.positional, &s.input, &s.output})
    FUZZ_CHECK(v->size() == n * d && fuzz::all_finite(*v), "%s: embeddings/positional/input/output size %zu or non-finite",
               what, v->size());
  const int expected_layers = is_decoder_stack ? c.num_decoder_layers.value_or(c.num_layers) : c.num_layers;
  FUZZ_CHECK(static_cast<int>(s.layers.size()) == expected_layers, "%s: %zu layers, expected %d", what,
             s.layers.size(), expected_layers);
  const bool causal = c.architecture == Architecture::kDecoder || is_decoder_stack;
  for (std::size_t l = 0; l < s.layers.size(); ++l) {
    const auto& L = s.layers[l];
    FUZZ_CHECK(L.output.size() == n * d && fuzz::all_finite(L.output), "%s: layer %zu output", what, l);
    if (level == TraceLevel::kNone) continue;
    const bool simple = L.kind == LayerKind::kSimple;
    FUZZ_CHECK(!simple || (l == 0 && !is_decoder_stack && c.attention == FirstAttention::kSimple),
               "%s: unexpected simple layer %zu", what, l);
    const std::size_t heads = simple ? 1 : static_cast<std::size_t>(t.num_heads);
    check_weights_tensor(L.attention.weights, heads, n, n, s.n_real, causal && !simple, what);
    FUZZ_CHECK(fuzz::all_finite(L.attention.output), "%s: layer %zu attention output non-finite", what, l);
    FUZZ_CHECK(L.has_cross == (memory != nullptr), "%s: layer %zu has_cross %d", what, l, L.has_cross);
    if (memory)
      check_weights_tensor(L.cross.weights, heads, n, static_cast<std::size_t>(memory->n), memory->n_real, false,
                           "cross");
    if (level == TraceLevel::kFull && !simple) {
      for (const auto* v : {&L.residual[0], &L.norm[0], &L.residual[1], &L.norm[1], &L.ff_output, &L.attention.q,
                            &L.attention.concat})
        FUZZ_CHECK(v->size() == n * d && fuzz::all_finite(*v), "%s: layer %zu full-trace vector size %zu", what, l,
                   v->size());
      FUZZ_CHECK(L.ff_hidden.size() == n * static_cast<std::size_t>(t.d_ff) && fuzz::all_finite(L.ff_hidden),
                 "%s: layer %zu ff_hidden", what, l);
      for (std::size_t x = 0; x < L.attention.scores.size(); ++x)
        FUZZ_CHECK(!std::isnan(L.attention.scores[x]) && L.attention.scores[x] != INFINITY, "%s: score %zu", what, x);
    }
  }
}

struct Built {
  ModelConfig cfg;
  bool expect_ok = true;
};

Built decode_config(FuzzedDataProvider& fdp, fuzz::FloatSource& fs) {
  Built b;
  ModelConfig& c = b.cfg;
  const auto f0 = fdp.ConsumeIntegral<std::uint8_t>();
  const auto f1 = fdp.ConsumeIntegral<std::uint8_t>();
  c.architecture = static_cast<Architecture>(f0 % 3);
  c.tokenizer = static_cast<TokenizerKind>((f0 / 3) % 3);
  if (c.tokenizer == TokenizerKind::kBpe) {
    c.bpe_vocab = small().vocab;
    c.bpe_merges = small().merges;
  }
  const bool bad = (f0 / 9) % 16 == 15;  // 1 in 16: numbers outside the valid ranges
  c.num_heads = bad ? fdp.ConsumeIntegralInRange<int>(-1, 5) : fdp.ConsumeIntegralInRange<int>(1, 4);
  const int head_dim = fdp.ConsumeIntegralInRange<int>(1, 4);
  c.d_model = bad ? fdp.ConsumeIntegralInRange<int>(-1, 16) : c.num_heads * head_dim;
  c.num_layers = fdp.ConsumeIntegralInRange<int>(bad ? -1 : 0, 2);
  // 0: leave the member unset (the core's default)
  if (const int layers = fdp.ConsumeIntegralInRange<int>(0, 2); layers != 0) c.num_decoder_layers = layers;
  if (const int d_ff = fdp.ConsumeIntegralInRange<int>(bad ? -1 : 0, 8); d_ff != 0) c.d_ff = d_ff;
  c.norm_first = f1 & 1;
  c.activation = (f1 & 2) ? Activation::kGelu : Activation::kRelu;
  static const double kEps[] = {1e-5, 1e-3, 0.5, 0.0, -1.0, NAN};
  c.eps = kEps[fdp.ConsumeIntegralInRange<int>(0, bad ? 5 : 2)];
  c.positional = static_cast<PositionalKind>(fdp.ConsumeIntegralInRange<int>(0, 2));
  static const double kBase[] = {10000.0, 2.0, 1e6, 0.0, INFINITY};
  c.positional_base = kBase[fdp.ConsumeIntegralInRange<int>(0, bad ? 4 : 2)];
  c.max_positions = fdp.ConsumeIntegralInRange<int>(bad ? 0 : 1, 64);
  c.attention = (f1 & 4) ? FirstAttention::kSimple : FirstAttention::kLearned;
  c.seed = fdp.ConsumeIntegral<std::uint64_t>();
  c.top_k = fdp.ConsumeIntegralInRange<int>(bad ? -1 : 0, 8);
  c.max_tokens = fdp.ConsumeIntegralInRange<int>(bad ? 0 : 1, 64);
  if (f1 & 8) {  // user embedding rows for a few likely tokens
    static const char* const kTokens[] = {"a", "the", "b", "1", "Ġthe", "hello", "é", ","};
    const int rows = fdp.ConsumeIntegralInRange<int>(1, 4);
    for (int i = 0; i < rows; ++i) {
      const int len_delta = (bad && fdp.ConsumeBool()) ? 1 : 0;
      const std::string token = kTokens[fdp.ConsumeIntegralInRange<int>(0, 7)];
      c.embeddings.emplace_back(token, fs.vec(static_cast<std::size_t>(std::max(1, c.d_model + len_delta))));
      if (len_delta) b.expect_ok = false;
      // BPE rows are keyed by vocab entry: "the" is not one in the small vocab (only "Ġthe").
      if (c.tokenizer == TokenizerKind::kBpe && token == "the") b.expect_ok = false;
    }
  }
  if (fs.any_special) b.expect_ok = false;  // a NaN/inf embedding value
  if (bad) b.expect_ok = false;  // may still be valid: only error messages are checked
  if (c.attention == FirstAttention::kSimple && c.architecture == Architecture::kDecoder) b.expect_ok = false;
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  fuzz::FloatSource fs{fdp};
  Built built = decode_config(fdp, fs);
  const auto f2 = fdp.ConsumeIntegral<std::uint8_t>();
  const int weights_mode = f2 % 4;  // 0, 1: seeded; 2: seeded params written back with edits; 3: raw bytes
  const auto level = static_cast<TraceLevel>((f2 / 4) % 3);
  const int pad_to = (f2 & 0x40) ? fdp.ConsumeIntegralInRange<int>(0, 40) : 0;
  const bool two_texts = f2 & 0x80;
  std::vector<std::uint8_t> raw_weights;
  if (weights_mode == 3) raw_weights = fdp.ConsumeBytes<std::uint8_t>(fdp.ConsumeIntegralInRange<std::size_t>(0, 512));
  // Edits for mode 2: (tensor index, element index, value) triples.
  std::vector<std::tuple<std::uint8_t, std::uint16_t, float>> edits;
  if (weights_mode == 2) {
    const int k = fdp.ConsumeIntegralInRange<int>(0, 4);
    for (int i = 0; i < k; ++i) {
      const auto ti = fdp.ConsumeIntegral<std::uint8_t>();
      const auto ei = fdp.ConsumeIntegral<std::uint16_t>();
      edits.emplace_back(ti, ei, fs.next());
    }
  }
  const std::string text = fdp.ConsumeRemainingBytesAsString();

  auto created = Transformer::create(built.cfg);
  if (!created.ok()) {
    fuzz::check_error(created.status(), "create");
    FUZZ_CHECK(!built.expect_ok, "valid config rejected: %s", created.status().message.c_str());
    return 0;
  }
  std::unique_ptr<Transformer> model = std::move(created).value();
  ModelConfig& cfg = built.cfg;
  const ModelConfig eff = model->config();  // defaults applied (numDecoderLayers, dFF, numHeads); a copy:
                                            // `model` may be replaced below

  if (weights_mode == 3 || weights_mode == 2) {
    ModelConfig c2 = cfg;
    std::map<std::string, std::vector<float>> expected;
    if (weights_mode == 3) {
      c2.weights = raw_weights;
    } else {
      std::vector<attnscope::io::NamedTensor> tensors;
      const auto shapes = model->parameter_shapes();
      for (const auto& [name, t] : model->parameters().tensors()) expected[name] = t.data;
      bool special = false;
      for (const auto& [ti, ei, v] : edits) {
        if (shapes.empty()) break;
        const auto& name = shapes[ti % shapes.size()].first;
        auto& vec = expected[name];
        if (vec.empty()) continue;
        vec[ei % vec.size()] = v;
      }
      for (const auto& [name, vec] : expected) special = special || !fuzz::all_finite(vec);  // a later edit may
                                                                                           // overwrite an inf
      for (const auto& [name, shape] : shapes) {
        attnscope::io::NamedTensor t;
        t.name = name;
        t.dtype = "F32";
        for (int dim : shape) t.shape.push_back(dim);
        t.data = expected[name];
        tensors.push_back(std::move(t));
      }
      c2.weights = attnscope::io::write_safetensors(tensors);
      auto r2 = Transformer::create(c2);
      if (special) {
        fuzz::check_error(r2.status(), "create");
        return 0;
      }
      FUZZ_CHECK(r2.ok(), "re-loading the model's own parameters failed: %s", r2.status().message.c_str());
      bool same = true;
      for (const auto& [name, vec] : expected) same = same && r2.value()->parameters().tensors().at(name).data == vec;
      FUZZ_CHECK(same, "loaded parameters differ from the written ones");
      model = std::move(r2).value();
    }
    if (weights_mode == 3) {
      auto r2 = Transformer::create(c2);
      if (!r2.ok()) {
        fuzz::check_error(r2.status(), "create");
        return 0;
      }
      model = std::move(r2).value();
    }
  }

  std::string source = text, target = text;
  if (two_texts && !text.empty()) {
    const std::size_t cut = static_cast<std::size_t>(static_cast<unsigned char>(text[0])) % text.size();
    source = text.substr(1, cut);
    target = text.substr(1 + cut);
  }
  const bool enc_dec = eff.architecture == Architecture::kEncoderDecoder;
  const bool use_two = two_texts && enc_dec;
  auto r = use_two ? model->run(source, target, level, pad_to) : model->run(text, level, pad_to);
  const bool expect_run_ok = use_two ? side_ok(eff, source, pad_to) && side_ok(eff, target, pad_to)
                                     : side_ok(eff, text, pad_to);
  if (two_texts && !enc_dec) {
    auto wrong = model->run(source, target, level, pad_to);
    fuzz::check_error(wrong.status(), "run");
  }
  if (!r.ok()) {
    fuzz::check_error(r.status(), "run");
    // Weights from raw bytes may be huge: "produced non-finite values" is then a legitimate error.
    FUZZ_CHECK(!expect_run_ok || weights_mode == 3, "run rejected a valid text: %s", r.status().message.c_str());
    return 0;
  }
  FUZZ_CHECK(expect_run_ok, "run accepted a text it should reject (%zu bytes, padTo %d)", text.size(), pad_to);
  const RunTrace& t = r.value();
  FUZZ_CHECK(t.d_model == eff.d_model && t.d_ff == eff.d_ff && t.head_dim * t.num_heads == eff.d_model,
             "trace sizes");
  FUZZ_CHECK(t.has_source == enc_dec, "has_source %d", t.has_source);
  if (enc_dec) check_side(t, t.source, eff, use_two ? source : text, pad_to, false, nullptr, level, "source");
  check_side(t, t.main, eff, use_two ? target : text, pad_to, enc_dec, enc_dec ? &t.source : nullptr, level, "main");

  // Next-token distribution.
  const auto& nx = t.next;
  FUZZ_CHECK(nx.probs.size() == nx.ids.size() && nx.ids.size() == nx.tokens.size() &&
                 static_cast<int>(nx.probs.size()) <= eff.top_k,
             "next: %zu probs, %zu ids, top_k %d", nx.probs.size(), nx.ids.size(), eff.top_k);
  double sum = 0;
  std::set<std::int32_t> ids;
  for (std::size_t i = 0; i < nx.probs.size(); ++i) {
    FUZZ_CHECK(nx.probs[i] >= 0.0f && nx.probs[i] <= 1.0f, "next.probs[%zu] = %g", i, static_cast<double>(nx.probs[i]));
    if (i) FUZZ_CHECK(nx.probs[i] <= nx.probs[i - 1], "next.probs not descending at %zu", i);
    FUZZ_CHECK(ids.insert(nx.ids[i]).second, "next.ids repeats %d", nx.ids[i]);
    sum += nx.probs[i];
  }
  FUZZ_CHECK(sum <= 1.0 + 1e-5, "next.probs sum to %.9g", sum);

  // Repeatable bit for bit, whatever the trace level.
  auto again = use_two ? model->run(source, target, TraceLevel::kNone, pad_to)
                       : model->run(text, TraceLevel::kNone, pad_to);
  FUZZ_CHECK(again.ok() && again.value().main.output == t.main.output && again.value().next.probs == nx.probs,
             "second run (trace 'none') differs");

  // padTo: the real rows equal the unpadded run's.
  if (pad_to > t.main.n_real || (enc_dec && pad_to > t.source.n_real)) {
    auto unpadded = use_two ? model->run(source, target, TraceLevel::kNone, 0) : model->run(text, TraceLevel::kNone, 0);
    FUZZ_CHECK(unpadded.ok(), "unpadded run failed: %s", unpadded.status().message.c_str());
    const auto& u = unpadded.value().main.output;
    const std::size_t real = static_cast<std::size_t>(t.main.n_real) * static_cast<std::size_t>(eff.d_model);
    FUZZ_CHECK(u.size() == real, "unpadded output size");
    for (std::size_t i = 0; i < real; ++i) {
      const double a = t.main.output[i], b = u[i];
      FUZZ_CHECK(std::fabs(a - b) <= 1e-4 * (1.0 + std::fabs(b)), "padTo %d changed real output[%zu]: %.9g vs %.9g",
                 pad_to, i, a, b);
    }
  }
  return 0;
}
