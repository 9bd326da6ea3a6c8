// inside.cpp: mean ablation values, activation patching, ablation sweeps and direct logit attribution (inside.h).
// Layer: model.
#include "model/inside.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.h"
#include "core/text.h"
#include "model/block.h"
#include "model/heads.h"
#include "model/stack.h"
#include "model/transformer.h"
#include "ops/linear.h"

namespace attnscope::model {

namespace {

// Writes head h's columns of values [n, heads·hd] from src: hd numbers (every row) or n·hd (row i each).
void put_head(std::vector<float>& values, int n, int inner, int h, int hd, std::span<const float> src) {
  const bool per_row = src.size() != static_cast<std::size_t>(hd);
  for (int i = 0; i < n; ++i) {
    const float* from = src.data() + (per_row ? static_cast<std::size_t>(i) * static_cast<std::size_t>(hd) : 0);
    std::copy_n(from, hd, values.begin() + static_cast<std::ptrdiff_t>(i) * inner + static_cast<std::ptrdiff_t>(h) * hd);
  }
}

// A layer's heads' weights · V [n, inner]: the concat, or a 'simple' layer's output (its one head).
const std::vector<float>& heads_out(const LayerTrace& t) {
  return t.attention.concat.empty() ? t.attention.output : t.attention.concat;
}

// Head h's columns of a trace's concat [n, inner] as [n, hd].
std::vector<float> head_columns(const std::vector<float>& concat, int n, int inner, int h, int hd) {
  std::vector<float> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(hd));
  for (int i = 0; i < n; ++i) {
    std::copy_n(concat.begin() + static_cast<std::ptrdiff_t>(i) * inner + static_cast<std::ptrdiff_t>(h) * hd, hd,
                out.begin() + static_cast<std::ptrdiff_t>(i) * hd);
  }
  return out;
}

}  // namespace

core::Status ablation_values(const ModelDescription& m, const RunOptions& o, int n, std::vector<std::uint8_t>& head_keep,
                             std::vector<std::vector<float>>& values) {
  if (std::all_of(o.ablate_values.begin(), o.ablate_values.end(), [](const auto& v) { return v.empty(); })) {
    return core::Status::Ok();
  }
  const std::size_t layers = m.main.blocks.size();
  values.assign(layers, {});
  for (std::size_t i = 0; i < o.ablate_values.size() && i < o.ablate.size(); ++i) {
    const std::vector<float>& v = o.ablate_values[i];
    if (v.empty()) continue;
    const auto l = static_cast<std::size_t>(o.ablate[i].first);
    const int h = o.ablate[i].second;
    const int hd = head_dim_of(m, l), inner = heads_of(m, l) * hd;
    if (v.size() != static_cast<std::size_t>(hd) && v.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(hd)) {
      return core::range_error(kOpRun, "ablate",
                               "ablate[" + std::to_string(i) + "].mean has " + std::to_string(v.size()) +
                                   " numbers; layer " + std::to_string(l) + "'s heads need headDim (" + std::to_string(hd) +
                                   ") or n·headDim (" + std::to_string(n * hd) + ", n = " + std::to_string(n) + ")");
    }
    if (!std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); })) {
      return core::range_error(kOpRun, "ablate", "ablate[" + std::to_string(i) + "].mean has a non-finite value");
    }
    if (values[l].empty()) values[l].assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(inner), 0.0f);
    put_head(values[l], n, inner, h, hd, v);
    head_keep[l * static_cast<std::size_t>(m.num_heads) + static_cast<std::size_t>(h)] = 2;
  }
  return core::Status::Ok();
}

Inside::Inside(const Transformer& t, const char* op) : t_(t), op_(op), ea_(t.embed_args(op)) {}

namespace {

// The checks every operation here shares: a language model with one stack.
core::Status check_model(const ModelDescription& m, const char* op) {
  if (m.has_source) return core::invalid_error(op, "model", "encoder-decoder models are not supported (one stack only)");
  if (!m.head.next_token) {
    return core::invalid_error(op, "model", "the model has no language-model head (the metric reads next-token logits)");
  }
  return core::Status::Ok();
}

}  // namespace

// The text through the whole stack, every layer traced in full (inputs and concat are what sites read).
static core::Result<SideTrace> traced(const ModelDescription& m, const StackWeights& w, const EmbedArgs& ea, RunVocab& vocab, std::string_view text, const char* what) {
  auto side = embed(ea, text, what, vocab, 0, 0);
  if (!side.ok()) return side.status();
  SideTrace s = std::move(side).value();
  StackArgs a;
  a.m = &m;
  a.spec = &m.main;
  a.w = &w;
  a.op = ea.op;
  a.what = what;
  ATTN_TRY(run_stack(a, s, nullptr));
  return s;
}

namespace {

core::Result<std::int32_t> resolve_token(const EmbedArgs& ea, RunVocab& vocab, const TokenChoice& c, const char* op,
                                         const std::string& arg) {
  const std::int32_t count = lm_vocab_size(ea, vocab);
  if (c.text.empty()) {
    if (c.id < 0 || c.id >= count) {
      return core::range_error(op, "tokens", arg + " (" + std::to_string(c.id) + ") must be a token id from 0 to " +
                                                 std::to_string(count - 1));
    }
    return c.id;
  }
  const TextEncoder& enc = *ea.encoder;
  if (!enc.fixed_vocabulary()) {
    const auto it = vocab.ids.find(c.text);
    if (it == vocab.ids.end()) {
      return core::invalid_error(op, "tokens", arg + " (" + core::quote(c.text) +
                                                   ") does not occur in the text (a word or character model's "
                                                   "vocabulary is the text's own tokens)");
    }
    return it->second;
  }
  if (const std::int32_t id = enc.id_of(c.text); id >= 0 && id < count) return id;  // its vocabulary spelling
  RunVocab none;
  auto r = enc.encode(c.text, none, op, "tokens");
  if (!r.ok()) return r.status();
  const SpecialIds& sp = enc.specials();
  std::vector<std::int32_t> ids;
  for (const std::int32_t id : r.value().ids) {
    if (id != sp.bos && id != sp.eos && id != sp.cls && id != sp.sep) ids.push_back(id);
  }
  if (ids.size() != 1) {
    return core::invalid_error(op, "tokens", arg + " (" + core::quote(c.text) + ") is " + std::to_string(ids.size()) +
                                                 " tokens, not one (give an id or the vocabulary's spelling)");
  }
  return ids[0];
}

// Token id's logit for hidden state h from its head column u (lm_direction): h · u, + lm_head.bias[id], soft-capped
// as lm_logits does; one dot product instead of the whole vocabulary's.
double token_logit(const EmbedArgs& ea, const std::vector<double>& u, std::int32_t id, std::span<const float> h,
                   bool softcap = true) {
  double z = 0.0;
  for (std::size_t c = 0; c < u.size(); ++c) z += u[c] * static_cast<double>(h[c]);
  if (ea.m->head.lm_head) {
    const auto b = (*ea.params)["lm_head.bias"];
    if (!b.empty()) z += b[static_cast<std::size_t>(id)];
  }
  if (const double c = ea.m->head.softcap; softcap && c > 0.0) z = c * std::tanh(z / c);
  return z;
}

}  // namespace

core::Status Inside::cache_directions() {
  for (int k = 0; k < 2; ++k) {
    if (ids_[k] < 0) continue;
    auto u = lm_direction(ea_, vocab_, ids_[k]);
    if (!u.ok()) return u.status();
    dirs_[k] = std::move(u).value();
  }
  return core::Status::Ok();
}

core::Result<double> Inside::metric_of(const SideTrace& s) const {
  const auto d = static_cast<std::size_t>(t_.m_.d_model);
  auto row = [&](int i) { return std::span<const float>(s.output.data() + static_cast<std::size_t>(i) * d, d); };
  if (metric_.kind == Metric::Kind::kLoss) {
    // every position's logits (one pass over a streamed head's table per batch of rows: heads.h)
    double sum = 0.0;
    ATTN_TRY(lm_logits_rows(ea_, vocab_, s.n_real - 1, row, [&](int i, const std::vector<double>& logits) {
      sum -= log_prob(logits, main_.ids[static_cast<std::size_t>(i) + 1]);
      return core::Status::Ok();
    }));
    return sum / static_cast<double>(s.n_real - 1);
  }
  const std::span<const float> h = row(s.n_real - 1);
  const double a = token_logit(ea_, dirs_[0], ids_[0], h);
  return metric_.kind == Metric::Kind::kLogit ? a : a - token_logit(ea_, dirs_[1], ids_[1], h);
}

core::Result<double> Inside::forward_from(std::size_t layer, std::vector<float> x, std::span<const std::uint8_t> keep,
                                          std::span<const std::vector<float>> values) const {
  SideTrace s;
  s.n = s.n_real = main_.n;
  s.input = std::move(x);
  StackArgs a;
  a.m = &t_.m_;
  a.spec = &t_.m_.main;
  a.w = &t_.main_w_;
  a.full_all = false;
  a.weights = false;
  a.head_keep = keep;
  a.head_values = values;
  a.first_block = layer;
  a.op = op_;
  ATTN_TRY(run_stack(a, s, nullptr));
  return metric_of(s);
}

core::Result<std::vector<float>> Inside::run(int begin, int end) const {
  if (begin < 0 || end > sites() || begin > end) {
    return core::range_error(op_, "sites", "sites [" + std::to_string(begin) + ", " + std::to_string(end) +
                                               ") must lie within [0, " + std::to_string(sites()) + ")");
  }
  const ModelDescription& m = t_.m_;
  const int n = main_.n;
  const auto layers = m.main.blocks.size();
  const auto H = static_cast<std::size_t>(m.num_heads);
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(end - begin));
  for (int site = begin; site < end; ++site) {
    const auto l = static_cast<std::size_t>(site / cols_);
    const int c = site % cols_;
    std::vector<std::uint8_t> keep;
    std::vector<std::vector<float>> values;
    std::vector<float> x = main_.layers[l].input;
    if (kind_ == Sites::kPatchResidual) {
      const auto d = static_cast<std::size_t>(m.d_model);
      std::copy_n(clean_side_.layers[l].input.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c) * d), d,
                  x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c) * d));
    } else if (c < heads_of(m, l)) {
      keep.assign(layers * H, 1);
      const int hd = head_dim_of(m, l), inner = heads_of(m, l) * hd;
      if (kind_ == Sites::kPatchHeads) {
        values.assign(layers, {});
        values[l] = heads_out(main_.layers[l]);
        put_head(values[l], n, inner, c, hd, head_columns(heads_out(clean_side_.layers[l]), n, inner, c, hd));
        keep[l * H + static_cast<std::size_t>(c)] = 2;
      } else if (!means_.empty()) {
        values.assign(layers, {});
        values[l].assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(inner), 0.0f);
        const std::size_t at = (l * H + static_cast<std::size_t>(c)) * static_cast<std::size_t>(hd);
        put_head(values[l], n, inner, c, hd, std::span<const float>(means_.data() + at, static_cast<std::size_t>(hd)));
        keep[l * H + static_cast<std::size_t>(c)] = 2;
      } else {
        keep[l * H + static_cast<std::size_t>(c)] = 0;
      }
    } else {
      out.push_back(static_cast<float>(base_));  // a 'simple' layer has one head: the others do not exist
      continue;
    }
    auto r = forward_from(l, std::move(x), keep, values);
    if (!r.ok()) return r.status();
    out.push_back(static_cast<float>(r.value()));
  }
  return out;
}

core::Result<HeadMeans> Inside::head_means(const Transformer& t, const std::vector<std::string>& texts) {
  const char* op = "headMeans";
  const ModelDescription& m = t.m_;
  if (m.has_source) return core::invalid_error(op, "model", "encoder-decoder models are not supported (one stack only)");
  if (texts.empty()) return core::invalid_error(op, "texts", "texts must hold at least one text");
  HeadMeans out;
  out.layers = static_cast<int>(m.main.blocks.size());
  out.heads = m.num_heads;
  out.head_dim = head_dim_of(m, 0);
  for (std::size_t l = 0; l < m.main.blocks.size(); ++l) {
    if (head_dim_of(m, l) != out.head_dim) {
      return core::invalid_error(op, "model", "every layer's heads must have the same width");
    }
  }
  const auto L = static_cast<std::size_t>(out.layers), H = static_cast<std::size_t>(out.heads),
             hd = static_cast<std::size_t>(out.head_dim);
  std::vector<double> sum(L * H * hd, 0.0);
  const EmbedArgs ea = t.embed_args(op);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    RunVocab vocab;
    const std::string what = "texts[" + std::to_string(i) + "]";
    auto s = traced(m, t.main_w_, ea, vocab, texts[i], what.c_str());
    if (!s.ok()) return s.status();
    const SideTrace& side = s.value();
    for (std::size_t l = 0; l < L; ++l) {
      const std::vector<float>& c = heads_out(side.layers[l]);
      const std::size_t inner = static_cast<std::size_t>(heads_of(m, l)) * hd;
      for (int p = 0; p < side.n_real; ++p) {
        for (std::size_t j = 0; j < inner; ++j) sum[l * H * hd + j] += c[static_cast<std::size_t>(p) * inner + j];
      }
    }
    out.positions += side.n_real;
  }
  out.values.resize(sum.size());
  for (std::size_t j = 0; j < sum.size(); ++j) out.values[j] = static_cast<float>(sum[j] / out.positions);
  return out;
}

core::Result<std::unique_ptr<Inside>> Inside::patching(const Transformer& t, std::string_view clean,
                                                       std::string_view corrupted, const Metric& metric, bool residual) {
  std::unique_ptr<Inside> in(new Inside(t, "patch"));
  ATTN_TRY(check_model(t.m_, in->op_));
  auto c = traced(t.m_, t.main_w_, in->ea_, in->vocab_, clean, "clean");
  if (!c.ok()) return c.status();
  auto x = traced(t.m_, t.main_w_, in->ea_, in->vocab_, corrupted, "corrupted");
  if (!x.ok()) return x.status();
  in->clean_side_ = std::move(c).value();
  in->main_ = std::move(x).value();
  if (in->clean_side_.n != in->main_.n) {
    return core::invalid_error(in->op_, "corrupted",
                               "corrupted has " + std::to_string(in->main_.n) + " tokens and clean " +
                                   std::to_string(in->clean_side_.n) + " (patching needs prompts of the same length)");
  }
  in->kind_ = residual ? Sites::kPatchResidual : Sites::kPatchHeads;
  in->metric_ = metric;
  for (int k = 0; k < (metric.kind == Metric::Kind::kLogitDiff ? 2 : 1); ++k) {
    if (metric.kind == Metric::Kind::kLoss) break;
    auto id = resolve_token(in->ea_, in->vocab_, k == 0 ? metric.a : metric.b, in->op_, "tokens[" + std::to_string(k) + "]");
    if (!id.ok()) return id.status();
    in->ids_[k] = id.value();
  }
  ATTN_TRY(in->cache_directions());
  in->rows_ = static_cast<int>(t.m_.main.blocks.size());
  in->cols_ = residual ? in->main_.n : t.m_.num_heads;
  auto base = in->metric_of(in->main_);
  if (!base.ok()) return base.status();
  in->base_ = base.value();
  // the loss metric reads the ids of the run it scores: the clean run's own
  SideTrace keep = std::move(in->main_);
  in->main_ = std::move(in->clean_side_);
  auto cm = in->metric_of(in->main_);
  in->clean_side_ = std::move(in->main_);
  in->main_ = std::move(keep);
  if (!cm.ok()) return cm.status();
  in->clean_ = cm.value();
  return in;
}

core::Result<std::unique_ptr<Inside>> Inside::ablation(const Transformer& t, std::string_view text, const Metric& metric,
                                                       std::vector<float> means) {
  std::unique_ptr<Inside> in(new Inside(t, "ablationSweep"));
  ATTN_TRY(check_model(t.m_, in->op_));
  const ModelDescription& m = t.m_;
  const std::size_t L = m.main.blocks.size();
  if (!means.empty()) {
    const std::size_t want = L * static_cast<std::size_t>(m.num_heads) * static_cast<std::size_t>(head_dim_of(m, 0));
    if (means.size() != want) {
      return core::range_error(in->op_, "means", "means has " + std::to_string(means.size()) + " numbers, expected " +
                                                     std::to_string(want) + " (layers·heads·headDim, as headMeans gives)");
    }
  }
  auto s = traced(m, t.main_w_, in->ea_, in->vocab_, text, "text");
  if (!s.ok()) return s.status();
  in->main_ = std::move(s).value();
  in->kind_ = Sites::kAblateHeads;
  in->metric_ = metric;
  in->means_ = std::move(means);
  if (metric.kind == Metric::Kind::kLoss && in->main_.n_real < 2) {
    return core::invalid_error(in->op_, "text", "the loss needs a text of at least 2 tokens");
  }
  if (metric.kind != Metric::Kind::kLoss) {
    for (int k = 0; k < (metric.kind == Metric::Kind::kLogitDiff ? 2 : 1); ++k) {
      auto id = resolve_token(in->ea_, in->vocab_, k == 0 ? metric.a : metric.b, in->op_, "tokens[" + std::to_string(k) + "]");
      if (!id.ok()) return id.status();
      in->ids_[k] = id.value();
    }
  }
  ATTN_TRY(in->cache_directions());
  in->rows_ = static_cast<int>(L);
  in->cols_ = m.num_heads;
  auto base = in->metric_of(in->main_);
  if (!base.ok()) return base.status();
  in->base_ = in->clean_ = base.value();
  return in;
}

core::Result<Attribution> Inside::attribution(const Transformer& t, std::string_view text, const TokenChoice& token) {
  const char* op = "logitAttribution";
  const ModelDescription& m = t.m_;
  ATTN_TRY(check_model(m, op));
  for (const BlockSpec& b : m.main.blocks) {
    if (b.kind == BlockKind::kAttention && (!b.norm_first || b.post_norms)) {
      return core::invalid_error(op, "model",
                                 "the model normalises after its sub-blocks (post-norm or output norms); direct logit "
                                 "attribution needs a head's output to reach the residual stream unchanged");
    }
  }
  const EmbedArgs ea = t.embed_args(op);
  RunVocab vocab;
  auto s = traced(m, t.main_w_, ea, vocab, text, "text");
  if (!s.ok()) return s.status();
  const SideTrace& side = s.value();
  auto id = resolve_token(ea, vocab, token, op, "token");
  if (!id.ok()) return id.status();
  Attribution out;
  out.id = id.value();
  out.layers = static_cast<int>(m.main.blocks.size());
  out.heads = m.num_heads;
  const int d = m.d_model, p = side.n_real - 1;
  const auto D = static_cast<std::size_t>(d);
  // 1. the direction: gamma ⊙ W_U[:, id] (the final norm's weight folded in), and the frozen scale
  auto direction = lm_direction(ea, vocab, out.id);
  if (!direction.ok()) return direction.status();
  std::vector<double> u = direction.value();
  const bool norm = m.main.final_norm;
  const bool centred = norm && m.main.final_norm_kind == NormKind::kLayerNorm;
  if (norm) {
    const StackWeights& w = t.main_w_;
    for (std::size_t c = 0; c < D; ++c) {
      const double g = w.final_norm.gamma[c];
      u[c] *= m.main.final_norm_kind == NormKind::kRmsPlusOne ? 1.0 + g : g;
    }
    const float* x = side.last_layer_output.data() + static_cast<std::size_t>(p) * D;
    double mean = 0.0, sq = 0.0;
    for (std::size_t c = 0; c < D; ++c) mean += x[c];
    mean /= d;
    for (std::size_t c = 0; c < D; ++c) {
      const double v = centred ? x[c] - mean : x[c];
      sq += v * v;
    }
    out.scale = std::sqrt(sq / d + m.main.final_norm_eps);
  }
  // 2. each head: (its weights · V row at p) · W_O[its rows], centred for LayerNorm, / scale, · u
  out.values.assign(static_cast<std::size_t>(out.layers) * static_cast<std::size_t>(out.heads), 0.0f);
  for (std::size_t l = 0; l < m.main.blocks.size(); ++l) {
    const int heads = heads_of(m, l), hd = head_dim_of(m, l), inner = heads * hd;
    const AttentionTrace& a = side.layers[l].attention;
    for (int h = 0; h < heads; ++h) {
      std::vector<double> c(D, 0.0);
      if (m.main.blocks[l].kind == BlockKind::kSimple) {
        for (std::size_t j = 0; j < D; ++j) c[j] = a.output[static_cast<std::size_t>(p) * D + j];
      } else {
        if (h == 0 && t.main_w_.stream != nullptr) ATTN_TRY(t.main_w_.stream->load(l, op));  // the layer buffer
        const core::WeightSpan& wo = t.main_w_.blocks[l].self_attn.wo;  // [inner, d] at its stored width
        std::vector<float> row(D);
        for (int k = 0; k < hd; ++k) {
          const double v = a.concat[static_cast<std::size_t>(p) * static_cast<std::size_t>(inner) + static_cast<std::size_t>(h * hd + k)];
          ops::weight_row(wo, static_cast<std::size_t>(h * hd + k), D, row);
          for (std::size_t j = 0; j < D; ++j) c[j] += v * row[j];
        }
      }
      double mean = 0.0;
      if (centred) {
        for (double v : c) mean += v;
        mean /= d;
      }
      double z = 0.0;
      for (std::size_t j = 0; j < D; ++j) z += (c[j] - mean) * u[j];
      out.values[l * static_cast<std::size_t>(out.heads) + static_cast<std::size_t>(h)] = static_cast<float>(z / out.scale);
    }
  }
  // 3. the token's logit (before soft-capping), for reference
  const std::span<const float> h(side.output.data() + static_cast<std::size_t>(p) * D, D);
  out.logit = token_logit(ea, direction.value(), out.id, h, false);
  return out;
}

}  // namespace attnscope::model
