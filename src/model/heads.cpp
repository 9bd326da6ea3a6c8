// heads.cpp: language-model and masked-language-model heads (heads.h). Layer: model.
#include "model/heads.h"

#include <algorithm>
#include <cmath>

#include "model/block.h"
#include "ops/linear.h"

namespace attnscope::model {

std::vector<double> lm_logits(const EmbedArgs& a, const RunVocab& vocab, std::span<const float> h) {
  const int d = a.m->d_model;
  const std::int32_t count = a.encoder->vocab_size(vocab);
  std::vector<double> logits(static_cast<std::size_t>(std::max(count, 0)));
  if (count <= 0) return logits;
  const EmbeddingSpec& e = a.m->embedding;
  const auto table = (*a.params)["embedding.weight"];
  if (a.m->head.lm_head || (e.rows == TokenRows::kTable && !e.seeded_fallback && a.user->by_id.empty() &&
                            table.size() >= static_cast<std::size_t>(count) * static_cast<std::size_t>(d))) {
    // A checkpoint's head, in float32 as the frameworks compute it, on the GEMM kernels: with lm_head
    // logits = h W + b (W [d_model, vocab]); tied, logits = h Eᵀ with E the token table [vocab, d_model].
    std::vector<float> z(static_cast<std::size_t>(count));
    const core::ConstMatView hv{h.data(), 1, d, d};
    if (a.m->head.lm_head) {
      ops::linear(hv, (*a.params)["lm_head.weight"], (*a.params)["lm_head.bias"], core::MatView{z.data(), 1, count, count});
    } else {
      ops::matmul_nt(hv, core::ConstMatView{table.data(), count, d, d}, core::MatView{z.data(), 1, count, count});
    }
    std::copy(z.begin(), z.end(), logits.begin());
    return logits;
  }
  // createModel's tied head over seeded / user / loaded rows, in double: logit_v = h · E_v with E_v the token's
  // embedding row (before the embedding scale)
  std::vector<float> row(static_cast<std::size_t>(d));
  for (std::int32_t id = 0; id < count; ++id) {
    token_row(a, id, a.encoder->fixed_vocabulary() ? std::string() : vocab.tokens[static_cast<std::size_t>(id)], row);
    double z = 0.0;
    for (int c = 0; c < d; ++c) z += static_cast<double>(h[static_cast<std::size_t>(c)]) * static_cast<double>(row[static_cast<std::size_t>(c)]);
    logits[static_cast<std::size_t>(id)] = z;
  }
  return logits;
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

std::int32_t argmax(const std::vector<double>& logits) {
  std::int32_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[static_cast<std::size_t>(best)]) best = static_cast<std::int32_t>(i);
  }
  return best;
}

std::vector<MaskPrediction> mask_predictions(const EmbedArgs& a, const SideTrace& side, int k) {
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
    std::vector<float> t = ops::linear(h, 1, d, p["mlm.transform.weight"], d, p["mlm.transform.bias"]);
    ops::activate(a.m->head.mlm_activation, t);
    t = layer_norm(t, 1, d, NormWeights{p["mlm.norm.weight"], p["mlm.norm.bias"]}, a.m->head.mlm_eps);
    std::vector<double> logits = lm_logits(a, none, t);
    const auto bias = p["mlm.bias"];
    for (std::size_t v = 0; v < logits.size() && v < bias.size(); ++v) logits[v] += bias[v];
    out.push_back(MaskPrediction{i, top_k(logits, k, a, none)});
  }
  return out;
}

}  // namespace attnscope::model
