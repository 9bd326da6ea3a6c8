// hf_fields.h: the members of a Hugging Face config.json (or one of its objects, e.g. rope_scaling), read by
// io::JsonFields (one message style for every JSON file): "<op>: config.<field> must be an integer, got string",
// "<op>: config.<field> (0) must be from 1 to 16384", "<op>: config.rope_scaling.rope_type 'longrope' is not
// supported (...)". Layer: model; internal to hf_config.cpp and hf_decoder_config.cpp.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "core/text.h"
#include "io/json_fields.h"
#include "ops/activations.h"

// var = expr's value, or return its error (the config readers' one shorthand).
#define HF_TRY_SET(var, expr)          \
  do {                                 \
    auto r_ = (expr);                  \
    if (!r_.ok()) return r_.status();  \
    var = r_.value();                  \
  } while (0)

namespace attnscope::model {

class HfFields {
 public:
  using json = nlohmann::json;
  // `where` names the object in messages: "config." or "config.rope_scaling.".
  // `arg` is the argument errors name ("config", or "generationConfig" for generation_config.json).
  HfFields(const json& j, const char* op, std::string where = "config.", const char* arg = "config")
      : j_(j), op_(op), arg_(arg), rd_(op, arg, std::move(where)) {}

  bool has(const char* name) const { return j_.is_object() && j_.contains(name) && !j_[name].is_null(); }
  bool present(const char* name) const { return j_.is_object() && j_.contains(name); }  // null included
  const json& raw(const char* name) const { return j_[name]; }
  // The member `name` (an object) as fields of its own, named "<where><name>." in messages.
  HfFields child(const char* name) const { return HfFields(j_[name], op_, rd_.at(name) + ".", arg_); }
  std::string at(const char* name) const { return rd_.at(name); }

  core::Result<int> integer(const char* name, long long lo, long long hi, std::optional<int> fallback = {}) const {
    auto r = rd_.integer(j_, name, name, lo, hi, fallback);
    if (!r.ok()) return r.status();
    return static_cast<int>(r.value());
  }
  core::Result<double> positive(const char* name, double fallback) const {
    return rd_.number(j_, name, name, /*positive=*/true, fallback);
  }
  core::Result<double> positive_required(const char* name) const {
    return rd_.number(j_, name, name, /*positive=*/true, std::nullopt);
  }
  core::Result<bool> boolean(const char* name, bool fallback) const { return rd_.boolean(j_, name, name, fallback); }
  core::Result<std::string> text(const char* name, const char* fallback) const {
    return rd_.string(j_, name, name, std::string(fallback));
  }

  // A field whose value attnscope does not implement.
  core::Status unsupported(const char* name, const std::string& value, const std::string& supported) const {
    return rd_.unsupported(name, value, supported.c_str());
  }
  core::Status type_error(const char* name, const char* want) const { return rd_.type(name, want, j_[name]); }

  core::Result<ops::Activation> activation(const char* name, const char* fallback) const {
    auto s = text(name, fallback);
    if (!s.ok()) return s.status();
    const std::string& a = s.value();
    if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") return ops::Activation::kGeluTanh;
    if (a == "gelu") return ops::Activation::kGelu;
    if (a == "relu") return ops::Activation::kRelu;
    return unsupported(name, core::quote(a, '\'', 0), "gelu_new, gelu, gelu_pytorch_tanh, relu");
  }
  // The gate's activation of a decoder checkpoint's gated MLP (ACT2FN[hidden_act]): silu too.
  core::Result<ops::Activation> gate_activation(const char* name, const char* fallback) const {
    auto s = text(name, fallback);
    if (!s.ok()) return s.status();
    const std::string& a = s.value();
    if (a == "silu" || a == "swish") return ops::Activation::kSilu;
    if (a == "gelu_pytorch_tanh" || a == "gelu_new" || a == "gelu_fast") return ops::Activation::kGeluTanh;
    if (a == "gelu") return ops::Activation::kGelu;
    if (a == "relu") return ops::Activation::kRelu;
    return unsupported(name, core::quote(a, '\'', 0), "silu, gelu_pytorch_tanh, gelu_new, gelu, relu");
  }

 private:
  const json& j_;
  const char* op_;
  const char* arg_;
  io::JsonFields rd_;
};

// eos_token_id of a config or generation config: an id or a list of ids (empty when absent).
core::Result<std::vector<std::int64_t>> read_end_ids(const HfFields& f);

}  // namespace attnscope::model
