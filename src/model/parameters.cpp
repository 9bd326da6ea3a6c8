// parameters.cpp: declaring, seeding, storing and checking a model's parameters (parameters.h). Layer: model.
#include "model/parameters.h"

#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "ops/linear.h"
#include "model/embedding.h"
#include "model/limits.h"

namespace attnscope::model {

namespace {

long long product(const std::vector<int>& shape) {
  long long p = 1;
  for (const int d : shape) p *= d;
  return p;
}

}  // namespace

void Parameters::declare_one(const std::string& name, std::vector<int> shape, Init init) {
  Tensor t;
  t.shape = std::move(shape);
  t.init = init;
  tensors_[name] = std::move(t);
}

core::Result<Parameters> Parameters::declare(const ModelDescription& m, Init init_weights, std::uint64_t seed_value,
                                             const char* op,
                                             const std::function<long long(const std::string&, const std::vector<int>&)>& bytes_of) {
  (void)seed_value;
  Parameters p;
  const int d = m.d_model, f = m.d_ff;
  const bool checkpoint = init_weights == Init::kRequired;
  const Init bias = checkpoint ? Init::kRequired : Init::kZeros;
  const Init gamma = checkpoint ? Init::kRequired : Init::kOnes;
  auto norm = [&](const std::string& prefix) {
    p.declare_one(prefix + "weight", {d}, gamma);
    p.declare_one(prefix + "bias", {d}, bias);
  };
  // embeddings
  const EmbeddingSpec& e = m.embedding;
  if (e.rows == TokenRows::kTable) {
    p.declare_one("embedding.weight", {e.vocab_size, d}, init_weights);
  } else if (e.vocab_size > 0) {
    p.declare_one("embedding.weight", {e.vocab_size, d}, Init::kOptional);
  }
  // per_side (BART): the source side's own positions and embedding norm under "source."
  for (const std::string& side : {std::string(), std::string("source.")}) {
    if (!side.empty() && !(e.per_side && m.has_source)) continue;
    if (e.positional == PositionalKind::kLearned) {
      p.declare_one(side + "positional.weight", {e.max_positions + e.positional_offset, d},
                    checkpoint ? Init::kRequired : Init::kPositions);
    }
    if (e.norm) norm(side + "embedding.norm.");
  }
  if (e.token_types > 0) p.declare_one("token_type.weight", {e.token_types, d}, init_weights);
  // blocks and final norms
  auto stack = [&](const StackSpec& s) {
    for (const BlockSpec& b : s.blocks) {
      if (b.kind == BlockKind::kSimple) continue;
      auto attn = [&](const std::string& a) {
        for (const char* w : {"wq", "wk", "wv", "wo"}) p.declare_one(a + w, {d, d}, init_weights);
        for (const char* w : {"bq", "bk", "bv", "bo"}) p.declare_one(a + w, {d}, bias);
      };
      const bool rms = b.norm != NormKind::kLayerNorm;  // a decoder checkpoint's block (AttentionSettings)
      const std::string sa = b.prefix + "self_attn.";
      const AttentionSettings& t = b.attn;
      // the projections of AttentionSettings: q [d, nh·hd], k and v [d, kv·hd], o [nh·hd, d], biases as flagged
      auto settings_attn = [&](const std::string& a) {
        const int hd = t.head_dim > 0 ? t.head_dim : d / m.num_heads, qd = m.num_heads * hd;
        const int kvd = (t.kv_heads > 0 ? t.kv_heads : m.num_heads) * hd;
        p.declare_one(a + "wq", {d, qd}, init_weights);
        p.declare_one(a + "wk", {d, kvd}, init_weights);
        p.declare_one(a + "wv", {d, kvd}, init_weights);
        p.declare_one(a + "wo", {qd, d}, init_weights);
        if (t.qkv_bias) {
          p.declare_one(a + "bq", {qd}, bias);
          p.declare_one(a + "bk", {kvd}, bias);
          p.declare_one(a + "bv", {kvd}, bias);
        }
        if (t.out_bias) p.declare_one(a + "bo", {d}, bias);
      };
      if (rms) {
        const int hd = t.head_dim > 0 ? t.head_dim : d / m.num_heads;
        settings_attn(sa);
        if (t.has_qk_norm) {
          p.declare_one(sa + "q_norm.weight", {hd}, gamma);
          p.declare_one(sa + "k_norm.weight", {hd}, gamma);
        }
        if (t.relative_table) p.declare_one(sa + "relative_bias", {t.relative_buckets, m.num_heads}, init_weights);
      } else {
        attn(sa);
      }
      if (b.cross && t.cross) {
        settings_attn(b.prefix + "cross_attn.");
      } else if (b.cross) {
        attn(b.prefix + "cross_attn.");
      }
      p.declare_one(b.prefix + "linear1.weight", {d, f}, init_weights);
      p.declare_one(b.prefix + "linear2.weight", {f, d}, init_weights);
      if (b.ff.bias) {
        p.declare_one(b.prefix + "linear1.bias", {f}, bias);
        p.declare_one(b.prefix + "linear2.bias", {d}, bias);
      }
      if (b.ff.gated) {
        p.declare_one(b.prefix + "linear3.weight", {d, f}, init_weights);
        if (b.ff.bias) p.declare_one(b.prefix + "linear3.bias", {f}, bias);
      }
      for (int k = 1; k <= (b.cross ? 3 : 2); ++k) {
        if (rms) {
          p.declare_one(b.prefix + "norm" + std::to_string(k) + ".weight", {d}, gamma);
        } else {
          norm(b.prefix + "norm" + std::to_string(k) + ".");
        }
      }
      if (b.post_norms) {
        p.declare_one(b.prefix + "post_attn_norm.weight", {d}, gamma);
        p.declare_one(b.prefix + "post_ff_norm.weight", {d}, gamma);
      }
    }
    if (s.final_norm && s.final_norm_kind != NormKind::kLayerNorm) {
      p.declare_one(s.name + ".norm.weight", {d}, gamma);
    } else if (s.final_norm) {
      norm(s.name + ".norm.");
    }
  };
  if (m.has_source) stack(m.source);
  stack(m.main);
  // heads
  const int v = e.vocab_size;
  if (m.head.lm_head) {
    p.declare_one("lm_head.weight", {d, v}, init_weights);
    if (m.head.lm_bias) p.declare_one("lm_head.bias", {v}, bias);
  }
  if (m.head.logits_bias) p.declare_one("lm_head.final_bias", {v}, bias);
  if (m.head.mlm) {
    p.declare_one("mlm.transform.weight", {d, d}, init_weights);
    p.declare_one("mlm.transform.bias", {d}, bias);
    norm("mlm.norm.");
    p.declare_one("mlm.bias", {v}, bias);
  }
  long long total = 0, bytes = 0;
  for (const auto& [name, t] : p.tensors_) {
    if (t.init != Init::kOptional) total += product(t.shape);
    if (bytes_of) bytes += bytes_of(name, t.shape);
  }
  if (bytes_of) {
    if (bytes <= kMaxParameterBytes) return p;
    return core::range_error(op, "weights",
                             "the model's weights take " + std::to_string(bytes) + " bytes, more than " +
                                 std::to_string(kMaxParameterBytes) +
                                 " (3 GiB; the wasm heap is at most 4 GiB and the activations need the rest)");
  }
  if (total > kMaxParameters) {
    return core::range_error(op, "dModel",
                             "the model would have " + std::to_string(total) + " parameters, more than " +
                                 std::to_string(kMaxParameters) +
                                 " (the wasm heap is at most 4 GiB; reduce dModel, dFF, numLayers or maxPositions)");
  }
  return p;
}

void Parameters::seed(std::uint64_t seed_value) {
  for (auto& [name, t] : tensors_) {
    switch (t.init) {
      case Init::kXavier: t.data = xavier_uniform(seed_value, name, t.shape[0], t.shape[1]); break;
      case Init::kZeros: t.data.assign(static_cast<std::size_t>(t.shape[0]), 0.0f); break;
      case Init::kOnes: t.data.assign(static_cast<std::size_t>(t.shape[0]), 1.0f); break;
      case Init::kPositions: {
        const auto rows = static_cast<std::size_t>(t.shape[0]), cols = static_cast<std::size_t>(t.shape[1]);
        t.data.resize(rows * cols);
        for (std::size_t r = 0; r < rows; ++r) {
          seeded_row(seed_value ^ kPositionalDomain, r, std::span<float>(t.data.data() + r * cols, cols));
        }
        break;
      }
      case Init::kRequired:
      case Init::kOptional: break;
    }
  }
}

core::Status Parameters::store(const std::string& name, const std::vector<int>& shape, std::vector<float> data,
                               const char* op, const char* arg) {
  const std::string where = std::string(arg) + ": tensor " + core::quote_name(name);
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    return core::invalid_error(op, arg, where + " is not a parameter of this model (see docs/model.md for the names)");
  }
  ATTN_TRY(core::check_shape(op, arg, where, shape, it->second.shape));
  ATTN_TRY(core::check_finite(op, arg, std::span<const float>(data), where));
  it->second.data = std::move(data);
  return core::Status::Ok();
}

core::Status Parameters::check_complete(const char* op, const char* arg,
                                        const std::function<std::string(const std::string&)>& display) const {
  for (const auto& [name, t] : tensors_) {
    if (t.init == Init::kRequired && !t.streamed && t.data.empty() && t.half.empty() && t.q8.empty()) {
      return core::invalid_error(op, arg, std::string(arg) + ": tensor " + core::quote_name(display(name)) + " " +
                                              core::shape_text(t.shape) + " is missing");
    }
  }
  return core::Status::Ok();
}

std::span<float> Parameters::allocate(const std::string& name) {
  Tensor& t = tensors_.at(name);
  t.data.assign(static_cast<std::size_t>(product(t.shape)), 0.0f);
  return t.data;
}

bool Parameters::stays_half(const std::string& name, const std::vector<int>& shape) {
  // matrices the kernels read (projections, embedding tables); not the tables read as float rows: the position and
  // token-type tables of either side ("source.positional.weight" too) and T5's relative bias [buckets, heads]
  const auto ends_with = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return shape.size() == 2 && !ends_with("positional.weight") && !ends_with("token_type.weight") &&
         !ends_with("relative_bias");
}

Parameters::Q8Storage Parameters::allocate_q8(const std::string& name, bool table) {
  Tensor& t = tensors_.at(name);
  // [in, out]: ceil(in / 32) block rows of out blocks, the last zero-padded (a table: in = its cols, out = its rows)
  const int in = table ? t.shape[1] : t.shape[0], out = table ? t.shape[0] : t.shape[1];
  const auto blocks = static_cast<std::size_t>((in + core::kQ8Block - 1) / core::kQ8Block) * static_cast<std::size_t>(out);
  t.q8.assign(blocks * core::kQ8Block, std::int8_t{0});
  t.q8_scales.assign(blocks, 0.0f);
  t.type = core::WeightType::kQ8_0;
  return Q8Storage{t.q8.data(), t.q8_scales.data()};
}

std::span<std::uint16_t> Parameters::allocate_half(const std::string& name, core::WeightType type) {
  Tensor& t = tensors_.at(name);
  t.half.assign(static_cast<std::size_t>(product(t.shape)), std::uint16_t{0});
  t.type = type;
  return t.half;
}

core::Status Parameters::check_finite(const char* op, const char* arg,
                                      const std::function<std::string(const std::string&)>& display) const {
  for (const auto& [name, t] : tensors_) ATTN_TRY(check_finite(name, op, arg, display(name)));
  return core::Status::Ok();
}

core::Status check_finite_values(const core::WeightSpan& w, const char* op, const char* arg, const std::string& shown) {
  // an all-ones exponent is an infinity or a NaN: BF16 0x7F80, F16 0x7C00, float32 0x7F800000. A first pass ORs the
  // test over the values (no early exit, so it vectorises: streamWeights checks every piece it reads); the value is
  // looked for only when one was found.
  auto fail = [&](std::size_t i) {
    float v = 0.0f;
    ops::weight_row(w, i, 1, std::span<float>(&v, 1));
    return core::range_error(op, arg,
                             std::string(arg) + ": tensor " + core::quote_name(shown) + " has a value (" +
                                 core::format_number(v) + ") that is not finite");
  };
  if (const std::uint16_t* h = w.bits()) {
    const std::uint16_t mask = w.type == core::WeightType::kBF16 ? 0x7F80 : 0x7C00;
    unsigned any = 0;
    for (std::size_t i = 0; i < w.size(); ++i) any |= static_cast<unsigned>((h[i] & mask) == mask);
    if (any == 0) return core::Status::Ok();
    for (std::size_t i = 0; i < w.size(); ++i) {
      if ((h[i] & mask) == mask) return fail(i);
    }
  }
  if (w.is_f32()) {
    const std::span<const float> f = w.f32();
    unsigned any = 0;
    for (const float x : f) {
      std::uint32_t b = 0;
      std::memcpy(&b, &x, 4);
      any |= static_cast<unsigned>((b & 0x7F800000u) == 0x7F800000u);
    }
    if (any == 0) return core::Status::Ok();
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (!std::isfinite(f[i])) return fail(i);
    }
  }
  return core::Status::Ok();
}

core::Status Parameters::check_finite(const std::string& name, const char* op, const char* arg,
                                      const std::string& shown) const {
  const Tensor& t = tensors_.at(name);
  for (const float s : t.q8_scales) {  // a block holding an infinity or a NaN has a scale that is not finite
    if (!std::isfinite(s)) {
      return core::range_error(op, arg,
                               std::string(arg) + ": tensor " + core::quote_name(shown) +
                                   " has a value that is not finite");
    }
  }
  return t.q8.empty() ? check_finite_values(weight(name), op, arg, shown) : core::Status::Ok();
}

core::WeightSpan Parameters::weight(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return {};
  const Tensor& t = it->second;
  if (!t.half.empty()) return core::WeightSpan(t.half.data(), t.half.size(), t.type);
  if (!t.q8.empty()) return core::WeightSpan::q8_0(t.q8.data(), t.q8_scales.data(), t.q8.size());
  return std::span<const float>(t.data);
}

std::span<const float> Parameters::operator[](const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? std::span<const float>() : std::span<const float>(it->second.data);
}

void Parameters::mark_streamed(const std::string& name) { tensors_.at(name).streamed = true; }

long long Parameters::count() const {
  long long total = 0;
  for (const auto& [name, t] : tensors_) total += static_cast<long long>(t.data.size() + t.half.size() + t.q8.size());
  return total;
}

}  // namespace attnscope::model
