// config.cpp: the enum spellings of the JS API, and createModel's config checked and turned into a
// ModelDescription (model_config.h). Layer: model. Every default and every limit of createModel is here.
#include "model/model_config.h"

#include <array>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "model/limits.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace {

template <class E, std::size_t N>
core::Result<E> parse_enum(std::string_view s, const std::array<std::pair<const char*, E>, N>& table, const char* op,
                           const char* arg) {
  for (const auto& [name, value] : table) {
    if (s == name) return value;
  }
  std::string accepted;
  for (std::size_t i = 0; i < N; ++i) accepted += std::string(i == 0 ? "'" : ", '") + table[i].first + "'";
  // the value quoted as JSON.stringify quotes it, as every argument message of the API does
  return core::range_error(op, arg,
                           std::string(arg) + " (" + nlohmann::json(std::string(s)).dump() + ") must be one of " +
                               accepted);
}

template <class E, std::size_t N>
const char* enum_name(E v, const std::array<std::pair<const char*, E>, N>& table) {
  for (const auto& [name, value] : table) {
    if (v == value) return name;
  }
  return "";
}

constexpr std::array<std::pair<const char*, Architecture>, 3> kArchitectures{{
    {"encoder", Architecture::kEncoder}, {"decoder", Architecture::kDecoder},
    {"encoder-decoder", Architecture::kEncoderDecoder}}};
constexpr std::array<std::pair<const char*, Activation>, 3> kActivations{{
    {"relu", Activation::kRelu}, {"gelu", Activation::kGelu}, {"gelu-tanh", Activation::kGeluTanh}}};
constexpr std::array<std::pair<const char*, PositionalKind>, 3> kPositionals{{
    {"sinusoidal", PositionalKind::kSinusoidal}, {"learned", PositionalKind::kLearned},
    {"none", PositionalKind::kNone}}};
constexpr std::array<std::pair<const char*, FirstAttention>, 2> kFirstAttentions{{
    {"learned", FirstAttention::kLearned}, {"simple", FirstAttention::kSimple}}};
constexpr std::array<std::pair<const char*, TokenizerKind>, 3> kTokenizers{{
    {"word", TokenizerKind::kWord}, {"char", TokenizerKind::kChar}, {"bpe", TokenizerKind::kBpe}}};
constexpr std::array<std::pair<const char*, TraceLevel>, 3> kTraceLevels{{
    {"full", TraceLevel::kFull}, {"weights", TraceLevel::kWeights}, {"none", TraceLevel::kNone}}};

core::Status check_range(const char* arg, long long v, long long lo, long long hi) {
  if (v < lo) return lo == 1 ? core::check_positive(kOpCreate, arg, v) : core::check_non_negative(kOpCreate, arg, v);
  if (v > hi) {
    return core::range_error(kOpCreate, arg,
                             std::string(arg) + " (" + std::to_string(v) + ") must be at most " + std::to_string(hi));
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<Architecture> parse_architecture(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kArchitectures, op, arg);
}
core::Result<Activation> parse_activation(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kActivations, op, arg);
}
core::Result<PositionalKind> parse_positional(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kPositionals, op, arg);
}
core::Result<FirstAttention> parse_first_attention(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kFirstAttentions, op, arg);
}
core::Result<TokenizerKind> parse_tokenizer_kind(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kTokenizers, op, arg);
}
core::Result<TraceLevel> parse_trace_level(std::string_view s, const char* op, const char* arg) {
  return parse_enum(s, kTraceLevels, op, arg);
}
const char* name_of(Architecture a) { return enum_name(a, kArchitectures); }
// SiLU is no createModel option (kActivations are what it parses) but checkpoints have it (SwiGLU)
const char* name_of(Activation a) { return a == Activation::kSilu ? "silu" : enum_name(a, kActivations); }
const char* name_of(PositionalKind p) { return enum_name(p, kPositionals); }
const char* name_of(FirstAttention a) { return enum_name(a, kFirstAttentions); }
const char* name_of(TokenizerKind t) { return enum_name(t, kTokenizers); }

core::Result<ModelDescription> describe(ModelConfig& c) {
  // 1. sizes and numbers, with the defaults that depend on other members
  ATTN_TRY(check_range("dModel", c.d_model, 1, kMaxDModel));
  ATTN_TRY(check_range("numHeads", c.num_heads, 1, kMaxDModel));
  ATTN_TRY(check_range("numLayers", c.num_layers, 0, kMaxLayers));
  // numDecoderLayers, when given, is at least 1; its default is numLayers (which may be 0)
  if (c.num_decoder_layers) ATTN_TRY(check_range("numDecoderLayers", *c.num_decoder_layers, 1, kMaxLayers));
  if (!c.num_decoder_layers) c.num_decoder_layers = c.num_layers;
  const bool enc_dec = c.architecture == Architecture::kEncoderDecoder;
  // numHeads matters only when some layer has learned (multi-head) attention; a weightless model such as the
  // classic 3-d example (attention 'simple', numLayers 1) keeps the default numHeads and reports 1 head.
  const bool has_mha =
      c.num_layers > (c.attention == FirstAttention::kSimple ? 1 : 0) || (enc_dec && *c.num_decoder_layers > 0);
  if (!has_mha && c.d_model % c.num_heads != 0) c.num_heads = 1;
  ATTN_TRY(ops::check_divisible(kOpCreate, c.d_model, c.num_heads));
  if (!c.d_ff) c.d_ff = 4 * c.d_model;
  ATTN_TRY(check_range("dFF", *c.d_ff, 1, kMaxDFF));
  ATTN_TRY(ops::check_positive_finite(kOpCreate, "eps", c.eps));
  ATTN_TRY(ops::check_positive_finite(kOpCreate, "positionalBase", c.positional_base));
  ATTN_TRY(check_range("maxPositions", c.max_positions, 1, kMaxPositions));
  ATTN_TRY(check_range("topK", c.top_k, 0, 1 << 20));
  ATTN_TRY(check_range("maxTokens", c.max_tokens, 1, kMaxTokensLimit));
  if (c.attention == FirstAttention::kSimple && c.architecture == Architecture::kDecoder) {
    return core::range_error(kOpCreate, "attention",
                             "attention ('simple') needs architecture 'encoder' or 'encoder-decoder' (it has no "
                             "causal mask)");
  }

  // 2. the description: seeded token rows (a loaded embedding.weight replaces them for BPE), one stack or two
  ModelDescription m;
  m.architecture = name_of(c.architecture);
  m.d_model = c.d_model;
  m.num_heads = c.num_heads;
  m.d_ff = *c.d_ff;
  m.embedding.rows = TokenRows::kSeeded;
  m.embedding.positional = c.positional;
  m.embedding.positional_base = c.positional_base;
  m.embedding.max_positions = c.max_positions;
  auto block = [&](std::string prefix, bool causal, bool cross) {
    return attention_block(std::move(prefix), causal, cross, c.norm_first, c.activation, c.eps);
  };
  const bool decoder_only = c.architecture == Architecture::kDecoder;
  StackSpec first;
  first.name = decoder_only ? "decoder" : "encoder";
  for (int i = 0; i < c.num_layers; ++i) {
    if (i == 0 && c.attention == FirstAttention::kSimple) {
      BlockSpec b;
      b.kind = BlockKind::kSimple;
      first.blocks.push_back(b);
      continue;
    }
    first.blocks.push_back(block(first.name + ".layers." + std::to_string(i) + ".", decoder_only, false));
  }
  if (enc_dec) {
    m.has_source = true;
    m.source = std::move(first);
    m.main.name = "decoder";
    for (int i = 0; i < *c.num_decoder_layers; ++i) {
      m.main.blocks.push_back(block("decoder.layers." + std::to_string(i) + ".", true, true));
    }
  } else {
    m.main = std::move(first);
  }
  m.head.next_token = true;
  return m;
}

}  // namespace attnscope::model
