// hf_decoder_config.cpp: the config.json of a decoder-only checkpoint (Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2,
// Gemma 3 text, Phi-3) as a ModelDescription (hf_checkpoint.h). Layer: model. Defaults are those of transformers'
// LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config, GemmaConfig, Gemma2Config, Gemma3TextConfig, Phi3Config;
// rope_scaling follows modeling_rope_utils.py (rope_type, else type); transformers v5's rope_parameters layout
// (rope_theta inside; per layer type for Gemma 3) is read too. Semantics: /work/shared MODERN-LLMS.md 1.
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "core/check.h"
#include "core/text.h"
#include "io/json_reader.h"
#include "model/hf_checkpoint.h"
#include "model/hf_fields.h"
#include "model/limits.h"

namespace attnscope::model {

namespace {

enum class Sliding { kNone, kEveryLayer, kQwen, kGemma2, kGemma3 };

// One model_type's config-class defaults and the parts of its forward that no field selects.
struct Family {
  const char* type;
  int vocab, hidden, intermediate, layers, heads;
  int kv_heads;  // 0 = num_attention_heads
  int head_dim;  // 0 = hidden / heads
  const char* act_field;
  const char* act;
  int max_positions;
  double eps;
  bool tie;
  double theta;
  bool qkv_bias_always;  // Qwen2: q/k/v biases whatever attention_bias says, o_proj none
  bool qk_norm;          // Qwen3, Gemma 3
  bool gemma;            // (1 + w) norms, √hidden embedding scale
  bool post_norms;       // Gemma 2/3
  Sliding sliding;
  int window;            // sliding_window default (0 = none)
  double attn_softcap, final_softcap;  // Gemma 2 defaults
  double query_pre_attn_scalar;        // Gemma 2/3 default (0 = head_dim)
  bool fused;                          // Phi-3
};

constexpr std::array<Family, 8> kFamilies{{
    {"llama", 32000, 4096, 11008, 32, 32, 0, 0, "hidden_act", "silu", 2048, 1e-6, false, 10000.0, false, false, false,
     false, Sliding::kNone, 0, 0, 0, 0, false},
    {"mistral", 32000, 4096, 14336, 32, 32, 8, 0, "hidden_act", "silu", 4096 * 32, 1e-6, false, 10000.0, false, false,
     false, false, Sliding::kEveryLayer, 4096, 0, 0, 0, false},
    {"qwen2", 151936, 4096, 22016, 32, 32, 32, 0, "hidden_act", "silu", 32768, 1e-6, false, 10000.0, true, false, false,
     false, Sliding::kQwen, 4096, 0, 0, 0, false},
    {"qwen3", 151936, 4096, 22016, 32, 32, 32, 128, "hidden_act", "silu", 32768, 1e-6, false, 10000.0, false, true,
     false, false, Sliding::kQwen, 4096, 0, 0, 0, false},
    // GemmaConfig says hidden_act 'gelu_pytorch_tanh'; its MLP reads hidden_activation when set
    {"gemma", 256000, 3072, 24576, 28, 16, 16, 256, "hidden_activation", "gelu_pytorch_tanh", 8192, 1e-6, true,
     10000.0, false, false, true, false, Sliding::kNone, 0, 0, 0, 0, false},
    {"gemma2", 256000, 2304, 9216, 26, 8, 4, 256, "hidden_activation", "gelu_pytorch_tanh", 8192, 1e-6, true, 10000.0,
     false, false, true, true, Sliding::kGemma2, 4096, 50.0, 30.0, 256, false},
    {"gemma3_text", 262208, 2304, 9216, 26, 8, 4, 256, "hidden_activation", "gelu_pytorch_tanh", 131072, 1e-6, true,
     1000000.0, false, true, true, true, Sliding::kGemma3, 4096, 0, 0, 256, false},
    {"phi3", 32064, 3072, 8192, 32, 32, 0, 0, "hidden_act", "silu", 4096, 1e-5, false, 10000.0, false, false, false,
     false, Sliding::kEveryLayer, 0, 0, 0, 0, true},
}};

const Family* family_of(std::string_view type) {
  for (const Family& f : kFamilies) {
    if (type == f.type) return &f;
  }
  return nullptr;
}

// rope_scaling (or a rope_parameters object): the type and its parameters into `s` (theta and rotary_dim are set).
core::Status read_rope(const HfFields& r, ops::RopeSpec& s) {
  const char* type_field = r.has("rope_type") ? "rope_type" : "type";
  std::string type;
  HF_TRY_SET(type, r.text(type_field, "default"));
  if (type == "default") {
    s.type = ops::RopeType::kDefault;
    return core::Status::Ok();
  }
  if (type == "linear" || type == "dynamic" || type == "llama3" || type == "yarn") {
    HF_TRY_SET(s.factor, r.positive_required("factor"));
  }
  if (type == "linear") {
    s.type = ops::RopeType::kLinear;
  } else if (type == "dynamic") {
    s.type = ops::RopeType::kDynamic;
  } else if (type == "llama3") {
    s.type = ops::RopeType::kLlama3;
    HF_TRY_SET(s.low_freq_factor, r.positive_required("low_freq_factor"));
    HF_TRY_SET(s.high_freq_factor, r.positive_required("high_freq_factor"));
    HF_TRY_SET(s.original_max_positions, r.integer("original_max_position_embeddings", 1, kMaxPositions));
    if (!(s.high_freq_factor > s.low_freq_factor)) {
      return r.unsupported("high_freq_factor", r.raw("high_freq_factor").dump(), "greater than low_freq_factor");
    }
  } else if (type == "yarn") {
    s.type = ops::RopeType::kYarn;
    if (r.has("attention_factor")) HF_TRY_SET(s.attention_factor, r.positive_required("attention_factor"));
    HF_TRY_SET(s.beta_fast, r.positive("beta_fast", 32.0));
    HF_TRY_SET(s.beta_slow, r.positive("beta_slow", 1.0));
    HF_TRY_SET(s.original_max_positions, r.integer("original_max_position_embeddings", 1, kMaxPositions, 0));
    for (const char* unsupported : {"mscale", "mscale_all_dim"}) {
      if (r.has(unsupported)) return r.unsupported(unsupported, r.raw(unsupported).dump(), "absent");
    }
    bool truncate = true;
    HF_TRY_SET(truncate, r.boolean("truncate", true));
    if (!truncate) return r.unsupported("truncate", "false", "true");
  } else {
    return r.unsupported(type_field, core::quote(type, '\'', 0), "default, linear, dynamic, llama3, yarn");
  }
  return core::Status::Ok();
}



}  // namespace

core::Result<std::vector<std::int64_t>> read_end_ids(const HfFields& f) {
  std::vector<std::int64_t> ids;
  if (!f.has("eos_token_id")) return ids;
  const auto& e = f.raw("eos_token_id");
  if (e.is_number_integer()) {
    ids.push_back(e.get<std::int64_t>());
    return ids;
  }
  if (!e.is_array()) return f.type_error("eos_token_id", "an integer or a list of integers");
  for (const auto& id : e) {
    if (!id.is_number_integer()) return f.type_error("eos_token_id", "an integer or a list of integers");
    ids.push_back(id.get<std::int64_t>());
  }
  return ids;
}

core::Result<std::vector<std::int64_t>> generation_config_end_ids(std::string_view json_text, const char* op) {
  HfConfig c;
  c.family = HfFamily::kDecoder;
  ATTN_TRY(apply_generation_config(json_text, c, op));  // hf_seq2seq_config.cpp: the one reader of the file
  return c.eos_ids;
}

bool is_decoder_model_type(std::string_view model_type) { return family_of(model_type) != nullptr; }

std::vector<std::string> decoder_model_types() {
  std::vector<std::string> out;
  for (const Family& f : kFamilies) out.emplace_back(f.type);
  return out;
}

core::Result<HfConfig> describe_decoder_hf(const HfFields& f, const std::string& model_type, const char* op) {
  const Family* fam = family_of(model_type);
  if (fam == nullptr) return core::invalid_error(op, "config", "config.model_type " + core::quote(model_type, '\'', 0) + " is not a decoder checkpoint");
  HfConfig c;
  c.family = HfFamily::kDecoder;
  c.model_type = model_type;
  c.fused = fam->fused;
  ModelDescription& m = c.description;
  m.architecture = "decoder";
  // 1. sizes
  int layers = 0, vocab = 0, positions = 0, kv = 0, head_dim = 0;
  HF_TRY_SET(vocab, f.integer("vocab_size", 1, 1 << 24, fam->vocab));
  HF_TRY_SET(m.d_model, f.integer("hidden_size", 1, kMaxDModel, fam->hidden));
  HF_TRY_SET(m.d_ff, f.integer("intermediate_size", 1, kMaxDFF, fam->intermediate));
  HF_TRY_SET(layers, f.integer("num_hidden_layers", 0, kMaxLayers, fam->layers));
  HF_TRY_SET(m.num_heads, f.integer("num_attention_heads", 1, kMaxDModel, fam->heads));
  HF_TRY_SET(kv, f.integer("num_key_value_heads", 1, kMaxDModel, fam->kv_heads > 0 ? fam->kv_heads : m.num_heads));
  if (m.num_heads % kv != 0) {
    return core::range_error(op, "config",
                             "config.num_attention_heads (" + std::to_string(m.num_heads) +
                                 ") must be a multiple of config.num_key_value_heads (" + std::to_string(kv) + ")");
  }
  const int default_head_dim = fam->head_dim > 0 ? fam->head_dim : m.d_model / m.num_heads;
  HF_TRY_SET(head_dim, f.integer("head_dim", 1, kMaxDModel, default_head_dim));
  if (fam->head_dim == 0 && !f.has("head_dim") && m.d_model % m.num_heads != 0) {
    return core::range_error(op, "config",
                             "config: the hidden size (" + std::to_string(m.d_model) +
                                 ") must be divisible by the number of heads (" + std::to_string(m.num_heads) +
                                 ") when head_dim is not given");
  }
  HF_TRY_SET(positions, f.integer("max_position_embeddings", 1, kMaxPositions, fam->max_positions));
  double eps = 0;
  HF_TRY_SET(eps, f.positive("rms_norm_eps", fam->eps));
  Activation act = Activation::kSilu;
  // Gemma 1: hidden_activation when set, else gelu_pytorch_tanh whatever hidden_act says (MODERN-LLMS.md 1.6)
  HF_TRY_SET(act, f.gate_activation(fam->act_field, fam->act));
  HF_TRY_SET(c.tied, f.boolean("tie_word_embeddings", fam->tie));
  bool attention_bias = false, mlp_bias = false;
  HF_TRY_SET(attention_bias, f.boolean("attention_bias", false));
  HF_TRY_SET(mlp_bias, f.boolean("mlp_bias", false));
  if (fam->gemma && mlp_bias) return f.unsupported("mlp_bias", "true", "false");
  // 2. positions: rope_theta + rope_scaling, or transformers v5's rope_parameters (per layer type for Gemma 3)
  ops::RopeSpec global, local;
  double partial = 1.0;
  HF_TRY_SET(partial, f.positive("partial_rotary_factor", 1.0));
  if (partial > 1.0) return f.unsupported("partial_rotary_factor", f.raw("partial_rotary_factor").dump(), "at most 1");
  global.rotary_dim = static_cast<int>(head_dim * partial);
  if (global.rotary_dim % 2 != 0 || global.rotary_dim < 2) {
    return core::range_error(op, "config",
                             "config: head_dim × partial_rotary_factor (" + std::to_string(global.rotary_dim) +
                                 ") must be a positive even number");
  }
  global.max_positions = positions;
  HF_TRY_SET(global.theta, f.positive("rope_theta", fam->theta));
  double local_theta = 10000.0;
  HF_TRY_SET(local_theta, f.positive("rope_local_base_freq", 10000.0));
  local = global;
  if (f.has("rope_parameters")) {
    const HfFields rp = f.child("rope_parameters");
    if (!f.raw("rope_parameters").is_object()) return f.type_error("rope_parameters", "an object");
    if (rp.has("full_attention") || rp.has("sliding_attention")) {
      if (rp.has("full_attention")) {
        const HfFields g = rp.child("full_attention");
        HF_TRY_SET(global.theta, g.positive("rope_theta", global.theta));
        ATTN_TRY(read_rope(g, global));
      }
      if (rp.has("sliding_attention")) {
        const HfFields l = rp.child("sliding_attention");
        HF_TRY_SET(local_theta, l.positive("rope_theta", local_theta));
        ATTN_TRY(read_rope(l, local));
      }
    } else {
      HF_TRY_SET(global.theta, rp.positive("rope_theta", global.theta));
      ATTN_TRY(read_rope(rp, global));
      local = global;
    }
  } else if (f.has("rope_scaling")) {
    if (!f.raw("rope_scaling").is_object()) return f.type_error("rope_scaling", "an object or null");
    ATTN_TRY(read_rope(f.child("rope_scaling"), global));
    if (fam->sliding != Sliding::kGemma3) local = global;
  } else {
    local = global;
  }
  if (fam->sliding == Sliding::kGemma3) local.theta = local_theta;  // sliding layers: rope_local_base_freq
  // 3. attention: windows, scale, soft-capping
  int window = 0;
  HF_TRY_SET(window, f.integer("sliding_window", 1, 1 << 30, fam->window > 0 ? fam->window : 0));
  bool use_sliding = fam->sliding != Sliding::kQwen;
  int max_window_layers = 0;
  if (fam->sliding == Sliding::kQwen) {
    HF_TRY_SET(use_sliding, f.boolean("use_sliding_window", false));
    HF_TRY_SET(max_window_layers, f.integer("max_window_layers", 0, 1 << 30, 28));
  }
  int pattern = 6;
  if (fam->sliding == Sliding::kGemma3) HF_TRY_SET(pattern, f.integer("sliding_window_pattern", 1, 1 << 30, 6));
  std::vector<bool> sliding(static_cast<std::size_t>(layers), false);
  if (f.has("layer_types")) {
    const auto& lt = f.raw("layer_types");
    if (!lt.is_array() || lt.size() != static_cast<std::size_t>(layers)) {
      return core::range_error(op, "config",
                               "config.layer_types must be an array of num_hidden_layers (" + std::to_string(layers) +
                                   ") strings");
    }
    for (std::size_t i = 0; i < lt.size(); ++i) {
      const std::string t = lt[i].is_string() ? lt[i].get<std::string>() : lt[i].dump();
      if (t == "sliding_attention") sliding[i] = true;
      else if (t != "full_attention") {
        return f.unsupported("layer_types", core::quote(t, '\'', 0), "full_attention, sliding_attention");
      }
    }
  } else {
    for (int i = 0; i < layers; ++i) {
      switch (fam->sliding) {
        case Sliding::kNone: break;
        case Sliding::kEveryLayer: sliding[static_cast<std::size_t>(i)] = true; break;
        case Sliding::kQwen: sliding[static_cast<std::size_t>(i)] = use_sliding && i >= max_window_layers; break;
        case Sliding::kGemma2: sliding[static_cast<std::size_t>(i)] = i % 2 == 0; break;
        case Sliding::kGemma3: sliding[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0; break;
      }
    }
  }
  if (fam->sliding == Sliding::kQwen && !use_sliding) std::fill(sliding.begin(), sliding.end(), false);
  double scalar = 0.0, attn_softcap = 0.0;
  if (fam->query_pre_attn_scalar > 0) HF_TRY_SET(scalar, f.positive("query_pre_attn_scalar", fam->query_pre_attn_scalar));
  // Gemma 2/3's soft-capping: the config class's default when the field is absent, none when it is null
  auto softcap = [&](const char* name, double fallback) -> core::Result<double> {
    if (!fam->post_norms) return 0.0;  // not a field of the other config classes
    if (f.present(name) && !f.has(name)) return 0.0;
    return f.positive(name, fallback);
  };
  HF_TRY_SET(attn_softcap, softcap("attn_logit_softcapping", fam->attn_softcap));
  HF_TRY_SET(m.head.softcap, softcap("final_logit_softcapping", fam->final_softcap));
  // 4. the description
  m.embedding.rows = TokenRows::kTable;
  m.embedding.seeded_fallback = false;
  m.embedding.vocab_size = vocab;
  m.embedding.positional = PositionalKind::kNone;
  m.embedding.max_positions = positions;
  m.embedding.bounded = true;
  if (fam->gemma) m.embedding.scale = static_cast<float>(std::sqrt(static_cast<double>(m.d_model)));
  const NormKind norm = fam->gemma ? NormKind::kRmsPlusOne : NormKind::kRms;
  m.main.name = "decoder";
  for (int i = 0; i < layers; ++i) {
    BlockSpec b = attention_block("decoder.layers." + std::to_string(i) + ".", true, false, true, act, eps);
    b.norm = norm;
    b.post_norms = fam->post_norms;
    b.ff.gated = true;
    b.ff.bias = mlp_bias;
    AttentionSettings& a = b.attn;
    a.kv_heads = kv;
    a.head_dim = head_dim;
    a.qkv_bias = fam->qkv_bias_always || attention_bias;
    a.out_bias = !fam->qkv_bias_always && attention_bias;
    a.has_qk_norm = fam->qk_norm;
    a.qk_norm = norm;
    a.scale = scalar > 0 ? 1.0 / std::sqrt(scalar) : 0.0;
    a.softcap = attn_softcap;
    const bool slide = sliding[static_cast<std::size_t>(i)];
    a.sliding_window = slide ? window : 0;
    a.rope = true;
    a.rope_spec = slide ? local : global;
    m.main.blocks.push_back(std::move(b));
  }
  m.main.final_norm = true;
  m.main.final_norm_eps = eps;
  m.main.final_norm_kind = norm;
  m.head.next_token = true;
  m.head.lm_head = !c.tied;
  // 5. end of sequence: an id or a list of ids
  HF_TRY_SET(c.eos_ids, read_end_ids(f));
  return c;
}


}  // namespace attnscope::model
