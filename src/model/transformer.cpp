// transformer.cpp: config -> parameters -> run(text) -> trace (see transformer.h, docs/model.md).
// Layer: model.
#include "model/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "attention/simple.h"
#include "core/check.h"
#include "model/decoder_layer.h"
#include "model/embedding.h"
#include "ops/positional.h"
#include "ops/validate.h"
#include "tokenizers/tokenizers.h"
#if __has_include("io/safetensors.h")
#include "io/safetensors.h"
#define ATTNSCOPE_HAVE_SAFETENSORS 1
#endif

namespace attnscope::model {

namespace {

constexpr const char* kCreate = "createModel";
constexpr const char* kRun = "run";

// Limits that keep every allocation far below the wasm heap's 2 GiB (an allocation failure would abort).
constexpr int kMaxDModel = 8192;
constexpr int kMaxLayers = 256;
constexpr int kMaxDFF = 65536;
constexpr int kMaxPositions = 1 << 16;
constexpr int kMaxTokensLimit = 1 << 16;
constexpr long long kMaxParameters = 1LL << 26;  // floats (256 MiB)

core::Status check_range(const char* arg, long long v, long long lo, long long hi) {
  if (v < lo) {
    if (lo == 1) return core::check_positive(kCreate, arg, v);
    return core::check_non_negative(kCreate, arg, v);
  }
  if (v > hi) {
    return core::range_error(kCreate, arg,
                             std::string(arg) + " (" + std::to_string(v) + ") must be at most " + std::to_string(hi));
  }
  return core::Status::Ok();
}

std::string shape_text(const std::vector<int>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) t.append(",");
    t.append(std::to_string(s[i]));
  }
  t.append("]");
  return t;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

// The run's vocabulary for word/char tokenizers: token text -> id in order of first appearance.
struct Transformer::Vocab {
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<std::string> tokens;
  std::int32_t id_of(const std::string& t) {
    auto it = ids.find(t);
    if (it != ids.end()) return it->second;
    const auto id = static_cast<std::int32_t>(tokens.size());
    ids.emplace(t, id);
    tokens.push_back(t);
    return id;
  }
};

Transformer::~Transformer() = default;

// ---- parameters

void Transformer::declare(const std::string& name, std::vector<int> shape, bool is_bias_or_norm, float fill) {
  std::vector<float> data;
  if (is_bias_or_norm) {
    data.assign(static_cast<std::size_t>(shape[0]), fill);
  } else {
    data = xavier_uniform(cfg_.seed, name, shape[0], shape[1]);
  }
  shapes_[name] = Param{std::move(shape)};
  params_[name] = std::move(data);
}

std::vector<std::pair<std::string, std::vector<int>>> Transformer::parameter_shapes() const {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  for (const auto& [name, p] : shapes_) out.emplace_back(name, p.shape);
  return out;
}

core::Status Transformer::declare_and_load() {
  const int d = cfg_.d_model, f = cfg_.d_ff;
  auto attn = [&](const std::string& p) {
    for (const char* w : {"wq", "wk", "wv", "wo"}) declare(p + w, {d, d}, false, 0.0f);
    for (const char* b : {"bq", "bk", "bv", "bo"}) declare(p + b, {d}, true, 0.0f);
  };
  auto rest = [&](const std::string& p, int norms) {
    declare(p + "linear1.weight", {d, f}, false, 0.0f);
    declare(p + "linear1.bias", {f}, true, 0.0f);
    declare(p + "linear2.weight", {f, d}, false, 0.0f);
    declare(p + "linear2.bias", {d}, true, 0.0f);
    for (int i = 1; i <= norms; ++i) {
      declare(p + "norm" + std::to_string(i) + ".weight", {d}, true, 1.0f);
      declare(p + "norm" + std::to_string(i) + ".bias", {d}, true, 0.0f);
    }
  };
  const bool enc_dec = cfg_.architecture == Architecture::kEncoderDecoder;
  const std::string first = cfg_.architecture == Architecture::kDecoder ? "decoder" : "encoder";
  for (int i = 0; i < cfg_.num_layers; ++i) {
    if (i == 0 && cfg_.attention == FirstAttention::kSimple) continue;
    const std::string p = first + ".layers." + std::to_string(i) + ".";
    attn(p + "self_attn.");
    rest(p, 2);
  }
  if (enc_dec) {
    for (int i = 0; i < cfg_.num_decoder_layers; ++i) {
      const std::string p = "decoder.layers." + std::to_string(i) + ".";
      attn(p + "self_attn.");
      attn(p + "cross_attn.");
      rest(p, 3);
    }
  }
  if (cfg_.positional == PositionalKind::kLearned) {
    std::vector<float> table(static_cast<std::size_t>(cfg_.max_positions) * static_cast<std::size_t>(d));
    for (int p = 0; p < cfg_.max_positions; ++p) {
      seeded_row(cfg_.seed ^ kPositionalDomain, static_cast<std::uint64_t>(p),
                 std::span<float>(table.data() + static_cast<std::size_t>(p) * d, static_cast<std::size_t>(d)));
    }
    shapes_["positional.weight"] = Param{{cfg_.max_positions, d}};
    params_["positional.weight"] = std::move(table);
  }

  if (cfg_.weights.empty()) return core::Status::Ok();
#ifdef ATTNSCOPE_HAVE_SAFETENSORS
  auto parsed = io::parse_safetensors(cfg_.weights, "createModel: weights");
  if (!parsed.ok()) {
    core::Status s = parsed.status();
    s.function = kCreate;
    s.argument = "weights";
    return s;
  }
  for (auto& t : parsed.value()) {
    const std::string name = t.name;
    std::vector<int> shape;
    for (const auto dim : t.shape) shape.push_back(static_cast<int>(dim));
    const std::string where = "createModel: weights: tensor " + quoted(name);
    if (name == "embedding.weight") {
      if (cfg_.tokenizer != TokenizerKind::kBpe) {
        return core::invalid_error(kCreate, "weights",
                                   where + " needs tokenizer 'bpe' (word/char ids depend on the text; use "
                                           "config.embeddings)");
      }
      const int rows = static_cast<int>(bpe_->vocab_size());
      if (shape.size() != 2 || shape[0] != rows || shape[1] != d) {
        return core::Status{core::ErrorKind::kRange, kCreate, "weights",
                            where + " has shape " + shape_text(shape) + ", expected " + shape_text({rows, d}) +
                                " (vocabulary size, dModel)"};
      }
      shapes_[name] = Param{shape};
    } else {
      auto it = shapes_.find(name);
      if (it == shapes_.end()) {
        return core::Status{core::ErrorKind::kInvalid, kCreate, "weights",
                            where + " is not a parameter of this model (see docs/model.md for the names)"};
      }
      if (it->second.shape != shape) {
        return core::Status{core::ErrorKind::kRange, kCreate, "weights",
                            where + " has shape " + shape_text(shape) + ", expected " + shape_text(it->second.shape)};
      }
    }
    for (std::size_t i = 0; i < t.data.size(); ++i) {
      if (!std::isfinite(t.data[i])) {
        return core::Status{core::ErrorKind::kRange, kCreate, "weights",
                            where + "[" + std::to_string(i) + "] (" + core::format_number(t.data[i]) + ") must be finite"};
      }
    }
    params_[name] = std::move(t.data);
  }
  return core::Status::Ok();
#else
  return core::Status{core::ErrorKind::kInvalid, kCreate, "weights",
                      "createModel: weights: safetensors loading is not available in this build"};
#endif
}

core::Status Transformer::build_layers() {
  auto span = [&](const std::string& n) { return std::span<const float>(params_.at(n)); };
  auto mha = [&](const std::string& p) {
    attention::MhaWeights w;
    w.wq = span(p + "wq"), w.wk = span(p + "wk"), w.wv = span(p + "wv"), w.wo = span(p + "wo");
    w.bq = span(p + "bq"), w.bk = span(p + "bk"), w.bv = span(p + "bv"), w.bo = span(p + "bo");
    return w;
  };
  auto fill = [&](Layer& l, const std::string& p, int norms) {
    l.ff = FeedForwardWeights{span(p + "linear1.weight"), span(p + "linear1.bias"), span(p + "linear2.weight"),
                              span(p + "linear2.bias")};
    l.norm1 = NormWeights{span(p + "norm1.weight"), span(p + "norm1.bias")};
    l.norm2 = NormWeights{span(p + "norm2.weight"), span(p + "norm2.bias")};
    if (norms == 3) l.norm3 = NormWeights{span(p + "norm3.weight"), span(p + "norm3.bias")};
  };
  const bool decoder_only = cfg_.architecture == Architecture::kDecoder;
  const std::string first = decoder_only ? "decoder" : "encoder";
  for (int i = 0; i < cfg_.num_layers; ++i) {
    Layer l;
    if (i == 0 && cfg_.attention == FirstAttention::kSimple) {
      l.kind = LayerKind::kSimple;
    } else {
      const std::string p = first + ".layers." + std::to_string(i) + ".";
      l.kind = decoder_only ? LayerKind::kDecoder : LayerKind::kEncoder;
      l.causal = decoder_only;
      l.self_attn = mha(p + "self_attn.");
      fill(l, p, 2);
    }
    first_.push_back(l);
  }
  if (cfg_.architecture == Architecture::kEncoderDecoder) {
    for (int i = 0; i < cfg_.num_decoder_layers; ++i) {
      const std::string p = "decoder.layers." + std::to_string(i) + ".";
      Layer l;
      l.kind = LayerKind::kDecoder;
      l.causal = true;
      l.has_cross = true;
      l.self_attn = mha(p + "self_attn.");
      l.cross_attn = mha(p + "cross_attn.");
      fill(l, p, 3);
      second_.push_back(l);
    }
  }
  auto e = params_.find("embedding.weight");
  if (e != params_.end()) {
    embedding_table_ = e->second;
    embedding_rows_ = static_cast<int>(e->second.size() / static_cast<std::size_t>(cfg_.d_model));
  }
  auto pos = params_.find("positional.weight");
  if (pos != params_.end()) positional_table_ = pos->second;
  return core::Status::Ok();
}

core::Result<std::unique_ptr<Transformer>> Transformer::create(ModelConfig c) {
  // 1. sizes and numbers
  ATTN_TRY(check_range("dModel", c.d_model, 1, kMaxDModel));
  ATTN_TRY(check_range("numHeads", c.num_heads, 1, kMaxDModel));
  ATTN_TRY(check_range("numLayers", c.num_layers, 0, kMaxLayers));
  if (c.num_decoder_layers == 0) c.num_decoder_layers = c.num_layers;
  ATTN_TRY(check_range("numDecoderLayers", c.num_decoder_layers, 0, kMaxLayers));
  // numHeads matters only when some layer has learned (multi-head) attention; a weightless model such as the
  // classic 3-d example (attention 'simple', numLayers 1) keeps the default numHeads and reports 1 head.
  const bool has_mha = c.num_layers > (c.attention == FirstAttention::kSimple ? 1 : 0) ||
                       (c.architecture == Architecture::kEncoderDecoder && c.num_decoder_layers > 0);
  if (!has_mha && c.d_model % c.num_heads != 0) c.num_heads = 1;
  ATTN_TRY(ops::check_divisible(kCreate, c.d_model, c.num_heads));
  if (c.d_ff == 0) c.d_ff = 4 * c.d_model;
  ATTN_TRY(check_range("dFF", c.d_ff, 1, kMaxDFF));
  ATTN_TRY(ops::check_positive_finite(kCreate, "eps", c.eps));
  ATTN_TRY(ops::check_positive_finite(kCreate, "positionalBase", c.positional_base));
  ATTN_TRY(check_range("maxPositions", c.max_positions, 1, kMaxPositions));
  ATTN_TRY(check_range("topK", c.top_k, 0, 1 << 20));
  ATTN_TRY(check_range("maxTokens", c.max_tokens, 1, kMaxTokensLimit));
  if (c.attention == FirstAttention::kSimple && c.architecture == Architecture::kDecoder) {
    return core::range_error(kCreate, "attention",
                             "attention ('simple') needs architecture 'encoder' or 'encoder-decoder' (it has no "
                             "causal mask)");
  }
  const long long d = c.d_model, f = c.d_ff;
  const long long per_layer = 4 * d * d + 4 * d + 2 * d * f + f + d + 6 * d;
  long long total = per_layer * (c.num_layers + (c.architecture == Architecture::kEncoderDecoder ? 2LL : 0LL) *
                                                    c.num_decoder_layers);
  if (c.positional == PositionalKind::kLearned) total += d * c.max_positions;
  if (total > kMaxParameters) {
    return core::range_error(kCreate, "dModel",
                             "the model would have " + std::to_string(total) + " parameters, more than " +
                                 std::to_string(kMaxParameters) + " (reduce dModel, dFF, numLayers or maxPositions)");
  }
  // 2. user embedding rows
  for (const auto& [token, row] : c.embeddings) {
    const std::string arg = "embeddings[" + quoted(token) + "]";
    ATTN_TRY(ops::check_array(kCreate, "", arg.c_str(), row, ops::Dims{"dModel", d}));
  }

  std::unique_ptr<Transformer> t(new Transformer());
  // 3. tokenizer
  if (c.tokenizer == TokenizerKind::kBpe) {
    auto r = tokenizers::BpeTokenizer::create(c.bpe_vocab, c.bpe_merges);
    if (!r.ok()) {
      core::Status s = r.status();
      // "createBpeTokenizer: merges line 12 ..." -> "createModel: tokenizer.merges line 12 ..."
      const std::string prefix = s.function + ": ";
      std::string rest = s.message.compare(0, prefix.size(), prefix) == 0 ? s.message.substr(prefix.size()) : s.message;
      if (rest.compare(0, 5, "vocab") == 0 || rest.compare(0, 6, "merges") == 0) rest = "tokenizer." + rest;
      return core::Status{s.kind, kCreate, "tokenizer", std::string(kCreate) + ": " + rest};
    }
    t->bpe_ = std::move(r).value();
  }
  t->cfg_ = std::move(c);
  ATTN_TRY(t->declare_and_load());
  ATTN_TRY(t->build_layers());
  // 4. user rows: by text (word/char) or by vocab entry (bpe)
  for (auto& [token, row] : t->cfg_.embeddings) {
    if (t->bpe_ == nullptr) {
      t->user_rows_[token] = row;
    }
  }
  if (t->bpe_ != nullptr && !t->cfg_.embeddings.empty()) {
    std::unordered_map<std::string, const std::vector<float>*> wanted;
    for (const auto& [token, row] : t->cfg_.embeddings) wanted[token] = &row;
    const auto size = static_cast<std::int32_t>(t->bpe_->vocab_size());
    for (std::int32_t id = 0; id < size && !wanted.empty(); ++id) {
      auto it = wanted.find(t->bpe_->token_text(id));
      if (it == wanted.end()) continue;
      t->user_rows_by_id_[id] = *it->second;
      wanted.erase(it);
    }
    if (!wanted.empty()) {
      const std::string tok = wanted.begin()->first;
      return core::range_error(kCreate, "embeddings",
                               "embeddings: token " + quoted(tok) +
                                   " is not in the BPE vocabulary (use the vocab entry, e.g. \"Ġjourney\")");
    }
  }
  t->cfg_.embeddings.clear();
  t->cfg_.embeddings.shrink_to_fit();
  t->cfg_.weights.clear();
  t->cfg_.weights.shrink_to_fit();
  t->cfg_.bpe_vocab.clear();
  t->cfg_.bpe_merges.clear();
  return t;
}

// ---- run

void Transformer::embedding_row(std::int32_t id, const std::string& token, std::span<float> out) const {
  if (bpe_ != nullptr) {
    auto u = user_rows_by_id_.find(id);
    if (u != user_rows_by_id_.end()) {
      std::copy(u->second.begin(), u->second.end(), out.begin());
      return;
    }
    if (!embedding_table_.empty() && id >= 0 && id < embedding_rows_) {
      const auto* row = embedding_table_.data() + static_cast<std::size_t>(id) * static_cast<std::size_t>(cfg_.d_model);
      std::copy(row, row + cfg_.d_model, out.begin());
      return;
    }
    seeded_row(cfg_.seed, static_cast<std::uint64_t>(static_cast<std::uint32_t>(id)), out);
    return;
  }
  auto u = user_rows_.find(token);
  if (u != user_rows_.end()) {
    std::copy(u->second.begin(), u->second.end(), out.begin());
    return;
  }
  seeded_row(cfg_.seed, fnv1a64(token), out);
}

// A tokenizer error ("tokenize: text ...", "encode: text ...") re-addressed to run()'s argument
// ("run: source ..."), so the message names the call the user made.
static core::Status as_run_error(const core::Status& st, const char* what) {
  const std::string prefix = st.function + ": text";
  std::string msg = st.message;
  if (msg.compare(0, prefix.size(), prefix) == 0) msg = std::string(kRun) + ": " + what + msg.substr(prefix.size());
  return core::Status{st.kind, kRun, what, msg};
}

core::Result<SideTrace> Transformer::embed(std::string_view text, const char* what, Vocab& vocab, int pad_to) const {
  SideTrace s;
  tokenizers::Tokenization tk;
  if (bpe_ != nullptr) {
    auto r = bpe_->encode(text);
    if (!r.ok()) return as_run_error(r.status(), what);
    tk = std::move(r).value();
  } else {
    auto r = tokenizers::tokenize(text, cfg_.tokenizer == TokenizerKind::kChar ? tokenizers::Kind::kChar
                                                                               : tokenizers::Kind::kWord);
    if (!r.ok()) return as_run_error(r.status(), what);
    tk = std::move(r).value();
  }
  const long long n = static_cast<long long>(tk.tokens.size());
  if (n == 0) return core::range_error(kRun, what, std::string(what) + " has no tokens");
  if (n > cfg_.max_tokens) {
    return core::range_error(kRun, what,
                             std::string(what) + " has " + std::to_string(n) + " tokens, more than maxTokens (" +
                                 std::to_string(cfg_.max_tokens) + ")");
  }
  if (cfg_.positional == PositionalKind::kLearned && n > cfg_.max_positions) {
    return core::range_error(kRun, what,
                             std::string(what) + " has " + std::to_string(n) + " tokens, more than maxPositions (" +
                                 std::to_string(cfg_.max_positions) + ")");
  }
  if (pad_to != 0) {
    if (pad_to < n) {
      return core::range_error(kRun, "padTo",
                               "padTo (" + std::to_string(pad_to) + ") must be at least the number of tokens of the " +
                                   what + " (" + std::to_string(n) + ")");
    }
    if (pad_to > cfg_.max_tokens) {
      return core::range_error(kRun, "padTo",
                               "padTo (" + std::to_string(pad_to) + ") must be at most maxTokens (" +
                                   std::to_string(cfg_.max_tokens) + ")");
    }
    if (cfg_.positional == PositionalKind::kLearned && pad_to > cfg_.max_positions) {
      return core::range_error(kRun, "padTo",
                               "padTo (" + std::to_string(pad_to) + ") must be at most maxPositions (" +
                                   std::to_string(cfg_.max_positions) + ")");
    }
  }
  const int d = cfg_.d_model;
  s.n_real = static_cast<int>(n);
  s.n = std::max(s.n_real, pad_to);
  s.tokens = std::move(tk.tokens);
  s.offsets = std::move(tk.offsets);
  if (bpe_ != nullptr) {
    s.ids = std::move(tk.ids);
  } else {
    s.ids.reserve(s.tokens.size());
    for (const auto& tok : s.tokens) s.ids.push_back(vocab.id_of(tok));
  }
  if (s.n > s.n_real) {
    // '<pad>': id -1, empty range at the end of the text (UTF-16 length), zero embedding row
    std::int32_t len = 0;
    for (const char ch : text) {
      const auto b = static_cast<unsigned char>(ch);
      if ((b & 0xC0u) != 0x80u) len += b >= 0xF0u ? 2 : 1;
    }
    for (int i = s.n_real; i < s.n; ++i) {
      s.tokens.emplace_back("<pad>");
      s.ids.push_back(-1);
      s.offsets.push_back(len);
      s.offsets.push_back(len);
    }
  }
  const std::size_t nd = static_cast<std::size_t>(s.n) * static_cast<std::size_t>(d);
  s.embeddings.assign(nd, 0.0f);
  for (int i = 0; i < s.n_real; ++i) {
    embedding_row(s.ids[static_cast<std::size_t>(i)], s.tokens[static_cast<std::size_t>(i)],
                  std::span<float>(s.embeddings.data() + static_cast<std::size_t>(i) * d, static_cast<std::size_t>(d)));
  }
  switch (cfg_.positional) {
    case PositionalKind::kSinusoidal: {
      auto pe = ops::positional_encoding(s.n, d, cfg_.positional_base);
      if (!pe.ok()) return core::Status{pe.status().kind, kRun, what, pe.status().message};
      s.positional = std::move(pe).value();
      break;
    }
    case PositionalKind::kLearned:
      s.positional.assign(positional_table_.begin(), positional_table_.begin() + static_cast<std::ptrdiff_t>(nd));
      break;
    case PositionalKind::kNone:
      s.positional.assign(nd, 0.0f);
      break;
  }
  s.input.resize(nd);
  for (std::size_t i = 0; i < nd; ++i) s.input[i] = s.embeddings[i] + s.positional[i];
  return s;
}

namespace {

void keep_attention(AttentionTrace& t, attention::MhaOutput& m, TraceLevel level) {
  if (level == TraceLevel::kNone) return;
  t.weights = std::move(m.weights);
  if (level != TraceLevel::kFull) return;
  t.q = std::move(m.q);
  t.k = std::move(m.k);
  t.v = std::move(m.v);
  t.scores = std::move(m.scores);
  t.concat = std::move(m.concat);
  t.output = std::move(m.output);
}

// The factor multi_head_attention applies to q·k (float32, as attention/multi_head.cpp computes it).
double mha_scale(int head_dim) {
  return static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))));
}

// Simple attention with pad keys blocked: the real rows are the unpadded call's (bit for bit); each pad query
// row i attends to the real keys: scores x_i·x_j (j < n_real; -inf for pad keys), softmax, Σ w_ij x_j.
core::Result<attention::AttentionOutput> simple_padded(const std::vector<float>& x, int n, int n_real, int d) {
  if (n_real == n) return attention::simple_self_attention(x, n, d);
  auto r = attention::simple_self_attention(std::span<const float>(x.data(), static_cast<std::size_t>(n_real) * d),
                                            n_real, d);
  if (!r.ok()) return r.status();
  const auto& o = r.value();
  attention::AttentionOutput out;
  const auto N = static_cast<std::size_t>(n), R = static_cast<std::size_t>(n_real), D = static_cast<std::size_t>(d);
  out.scores.assign(N * N, -std::numeric_limits<float>::infinity());
  out.weights.assign(N * N, 0.0f);
  out.output.assign(N * D, 0.0f);
  for (std::size_t i = 0; i < R; ++i) {
    std::copy(o.scores.begin() + static_cast<std::ptrdiff_t>(i * R), o.scores.begin() + static_cast<std::ptrdiff_t>((i + 1) * R),
              out.scores.begin() + static_cast<std::ptrdiff_t>(i * N));
    std::copy(o.weights.begin() + static_cast<std::ptrdiff_t>(i * R), o.weights.begin() + static_cast<std::ptrdiff_t>((i + 1) * R),
              out.weights.begin() + static_cast<std::ptrdiff_t>(i * N));
  }
  std::copy(o.output.begin(), o.output.end(), out.output.begin());
  std::vector<double> s(R);
  for (std::size_t i = R; i < N; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < R; ++j) {
      double z = 0.0;
      for (std::size_t c = 0; c < D; ++c) z += static_cast<double>(x[i * D + c]) * static_cast<double>(x[j * D + c]);
      s[j] = z;
      out.scores[i * N + j] = static_cast<float>(z);
      mx = std::max(mx, z);
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < R; ++j) sum += (s[j] = std::exp(s[j] - mx));
    for (std::size_t j = 0; j < R; ++j) {
      const double w = s[j] / sum;
      out.weights[i * N + j] = static_cast<float>(w);
      for (std::size_t c = 0; c < D; ++c) out.output[i * D + c] += static_cast<float>(w * static_cast<double>(x[j * D + c]));
    }
  }
  return out;
}

// 1 = may attend: key j is a real token (j < n_real), for each of nq query rows.
std::vector<std::uint8_t> key_padding_mask(int nq, int nk, int nk_real) {
  std::vector<std::uint8_t> m;
  if (nk_real >= nk) return m;
  m.assign(static_cast<std::size_t>(nq) * static_cast<std::size_t>(nk), 0);
  for (int i = 0; i < nq; ++i) {
    for (int j = 0; j < nk_real; ++j) m[static_cast<std::size_t>(i) * static_cast<std::size_t>(nk) + static_cast<std::size_t>(j)] = 1;
  }
  return m;
}

core::Status layer_failed(const char* what, std::size_t i) {
  // Only reachable when values overflow float32 inside the stack (finite weights, huge magnitudes): the
  // layer's own message names its internal arguments, so say it in run()'s terms, as the check after
  // each layer does.
  return core::range_error(kRun, what,
                           std::string(what) + ": layer " + std::to_string(i) +
                               " produced non-finite values (embeddings or weights too large)");
}

}  // namespace

core::Status Transformer::run_stack(SideTrace& side, const std::vector<Layer>& layers, const SideTrace* memory,
                                    TraceLevel level) const {
  const int n = side.n, d = cfg_.d_model;
  const bool full = level == TraceLevel::kFull;
  const char* what = memory != nullptr ? "target" : (cfg_.architecture == Architecture::kEncoderDecoder ? "source" : "text");
  std::vector<float> x = side.input;
  side.layers.reserve(layers.size());
  const std::vector<std::uint8_t> self_mask = key_padding_mask(n, n, side.n_real);
  const std::vector<std::uint8_t> memory_mask =
      memory != nullptr ? key_padding_mask(n, memory->n, memory->n_real) : std::vector<std::uint8_t>();
  const double scale = mha_scale(cfg_.d_model / cfg_.num_heads);
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const Layer& L = layers[li];
    LayerTrace t;
    t.kind = L.kind;
    if (full) t.input = x;
    if (L.kind == LayerKind::kSimple) {
      auto r = simple_padded(x, n, side.n_real, d);
      if (!r.ok()) return layer_failed(what, li);
      auto& o = r.value();
      if (level != TraceLevel::kNone) t.attention.weights = std::move(o.weights);
      if (full) {
        t.attention.scores = std::move(o.scores);
        t.attention.output = o.output;
        t.attention.scale = 1.0;
      }
      x = std::move(o.output);
    } else if (!L.has_cross) {
      EncoderLayerArgs a;
      a.x = x;
      a.n = n, a.d_model = d, a.num_heads = cfg_.num_heads, a.d_ff = cfg_.d_ff;
      a.attn = L.self_attn;
      a.ff = L.ff;
      a.norm1 = L.norm1, a.norm2 = L.norm2;
      a.norm_first = cfg_.norm_first;
      a.activation = cfg_.activation;
      a.eps = cfg_.eps;
      a.causal = L.causal;
      a.mask = self_mask;
      a.keep_trace = full;
      auto r = encoder_layer(a);
      if (!r.ok()) return layer_failed(what, li);
      auto& o = r.value();
      if (full) {
        keep_attention(t.attention, o.attn, level);
        t.attention.scale = scale;
        t.residual1 = std::move(o.attn_residual);
        t.norm1 = std::move(o.norm1);
        t.ff_hidden = std::move(o.ff_hidden);
        t.ff_output = std::move(o.ff_output);
        t.residual2 = std::move(o.residual2);
        t.norm2 = std::move(o.norm2);
      } else if (level == TraceLevel::kWeights) {
        t.attention.weights = std::move(o.weights);
      }
      x = std::move(o.output);
    } else {
      DecoderLayerArgs a;
      a.x = x;
      a.memory = memory->output;
      a.n = n, a.m = memory->n, a.d_model = d, a.num_heads = cfg_.num_heads, a.d_ff = cfg_.d_ff;
      a.self_attn = L.self_attn;
      a.cross_attn = L.cross_attn;
      a.ff = L.ff;
      a.norm1 = L.norm1, a.norm2 = L.norm2, a.norm3 = L.norm3;
      a.norm_first = cfg_.norm_first;
      a.activation = cfg_.activation;
      a.eps = cfg_.eps;
      a.causal = true;
      a.self_mask = self_mask;
      a.memory_mask = memory_mask;
      a.keep_trace = full;
      auto r = decoder_layer(a);
      if (!r.ok()) return layer_failed(what, li);
      auto& o = r.value();
      t.has_cross = true;
      if (full) {
        keep_attention(t.attention, o.self_attn, level);
        keep_attention(t.cross, o.cross_attn, level);
        t.attention.scale = t.cross.scale = scale;
        t.residual1 = std::move(o.residual1);
        t.norm1 = std::move(o.norm1);
        t.residual2 = std::move(o.residual2);
        t.norm2 = std::move(o.norm2);
        t.residual3 = std::move(o.residual3);
        t.norm3 = std::move(o.norm3);
        t.ff_hidden = std::move(o.ff_hidden);
        t.ff_output = std::move(o.ff_output);
      } else if (level == TraceLevel::kWeights) {
        t.attention.weights = std::move(o.self_weights);
        t.cross.weights = std::move(o.cross_weights);
      }
      x = std::move(o.output);
    }
    // The learned layers check their own results; this also covers the weightless 'simple' layer.
    if (!ops::all_finite(x)) return layer_failed(what, li);
    t.output = x;
    side.layers.push_back(std::move(t));
  }
  side.output = std::move(x);
  return core::Status::Ok();
}

void Transformer::next_token(const SideTrace& side, const Vocab& vocab, NextToken& next) const {
  const int d = cfg_.d_model;
  const float* h = side.output.data() + static_cast<std::size_t>(side.n_real - 1) * static_cast<std::size_t>(d);
  const std::int32_t count =
      bpe_ != nullptr ? static_cast<std::int32_t>(bpe_->vocab_size()) : static_cast<std::int32_t>(vocab.tokens.size());
  if (count == 0 || cfg_.top_k == 0) return;
  std::vector<double> logits(static_cast<std::size_t>(count));
  std::vector<float> row(static_cast<std::size_t>(d));
  static const std::string kEmpty;
  for (std::int32_t id = 0; id < count; ++id) {
    embedding_row(id, bpe_ != nullptr ? kEmpty : vocab.tokens[static_cast<std::size_t>(id)], row);
    double z = 0.0;
    for (int c = 0; c < d; ++c) z += static_cast<double>(h[c]) * static_cast<double>(row[static_cast<std::size_t>(c)]);
    logits[static_cast<std::size_t>(id)] = z;
  }
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (double& z : logits) sum += (z = std::exp(z - mx));
  const std::size_t k = std::min(static_cast<std::size_t>(cfg_.top_k), logits.size());
  std::vector<std::int32_t> order(logits.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](std::int32_t a, std::int32_t b) {
                      const double pa = logits[static_cast<std::size_t>(a)], pb = logits[static_cast<std::size_t>(b)];
                      return pa > pb || (pa == pb && a < b);
                    });
  for (std::size_t i = 0; i < k; ++i) {
    const std::int32_t id = order[i];
    next.ids.push_back(id);
    next.probs.push_back(static_cast<float>(logits[static_cast<std::size_t>(id)] / sum));
    next.tokens.push_back(bpe_ != nullptr ? bpe_->token_text(id) : vocab.tokens[static_cast<std::size_t>(id)]);
  }
}

core::Result<RunTrace> Transformer::run_impl(std::string_view source, std::string_view target, bool two_sided,
                                             TraceLevel level, int pad_to) const {
  if (pad_to < 0) return core::check_non_negative(kRun, "padTo", pad_to);
  RunTrace out;
  out.d_model = cfg_.d_model;
  out.num_heads = cfg_.num_heads;
  out.head_dim = cfg_.d_model / cfg_.num_heads;
  out.d_ff = cfg_.d_ff;
  Vocab vocab;
  if (cfg_.architecture == Architecture::kEncoderDecoder) {
    auto src = embed(source, two_sided ? "source" : "text", vocab, pad_to);
    if (!src.ok()) return src.status();
    auto tgt = embed(target, two_sided ? "target" : "text", vocab, pad_to);
    if (!tgt.ok()) return tgt.status();
    out.has_source = true;
    out.source = std::move(src).value();
    out.main = std::move(tgt).value();
    ATTN_TRY(run_stack(out.source, first_, nullptr, level));
    ATTN_TRY(run_stack(out.main, second_, &out.source, level));
  } else {
    auto side = embed(source, "text", vocab, pad_to);
    if (!side.ok()) return side.status();
    out.main = std::move(side).value();
    ATTN_TRY(run_stack(out.main, first_, nullptr, level));
  }
  next_token(out.main, vocab, out.next);
  return out;
}

core::Result<RunTrace> Transformer::run(std::string_view text, TraceLevel level, int pad_to) const {
  return run_impl(text, text, false, level, pad_to);
}

core::Result<RunTrace> Transformer::run(std::string_view source, std::string_view target, TraceLevel level,
                                        int pad_to) const {
  if (cfg_.architecture != Architecture::kEncoderDecoder) {
    return core::type_error(kRun, "text", "text must be a string for architecture '" +
                                              std::string(cfg_.architecture == Architecture::kDecoder ? "decoder"
                                                                                                      : "encoder") +
                                              "' ({ source, target } needs 'encoder-decoder')");
  }
  return run_impl(source, target, true, level, pad_to);
}

}  // namespace attnscope::model
