// hf_checkpoint.cpp: Hugging Face tensor names -> attnscope parameters, and the chunked loader
// (hf_checkpoint.h). Layer: model.
#include "model/hf_checkpoint.h"

#include <cmath>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "model/limits.h"

namespace attnscope::model {

namespace {

using Op = TensorTarget::Op;

struct Expected {
  std::vector<std::int64_t> shape;  // as the file stores it
  std::vector<TensorTarget> targets;
};

TensorTarget copy(const std::string& name) { return TensorTarget{name, Op::kCopy, 0, 0, 0, 0}; }
// A PyTorch Linear weight [out, in] -> attnscope [in, out].
TensorTarget transpose(const std::string& name, int out, int in) { return TensorTarget{name, Op::kTranspose, out, in, 0, 0}; }
// Columns [first, first + cols) of a [rows, total] tensor (a bias is one row).
TensorTarget columns(const std::string& name, int rows, int cols, int total, int first) {
  return TensorTarget{name, Op::kColumns, rows, cols, total, first};
}

// Rows [first, first + count) of a [total, in] Linear weight, as attnscope's [in, count].
TensorTarget rows_transposed(const std::string& name, int in, int count, int total, int first) {
  return TensorTarget{name, Op::kRowsTransposed, in, count, total, first};
}

// A decoder-only checkpoint (MODERN-LLMS.md 1.9; names without the "model." prefix): PyTorch Linear weights
// [out, in] transposed to attnscope's [in, out]; Phi-3's fused projections split by rows.
void expected_decoder_tensors(const HfConfig& c, std::map<std::string, Expected>& e) {
  const ModelDescription& m = c.description;
  const int d = m.d_model, f = m.d_ff, v = m.embedding.vocab_size;
  e["embed_tokens.weight"] = {{v, d}, {copy("embedding.weight")}};
  for (std::size_t i = 0; i < m.main.blocks.size(); ++i) {
    const BlockSpec& b = m.main.blocks[i];
    const AttentionSettings& s = b.attn;
    const int hd = s.head_dim, qd = m.num_heads * hd, kvd = s.kv_heads * hd;
    const std::string h = "layers." + std::to_string(i) + ".", o = b.prefix, a = o + "self_attn.";
    e[h + "input_layernorm.weight"] = {{d}, {copy(o + "norm1.weight")}};
    if (b.post_norms) {  // Gemma 2/3: post_attention_layernorm normalises the attention's output
      e[h + "post_attention_layernorm.weight"] = {{d}, {copy(o + "post_attn_norm.weight")}};
      e[h + "pre_feedforward_layernorm.weight"] = {{d}, {copy(o + "norm2.weight")}};
      e[h + "post_feedforward_layernorm.weight"] = {{d}, {copy(o + "post_ff_norm.weight")}};
    } else {  // the others: post_attention_layernorm is the norm before the MLP
      e[h + "post_attention_layernorm.weight"] = {{d}, {copy(o + "norm2.weight")}};
    }
    if (c.fused) {
      e[h + "self_attn.qkv_proj.weight"] = {{qd + 2 * kvd, d},
                                            {rows_transposed(a + "wq", d, qd, qd + 2 * kvd, 0),
                                             rows_transposed(a + "wk", d, kvd, qd + 2 * kvd, qd),
                                             rows_transposed(a + "wv", d, kvd, qd + 2 * kvd, qd + kvd)}};
    } else {
      e[h + "self_attn.q_proj.weight"] = {{qd, d}, {transpose(a + "wq", qd, d)}};
      e[h + "self_attn.k_proj.weight"] = {{kvd, d}, {transpose(a + "wk", kvd, d)}};
      e[h + "self_attn.v_proj.weight"] = {{kvd, d}, {transpose(a + "wv", kvd, d)}};
    }
    if (s.qkv_bias) {
      e[h + "self_attn.q_proj.bias"] = {{qd}, {copy(a + "bq")}};
      e[h + "self_attn.k_proj.bias"] = {{kvd}, {copy(a + "bk")}};
      e[h + "self_attn.v_proj.bias"] = {{kvd}, {copy(a + "bv")}};
    }
    e[h + "self_attn.o_proj.weight"] = {{d, qd}, {transpose(a + "wo", d, qd)}};
    if (s.out_bias) e[h + "self_attn.o_proj.bias"] = {{d}, {copy(a + "bo")}};
    if (s.has_qk_norm) {
      e[h + "self_attn.q_norm.weight"] = {{hd}, {copy(a + "q_norm.weight")}};
      e[h + "self_attn.k_norm.weight"] = {{hd}, {copy(a + "k_norm.weight")}};
    }
    if (c.fused) {
      e[h + "mlp.gate_up_proj.weight"] = {{2 * f, d},
                                          {rows_transposed(o + "linear1.weight", d, f, 2 * f, 0),
                                           rows_transposed(o + "linear3.weight", d, f, 2 * f, f)}};
    } else {
      e[h + "mlp.gate_proj.weight"] = {{f, d}, {transpose(o + "linear1.weight", f, d)}};
      e[h + "mlp.up_proj.weight"] = {{f, d}, {transpose(o + "linear3.weight", f, d)}};
    }
    e[h + "mlp.down_proj.weight"] = {{d, f}, {transpose(o + "linear2.weight", d, f)}};
    if (b.ff.bias) {
      e[h + "mlp.gate_proj.bias"] = {{f}, {copy(o + "linear1.bias")}};
      e[h + "mlp.up_proj.bias"] = {{f}, {copy(o + "linear3.bias")}};
      e[h + "mlp.down_proj.bias"] = {{d}, {copy(o + "linear2.bias")}};
    }
  }
  e["norm.weight"] = {{d}, {copy("decoder.norm.weight")}};
  if (!c.tied) e["lm_head.weight"] = {{v, d}, {transpose("lm_head.weight", v, d)}};
}

// An encoder-decoder checkpoint (names without BART's "model." prefix). T5 (modeling_t5.py: T5Stack.block[i].
// layer[0] = T5LayerSelfAttention, layer[1] = T5LayerCrossAttention in the decoder, then T5LayerFF; T5Attention's
// q/k/v/o and block 0's relative_attention_bias; T5DenseActDense wi/wo, T5DenseGatedActDense wi_0/wi_1/wo;
// final_layer_norm) or BART/mBART/Marian (BartEncoderLayer / BartDecoderLayer: self_attn, self_attn_layer_norm,
// encoder_attn, encoder_attn_layer_norm, fc1, fc2, final_layer_norm; embed_positions, layernorm_embedding,
// mBART's layer_norm). Linear weights [out, in] transposed to attnscope's [in, out].
void expected_seq2seq_tensors(const HfConfig& c, bool logits_bias, std::map<std::string, Expected>& e) {
  const ModelDescription& m = c.description;
  const int d = m.d_model, f = m.d_ff, v = m.embedding.vocab_size;
  e[c.t5 ? "shared.weight" : "shared.weight"] = {{v, d}, {copy("embedding.weight")}};
  if (!c.tied) e["lm_head.weight"] = {{v, d}, {transpose("lm_head.weight", v, d)}};
  if (logits_bias) e["final_logits_bias"] = {{1, v}, {copy("lm_head.final_bias")}};
  for (const StackSpec* s : {&m.source, &m.main}) {
    const std::string stack = s->name;  // "encoder" | "decoder"
    const bool decoder = s == &m.main;
    if (c.t5) {
      for (std::size_t i = 0; i < s->blocks.size(); ++i) {
        const BlockSpec& b = s->blocks[i];
        const int hd = b.attn.head_dim, inner = m.num_heads * hd;
        const std::string h = stack + ".block." + std::to_string(i) + ".layer.", o = b.prefix;
        auto attn = [&](const std::string& hf, const std::string& ours) {
          e[hf + "q.weight"] = {{inner, d}, {transpose(ours + "wq", inner, d)}};
          e[hf + "k.weight"] = {{inner, d}, {transpose(ours + "wk", inner, d)}};
          e[hf + "v.weight"] = {{inner, d}, {transpose(ours + "wv", inner, d)}};
          e[hf + "o.weight"] = {{d, inner}, {transpose(ours + "wo", d, inner)}};
        };
        attn(h + "0.SelfAttention.", o + "self_attn.");
        if (b.attn.relative_table) {
          e[h + "0.SelfAttention.relative_attention_bias.weight"] = {{b.attn.relative_buckets, m.num_heads},
                                                                     {copy(o + "self_attn.relative_bias")}};
        }
        e[h + "0.layer_norm.weight"] = {{d}, {copy(o + "norm1.weight")}};
        if (decoder) {
          attn(h + "1.EncDecAttention.", o + "cross_attn.");
          e[h + "1.layer_norm.weight"] = {{d}, {copy(o + "norm2.weight")}};
        }
        const std::string ff = h + (decoder ? "2." : "1."), k = decoder ? "3" : "2";
        if (b.ff.gated) {
          e[ff + "DenseReluDense.wi_0.weight"] = {{f, d}, {transpose(o + "linear1.weight", f, d)}};
          e[ff + "DenseReluDense.wi_1.weight"] = {{f, d}, {transpose(o + "linear3.weight", f, d)}};
        } else {
          e[ff + "DenseReluDense.wi.weight"] = {{f, d}, {transpose(o + "linear1.weight", f, d)}};
        }
        e[ff + "DenseReluDense.wo.weight"] = {{d, f}, {transpose(o + "linear2.weight", d, f)}};
        e[ff + "layer_norm.weight"] = {{d}, {copy(o + "norm" + k + ".weight")}};
      }
      e[stack + ".final_layer_norm.weight"] = {{d}, {copy(stack + ".norm.weight")}};
      continue;
    }
    auto norm = [&](const std::string& hf, const std::string& ours) {
      e[hf + ".weight"] = {{d}, {copy(ours + "weight")}};
      e[hf + ".bias"] = {{d}, {copy(ours + "bias")}};
    };
    const std::string side = decoder ? "" : "source.";
    const EmbeddingSpec& em = m.embedding;
    if (em.positional == PositionalKind::kLearned) {
      e[stack + ".embed_positions.weight"] = {{em.max_positions + em.positional_offset, d},
                                              {copy(side + "positional.weight")}};
    }
    if (em.norm) norm(stack + ".layernorm_embedding", side + "embedding.norm.");
    for (std::size_t i = 0; i < s->blocks.size(); ++i) {
      const std::string h = stack + ".layers." + std::to_string(i) + ".", o = s->blocks[i].prefix;
      auto attn = [&](const std::string& hf, const std::string& ours) {
        for (const auto& [p, w, bias] : {std::tuple{"q_proj", "wq", "bq"}, {"k_proj", "wk", "bk"},
                                         {"v_proj", "wv", "bv"}, {"out_proj", "wo", "bo"}}) {
          e[hf + p + ".weight"] = {{d, d}, {transpose(ours + w, d, d)}};
          e[hf + p + ".bias"] = {{d}, {copy(ours + bias)}};
        }
      };
      attn(h + "self_attn.", o + "self_attn.");
      norm(h + "self_attn_layer_norm", o + "norm1.");
      if (decoder) {
        attn(h + "encoder_attn.", o + "cross_attn.");
        norm(h + "encoder_attn_layer_norm", o + "norm2.");
      }
      e[h + "fc1.weight"] = {{f, d}, {transpose(o + "linear1.weight", f, d)}};
      e[h + "fc1.bias"] = {{f}, {copy(o + "linear1.bias")}};
      e[h + "fc2.weight"] = {{d, f}, {transpose(o + "linear2.weight", d, f)}};
      e[h + "fc2.bias"] = {{d}, {copy(o + "linear2.bias")}};
      norm(h + "final_layer_norm", o + (decoder ? "norm3." : "norm2."));
    }
    if (s->final_norm) norm(stack + ".layer_norm", stack + ".norm.");
  }
}

// The base-model names (no "transformer."/"bert." prefix) a checkpoint of `c` must hold, with their targets.
std::map<std::string, Expected> expected_tensors(const HfConfig& c, bool mlm, bool logits_bias) {
  const ModelDescription& m = c.description;
  const int d = m.d_model, f = m.d_ff, v = m.embedding.vocab_size, p = m.embedding.max_positions;
  std::map<std::string, Expected> e;
  if (c.family == HfFamily::kDecoder) {
    expected_decoder_tensors(c, e);
    return e;
  }
  if (c.family == HfFamily::kSeq2Seq) {
    expected_seq2seq_tensors(c, logits_bias, e);
    return e;
  }
  auto norm = [&](const std::string& hf, const std::string& ours) {
    e[hf + ".weight"] = {{d}, {copy(ours + "weight")}};
    e[hf + ".bias"] = {{d}, {copy(ours + "bias")}};
  };
  if (c.family == HfFamily::kGpt2) {
    e["wte.weight"] = {{v, d}, {copy("embedding.weight")}};
    e["wpe.weight"] = {{p, d}, {copy("positional.weight")}};
    for (std::size_t i = 0; i < m.main.blocks.size(); ++i) {
      const std::string h = "h." + std::to_string(i) + ".", o = m.main.blocks[i].prefix, a = o + "self_attn.";
      norm(h + "ln_1", o + "norm1.");
      // Conv1D weights are [in, out] as attnscope's; c_attn holds q | k | v side by side.
      e[h + "attn.c_attn.weight"] = {{d, 3 * d}, {columns(a + "wq", d, d, 3 * d, 0), columns(a + "wk", d, d, 3 * d, d),
                                                  columns(a + "wv", d, d, 3 * d, 2 * d)}};
      e[h + "attn.c_attn.bias"] = {{3 * d}, {columns(a + "bq", 1, d, 3 * d, 0), columns(a + "bk", 1, d, 3 * d, d),
                                             columns(a + "bv", 1, d, 3 * d, 2 * d)}};
      e[h + "attn.c_proj.weight"] = {{d, d}, {copy(a + "wo")}};
      e[h + "attn.c_proj.bias"] = {{d}, {copy(a + "bo")}};
      norm(h + "ln_2", o + "norm2.");
      e[h + "mlp.c_fc.weight"] = {{d, f}, {copy(o + "linear1.weight")}};
      e[h + "mlp.c_fc.bias"] = {{f}, {copy(o + "linear1.bias")}};
      e[h + "mlp.c_proj.weight"] = {{f, d}, {copy(o + "linear2.weight")}};
      e[h + "mlp.c_proj.bias"] = {{d}, {copy(o + "linear2.bias")}};
    }
    norm("ln_f", "decoder.norm.");
    if (!c.tied) e["lm_head.weight"] = {{v, d}, {transpose("lm_head.weight", v, d)}};
    return e;
  }
  e["embeddings.word_embeddings.weight"] = {{v, d}, {copy("embedding.weight")}};
  e["embeddings.position_embeddings.weight"] = {{p, d}, {copy("positional.weight")}};
  e["embeddings.token_type_embeddings.weight"] = {{m.embedding.token_types, d}, {copy("token_type.weight")}};
  norm("embeddings.LayerNorm", "embedding.norm.");
  for (std::size_t i = 0; i < m.main.blocks.size(); ++i) {
    const std::string h = "encoder.layer." + std::to_string(i) + ".", o = m.main.blocks[i].prefix, a = o + "self_attn.";
    for (const auto& [hf, w, b] : {std::tuple{"query", "wq", "bq"}, {"key", "wk", "bk"}, {"value", "wv", "bv"}}) {
      e[h + "attention.self." + hf + ".weight"] = {{d, d}, {transpose(a + w, d, d)}};
      e[h + "attention.self." + hf + ".bias"] = {{d}, {copy(a + b)}};
    }
    e[h + "attention.output.dense.weight"] = {{d, d}, {transpose(a + "wo", d, d)}};
    e[h + "attention.output.dense.bias"] = {{d}, {copy(a + "bo")}};
    norm(h + "attention.output.LayerNorm", o + "norm1.");
    e[h + "intermediate.dense.weight"] = {{f, d}, {transpose(o + "linear1.weight", f, d)}};
    e[h + "intermediate.dense.bias"] = {{f}, {copy(o + "linear1.bias")}};
    e[h + "output.dense.weight"] = {{d, f}, {transpose(o + "linear2.weight", d, f)}};
    e[h + "output.dense.bias"] = {{d}, {copy(o + "linear2.bias")}};
    norm(h + "output.LayerNorm", o + "norm2.");
  }
  if (mlm) {
    e["cls.predictions.transform.dense.weight"] = {{d, d}, {transpose("mlm.transform.weight", d, d)}};
    e["cls.predictions.transform.dense.bias"] = {{d}, {copy("mlm.transform.bias")}};
    norm("cls.predictions.transform.LayerNorm", "mlm.norm.");
    e["cls.predictions.bias"] = {{v}, {copy("mlm.bias")}};
  }
  return e;
}

// A file name as the table spells it: base-model prefix dropped, old LayerNorm gamma/beta renamed.
std::string canonical_hf(const std::string& name, HfFamily family) {
  std::string n = name;
  const std::string prefix = family == HfFamily::kGpt2 ? "transformer." : family == HfFamily::kBert ? "bert." : "model.";
  if (n.compare(0, prefix.size(), prefix) == 0) n = n.substr(prefix.size());
  auto ends = [&](const std::string& s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
  if (ends(".gamma")) n = n.substr(0, n.size() - 6) + ".weight";
  if (ends(".beta")) n = n.substr(0, n.size() - 5) + ".bias";
  return n;
}

}  // namespace

int hf_layer_index(std::string_view name) {
  for (std::size_t at = name.find("layers."); at != std::string_view::npos; at = name.find("layers.", at + 1)) {
    if (at != 0 && name[at - 1] != '.') continue;
    std::size_t i = at + 7;
    int n = 0;
    const std::size_t digits = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && n < 1000000) n = n * 10 + (name[i++] - '0');
    if (i > digits && i < name.size() && name[i] == '.') return n;
  }
  return -1;
}

bool hf_streamed_table(std::string_view name) {
  if (name.substr(0, 6) == "model.") name.remove_prefix(6);
  return name == "embed_tokens.weight" || name == "lm_head.weight";
}

void HfCheckpointLoader::split_tables(std::set<std::string>& elsewhere) {
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    for (Mapped& mp : shards_[s].mapped) {
      if (!hf_streamed_table(mp.entry.name) || mp.entry.shape.size() != 2) continue;
      mp.streamed = true;
      for (const TensorTarget& target : mp.targets) elsewhere.insert(target.name);
      LayerStream::Table t{LayerStream::Tensor{mp.entry.name, s, shards_[s].index.data_offset + mp.entry.begin,
                                               shards_[s].index.data_offset + mp.entry.end, mp.entry.dtype,
                                               mp.entry.elem, {}},
                           static_cast<std::size_t>(mp.entry.shape[0]), static_cast<std::size_t>(mp.entry.shape[1])};
      (mp.targets.front().name == "lm_head.weight" ? head_table_ : embedding_table_) = std::move(t);
    }
  }
}

core::Status HfCheckpointLoader::split_layers(std::set<std::string>& elsewhere) {
  const ModelDescription& m = cfg_.description;
  if (cfg_.family != HfFamily::kDecoder) {
    std::string types;  // the list as describe_decoder_hf has it (hf_decoder_config.cpp), not a copy
    for (const std::string& t : decoder_model_types()) types += (types.empty() ? "" : ", ") + t;
    return core::invalid_error(op_, "streamWeights",
                               "streamWeights: only decoder-only checkpoints (" + types +
                                   ") stream their layers; this is a " + model_type() +
                                   " checkpoint (load it without streamWeights)");
  }
  stream_layers_.assign(m.main.blocks.size(), {});
  std::map<std::string, const io::TensorEntry*> first;  // layer 0's tensors by their name after "layers.0."
  auto tail = [](const std::string& name) {  // "model.layers.3.mlp.up_proj.weight" -> "mlp.up_proj.weight"
    return name.substr(name.find('.', name.find("layers.") + 7) + 1);
  };
  for (int pass = 0; pass < 2; ++pass) {  // layer 0 first: the others are checked against it
    for (std::size_t s = 0; s < shards_.size(); ++s) {
      for (Mapped& mp : shards_[s].mapped) {
        const int layer = hf_layer_index(canonical_hf(mp.entry.name, cfg_.family));
        if (layer < 0 || (layer == 0) != (pass == 0)) continue;
        mp.layer = layer;
        mp.streamed = true;
        const std::string& from = m.main.blocks.at(static_cast<std::size_t>(layer)).prefix;
        const std::string& to = m.main.blocks.front().prefix;
        LayerStream::Tensor t{mp.entry.name, s, shards_[s].index.data_offset + mp.entry.begin,
                              shards_[s].index.data_offset + mp.entry.end, mp.entry.dtype, mp.entry.elem, {}};
        for (TensorTarget target : mp.targets) {
          if (layer > 0) elsewhere.insert(target.name);
          target.name = to + target.name.substr(from.size());
          if (layer == 0) buffer_names_.push_back(target.name);
          t.targets.push_back(std::move(target));
        }
        if (layer == 0) {
          first[tail(mp.entry.name)] = &mp.entry;
        } else {
          auto it = first.find(tail(mp.entry.name));
          if (it == first.end() || it->second->dtype != mp.entry.dtype || it->second->shape != mp.entry.shape) {
            return core::invalid_error(
                op_, "streamWeights",
                "streamWeights: tensor " + core::quote_name(mp.entry.name) + " (" + mp.entry.dtype + " " +
                    core::shape_text(mp.entry.shape) + ") differs from layer 0's (" +
                    (it == first.end() ? std::string("absent") : it->second->dtype + " " + core::shape_text(it->second->shape)) +
                    "): streamed layers share one buffer, so every layer needs layer 0's shapes and dtypes");
          }
        }
        stream_layers_[static_cast<std::size_t>(layer)].push_back(std::move(t));
      }
    }
  }
  return core::Status::Ok();
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> HfCheckpointLoader::resident_ranges(std::size_t shard) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (shard >= shards_.size()) return out;
  const Shard& sh = shards_[shard];
  for (const Mapped& m : sh.mapped) out.emplace_back(sh.index.data_offset + m.entry.begin, sh.index.data_offset + m.entry.end);
  return out;
}

core::Result<std::unique_ptr<HfCheckpointLoader>> HfCheckpointLoader::begin(std::string_view config_json,
                                                                           TextEncoder tokenizer,
                                                                           std::span<const std::uint8_t> header,
                                                                           std::uint64_t file_size, const char* op) {
  return begin_shards(config_json, std::move(tokenizer), {header}, {file_size}, op);
}

core::Result<std::unique_ptr<HfCheckpointLoader>> HfCheckpointLoader::begin_shards(
    std::string_view config_json, TextEncoder tokenizer, const std::vector<std::span<const std::uint8_t>>& headers,
    const std::vector<std::uint64_t>& file_sizes, const char* op, bool weights8, bool stream) {
  std::unique_ptr<HfCheckpointLoader> l(new HfCheckpointLoader());
  l->op_ = op;
  l->stream_ = stream;
  // 1. config -> description; the tokenizer must fit the embedding table
  auto cfg = describe_hf(config_json, op);
  if (!cfg.ok()) return cfg.status();
  l->cfg_ = std::move(cfg).value();
  const int vocab = l->cfg_.description.embedding.vocab_size;
  const std::int32_t tok_vocab = tokenizer.vocab_size(RunVocab{});
  if (tok_vocab > vocab) {
    return core::range_error(op, "tokenizer",
                             "tokenizer has " + std::to_string(tok_vocab) + " tokens but config.vocab_size is " +
                                 std::to_string(vocab) + " (is the tokenizer from another model?)");
  }
  const bool bert = l->cfg_.family == HfFamily::kBert;
  if (bert && (tokenizer.specials().cls < 0 || tokenizer.specials().sep < 0)) {
    return core::invalid_error(op, "tokenizer", "tokenizer has no [CLS] or [SEP] token, which BERT needs");
  }
  // 2. each file's header (one file, or the shards of model.safetensors.index.json in any order): every tensor the
  // model needs, in exactly one of them, with its shape and a float dtype
  l->shards_.resize(headers.size());
  for (std::size_t s = 0; s < headers.size(); ++s) {
    Shard& sh = l->shards_[s];
    sh.size = file_sizes[s];
    sh.name = headers.size() == 1 ? std::string("weights") : "weights[" + std::to_string(s) + "]";
    auto index = io::parse_safetensors_header(headers[s], sh.size, op);
    if (!index.ok()) return core::make_error(index.status().kind, op, "weights", sh.name + ": " + index.status().detail());
    sh.index = std::move(index).value();
  }
  bool mlm = false, logits_bias = false, shared = false;
  for (const Shard& sh : l->shards_) {
    for (const auto& t : sh.index.tensors) {
      const std::string key = canonical_hf(t.name, l->cfg_.family);
      mlm = mlm || key == "cls.predictions.transform.dense.weight";
      logits_bias = logits_bias || key == "final_logits_bias";  // BART / Marian; zero when absent
      shared = shared || key == "shared.weight";
    }
  }
  // An encoder-decoder file saved with its tied token table under a tied name only (safetensors keeps one name of
  // tensors that share memory): the first of encoder/decoder.embed_tokens.weight is the table, the other skipped.
  const bool embed_tokens_alias = l->cfg_.family == HfFamily::kSeq2Seq && !shared;
  auto table_key = [&](const std::string& key) {
    if (embed_tokens_alias && (key == "encoder.embed_tokens.weight" || key == "decoder.embed_tokens.weight")) {
      return std::string("shared.weight");
    }
    return key;
  };
  l->cfg_.description.head.mlm = bert && mlm;
  logits_bias = logits_bias && l->cfg_.family == HfFamily::kSeq2Seq;
  l->cfg_.description.head.logits_bias = logits_bias;
  std::map<std::string, Expected> expected = expected_tensors(l->cfg_, bert && mlm, logits_bias);
  std::map<std::string, std::pair<std::string, std::size_t>> found;  // table name -> file name, shard
  for (std::size_t s = 0; s < l->shards_.size(); ++s) {
    Shard& sh = l->shards_[s];
    for (const auto& t : sh.index.tensors) {
      const std::string key = table_key(canonical_hf(t.name, l->cfg_.family));
      auto it = expected.find(key);
      if (it == expected.end()) continue;  // not used by the model: skipped whatever its dtype or shape
      if (embed_tokens_alias && key == "shared.weight" && found.count(key) != 0) continue;  // the other tied name
      const std::string where = sh.name + ": tensor " + core::quote_name(t.name);
      const auto [at, fresh] = found.emplace(key, std::make_pair(t.name, s));
      if (!fresh && at->second.second != s) {
        return core::invalid_error(op, "weights",
                                   "weights: tensor " + core::quote_name(t.name) + " is in two shards (" +
                                       l->shards_[at->second.second].name + " and " + sh.name + ")");
      }
      if (!fresh) {
        return core::invalid_error(op, "weights",
                                   where + " is given twice (also as " + core::quote_name(at->second.first) + ")");
      }
      ATTN_TRY(core::check_shape(op, "weights", where, t.shape, it->second.shape));
      if (!io::is_float_dtype(t.dtype)) {
        return core::invalid_error(op, "weights", where + " has dtype " + t.dtype + " (supported: F32, F16, BF16)");
      }
      sh.mapped.push_back(Mapped{t, it->second.targets, {}, 0, -1});
    }
  }
  const Shard& first = l->shards_.front();
  if (found.empty() && !first.index.tensors.empty()) {
    return core::invalid_error(op, "weights",
                               "weights: the file holds none of the tensors a " + l->cfg_.description.architecture +
                                   " model needs (it has e.g. " + core::quote_name(first.index.tensors.front().name) +
                                   "): is it another model's file?");
  }
  for (const auto& [key, e] : expected) {
    if (found.count(key) == 0) {
      return core::invalid_error(op, "weights",
                                 "weights: tensor " + core::quote_name(key) + " " + core::shape_text(e.shape) +
                                     (l->shards_.size() > 1 ? " is in no shard" : " is missing") +
                                     " (is the file from another model?)");
    }
  }
  // 2b. streamWeights: each decoder layer's tensors leave the feed for the stream, written to layer 0's parameters
  std::set<std::string> elsewhere;  // parameters of layers 1.. (they hold nothing; layer 0's are the buffer)
  if (stream) {
    ATTN_TRY(l->split_layers(elsewhere));
    l->split_tables(elsewhere);
  }
  // 3. the parameters, counted before anything is allocated
  std::map<std::string, bool> half_target;  // parameter -> its file tensor is BF16 / F16
  std::map<std::string, bool> q8_target;    // parameter -> quantised to Q8_0 (weights8)
  for (const Shard& sh : l->shards_) {
    for (const Mapped& m : sh.mapped) {
      for (const TensorTarget& t : m.targets) {
        half_target[t.name] = m.entry.dtype == "BF16" || m.entry.dtype == "F16";
        // a PyTorch Linear weight [out, in] transposed to [in, out], blocks of 32 along in (as GGUF's Q8_0 rows);
        // a tied head's table [vocab, d] too (quantised along d, stored as the layout of its transpose [d, vocab]:
        // Parameters::allocate_q8), so the head's one row per token runs the integer GEMV
        q8_target[t.name] = weights8 && (t.op == Op::kTranspose ||
                                         (t.name == "embedding.weight" && !l->cfg_.description.head.lm_head));
      }
    }
  }
  auto params = Parameters::declare(l->cfg_.description, Parameters::Init::kRequired, 0, op,
                                    [&](const std::string& name, const std::vector<int>& shape) {
                                      if (elsewhere.count(name) != 0) return 0LL;
                                      long long elements = 1;
                                      for (const int d : shape) elements *= d;
                                      if (q8_target.count(name) != 0 && q8_target.at(name)) {
                                        return elements + elements / core::kQ8Block * 4;
                                      }
                                      auto it = half_target.find(name);
                                      const bool half = it != half_target.end() && it->second && Parameters::stays_half(name, shape);
                                      return elements * (half ? 2 : 4);
                                    });
  if (!params.ok()) return params.status();
  l->params_ = std::move(params).value();
  for (const std::string& name : elsewhere) l->params_.mark_streamed(name);
  for (const Shard& sh : l->shards_) {
    for (const Mapped& m : sh.mapped) {
      const bool half = m.entry.dtype == "BF16" || m.entry.dtype == "F16";
      const core::WeightType type = m.entry.dtype == "BF16" ? core::WeightType::kBF16 : core::WeightType::kF16;
      for (const TensorTarget& t : m.targets) {
        if (elsewhere.count(t.name) != 0) continue;  // streamed, read into layer 0's storage
        // matrices stay at the file's width; vectors (norms, biases) are small and read by float32 code
        if (q8_target.at(t.name)) {
          TensorStorage st;
          const bool table = t.name == "embedding.weight";  // kCopy of [vocab, d]: its rows are the Linear's [out, in]
          st.q8 = l->params_.allocate_q8(t.name, table);
          st.pending.assign(core::kQ8Block, 0.0f);
          st.out = table ? static_cast<int>(m.entry.shape[0]) : t.rows;
          st.in = table ? static_cast<int>(m.entry.shape[1]) : t.cols;
          l->storage_[t.name] = std::move(st);
        } else if (half && Parameters::stays_half(t.name, l->params_.tensors().at(t.name).shape)) {
          TensorStorage st;
          st.half = l->params_.allocate_half(t.name, type).data();
          l->storage_[t.name] = std::move(st);
        } else {
          TensorStorage st;
          st.f32 = l->params_.allocate(t.name).data();
          l->storage_[t.name] = std::move(st);
        }
      }
    }
  }
  // streamed tensors are not fed (feed_shard skips their bytes)
  for (Shard& sh : l->shards_) {
    sh.mapped.erase(std::remove_if(sh.mapped.begin(), sh.mapped.end(), [](const Mapped& m) { return m.streamed; }),
                    sh.mapped.end());
  }
  l->encoder_ = std::move(tokenizer);
  // decoder checkpoints: the file's template (BOS); encoder-decoders: the source's (BART's <s> … </s>, T5's </s>)
  if (l->cfg_.family == HfFamily::kDecoder || l->cfg_.family == HfFamily::kSeq2Seq) l->encoder_.use_post_processor();
  return l;
}

core::Status HfCheckpointLoader::write(Mapped& m, const std::uint8_t* src, std::uint64_t first, std::uint64_t count) {
  std::vector<TensorStorage*> storage;
  for (const TensorTarget& t : m.targets) storage.push_back(&storage_.at(t.name));
  write_elements(m.entry.dtype, m.entry.elem, m.targets, storage, src, first, count);
  m.done = first + count;
  return core::Status::Ok();
}

core::Status HfCheckpointLoader::feed(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  return feed_shard(0, offset, bytes);
}

core::Status HfCheckpointLoader::feed_shard(std::size_t shard, std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  if (shard >= shards_.size()) {
    return core::range_error(op_, "weights", "weights: shard " + std::to_string(shard) + " does not exist");
  }
  Shard& sh = shards_[shard];
  // a gap (streamWeights: the layers' bytes are not fed) is fine when no tensor still to be filled begins in it
  const bool gap_ok = stream_ && offset > sh.next &&
                      (sh.cursor == sh.mapped.size() ||
                       (sh.mapped[sh.cursor].done == 0 && sh.mapped[sh.cursor].pending.empty() &&
                        sh.index.data_offset + sh.mapped[sh.cursor].entry.begin >= offset));
  if (offset != sh.next && !gap_ok) {
    return core::invalid_error(op_, "weights", sh.name + ": chunk at byte " + std::to_string(offset) +
                                                   " arrived, expected byte " + std::to_string(sh.next));
  }
  const std::uint64_t end = offset + bytes.size();
  if (end > sh.size) return core::invalid_error(op_, "weights", sh.name + ": more bytes arrived than the file size");
  sh.next = end;
  for (std::size_t i = sh.cursor; i < sh.mapped.size(); ++i) {
    Mapped& m = sh.mapped[i];
    const std::uint64_t t_begin = sh.index.data_offset + m.entry.begin, t_end = sh.index.data_offset + m.entry.end;
    if (t_begin >= end) break;
    if (t_end <= offset) continue;
    const std::uint64_t lo = std::max(t_begin, offset), hi = std::min(t_end, end);
    const std::uint8_t* src = bytes.data() + (lo - offset);
    std::uint64_t n = hi - lo;
    // an element split across chunks: complete it from the pending bytes first
    if (!m.pending.empty()) {
      const std::uint64_t need = std::min<std::uint64_t>(m.entry.elem - m.pending.size(), n);
      m.pending.insert(m.pending.end(), src, src + need);
      src += need;
      n -= need;
      if (m.pending.size() == m.entry.elem) {
        ATTN_TRY(write(m, m.pending.data(), m.done, 1));
        m.pending.clear();
      }
    }
    const std::uint64_t whole = n / m.entry.elem;
    ATTN_TRY(write(m, src, m.done, whole));
    m.pending.assign(src + whole * m.entry.elem, src + n);
  }
  while (sh.cursor < sh.mapped.size() && sh.mapped[sh.cursor].done == sh.mapped[sh.cursor].entry.count) ++sh.cursor;
  return core::Status::Ok();
}

core::Result<std::unique_ptr<Transformer>> HfCheckpointLoader::finish(LayerStream::Read read, LayerStream::Sizes sizes) {
  std::map<std::string, std::string> display;  // attnscope name -> file name, for messages
  for (const Shard& sh : shards_) {
    if (sh.next != sh.size) {
      return core::invalid_error(op_, "weights", sh.name + ": the file ended after " + std::to_string(sh.next) +
                                                     " of " + std::to_string(sh.size) + " bytes");
    }
    for (const Mapped& m : sh.mapped) {
      for (const TensorTarget& t : m.targets) display[t.name] = m.entry.name;
    }
  }
  auto name_of = [&](const std::string& s) {
    auto it = display.find(s);
    return it == display.end() ? s : it->second;
  };
  ATTN_TRY(params_.check_finite(op_, "weights", name_of));
  ModelOptions opt;
  opt.max_tokens = cfg_.description.embedding.max_positions;
  const auto vocab = cfg_.description.embedding.vocab_size;
  for (const std::int64_t id : cfg_.eos_ids) {
    if (id < 0 || id >= vocab) {
      return core::range_error(op_, end_ids_arg_,
                               std::string(end_ids_arg_) + ": eos_token_id " + std::to_string(id) +
                                   " is not an id of the vocabulary (0 to " + std::to_string(vocab - 1) +
                                   ", config.vocab_size " + std::to_string(vocab) + ")");
    }
    opt.end_ids.push_back(static_cast<std::int32_t>(id));
  }
  if (cfg_.family == HfFamily::kSeq2Seq) {
    // API.md: config.decoder_start_token_id, else generation_config.json's, else bos_token_id
    const std::int64_t start = cfg_.decoder_start >= 0 ? cfg_.decoder_start
                               : cfg_.generation_start >= 0 ? cfg_.generation_start
                                                            : cfg_.bos;
    if (start < 0 || start >= vocab) {
      return core::range_error(op_, "config",
                               "config: the decoder start token (decoder_start_token_id, else bos_token_id: " +
                                   std::to_string(start) + ") must be an id below config.vocab_size (" +
                                   std::to_string(vocab) + ")");
    }
    opt.decoder_start = static_cast<std::int32_t>(start);
    opt.length_penalty = cfg_.length_penalty;
    opt.early_stopping = cfg_.early_stopping;
    if (cfg_.description.embedding.positional == PositionalKind::kNone) opt.max_tokens = kMaxTokensLimit;
  }
  std::unique_ptr<LayerStream> stream;
  if (stream_) {
    std::map<std::string, TensorStorage> buffer;
    for (const std::string& name : buffer_names_) buffer[name] = storage_.at(name);
    std::vector<std::string> names;
    for (const Shard& sh : shards_) names.push_back(sh.name);
    stream = std::make_unique<LayerStream>(std::move(stream_layers_), std::move(names), std::move(buffer), std::move(read),
                                           sizes);
    if (embedding_table_) stream->set_tables(std::move(*embedding_table_), std::move(head_table_));
  }
  return Transformer::assemble(std::move(cfg_.description), std::move(encoder_), std::move(params_), opt, op_,
                               std::move(stream));
}

}  // namespace attnscope::model
