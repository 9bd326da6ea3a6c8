// hf_config.cpp: a Hugging Face config.json (GPT-2 or BERT) as a ModelDescription (hf_checkpoint.h).
// Layer: model. Field names, defaults and meanings follow transformers' GPT2Config and BertConfig.
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/text.h"
#include "io/json_fields.h"
#include "io/json_reader.h"
#include "model/hf_checkpoint.h"
#include "model/hf_fields.h"
#include "model/limits.h"

namespace attnscope::model {

core::Status ops_divisible(const char* op, int d_model, int num_heads);

namespace {

using nlohmann::json;
using Fields = HfFields;

// GPT-2 and BERT alike: a token table and learned positions, all loaded from the checkpoint (no seeded rows).
void checkpoint_embedding(ModelDescription& m, int vocab, int positions) {
  m.embedding.rows = TokenRows::kTable;
  m.embedding.seeded_fallback = false;
  m.embedding.vocab_size = vocab;
  m.embedding.positional = PositionalKind::kLearned;
  m.embedding.max_positions = positions;
}


core::Result<HfConfig> gpt2(const Fields& f, const char* op) {
  HfConfig c;
  c.family = HfFamily::kGpt2;
  ModelDescription& m = c.description;
  m.architecture = "gpt2";
  int layers = 0, vocab = 0, positions = 0;
  HF_TRY_SET(m.d_model, f.integer("n_embd", 1, kMaxDModel));
  HF_TRY_SET(m.num_heads, f.integer("n_head", 1, kMaxDModel));
  HF_TRY_SET(layers, f.integer("n_layer", 0, kMaxLayers));
  HF_TRY_SET(vocab, f.integer("vocab_size", 1, 1 << 24));
  HF_TRY_SET(positions, f.integer("n_positions", 1, kMaxPositions, f.has("n_ctx") ? std::optional<int>() : 1024));
  if (f.has("n_ctx") && !f.has("n_positions")) HF_TRY_SET(positions, f.integer("n_ctx", 1, kMaxPositions));
  HF_TRY_SET(m.d_ff, f.integer("n_inner", 1, kMaxDFF, 4 * m.d_model));
  double eps = 0;
  HF_TRY_SET(eps, f.positive("layer_norm_epsilon", 1e-5));
  Activation act = Activation::kGeluTanh;
  HF_TRY_SET(act, f.activation("activation_function", "gelu_new"));
  HF_TRY_SET(c.tied, f.boolean("tie_word_embeddings", true));
  bool flag = false;
  HF_TRY_SET(flag, f.boolean("scale_attn_weights", true));
  if (!flag) return f.unsupported("scale_attn_weights", "false", "true");
  HF_TRY_SET(flag, f.boolean("scale_attn_by_inverse_layer_idx", false));
  if (flag) return f.unsupported("scale_attn_by_inverse_layer_idx", "true", "false");
  HF_TRY_SET(flag, f.boolean("add_cross_attention", false));
  if (flag) return f.unsupported("add_cross_attention", "true", "false");
  ATTN_TRY(ops_divisible(op, m.d_model, m.num_heads));
  checkpoint_embedding(m, vocab, positions);
  m.main.name = "decoder";
  for (int i = 0; i < layers; ++i) {
    m.main.blocks.push_back(attention_block("decoder.layers." + std::to_string(i) + ".", true, false, true, act, eps));
  }
  m.main.final_norm = true;
  m.main.final_norm_eps = eps;
  m.head.next_token = true;
  m.head.lm_head = !c.tied;
  return c;
}

core::Result<HfConfig> bert(const Fields& f, const char* op) {
  HfConfig c;
  c.family = HfFamily::kBert;
  ModelDescription& m = c.description;
  m.architecture = "bert";
  int layers = 0, vocab = 0, positions = 0, types = 0;
  HF_TRY_SET(m.d_model, f.integer("hidden_size", 1, kMaxDModel));
  HF_TRY_SET(m.num_heads, f.integer("num_attention_heads", 1, kMaxDModel));
  HF_TRY_SET(layers, f.integer("num_hidden_layers", 0, kMaxLayers));
  HF_TRY_SET(m.d_ff, f.integer("intermediate_size", 1, kMaxDFF));
  HF_TRY_SET(vocab, f.integer("vocab_size", 1, 1 << 24));
  HF_TRY_SET(positions, f.integer("max_position_embeddings", 1, kMaxPositions, 512));
  HF_TRY_SET(types, f.integer("type_vocab_size", 1, 1 << 16, 2));
  double eps = 0;
  HF_TRY_SET(eps, f.positive("layer_norm_eps", 1e-12));
  Activation act = Activation::kGelu;
  HF_TRY_SET(act, f.activation("hidden_act", "gelu"));
  std::string pos;
  HF_TRY_SET(pos, f.text("position_embedding_type", "absolute"));
  if (pos != "absolute") return f.unsupported("position_embedding_type", core::quote(pos, '\'', 0), "absolute");
  bool flag = false;
  HF_TRY_SET(flag, f.boolean("is_decoder", false));
  if (flag) return f.unsupported("is_decoder", "true", "false");
  ATTN_TRY(ops_divisible(op, m.d_model, m.num_heads));
  checkpoint_embedding(m, vocab, positions);
  m.embedding.token_types = types;
  m.embedding.norm = true;
  m.embedding.norm_eps = eps;
  m.main.name = "encoder";
  for (int i = 0; i < layers; ++i) {
    m.main.blocks.push_back(attention_block("encoder.layers." + std::to_string(i) + ".", false, false, false, act, eps));
  }
  m.head.next_token = false;
  m.head.mlm_activation = act;
  m.head.mlm_eps = eps;
  m.wrap_cls_sep = true;
  return c;
}


}  // namespace

core::Status ops_divisible(const char* op, int d_model, int num_heads) {
  if (d_model % num_heads == 0) return core::Status::Ok();
  return core::range_error(op, "config",
                           "config: the hidden size (" + std::to_string(d_model) +
                               ") must be divisible by the number of heads (" + std::to_string(num_heads) + ")");
}

core::Result<HfConfig> describe_hf(std::string_view config_json, const char* op) {
  json j;
  std::string reason, duplicate;
  if (!io::detail::parse_json(config_json, &j, &reason, &duplicate)) {
    return core::invalid_error(op, "config", "config is not valid JSON (" + reason + ")");
  }
  if (!j.is_object()) return core::type_error(op, "config", std::string("config must be a JSON object, got ") + j.type_name());
  const Fields f(j, op);
  auto type = f.text("model_type", "");
  if (!type.ok()) return type.status();
  if (type.value() == "gpt2") return gpt2(f, op);
  if (type.value() == "bert") return bert(f, op);
  if (is_decoder_model_type(type.value())) return describe_decoder_hf(f, type.value(), op);
  if (is_seq2seq_model_type(type.value())) return describe_seq2seq_hf(f, type.value(), op);
  // every model_type read above, from the owners of the decoder and encoder-decoder lists
  std::string types = "gpt2, bert";
  for (const std::string& t : decoder_model_types()) types += ", " + t;
  for (const std::string& t : seq2seq_model_types()) types += ", " + t;
  if (type.value().empty()) {
    return core::invalid_error(op, "config", "config.model_type is required (" + types + ")");
  }
  return core::invalid_error(op, "config",
                             "config.model_type " + core::quote(type.value(), '\'', 0) + " is not supported (" + types + ")");
}

}  // namespace attnscope::model
