// hf_seq2seq_config.cpp: the config.json of an encoder-decoder checkpoint (T5, Flan-T5, mT5, BART, mBART, Marian)
// as a ModelDescription (hf_checkpoint.h), and generation_config.json over it. Layer: model. Defaults are those of
// transformers' T5Config, MT5Config, BartConfig, MBartConfig, MarianConfig; the forward each describes is that of
// modeling_t5.py (T5Stack, T5Block, T5LayerNorm, T5Attention with its relative position bias, T5DenseActDense /
// T5DenseGatedActDense, T5ForConditionalGeneration's tied-head rescaling), modeling_bart.py (BartEncoder /
// BartDecoder: BartLearnedPositionalEmbedding's offset 2, layernorm_embedding, post-norm layers), modeling_mbart.py
// (pre-norm layers, encoder/decoder layer_norm) and modeling_marian.py (MarianSinusoidalPositionalEmbedding,
// post-norm layers, no layernorm_embedding), each with final_logits_bias.
#include <cmath>
#include <string>

#include "core/check.h"
#include "core/text.h"
#include "io/json_reader.h"
#include "model/hf_checkpoint.h"
#include "model/hf_fields.h"
#include "model/limits.h"

namespace attnscope::model {

core::Status ops_divisible(const char* op, int d_model, int num_heads);  // hf_config.cpp

namespace {

// An optional integer token id (null or absent: -1).
core::Result<std::int64_t> token_id(const HfFields& f, const char* name) {
  if (!f.has(name)) return std::int64_t{-1};
  auto r = f.integer(name, 0, 1 << 24);
  if (!r.ok()) return r.status();
  return static_cast<std::int64_t>(r.value());
}

// length_penalty and early_stopping (true, false or "never") of a config or generation config.
core::Status read_beam_settings(const HfFields& f, HfConfig& c) {
  if (f.has("length_penalty")) {
    const auto& v = f.raw("length_penalty");
    if (!v.is_number()) return f.type_error("length_penalty", "a number");
    c.length_penalty = v.get<double>();
  }
  if (f.has("early_stopping")) {
    const auto& v = f.raw("early_stopping");
    if (v.is_boolean()) {
      c.early_stopping = v.get<bool>() ? ModelOptions::EarlyStopping::kTrue : ModelOptions::EarlyStopping::kFalse;
    } else if (v.is_string() && v.get<std::string>() == "never") {
      c.early_stopping = ModelOptions::EarlyStopping::kNever;
    } else {
      return f.unsupported("early_stopping", v.dump(), "true, false, \"never\"");
    }
  }
  return core::Status::Ok();
}

// The token table (shared by both sides), no seeded rows.
void table_embedding(ModelDescription& m, int vocab) {
  m.embedding.rows = TokenRows::kTable;
  m.embedding.seeded_fallback = false;
  m.embedding.vocab_size = vocab;
}

// T5 / mT5 (T5Config, MT5Config).
core::Result<HfConfig> t5(const HfFields& f, const std::string& type, HfConfig c) {
  const bool mt5 = type == "mt5";
  ModelDescription& m = c.description;
  int vocab = 0, d_kv = 0, enc_layers = 0, dec_layers = 0, buckets = 0, max_distance = 0;
  HF_TRY_SET(vocab, f.integer("vocab_size", 1, 1 << 24, mt5 ? 250112 : 32128));
  HF_TRY_SET(m.d_model, f.integer("d_model", 1, kMaxDModel, 512));
  HF_TRY_SET(d_kv, f.integer("d_kv", 1, kMaxDModel, 64));
  HF_TRY_SET(m.d_ff, f.integer("d_ff", 1, kMaxDFF, mt5 ? 1024 : 2048));
  HF_TRY_SET(enc_layers, f.integer("num_layers", 0, kMaxLayers, mt5 ? 8 : 6));
  HF_TRY_SET(dec_layers, f.integer("num_decoder_layers", 0, kMaxLayers, enc_layers));
  HF_TRY_SET(m.num_heads, f.integer("num_heads", 1, kMaxDModel, mt5 ? 6 : 8));
  // T5Attention._relative_position_bucket divides by log(max_distance / max_exact), max_exact being a quarter of the
  // buckets in the encoder (bidirectional) and half of them in the decoder: fewer than 4 buckets, or a max_distance
  // not above half of them, makes it log(0) or 0 / 0 (Hugging Face then fails on the NaN bucket; found by
  // fuzz_seq2seq_config)
  HF_TRY_SET(buckets, f.integer("relative_attention_num_buckets", 4, 1 << 16, 32));
  HF_TRY_SET(max_distance, f.integer("relative_attention_max_distance", buckets / 2 + 1, 1 << 30, 128));
  double eps = 0;
  HF_TRY_SET(eps, f.positive("layer_norm_epsilon", 1e-6));
  HF_TRY_SET(c.tied, f.boolean("tie_word_embeddings", !mt5));
  // feed_forward_proj: "<act>" or "gated-<act>" (T5Config.__init__); "gated-gelu" means gelu_new; a config's own
  // dense_act_fn / is_gated_act (set as attributes after __init__) override
  std::string proj;
  HF_TRY_SET(proj, f.text("feed_forward_proj", mt5 ? "gated-gelu" : "relu"));
  const auto dash = proj.find('-');
  const bool gated = dash != std::string::npos && proj.compare(0, dash, "gated") == 0;
  std::string act_name = dash == std::string::npos ? proj : proj.substr(dash + 1);
  if ((dash != std::string::npos && !gated) || act_name.find('-') != std::string::npos) {
    return f.unsupported("feed_forward_proj", core::quote(proj, '\'', 0), "'<act>' or 'gated-<act>'");
  }
  if (proj == "gated-gelu") act_name = "gelu_new";
  Activation act = Activation::kRelu;
  {
    nlohmann::json probe = {{"feed_forward_proj", act_name}};
    auto a = HfFields(probe, "").gate_activation("feed_forward_proj", "relu");
    if (!a.ok()) {
      return f.unsupported("feed_forward_proj", core::quote(proj, '\'', 0),
                           "relu, gelu, gelu_new, silu and their gated- forms");
    }
    act = a.value();
  }
  if (f.has("dense_act_fn")) HF_TRY_SET(act, f.gate_activation("dense_act_fn", "relu"));
  bool is_gated = gated;
  HF_TRY_SET(is_gated, f.boolean("is_gated_act", gated));
  // the description: no positions, a relative position bias in each stack's first block
  table_embedding(m, vocab);
  m.embedding.positional = PositionalKind::kNone;
  m.embedding.max_positions = kMaxTokensLimit;
  auto stack = [&](StackSpec& s, const char* name, int layers, bool decoder) {
    s.name = name;
    for (int i = 0; i < layers; ++i) {
      BlockSpec b = attention_block(std::string(name) + ".layers." + std::to_string(i) + ".", decoder, decoder, true,
                                    act, eps);
      b.norm = NormKind::kRms;  // T5LayerNorm: no mean, no bias
      b.ff.gated = is_gated;
      b.ff.bias = false;
      AttentionSettings& a = b.attn;
      a.head_dim = d_kv;
      a.kv_heads = m.num_heads;
      a.qkv_bias = a.out_bias = false;
      a.scale = 1.0;  // T5 does not scale q·k (the initialisation does)
      a.relative_buckets = buckets;
      a.relative_max_distance = max_distance;
      a.relative_bidirectional = !decoder;
      a.relative_table = i == 0;
      a.cross = decoder;
      s.blocks.push_back(std::move(b));
    }
    s.final_norm = true;
    s.final_norm_eps = eps;
    s.final_norm_kind = NormKind::kRms;
  };
  m.has_source = true;
  stack(m.source, "encoder", enc_layers, false);
  stack(m.main, "decoder", dec_layers, true);
  m.head.next_token = true;
  m.head.lm_head = !c.tied;
  if (c.tied) m.head.hidden_scale = 1.0 / std::sqrt(static_cast<double>(m.d_model));
  c.t5 = true;
  if (!f.has("decoder_start_token_id")) c.decoder_start = 0;  // T5Config: pad_token_id 0 starts the decoder
  if (!f.has("eos_token_id")) c.eos_ids = {1};
  return c;
}

// BART, mBART, Marian (BartConfig, MBartConfig, MarianConfig).
core::Result<HfConfig> bart_like(const HfFields& f, const std::string& type, HfConfig c, const char* op) {
  const bool marian = type == "marian", mbart = type == "mbart";
  ModelDescription& m = c.description;
  int vocab = 0, positions = 0, enc_layers = 0, dec_layers = 0, dec_heads = 0, dec_ffn = 0;
  HF_TRY_SET(vocab, f.integer("vocab_size", 1, 1 << 24, marian ? 58101 : mbart ? 50265 : 50265));
  HF_TRY_SET(positions, f.integer("max_position_embeddings", 1, kMaxPositions, marian ? 1024 : 1024));
  HF_TRY_SET(m.d_model, f.integer("d_model", 1, kMaxDModel, 1024));
  HF_TRY_SET(enc_layers, f.integer("encoder_layers", 0, kMaxLayers, 12));
  HF_TRY_SET(dec_layers, f.integer("decoder_layers", 0, kMaxLayers, 12));
  HF_TRY_SET(m.num_heads, f.integer("encoder_attention_heads", 1, kMaxDModel, 16));
  HF_TRY_SET(dec_heads, f.integer("decoder_attention_heads", 1, kMaxDModel, 16));
  HF_TRY_SET(m.d_ff, f.integer("encoder_ffn_dim", 1, kMaxDFF, 4096));
  HF_TRY_SET(dec_ffn, f.integer("decoder_ffn_dim", 1, kMaxDFF, 4096));
  if (dec_heads != m.num_heads) {
    return f.unsupported("decoder_attention_heads", std::to_string(dec_heads),
                         "equal to encoder_attention_heads (" + std::to_string(m.num_heads) + ")");
  }
  if (dec_ffn != m.d_ff) {
    return f.unsupported("decoder_ffn_dim", std::to_string(dec_ffn),
                         "equal to encoder_ffn_dim (" + std::to_string(m.d_ff) + ")");
  }
  ATTN_TRY(ops_divisible(op, m.d_model, m.num_heads));
  Activation act = Activation::kGelu;
  HF_TRY_SET(act, f.gate_activation("activation_function", marian ? "gelu" : "gelu"));
  bool scale = false;
  HF_TRY_SET(scale, f.boolean("scale_embedding", false));
  HF_TRY_SET(c.tied, f.boolean("tie_word_embeddings", true));
  if (marian) {
    int dec_vocab = vocab;
    HF_TRY_SET(dec_vocab, f.integer("decoder_vocab_size", 1, 1 << 24, vocab));
    if (dec_vocab != vocab) {
      return f.unsupported("decoder_vocab_size", std::to_string(dec_vocab),
                           "equal to vocab_size (a separate target vocabulary is not supported)");
    }
    bool shared = true;
    HF_TRY_SET(shared, f.boolean("share_encoder_decoder_embeddings", true));
    if (!shared) return f.unsupported("share_encoder_decoder_embeddings", "false", "true");
  }
  // the description
  table_embedding(m, vocab);
  if (scale) m.embedding.scale = static_cast<float>(std::sqrt(static_cast<double>(m.d_model)));
  m.embedding.max_positions = positions;
  if (marian) {
    m.embedding.positional = PositionalKind::kSinusoidal;
    m.embedding.sinusoid_halves = true;
    m.embedding.bounded = true;
  } else {
    m.embedding.positional = PositionalKind::kLearned;
    m.embedding.positional_offset = 2;
    m.embedding.per_side = true;
    m.embedding.norm = true;  // layernorm_embedding
    m.embedding.norm_eps = 1e-5;
  }
  auto stack = [&](StackSpec& s, const char* name, int layers, bool decoder) {
    s.name = name;
    for (int i = 0; i < layers; ++i) {
      s.blocks.push_back(attention_block(std::string(name) + ".layers." + std::to_string(i) + ".", decoder, decoder,
                                         mbart, act, 1e-5));
    }
    s.final_norm = mbart;  // MBartEncoder / MBartDecoder: layer_norm after the last layer
    s.final_norm_eps = 1e-5;
  };
  m.has_source = true;
  stack(m.source, "encoder", enc_layers, false);
  stack(m.main, "decoder", dec_layers, true);
  m.head.next_token = true;
  m.head.lm_head = !c.tied;
  if (!f.has("decoder_start_token_id")) c.decoder_start = marian ? 58100 : mbart ? -1 : 2;
  if (!f.has("eos_token_id")) c.eos_ids = {marian ? 0 : 2};
  if (!f.has("bos_token_id") && !marian) c.bos = 0;
  return c;
}

}  // namespace

std::vector<std::string> seq2seq_model_types() { return {"t5", "mt5", "bart", "mbart", "marian"}; }

bool is_seq2seq_model_type(std::string_view t) {
  for (const std::string& known : seq2seq_model_types()) {
    if (t == known) return true;
  }
  return false;
}

core::Result<HfConfig> describe_seq2seq_hf(const HfFields& f, const std::string& model_type, const char* op) {
  HfConfig c;
  c.family = HfFamily::kSeq2Seq;
  c.model_type = model_type;
  c.description.architecture = "encoder-decoder";
  HF_TRY_SET(c.eos_ids, read_end_ids(f));
  HF_TRY_SET(c.decoder_start, token_id(f, "decoder_start_token_id"));
  HF_TRY_SET(c.bos, token_id(f, "bos_token_id"));
  ATTN_TRY(read_beam_settings(f, c));
  if (model_type == "t5" || model_type == "mt5") return t5(f, model_type, std::move(c));
  return bart_like(f, model_type, std::move(c), op);
}

core::Status apply_generation_config(std::string_view json_text, HfConfig& c, const char* op) {
  nlohmann::json j;
  std::string reason, duplicate;
  if (!io::detail::parse_json(json_text, &j, &reason, &duplicate)) {
    return core::invalid_error(op, "generationConfig", "generationConfig is not valid JSON (" + reason + ")");
  }
  if (!j.is_object()) {
    return core::type_error(op, "generationConfig",
                            std::string("generationConfig must be a JSON object, got ") + j.type_name());
  }
  const HfFields g(j, op, "generationConfig.", "generationConfig");
  std::vector<std::int64_t> ends;
  HF_TRY_SET(ends, read_end_ids(g));
  if (!ends.empty()) c.eos_ids = std::move(ends);
  if (c.family != HfFamily::kSeq2Seq) return core::Status::Ok();
  HF_TRY_SET(c.generation_start, token_id(g, "decoder_start_token_id"));
  return read_beam_settings(g, c);
}

}  // namespace attnscope::model
