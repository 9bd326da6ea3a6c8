// generate_beam.cpp: beam search for encoder-decoder models (Transformer::generate with num_beams > 1,
// transformer.h). Layer: model.
//
// Hugging Face's BeamSearchScorer for one sequence (transformers v4.36-v4.49, generation/beam_search.py and
// GenerationMixin._beam_search), which these semantics follow:
//  - the beams start as [decoder start] with scores [0, -1e9, ...] (only the first one is expanded at step 1);
//  - each step: score(beam, token) = beam score + log_softmax(logits)[token]; the best 2·num_beams (ties: the
//    smaller beam·vocab + token index) are walked in order (BeamSearchScorer.process): an end token ranked below
//    num_beams is skipped, a higher one closes the hypothesis beam's ids (end token excluded) with score
//    sum_logprobs / generated_len^length_penalty, generated_len counting the end token (BeamHypotheses.add);
//    other tokens extend their beam until num_beams beams are chosen;
//  - the search is done when num_beams hypotheses exist and: early_stopping true; or false and the worst
//    hypothesis is at least best running score / cur_len^length_penalty (cur_len: the tokens generated once this
//    step's are appended); or "never" with the same test at the longest possible length when length_penalty > 0
//    (BeamHypotheses.is_done);
//  - at max_new_tokens (or a full position table) the running beams are added as hypotheses (finalize) and the
//    best hypothesis is returned.
// Each beam keeps its own key/value caches; the cross-attention keys are computed once per beam line and copied
// with it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/check.h"
#include "model/heads.h"
#include "model/transformer.h"

namespace attnscope::model {

namespace {

struct Beam {
  std::vector<std::int32_t> ids;  // generated tokens (no start token)
  double score = 0.0;             // sum of log-probabilities
  std::vector<KvCache> caches;
  std::vector<float> last;        // the last row's hidden state [d_model]
};

struct Hypothesis {
  double score;
  std::vector<std::int32_t> ids;
};

// BeamHypotheses: the num_beams best finished hypotheses.
class Hypotheses {
 public:
  Hypotheses(int num_beams, double length_penalty) : k_(num_beams), lp_(length_penalty) {}
  void add(std::vector<std::int32_t> ids, double sum_logprobs, int generated_len) {
    const double score = sum_logprobs / std::pow(static_cast<double>(generated_len), lp_);
    if (static_cast<int>(h_.size()) < k_ || score > worst_) {
      h_.push_back(Hypothesis{score, std::move(ids)});
      if (static_cast<int>(h_.size()) > k_) {
        // drop the worst; worst_ becomes the second worst
        std::vector<std::size_t> order(h_.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return h_[a].score < h_[b].score; });
        worst_ = h_[order[1]].score;
        h_.erase(h_.begin() + static_cast<std::ptrdiff_t>(order[0]));
      } else {
        worst_ = std::min(score, worst_);
      }
    }
  }
  bool done(double best_sum_logprobs, int cur_len, int max_len, ModelOptions::EarlyStopping es) const {
    if (static_cast<int>(h_.size()) < k_) return false;
    if (es == ModelOptions::EarlyStopping::kTrue) return true;
    const int len = es == ModelOptions::EarlyStopping::kNever && lp_ > 0.0 ? max_len : cur_len;
    return worst_ >= best_sum_logprobs / std::pow(static_cast<double>(len), lp_);
  }
  const Hypothesis* best() const {
    const Hypothesis* b = nullptr;
    for (const Hypothesis& h : h_) {
      if (b == nullptr || h.score >= b->score) b = &h;  // sorted(...).pop(): the last of equal scores
    }
    return b;
  }

 private:
  int k_;
  double lp_;
  double worst_ = 1e9;
  std::vector<Hypothesis> h_;
};

}  // namespace

core::Result<Generation> Transformer::beam_search(std::string_view input, int max_new_tokens, int num_beams) const {
  const SpecialIds& sp = enc_.specials();
  auto end_ids = generation_end_ids(max_new_tokens);
  if (!end_ids.ok()) return end_ids.status();
  const std::vector<std::int32_t> ends = std::move(end_ids).value();
  const EmbedArgs ea = embed_args(kOpGenerate);
  RunVocab vocab;
  auto src = encode_source(ea, input, vocab);
  if (!src.ok()) return src.status();
  const SideTrace memory = std::move(src).value();
  const int max_positions = decoding_positions();
  const auto d = static_cast<std::size_t>(m_.d_model);
  // one decoding step of a beam: its newest token at `position` through the decoder, keeping the last row
  auto advance = [&](Beam& b, std::int32_t token, int position) -> core::Status {
    SideTrace step;
    step.ids = {token};
    ATTN_TRY(embed_ids(ea, step.ids, position, step.input));
    step.n = step.n_real = 1;
    ATTN_TRY(run_stack(decoding_args(false, &b.caches), step, &memory));
    b.last.assign(step.output.begin(), step.output.begin() + static_cast<std::ptrdiff_t>(d));
    return core::Status::Ok();
  };
  const std::int32_t start = opt_.decoder_start >= 0 ? opt_.decoder_start : sp.bos >= 0 ? sp.bos : ends.front();
  std::vector<Beam> beams(1);
  beams[0].caches.resize(m_.main.blocks.size());
  Generation g;
  if (max_new_tokens == 0 || max_positions < 1) {
    finish_generation(g, vocab);
    return g;
  }
  ATTN_TRY(advance(beams[0], start, 0));
  Hypotheses hyps(num_beams, opt_.length_penalty);
  const auto n_keep = static_cast<std::size_t>(std::max<std::size_t>(2, 1 + ends.size()) * static_cast<std::size_t>(num_beams));
  bool done = false;
  int steps = 0;
  while (!done && steps < max_new_tokens) {
    ++steps;  // tokens generated once this step's are appended (cur_len - decoder_prompt_len)
    // 1. every candidate's score: beam score + log_softmax(logits)
    struct Cand {
      double score;
      std::size_t beam;
      std::int32_t token;
    };
    std::vector<Cand> cands;
    std::size_t vocab_n = 0;
    for (std::size_t bi = 0; bi < beams.size(); ++bi) {
      auto computed = lm_logits(ea, vocab, beams[bi].last);
      if (!computed.ok()) return computed.status();
      const std::vector<double>& logits = computed.value();
      vocab_n = logits.size();
      const double mx = *std::max_element(logits.begin(), logits.end());
      double sum = 0.0;
      for (const double z : logits) sum += std::exp(z - mx);
      const double lse = mx + std::log(sum);
      for (std::size_t v = 0; v < logits.size(); ++v) {
        cands.push_back(Cand{beams[bi].score + logits[v] - lse, bi, static_cast<std::int32_t>(v)});
      }
    }
    // 2. the best n_keep (torch.topk, sorted; ties to the smaller beam·vocab + token index)
    const std::size_t keep = std::min(n_keep, cands.size());
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(keep), cands.end(),
                      [&](const Cand& a, const Cand& b) {
                        if (a.score != b.score) return a.score > b.score;
                        return a.beam * vocab_n + static_cast<std::size_t>(a.token) <
                               b.beam * vocab_n + static_cast<std::size_t>(b.token);
                      });
    // 3. BeamSearchScorer.process
    std::vector<Beam> next;
    for (std::size_t rank = 0; rank < keep && static_cast<int>(next.size()) < num_beams; ++rank) {
      const Cand& c = cands[rank];
      if (std::find(ends.begin(), ends.end(), c.token) != ends.end()) {
        if (static_cast<int>(rank) >= num_beams) continue;
        hyps.add(beams[c.beam].ids, c.score, steps);
        continue;
      }
      Beam b;
      b.ids = beams[c.beam].ids;
      b.ids.push_back(c.token);
      b.score = c.score;
      b.caches = beams[c.beam].caches;
      next.push_back(std::move(b));
    }
    done = hyps.done(cands.front().score, steps, max_new_tokens, opt_.early_stopping) || next.empty();
    beams = std::move(next);
    if (done || steps >= max_new_tokens) break;
    if (steps + 1 > max_positions) break;  // the position table is full
    for (Beam& b : beams) ATTN_TRY(advance(b, b.ids.back(), steps));
  }
  // 4. finalize: the running beams join the hypotheses unless the search is done
  if (!done) {
    for (const Beam& b : beams) hyps.add(b.ids, b.score, static_cast<int>(b.ids.size()));
  }
  const Hypothesis* best = hyps.best();
  if (best != nullptr) {
    g.ids = best->ids;
    g.score = best->score;
    g.stopped_at_end = static_cast<int>(best->ids.size()) < steps || done;
  }
  finish_generation(g, vocab);
  return g;
}

}  // namespace attnscope::model
