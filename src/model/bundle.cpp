// bundle.cpp: a bundled model's config.json + model.safetensors -> a Transformer or a GRU encoder-decoder
// (bundle.h). Layer: model. The transformer's description comes from describe() (config.cpp), as createModel's
// would for the same sizes; this file adds only what a trained export has on top: a loaded embedding table with
// its scale, the final norms and the output head the file holds, and a fixed character vocabulary.
#include "model/bundle.h"

#include <cmath>
#include <set>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "io/json_fields.h"
#include "io/json_reader.h"
#include "io/safetensors.h"
#include "model/model_config.h"

namespace attnscope::model {

namespace {

using nlohmann::json;

// Every problem with config.json is reported as "<op>: config: <text>" (argument "config").
core::Status config_error(const char* op, const std::string& text, core::ErrorKind kind = core::ErrorKind::kInvalid) {
  return core::make_error(kind, op, "config", "config: " + text);
}
// An error of a lower layer about one config member, restated for config.json.
core::Status config_error(const char* op, const core::Status& s) { return config_error(op, s.detail(), s.kind); }

core::Result<json> parse_config(std::string_view text, const char* op) {
  json c;
  std::string reason, duplicate;
  if (!io::detail::parse_json(text, &c, &reason, &duplicate)) return config_error(op, "not valid JSON (" + reason + ")");
  if (!c.is_object()) return config_error(op, "must be a JSON object");
  if (!duplicate.empty()) return config_error(op, "member " + core::quote_name(duplicate) + " is given twice");
  const auto format = c.find("format");
  if (format == c.end() || !format->is_string() || format->get<std::string>() != kBundleFormat) {
    return config_error(op, "format (" + (format == c.end() ? std::string("missing") : format->dump()) +
                                ") must be " + core::quote_name(kBundleFormat));
  }
  return c;
}

// config.json's members, read by io::JsonFields (one message style for every JSON file):
// "<op>: config: dFF must be an integer, got string", "<op>: config: dFF (0) must be a positive integer".
io::JsonFields members(const char* op) { return io::JsonFields(op, "config", "config: "); }

core::Result<std::string> string_member(const json& c, const char* key, const char* op) {
  return members(op).string(c, key, key, std::nullopt);
}

// An integer member >= min (config.json writes integers as JSON integers).
core::Result<int> int_member(const json& c, const char* key, const char* op, int min) {
  auto v = members(op).integer(c, key, key, min, io::JsonFields::kNoLimit, std::nullopt);
  if (!v.ok()) return v.status();
  return static_cast<int>(v.value());
}

core::Result<double> number_member(const json& c, const char* key, const char* op, double fallback) {
  return members(op).number(c, key, key, /*positive=*/false, fallback);
}

core::Result<bool> bool_member(const json& c, const char* key, const char* op, bool fallback) {
  return members(op).boolean(c, key, key, fallback);
}

// tokenizer: { kind: 'char', vocab: [strings], pad, bos, eos, unk } -> a fixed character vocabulary.
core::Result<TextEncoder> read_tokenizer(const json& c, const char* op) {
  const auto t = c.find("tokenizer");
  if (t == c.end() || !t->is_object()) return config_error(op, "tokenizer must be an object { kind, vocab, ... }");
  const auto kind = t->find("kind");
  if (kind == t->end() || !kind->is_string() || kind->get<std::string>() != "char") {
    return config_error(op, "tokenizer.kind (" + (kind == t->end() ? std::string("missing") : kind->dump()) +
                                ") must be \"char\"");
  }
  const auto vocab = t->find("vocab");
  if (vocab == t->end() || !vocab->is_array() || vocab->empty()) {
    return config_error(op, "tokenizer.vocab must be a non-empty array of strings");
  }
  std::vector<std::string> entries;
  for (std::size_t i = 0; i < vocab->size(); ++i) {
    if (!(*vocab)[i].is_string()) return config_error(op, "tokenizer.vocab[" + std::to_string(i) + "] must be a string");
    entries.push_back((*vocab)[i].get<std::string>());
  }
  SpecialIds sp;
  const std::pair<const char*, std::int32_t*> specials[] = {{"pad", &sp.pad}, {"bos", &sp.bos}, {"eos", &sp.eos},
                                                            {"unk", &sp.unk}};
  for (const auto& [key, id] : specials) {
    const auto s = t->find(key);
    if (s == t->end() || !s->is_string()) return config_error(op, std::string("tokenizer.") + key + " must be a string");
    for (std::size_t i = 0; i < entries.size() && *id < 0; ++i) {
      if (entries[i] == s->get<std::string>()) *id = static_cast<std::int32_t>(i);
    }
    if (*id < 0) return config_error(op, std::string("tokenizer.") + key + " (" + s->dump() + ") is not in tokenizer.vocab");
  }
  auto enc = TextEncoder::char_vocab(std::move(entries), sp, op);
  if (!enc.ok()) return config_error(op, enc.status());
  return enc;
}

core::Result<std::vector<io::NamedTensor>> read_weights(std::span<const std::uint8_t> bytes, const char* op) {
  auto parsed = io::parse_safetensors(bytes, op);
  if (!parsed.ok()) {
    const core::Status& e = parsed.status();
    return core::make_error(e.kind, op, "weights", "weights: " + e.detail());
  }
  return parsed;
}

// The createModel config with the same sizes as the bundle (describe() checks and completes it).
core::Result<ModelConfig> transformer_config(const json& c, const std::string& architecture, const char* op) {
  ModelConfig cfg;
  auto arch = parse_architecture(architecture, op, "architecture");
  if (!arch.ok()) return config_error(op, arch.status());
  cfg.architecture = arch.value();
  const bool enc_dec = cfg.architecture == Architecture::kEncoderDecoder;
  auto d_model = int_member(c, "dModel", op, 1);
  auto num_heads = int_member(c, "numHeads", op, 1);
  auto num_layers = int_member(c, "numLayers", op, 1);
  auto d_ff = int_member(c, "dFF", op, 1);
  auto max_positions = int_member(c, "maxPositions", op, 1);
  for (const core::Status* s : {&d_model.status(), &num_heads.status(), &num_layers.status(), &d_ff.status(),
                                &max_positions.status()}) {
    if (!s->ok()) return *s;
  }
  cfg.d_model = d_model.value();
  cfg.num_heads = num_heads.value();
  cfg.num_layers = num_layers.value();
  cfg.d_ff = d_ff.value();
  cfg.max_positions = max_positions.value();
  if (enc_dec) {
    auto n = int_member(c, "numDecoderLayers", op, 1);
    if (!n.ok()) return n.status();
    cfg.num_decoder_layers = n.value();
  }
  auto norm_first = bool_member(c, "normFirst", op, false);
  if (!norm_first.ok()) return norm_first.status();
  cfg.norm_first = norm_first.value();
  auto eps = number_member(c, "eps", op, 1e-5);
  if (!eps.ok()) return eps.status();
  cfg.eps = eps.value();
  auto activation = string_member(c, "activation", op);
  if (!activation.ok()) return activation.status();
  // 'silu' (SwiGLU blocks, read by read_llama_members) is no createModel activation: describe() sees 'relu'
  auto act = parse_activation(activation.value() == "silu" ? "relu" : activation.value(), op, "activation");
  if (!act.ok()) return config_error(op, act.status());
  cfg.activation = act.value();
  auto positional = string_member(c, "positional", op);
  if (!positional.ok()) return positional.status();
  // 'rope' rotates q and k inside the blocks (read_llama_members): no positional rows are added
  auto pos = parse_positional(positional.value() == "rope" ? "none" : positional.value(), op, "positional");
  if (!pos.ok()) return config_error(op, pos.status());
  cfg.positional = pos.value();
  return cfg;
}

// Llama-style bundles (training/train_english_rope.py): the members that turn describe()'s blocks into the
// decoder checkpoints' (description.h: RMSNorm, RoPE, a gated feed-forward, grouped K/V heads, no biases), as
// hf_decoder_config.cpp sets them for a Llama checkpoint. All optional; absent = the GPT-2-style block.
//   norm 'layer' | 'rms', positional 'rope' + ropeTheta, activation 'silu' with gated true, numKVHeads, bias.
core::Status apply_llama_members(const json& c, ModelDescription& m, const char* op) {
  auto norm = members(op).string(c, "norm", "norm", std::string("layer"));
  if (!norm.ok()) return norm.status();
  if (norm.value() != "layer" && norm.value() != "rms") {
    return config_error(op, "norm (" + core::quote_name(norm.value()) + ") must be 'layer' or 'rms'",
                        core::ErrorKind::kRange);
  }
  auto gated = bool_member(c, "gated", op, false);
  if (!gated.ok()) return gated.status();
  auto bias = bool_member(c, "bias", op, true);
  if (!bias.ok()) return bias.status();
  auto theta = number_member(c, "ropeTheta", op, 10000.0);
  if (!theta.ok()) return theta.status();
  auto kv = members(op).integer(c, "numKVHeads", "numKVHeads", 1, m.num_heads, m.num_heads);
  if (!kv.ok()) return kv.status();
  const bool rms = norm.value() == "rms";
  const bool rope = c.value("positional", std::string()) == "rope";
  const bool silu = c.value("activation", std::string()) == "silu";
  const int kv_heads = static_cast<int>(kv.value());
  if (m.num_heads % kv_heads != 0) {
    return config_error(op, "numHeads (" + std::to_string(m.num_heads) + ") must be a multiple of numKVHeads (" +
                                std::to_string(kv_heads) + ")", core::ErrorKind::kRange);
  }
  const bool llama = rms || rope || gated.value() || !bias.value() || kv_heads != m.num_heads;
  if (!llama && !silu) return core::Status::Ok();
  if (!rms) {  // the grouped heads, RoPE and bias-free blocks are the decoder checkpoints' (RMSNorm) blocks
    return config_error(op, "norm 'rms' is required with positional 'rope', gated, bias false, numKVHeads or "
                            "activation 'silu'", core::ErrorKind::kRange);
  }
  if (!(theta.value() > 0.0) || !std::isfinite(theta.value())) {
    return config_error(op, "ropeTheta (" + core::format_number(theta.value()) + ") must be positive and finite",
                        core::ErrorKind::kRange);
  }
  const int head_dim = m.d_model / m.num_heads;
  if (rope && head_dim % 2 != 0) {
    return config_error(op, "positional 'rope' needs an even head size (dModel / numHeads = " +
                                std::to_string(head_dim) + ")", core::ErrorKind::kRange);
  }
  for (StackSpec* s : {&m.main, &m.source}) {
    for (BlockSpec& b : s->blocks) {
      if (b.kind != BlockKind::kAttention) continue;
      b.norm = NormKind::kRms;
      if (silu) b.activation = Activation::kSilu;
      b.ff.gated = gated.value();
      b.ff.bias = bias.value();
      b.attn.kv_heads = kv_heads;
      b.attn.qkv_bias = b.attn.out_bias = bias.value();
      b.attn.rope = rope;
      b.attn.rope_spec.theta = theta.value();
      b.attn.rope_spec.rotary_dim = head_dim;
      b.attn.rope_spec.max_positions = m.embedding.max_positions;
    }
    s->final_norm_kind = NormKind::kRms;
  }
  if (rope) m.embedding.bounded = true;  // maxPositions still bounds the text
  return core::Status::Ok();
}

}  // namespace

core::Result<BundleInfo> read_bundle_info(std::string_view config_json, const char* op) {
  auto parsed = parse_config(config_json, op);
  if (!parsed.ok()) return parsed.status();
  const json& c = parsed.value();
  BundleInfo info;
  const std::pair<const char*, std::string*> fields[] = {
      {"name", &info.name}, {"task", &info.task}, {"architecture", &info.architecture},
      {"description", &info.description}};
  for (const auto& [key, out] : fields) {
    auto s = string_member(c, key, op);
    if (!s.ok()) return s.status();
    *out = std::move(s).value();
  }
  return info;
}

core::Result<std::unique_ptr<Transformer>> load_bundled_transformer(std::string_view config_json,
                                                                    std::span<const std::uint8_t> safetensors,
                                                                    const char* op) {
  // 1. config.json: the sizes (as createModel's config), the tokenizer and the embedding scale
  auto parsed = parse_config(config_json, op);
  if (!parsed.ok()) return parsed.status();
  const json& c = parsed.value();
  auto architecture = string_member(c, "architecture", op);
  if (!architecture.ok()) return architecture.status();
  if (architecture.value() != "encoder-decoder" && architecture.value() != "decoder") {
    return config_error(op, "architecture (" + core::quote_name(architecture.value()) +
                                ") must be 'encoder-decoder' or 'decoder' for a transformer",
                        core::ErrorKind::kRange);
  }
  auto cfg = transformer_config(c, architecture.value(), op);
  if (!cfg.ok()) return cfg.status();
  auto described = describe(cfg.value());
  if (!described.ok()) return config_error(op, described.status());
  ModelDescription m = std::move(described).value();
  auto enc = read_tokenizer(c, op);
  if (!enc.ok()) return enc.status();
  auto scale = number_member(c, "embeddingScale", op, 1.0);
  if (!scale.ok()) return scale.status();
  if (!(scale.value() > 0.0) || !std::isfinite(scale.value())) {
    return config_error(op, "embeddingScale (" + core::format_number(scale.value()) + ") must be positive and finite",
                        core::ErrorKind::kRange);
  }
  // 2. the trained pieces: a loaded table of every vocabulary entry, and what the file holds
  auto tensors = read_weights(safetensors, op);
  if (!tensors.ok()) return tensors.status();
  std::set<std::string> names;
  for (const auto& t : tensors.value()) names.insert(t.name);
  m.embedding.rows = TokenRows::kTable;
  m.embedding.seeded_fallback = false;
  m.embedding.vocab_size = enc.value().vocab_size(RunVocab{});
  m.embedding.scale = static_cast<float>(scale.value());
  for (StackSpec* s : {&m.main, &m.source}) {
    s->final_norm = names.count(s->name + ".norm.weight") > 0;
    s->final_norm_eps = cfg.value().eps;
  }
  ATTN_TRY(apply_llama_members(c, m, op));
  m.target_bos = m.has_source;  // the decoder was trained on <s> + target (training/common.py)
  m.head.next_token = true;
  m.head.lm_head = names.count("lm_head.weight") > 0;
  m.head.lm_bias = m.head.lm_head && names.count("lm_head.bias") > 0;
  // 3. every parameter required, each stored once with its shape checked
  auto declared = Parameters::declare(m, Parameters::Init::kRequired, 0, op);
  if (!declared.ok()) return config_error(op, declared.status());
  Parameters params = std::move(declared).value();
  for (auto& t : tensors.value()) {
    std::vector<int> shape(t.shape.begin(), t.shape.end());
    ATTN_TRY(params.store(t.name, shape, std::move(t.data), op, "weights"));
  }
  ModelOptions options;
  if (m.embedding.positional == PositionalKind::kLearned) options.max_tokens = m.embedding.max_positions;
  return Transformer::assemble(std::move(m), std::move(enc).value(), std::move(params), options, op);
}

core::Result<std::unique_ptr<BundledGru>> BundledGru::load(std::string_view config_json,
                                                           std::span<const std::uint8_t> safetensors, const char* op) {
  auto parsed = parse_config(config_json, op);
  if (!parsed.ok()) return parsed.status();
  const json& c = parsed.value();
  auto architecture = string_member(c, "architecture", op);
  if (!architecture.ok()) return architecture.status();
  if (architecture.value() != "gru-bahdanau") {
    return config_error(op, "architecture (" + core::quote_name(architecture.value()) + ") must be 'gru-bahdanau'",
                        core::ErrorKind::kRange);
  }
  auto enc = read_tokenizer(c, op);
  if (!enc.ok()) return enc.status();
  GruSeq2SeqConfig cfg;
  cfg.vocab_size = enc.value().vocab_size(RunVocab{});
  const std::pair<const char*, int*> sizes[] = {{"embedSize", &cfg.embed_size},
                                                {"numHiddens", &cfg.hidden_size},
                                                {"numLayers", &cfg.num_layers},
                                                {"attentionHidden", &cfg.attention_hidden}};
  for (const auto& [key, out] : sizes) {
    auto v = int_member(c, key, op, 1);
    if (!v.ok()) return v.status();
    *out = v.value();
  }
  auto tensors = read_weights(safetensors, op);
  if (!tensors.ok()) return tensors.status();
  GruSeq2Seq::Params params;
  for (auto& t : tensors.value()) params[t.name] = GruSeq2Seq::Param{t.shape, std::move(t.data)};
  auto model = GruSeq2Seq::create(cfg, std::move(params), op);
  if (!model.ok()) return model.status();
  std::unique_ptr<BundledGru> out(new BundledGru());
  out->model_ = std::move(model).value();
  out->enc_ = std::move(enc).value();
  return out;
}

core::Result<tokenizers::Tokenization> BundledGru::encode(std::string_view text, const char* op,
                                                          const char* what) const {
  RunVocab none;
  auto tk = enc_.encode(text, none, op, what);
  if (!tk.ok()) return tk.status();
  if (tk.value().ids.empty()) return core::range_error(op, what, std::string(what) + " has no tokens");
  return tk;
}

GruRun BundledGru::texts_of(tokenizers::Tokenization source, GruSeq2SeqTrace trace) const {
  const RunVocab none;
  GruRun r;
  r.source_tokens = std::move(source.tokens);
  r.source_ids = std::move(source.ids);
  for (const std::int32_t id : trace.inputs) r.input_tokens.push_back(enc_.token_text(id, none));
  for (const std::int32_t id : trace.predictions) r.tokens.push_back(enc_.token_text(id, none));
  r.trace = std::move(trace);
  return r;
}

core::Result<GruRun> BundledGru::generate(std::string_view source, int max_new_tokens, Generation* out,
                                          const char* op) const {
  auto src = encode(source, op, std::string_view(op) == kOpGenerate ? "input" : "source");
  if (!src.ok()) return src.status();
  const SpecialIds& sp = enc_.specials();
  auto g = model_->generate(src.value().ids, sp.bos, sp.eos, max_new_tokens, -1, op);
  if (!g.ok()) return g.status();
  GruSeq2SeqGeneration& gen = g.value();
  const RunVocab none;
  out->ids = gen.ids;
  out->tokens.clear();
  for (const std::int32_t id : gen.ids) out->tokens.push_back(enc_.token_text(id, none));
  out->text = enc_.decode(gen.ids);
  out->stopped_at_end = gen.ended_with_eos;
  return texts_of(std::move(src).value(), std::move(gen.trace));
}

core::Result<GruRun> BundledGru::run(std::string_view source, std::string_view target) const {
  auto src = encode(source, kOpRun, "source");
  if (!src.ok()) return src.status();
  RunVocab none;
  auto tgt = enc_.encode(target, none, kOpRun, "target");
  if (!tgt.ok()) return tgt.status();
  std::vector<std::int32_t> inputs{enc_.specials().bos};
  inputs.insert(inputs.end(), tgt.value().ids.begin(), tgt.value().ids.end());
  auto tr = model_->run(src.value().ids, inputs, -1, kOpRun);
  if (!tr.ok()) return tr.status();
  return texts_of(std::move(src).value(), std::move(tr).value());
}

}  // namespace attnscope::model
