// transformer.cpp: creating a model (createModel's config, or assembled pieces) and running it
// (transformer.h). Layer: model.
#include "model/transformer.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "io/safetensors.h"
#include "model/heads.h"
#include "model/inside.h"
#include "model/limits.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace {

// createModel's weights file over the seeded parameters: any subset of them.
core::Status load_weights(Parameters& params, std::span<const std::uint8_t> bytes, bool bpe) {
  auto parsed = io::parse_safetensors(bytes, kOpCreate);
  if (!parsed.ok()) {
    const core::Status& e = parsed.status();
    return core::make_error(e.kind, kOpCreate, "weights", "weights: " + e.detail());
  }
  for (auto& t : parsed.value()) {
    std::vector<int> shape;
    for (const auto dim : t.shape) shape.push_back(static_cast<int>(dim));
    if (t.name == "embedding.weight" && !bpe) {
      return core::invalid_error(kOpCreate, "weights",
                                 "weights: tensor " + core::quote_name(t.name) +
                                     " needs tokenizer 'bpe' (word/char ids depend on the text; use config.embeddings)");
    }
    if (t.name == "embedding.weight" && params.tensors().at(t.name).shape != shape) {
      return core::range_error(kOpCreate, "weights",
                               "weights: tensor " + core::quote_name(t.name) + " has shape " + core::shape_text(shape) +
                                   ", expected " + core::shape_text(params.tensors().at(t.name).shape) +
                                   " (vocabulary size, dModel)");
    }
    ATTN_TRY(params.store(t.name, shape, std::move(t.data), kOpCreate, "weights"));
  }
  return core::Status::Ok();
}

}  // namespace

Transformer::Transformer(ModelDescription m, TextEncoder enc, Parameters params, ModelOptions opt)
    : m_(std::move(m)), enc_(std::move(enc)), params_(std::move(params)), opt_(opt) {}

Transformer::~Transformer() = default;

core::Result<std::unique_ptr<Transformer>> Transformer::create(ModelConfig c) {
  // 1. the description (sizes, limits, defaults), then the user's embedding rows
  auto described = describe(c);
  if (!described.ok()) return described.status();
  ModelDescription m = std::move(described).value();
  for (const auto& [token, row] : c.embeddings) {
    const std::string arg = "embeddings[" + core::quote_name(token) + "]";
    ATTN_TRY(ops::check_array(kOpCreate, "", arg.c_str(), row, ops::Dims{"dModel", m.d_model}));
  }
  // 2. the tokenizer: a BPE vocabulary makes embedding.weight loadable
  const bool bpe = c.tokenizer == TokenizerKind::kBpe;
  TextEncoder enc = TextEncoder::word_or_char(c.tokenizer == TokenizerKind::kChar);
  if (bpe) {
    auto e = TextEncoder::bpe(c.bpe_vocab, c.bpe_merges, kOpCreate);
    if (!e.ok()) return e.status();
    enc = std::move(e).value();
    m.embedding.vocab_size = enc.vocab_size(RunVocab{});
  }
  // 3. parameters: seeded, then the file's over them
  auto declared = Parameters::declare(m, Parameters::Init::kXavier, c.seed, kOpCreate);
  if (!declared.ok()) return declared.status();
  Parameters params = std::move(declared).value();
  params.seed(c.seed);
  if (!c.weights.empty()) ATTN_TRY(load_weights(params, c.weights, bpe));
  // 4. user rows: by text (word/char) or by vocabulary entry (bpe)
  UserRows user;
  for (auto& [token, row] : c.embeddings) {
    if (!bpe) {
      user.by_text[token] = std::move(row);
      continue;
    }
    const std::int32_t id = enc.id_of(token);
    if (id < 0) {
      return core::range_error(kOpCreate, "embeddings",
                               "embeddings: token " + core::quote_name(token) +
                                   " is not in the BPE vocabulary (use the vocab entry, e.g. \"Ġjourney\")");
    }
    user.by_id[id] = std::move(row);
  }
  ModelOptions opt{c.seed, c.top_k, c.max_tokens, {}};
  std::unique_ptr<Transformer> t(new Transformer(std::move(m), std::move(enc), std::move(params), opt));
  t->user_ = std::move(user);
  c.embeddings.clear();
  c.weights.clear();
  c.bpe_vocab.clear();
  c.bpe_merges.clear();
  t->cfg_ = std::move(c);
  t->bind_weights();
  return t;
}

core::Result<std::unique_ptr<Transformer>> Transformer::assemble(ModelDescription m, TextEncoder encoder,
                                                                 Parameters params, ModelOptions options,
                                                                 const char* op, std::unique_ptr<LayerStream> stream) {
  ATTN_TRY(params.check_complete(op, "weights", [](const std::string& s) { return s; }));
  std::unique_ptr<Transformer> t(new Transformer(std::move(m), std::move(encoder), std::move(params), options));
  t->stream_ = std::move(stream);
  t->bind_weights();
  return t;
}

void Transformer::bind_weights() {
  auto bind = [&](const StackSpec& spec, StackWeights& w) {
    for (const BlockSpec& b : spec.blocks) {
      BlockWeights bw;
      if (b.kind == BlockKind::kAttention) {
        auto mha = [&](const std::string& p) {
          attention::MhaWeights x;
          x.wq = params_.weight(p + "wq"), x.wk = params_.weight(p + "wk"), x.wv = params_.weight(p + "wv");
          x.wo = params_.weight(p + "wo");
          x.bq = params_[p + "bq"], x.bk = params_[p + "bk"], x.bv = params_[p + "bv"], x.bo = params_[p + "bo"];
          return x;
        };
        bw.self_attn = mha(b.prefix + "self_attn.");
        if (b.cross) bw.cross_attn = mha(b.prefix + "cross_attn.");
        bw.ff = FeedForwardWeights{params_.weight(b.prefix + "linear1.weight"), params_[b.prefix + "linear1.bias"],
                                   params_.weight(b.prefix + "linear2.weight"), params_[b.prefix + "linear2.bias"],
                                   params_.weight(b.prefix + "linear3.weight"), params_[b.prefix + "linear3.bias"]};
        for (int k = 0; k < (b.cross ? 3 : 2); ++k) {
          const std::string p = b.prefix + "norm" + std::to_string(k + 1) + ".";
          bw.norm[k] = NormWeights{params_[p + "weight"], params_[p + "bias"]};
        }
        bw.post[0] = NormWeights{params_[b.prefix + "post_attn_norm.weight"], {}};
        bw.post[1] = NormWeights{params_[b.prefix + "post_ff_norm.weight"], {}};
        bw.q_norm = params_[b.prefix + "self_attn.q_norm.weight"];
        bw.k_norm = params_[b.prefix + "self_attn.k_norm.weight"];
        bw.relative_bias = params_[b.prefix + "self_attn.relative_bias"];
      }
      w.blocks.push_back(bw);
    }
    if (spec.final_norm) w.final_norm = NormWeights{params_[spec.name + ".norm.weight"], params_[spec.name + ".norm.bias"]};
  };
  bind(m_.main, main_w_);
  if (m_.has_source) bind(m_.source, source_w_);
  if (stream_) {  // every block reads the one layer buffer (layer 0's parameters), filled before its forward
    stream_->bind(&params_);
    for (std::size_t i = 1; i < main_w_.blocks.size(); ++i) main_w_.blocks[i] = main_w_.blocks[0];
    main_w_.stream = stream_.get();
  }
}

std::vector<std::pair<std::string, std::vector<int>>> Transformer::parameter_shapes() const {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  for (const auto& [name, t] : params_.tensors()) {
    if (!t.data.empty() || !t.half.empty() || !t.q8.empty() || t.streamed) out.emplace_back(name, t.shape);
  }
  return out;
}

EmbedArgs Transformer::embed_args(const char* op) const {
  EmbedArgs a;
  a.m = &m_;
  a.params = &params_;
  a.encoder = &enc_;
  a.user = &user_;
  a.seed = opt_.seed;
  a.max_tokens = opt_.max_tokens;
  a.op = op;
  a.stream = stream_.get();
  return a;
}

core::Status Transformer::run_heads(const EmbedArgs& ea, const RunVocab& vocab, const RunOptions& o, int k,
                                    RunTrace& out) const {
  SideTrace& side = out.main;
  const int n = side.n, d = m_.d_model;
  const auto D = static_cast<std::size_t>(d);
  // the rows, in this order: next's (the last real position), the lens' (every layer's every position), logProbs'
  // (every real position but the last)
  const int next_rows = m_.head.next_token && k > 0 ? 1 : 0;
  const int lens_rows = o.lens ? static_cast<int>(side.layers.size()) * n : 0;
  const int prob_rows = o.log_probs ? std::max(side.n_real - 1, 0) : 0;
  if (next_rows + lens_rows + prob_rows == 0) return core::Status::Ok();
  // the lens reads each layer's output through the final norm (GPT-2's ln_f) where the stack has one, as `next` reads
  // the last block through it
  std::vector<float> lens_h;
  if (o.lens) {
    lens_h.reserve(static_cast<std::size_t>(lens_rows) * D);
    for (LayerTrace& layer : side.layers) {
      const std::vector<float> h = m_.main.final_norm ? normalize(layer.output, n, d, main_w_.final_norm,
                                                                  m_.main.final_norm_eps, m_.main.final_norm_kind)
                                                      : layer.output;
      lens_h.insert(lens_h.end(), h.begin(), h.end());
      layer.lens_ids.clear();
      layer.lens_probs.clear();
      layer.lens_tokens.clear();
    }
  }
  if (o.log_probs) out.log_probs.reserve(static_cast<std::size_t>(prob_rows));
  const int first_lens = next_rows, first_prob = next_rows + lens_rows;
  const auto output_row = [&](int i) {
    return std::span<const float>(side.output.data() + static_cast<std::size_t>(i) * D, D);
  };
  return lm_logits_rows(
      ea, vocab, first_prob + prob_rows,
      [&](int r) {
        if (r < first_lens) return output_row(side.n_real - 1);
        if (r < first_prob) return std::span<const float>(lens_h.data() + static_cast<std::size_t>(r - first_lens) * D, D);
        return output_row(r - first_prob);
      },
      [&](int r, const std::vector<double>& logits) -> core::Status {
        if (r < first_lens) {
          out.next = top_k(logits, k, ea, vocab);
        } else if (r < first_prob) {
          LayerTrace& layer = side.layers[static_cast<std::size_t>((r - first_lens) / n)];
          const TopK t = top_k(logits, *o.lens, ea, vocab);
          layer.lens_k = static_cast<int>(t.ids.size());  // k capped at the vocabulary size
          layer.lens_ids.insert(layer.lens_ids.end(), t.ids.begin(), t.ids.end());
          layer.lens_probs.insert(layer.lens_probs.end(), t.probs.begin(), t.probs.end());
          layer.lens_tokens.insert(layer.lens_tokens.end(), t.tokens.begin(), t.tokens.end());
        } else {
          const int i = r - first_prob;
          const std::int32_t id = side.ids[static_cast<std::size_t>(i) + 1];
          if (id < 0 || static_cast<std::size_t>(id) >= logits.size()) {
            return core::invalid_error(kOpRun, "logProbs", "logProbs: token " + std::to_string(i + 1) +
                                                              " has no row in the next-token head");
          }
          out.log_probs.push_back(static_cast<float>(log_prob(logits, id)));
        }
        return core::Status::Ok();
      });
}

EmbedArgs Transformer::source_args(const EmbedArgs& a) const {
  EmbedArgs s = a;
  if (m_.embedding.per_side) s.side = "source.";
  return s;
}

core::Result<RunTrace> Transformer::run_impl(std::string_view source, std::string_view target, bool two_sided,
                                             const RunOptions& o, const std::vector<std::int32_t>* target_ids) const {
  if (o.pad_to < 0) return core::check_non_negative(kOpRun, "padTo", o.pad_to);
  if (o.pad_multiple < 0) return core::check_non_negative(kOpRun, "padMultiple", o.pad_multiple);
  if (o.top_k && *o.top_k < 0) return core::check_non_negative(kOpRun, "topK", *o.top_k);
  if (o.positional_rows < 0) return core::check_non_negative(kOpRun, "positionalTable", o.positional_rows);
  if (o.positional_rows > kMaxPositions) {
    return core::range_error(kOpRun, "positionalTable",
                             "positionalTable (" + std::to_string(o.positional_rows) + ") must be at most " +
                                 std::to_string(kMaxPositions));
  }
  if (o.pad_multiple > kMaxTokensLimit) {
    return core::range_error(kOpRun, "padMultiple",
                             "padMultiple (" + std::to_string(o.pad_multiple) + ") must be at most " +
                                 std::to_string(kMaxTokensLimit));
  }
  if (o.lens && *o.lens < 1) return core::check_positive(kOpRun, "lens", *o.lens);
  if (o.lens && !m_.head.next_token) {
    return core::invalid_error(kOpRun, "lens",
                               "lens needs a language-model head (the logit lens reads each layer through it); this "
                               "model has none");
  }
  // (layer, head) pairs of the main side (run options ablate and heads): each in range, or a RangeError naming it
  const auto check_pairs = [&](const std::vector<std::pair<int, int>>& pairs, const char* name) -> core::Status {
    const auto layers = static_cast<int>(m_.main.blocks.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto [layer, head] = pairs[i];
      const std::string at = std::string(name) + "[" + std::to_string(i) + "]";
      if (layer < 0 || layer >= layers) {
        return core::range_error(kOpRun, name, at + ".layer (" + std::to_string(layer) +
                                                   ") must be an integer from 0 to " + std::to_string(layers - 1));
      }
      const int heads = m_.main.blocks[static_cast<std::size_t>(layer)].kind == BlockKind::kSimple ? 1 : m_.num_heads;
      if (head < 0 || head >= heads) {
        return core::range_error(kOpRun, name, at + ".head (" + std::to_string(head) +
                                                   ") must be an integer from 0 to " + std::to_string(heads - 1) +
                                                   " (layer " + std::to_string(layer) + " has " +
                                                   std::to_string(heads) + (heads == 1 ? " head)" : " heads)"));
      }
    }
    return core::Status::Ok();
  };
  std::vector<std::uint8_t> head_keep;  // [main blocks * num_heads], 0 = ablated
  if (!o.ablate.empty()) {
    ATTN_TRY(check_pairs(o.ablate, "ablate"));
    head_keep.assign(m_.main.blocks.size() * static_cast<std::size_t>(m_.num_heads), 1);
    for (const auto& [layer, head] : o.ablate) {
      head_keep[static_cast<std::size_t>(layer) * static_cast<std::size_t>(m_.num_heads) + static_cast<std::size_t>(head)] = 0;
    }
  }
  const bool tiled = o.heads_mode != RunOptions::Heads::kAll;
  if (tiled) {
    if (o.level != TraceLevel::kNone) {
      return core::invalid_error(kOpRun, "heads",
                                 "heads (a list or 'none') needs trace 'none': the layers that are not in `full` "
                                 "keep no attention weights");
    }
    ATTN_TRY(check_pairs(o.heads, "heads"));
  }
  const bool keep_outputs = o.layer_outputs.value_or(!tiled);
  if (o.summaries && o.summary_top_k < 0) return core::check_non_negative(kOpRun, "summaries.topK", o.summary_top_k);
  std::vector<std::vector<float>> head_values;  // ablate[i].mean, per main block (inside.h)
  RunTrace out;
  out.d_model = m_.d_model;
  out.num_heads = m_.num_heads;
  out.head_dim = model_head_dim(m_);  // not d_model / num_heads: Qwen3 and Gemma set head_dim
  out.d_ff = m_.d_ff;
  const EmbedArgs ea = embed_args(kOpRun);
  RunVocab vocab;
  auto stack_args = [&](const StackSpec& spec, const StackWeights& w, const std::vector<int>& full, const char* what) {
    StackArgs s;
    s.m = &m_;
    s.spec = &spec;
    s.w = &w;
    s.full_all = o.level == TraceLevel::kFull;
    s.weights = o.level != TraceLevel::kNone;
    s.full_layers = &full;
    s.op = kOpRun;
    s.what = what;
    if (&spec == &m_.main) {
      s.head_keep = head_keep;
      s.tiled = tiled;
      s.heads = o.heads;
      s.head_values = head_values;
      s.keep_outputs = keep_outputs || o.lens.has_value();  // the lens reads them (dropped after it when not asked)
    }
    s.summaries = o.summaries;
    s.top_k = o.summary_top_k;
    return s;
  };
  if (m_.has_source) {
    const char* src_what = two_sided ? "source" : "text";
    const char* tgt_what = two_sided ? "target" : "text";
    auto src = embed(source_args(ea), source, src_what, vocab, o.pad_to, o.pad_multiple);
    if (!src.ok()) return src.status();
    SideInput in;  // a checkpoint's target: [decoder start] + the target's ids without special tokens
    if (opt_.decoder_start >= 0) {
      in.post_process = false;
      in.begin_id = opt_.decoder_start;
      in.ids = target_ids;
    } else if (m_.target_bos) {
      in.begin_id = enc_.specials().bos;
    }
    auto tgt = embed(ea, target, tgt_what, vocab, o.pad_to, o.pad_multiple, in);
    if (!tgt.ok()) return tgt.status();
    out.has_source = true;
    out.source = std::move(src).value();
    out.main = std::move(tgt).value();
    ATTN_TRY(ablation_values(m_, o, out.main.n, head_keep, head_values));
    if (o.pad_multiple > 0) {
      // both sides padded to the same length, as padTo does
      const int n = std::max(out.source.n, out.main.n);
      if (out.source.n != n || out.main.n != n) {
        RunOptions same = o;
        same.pad_multiple = 0;
        same.pad_to = n;
        return run_impl(source, target, two_sided, same, target_ids);
      }
    }
    ATTN_TRY(run_stack(stack_args(m_.source, source_w_, o.full_source_layers, "source"), out.source, nullptr));
    ATTN_TRY(run_stack(stack_args(m_.main, main_w_, o.full_layers, "target"), out.main, &out.source));
  } else {
    auto side = embed(ea, source, "text", vocab, o.pad_to, o.pad_multiple);
    if (!side.ok()) return side.status();
    out.main = std::move(side).value();
    ATTN_TRY(ablation_values(m_, o, out.main.n, head_keep, head_values));
    ATTN_TRY(run_stack(stack_args(m_.main, main_w_, o.full_layers, "text"), out.main, nullptr));
  }
  for (const auto& [layer, head] : o.heads) {  // the requested maps, in the order asked (a pair may repeat)
    LayerTrace& t = out.main.layers[static_cast<std::size_t>(layer)];
    for (std::size_t i = 0; i < t.head_maps_heads.size(); ++i) {
      if (t.head_maps_heads[i] == head) {
        out.heads.push_back(RunTrace::HeadMap{layer, head, t.head_maps[i]});
        break;
      }
    }
  }
  for (LayerTrace& t : out.main.layers) {
    t.head_maps.clear();
    t.head_maps_heads.clear();
  }
  const int k = o.top_k.value_or(opt_.top_k);
  if (o.log_probs && !m_.head.next_token) {
    return core::invalid_error(kOpRun, "logProbs",
                               "logProbs needs a next-token head (a language model or an encoder-decoder); this "
                               "model has none");
  }
  // next, the lens and logProbs: one pass over a streamed head's table (per batch of rows: heads.h)
  ATTN_TRY(run_heads(ea, vocab, o, k, out));
  if (o.lens && !keep_outputs) {
    for (LayerTrace& t : out.main.layers) {
      if (!t.full) std::vector<float>().swap(t.output);
    }
  }
  if (m_.head.mlm) {
    auto masks = mask_predictions(ea, out.main, k);
    if (!masks.ok()) return masks.status();
    out.masks = std::move(masks).value();
  }
  if (o.positional_rows > 0) {
    auto pe = positional_rows(ea, o.positional_rows);
    if (!pe.ok()) return pe.status();
    out.positional_table = std::move(pe).value();
    out.positional_rows = o.positional_rows;
  }
  return out;
}

core::Result<RunTrace> Transformer::run(std::string_view text, const RunOptions& options) const {
  return run_impl(text, text, false, options);
}

core::Result<RunTrace> Transformer::run(std::string_view source, std::string_view target,
                                        const RunOptions& options) const {
  if (!m_.has_source) {
    return core::type_error(kOpRun, "text",
                            "text must be a string for architecture '" + m_.architecture +
                                "' ({ source, target } needs 'encoder-decoder')");
  }
  return run_impl(source, target, true, options);
}

core::Result<RunTrace> Transformer::run_ids(std::string_view source, const std::vector<std::int32_t>& target_ids,
                                            const RunOptions& options) const {
  if (!m_.has_source || opt_.decoder_start < 0) {
    return core::type_error(kOpRun, "targetIds",
                            "targetIds needs an encoder-decoder checkpoint (loadPretrained t5, bart, marian, ...)");
  }
  return run_impl(source, "", true, options, &target_ids);
}

core::Result<RunTrace> Transformer::run(std::string_view text, TraceLevel level, int pad_to) const {
  RunOptions o;
  o.level = level;
  o.pad_to = pad_to;
  return run(text, o);
}

core::Result<RunTrace> Transformer::run(std::string_view source, std::string_view target, TraceLevel level,
                                        int pad_to) const {
  RunOptions o;
  o.level = level;
  o.pad_to = pad_to;
  return run(source, target, o);
}

}  // namespace attnscope::model
