// heads.cpp: language-model and masked-language-model heads (heads.h). Layer: model.
#include "model/heads.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/block.h"
#include "ops/activations.h"
#include "ops/linear.h"

namespace attnscope::model {

namespace {

// The rows the head scores: a checkpoint's head covers every row of its table (config.vocab_size may pad past the
// tokenizer: Qwen2/3, Phi-3, and Hugging Face's softmax runs over all of them; lm_head.weight's rows are
// vocab_size long too).
std::int32_t head_rows(const EmbedArgs& a, const RunVocab& vocab) {
  const EmbeddingSpec& e = a.m->embedding;
  std::int32_t count = a.encoder->vocab_size(vocab);
  if (e.rows == TokenRows::kTable && !e.seeded_fallback) count = std::max(count, e.vocab_size);
  return count;
}

// The head is a matrix (lm_head.weight, or the loaded embedding table tied, at its stored width), not createModel's rows.
bool matrix_head(const EmbedArgs& a, std::int32_t count) {
  const EmbeddingSpec& e = a.m->embedding;
  const core::WeightSpan table = a.params->weight("embedding.weight");
  return a.m->head.lm_head ||
         (e.rows == TokenRows::kTable && !e.seeded_fallback && a.user->by_id.empty() &&
          table.size() >= static_cast<std::size_t>(count) * static_cast<std::size_t>(a.m->d_model));
}

// streamWeights: the head's table stays in the file (layer_stream.h).
bool streamed(const EmbedArgs& a) { return a.stream != nullptr && a.stream->has_tables(); }

}  // namespace

std::int32_t lm_vocab_size(const EmbedArgs& a, const RunVocab& vocab) { return std::max(head_rows(a, vocab), 0); }

core::Result<std::vector<double>> lm_direction(const EmbedArgs& a, const RunVocab& vocab, std::int32_t id) {
  const int d = a.m->d_model;
  const auto D = static_cast<std::size_t>(d);
  const std::int32_t count = head_rows(a, vocab);
  std::vector<double> u(D, 0.0);
  if (id < 0 || id >= count) return u;
  std::vector<float> row(D);
  if (streamed(a)) {
    // the head's row in the file: lm_head.weight[id] (the resident [d, V]'s column id) or the tied row
    if (static_cast<std::size_t>(id) < a.stream->head_rows()) ATTN_TRY(a.stream->head_row(static_cast<std::size_t>(id), row, a.op));
  } else if (a.m->head.lm_head) {
    // [d, V] at its stored width
    ops::weight_column(a.params->weight("lm_head.weight"), D, static_cast<std::size_t>(count),
                       static_cast<std::size_t>(id), row);
  } else if (matrix_head(a, count)) {
    ops::table_row(a.params->weight("embedding.weight"), static_cast<std::size_t>(id), D, row);
  } else {
    token_row(a, id, a.encoder->fixed_vocabulary() ? std::string() : vocab.tokens[static_cast<std::size_t>(id)], row);
  }
  std::copy(row.begin(), row.end(), u.begin());
  // T5's tied head: logit = (h · d_model^-0.5) · E_v, so the direction carries the scale
  if (const double f = a.m->head.hidden_scale; f != 1.0) {
    for (double& x : u) x *= f;
  }
  return u;
}

namespace {

// T5's tied head reads the hidden state times d_model^-0.5 (T5ForConditionalGeneration.forward), in float32.
std::span<const float> head_input(const EmbedArgs& a, std::span<const float> h, std::vector<float>& scaled) {
  if (a.m->head.hidden_scale == 1.0) return h;
  const auto f = static_cast<float>(a.m->head.hidden_scale);
  scaled.assign(h.begin(), h.end());
  for (float& x : scaled) x *= f;
  return scaled;
}

// A matrix head's logits from its float32 products z [count]: + final_logits_bias (in float32, into z), then in
// double, soft-capping.
std::vector<double> matrix_logits(const EmbedArgs& a, std::span<float> z) {
  // BART / Marian: final_logits_bias (BartForConditionalGeneration: lm_logits + final_logits_bias)
  if (a.m->head.logits_bias) {
    const auto fb = (*a.params)["lm_head.final_bias"];
    for (std::size_t v = 0; v < z.size() && v < fb.size(); ++v) z[v] += fb[v];
  }
  std::vector<double> logits(z.begin(), z.end());
  // Gemma 2's final_logit_softcapping: tanh(logits / c) · c
  if (const double c = a.m->head.softcap; c > 0.0) {
    for (double& l : logits) l = c * std::tanh(l / c);
  }
  return logits;
}

// The products of a matrix head (lm_head.weight [d, V], or the tied table [V, d]) for one hidden state h over the
// head's rows [first, first + z.size()), w holding just those rows (streamed pieces) or all of them (first 0).
// One row only, so no GEMM (its packing of a 50,257 x 768 table would cost more than the product): with lm_head,
// z = b + Σ_c h_c W[c, :] (a vectorisable row update per c, or the GEMV kernel for a half-width W); tied,
// z_v = h · E_v with the SIMD dot kernel per row on the pool (weights8's Q8_0 table: the integer GEMV, h quantised to
// 8 bits as every weights8 product's input). Each z_v is the same operations in the same order however the rows are
// split, which is what makes a streamed head's logits the resident ones.
void head_products(const EmbedArgs& a, std::span<const float> h, const core::WeightSpan& w, std::size_t first,
                   std::span<float> z) {
  const int d = a.m->d_model, cols = static_cast<int>(z.size());
  if (a.m->head.lm_head) {
    const auto b = (*a.params)["lm_head.bias"];
    ops::linear(core::ConstMatView{h.data(), 1, d, d}, w, b.empty() ? b : b.subspan(first, z.size()),
                core::MatView{z.data(), 1, cols, cols});
  } else {
    ops::table_row_dots(std::span<const float>(h.data(), static_cast<std::size_t>(d)), w, z);
  }
}

// createModel's tied head over seeded / user / loaded rows, in double: logit_v = h · E_v with E_v the token's
// embedding row (before the embedding scale)
std::vector<double> row_logits(const EmbedArgs& a, const RunVocab& vocab, std::span<const float> h, std::int32_t count) {
  const int d = a.m->d_model;
  std::vector<double> logits(static_cast<std::size_t>(count));
  std::vector<float> row(static_cast<std::size_t>(d));
  for (std::int32_t id = 0; id < count; ++id) {
    token_row(a, id, a.encoder->fixed_vocabulary() ? std::string() : vocab.tokens[static_cast<std::size_t>(id)], row);
    double z = 0.0;
    for (int c = 0; c < d; ++c) z += static_cast<double>(h[static_cast<std::size_t>(c)]) * static_cast<double>(row[static_cast<std::size_t>(c)]);
    logits[static_cast<std::size_t>(id)] = z;
  }
  return logits;
}

// A streamed head (layer_stream.h): batches of rows, each batch one pass over the table, piece by piece.
core::Status streamed_logits_rows(const EmbedArgs& a, int rows, std::int32_t count,
                                  const std::function<std::span<const float>(int)>& row,
                                  const std::function<core::Status(int, const std::vector<double>&)>& each) {
  // a row of z holds the table's rows (count is at least that many: the tokenizer's ids are rows of the table)
  const auto V = static_cast<std::size_t>(count), width = std::max(V, a.stream->head_rows());
  const int batch = std::min(a.stream->head_batch(width), rows);
  std::vector<float> z;
  std::vector<std::vector<float>> scaled(static_cast<std::size_t>(batch));
  std::vector<std::span<const float>> h(static_cast<std::size_t>(batch));
  for (int r0 = 0; r0 < rows; r0 += batch) {
    const int nb = std::min(batch, rows - r0);
    for (int r = 0; r < nb; ++r) h[static_cast<std::size_t>(r)] = head_input(a, row(r0 + r), scaled[static_cast<std::size_t>(r)]);
    z.assign(static_cast<std::size_t>(nb) * width, 0.0f);
    ATTN_TRY(a.stream->head_pieces(a.op, [&](const core::WeightSpan& w, std::size_t first, std::size_t n) {
      for (int r = 0; r < nb; ++r) {
        head_products(a, h[static_cast<std::size_t>(r)], w, first,
                      std::span<float>(z.data() + static_cast<std::size_t>(r) * width + first, n));
      }
    }));
    for (int r = 0; r < nb; ++r) {
      ATTN_TRY(each(r0 + r, matrix_logits(a, std::span<float>(z.data() + static_cast<std::size_t>(r) * width, V))));
    }
  }
  return core::Status::Ok();
}

}  // namespace

core::Status lm_logits_rows(const EmbedArgs& a, const RunVocab& vocab, int rows,
                            const std::function<std::span<const float>(int)>& row,
                            const std::function<core::Status(int, const std::vector<double>&)>& each) {
  const std::int32_t count = head_rows(a, vocab);
  if (count <= 0) {
    for (int r = 0; r < rows; ++r) ATTN_TRY(each(r, {}));
    return core::Status::Ok();
  }
  if (streamed(a)) return rows > 0 ? streamed_logits_rows(a, rows, count, row, each) : core::Status::Ok();
  const bool matrix = matrix_head(a, count);
  const core::WeightSpan w = a.params->weight(a.m->head.lm_head ? "lm_head.weight" : "embedding.weight");
  std::vector<float> scaled, z;
  for (int r = 0; r < rows; ++r) {
    const std::span<const float> h = head_input(a, row(r), scaled);
    if (matrix) {
      z.assign(static_cast<std::size_t>(count), 0.0f);
      head_products(a, h, w, 0, z);
      ATTN_TRY(each(r, matrix_logits(a, z)));
    } else {
      ATTN_TRY(each(r, row_logits(a, vocab, h, count)));
    }
  }
  return core::Status::Ok();
}

core::Result<std::vector<double>> lm_logits(const EmbedArgs& a, const RunVocab& vocab, std::span<const float> h) {
  std::vector<double> out;
  ATTN_TRY(lm_logits_rows(a, vocab, 1, [&](int) { return h; }, [&](int, const std::vector<double>& logits) {
    out = logits;
    return core::Status::Ok();
  }));
  return out;
}

TopK top_k(const std::vector<double>& logits, int k, const EmbedArgs& a, const RunVocab& vocab) {
  TopK out;
  if (logits.empty() || k <= 0) return out;
  const double mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += (p[i] = std::exp(logits[i] - mx));
  const std::size_t kk = std::min(static_cast<std::size_t>(k), p.size());
  std::vector<std::int32_t> order(p.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kk), order.end(),
                    [&](std::int32_t x, std::int32_t y) {
                      const double px = p[static_cast<std::size_t>(x)], py = p[static_cast<std::size_t>(y)];
                      return px > py || (px == py && x < y);
                    });
  for (std::size_t i = 0; i < kk; ++i) {
    const std::int32_t id = order[i];
    out.ids.push_back(id);
    out.probs.push_back(static_cast<float>(p[static_cast<std::size_t>(id)] / sum));
    out.tokens.push_back(a.encoder->token_text(id, vocab));
  }
  return out;
}

double log_prob(const std::vector<double>& logits, std::int32_t id) {
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (double z : logits) sum += std::exp(z - mx);
  return logits[static_cast<std::size_t>(id)] - mx - std::log(sum);
}

core::Result<std::vector<MaskPrediction>> mask_predictions(const EmbedArgs& a, const SideTrace& side, int k) {
  std::vector<MaskPrediction> out;
  const std::int32_t mask_id = a.encoder->specials().mask;
  if (!a.m->head.mlm || mask_id < 0) return out;
  const int d = a.m->d_model;
  const Parameters& p = *a.params;
  const RunVocab none;
  for (int i = 0; i < side.n_real; ++i) {
    if (side.ids[static_cast<std::size_t>(i)] != mask_id) continue;
    // h' = LN(act(h W_t + b_t)); logits = h' · Eᵀ + b
    std::span<const float> h(side.output.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(d),
                             static_cast<std::size_t>(d));
    std::vector<float> t = ops::linear(h, 1, d, p.weight("mlm.transform.weight"), d, p["mlm.transform.bias"]);
    ops::activate(a.m->head.mlm_activation, t);
    t = layer_norm(t, 1, d, NormWeights{p["mlm.norm.weight"], p["mlm.norm.bias"]}, a.m->head.mlm_eps);
    auto computed = lm_logits(a, none, t);
    if (!computed.ok()) return computed.status();
    std::vector<double> logits = std::move(computed).value();
    const auto bias = p["mlm.bias"];
    for (std::size_t v = 0; v < logits.size() && v < bias.size(); ++v) logits[v] += bias[v];
    out.push_back(MaskPrediction{i, top_k(logits, k, a, none)});
  }
  return out;
}

}  // namespace attnscope::model
