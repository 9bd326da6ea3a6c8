// inside.h: looking inside a model beyond the run options — mean ablation values, activation patching between a
// clean and a corrupted prompt, ablation sweeps over every head, and direct logit attribution (TransformerLens's
// semantics). Layer: model.
//
// Patching and sweeps cost one partial forward per site: the unpatched runs are traced once, and each site re-runs
// the stack only from the patched layer on, starting from the cached input of that layer (StackArgs::first_block).
// A head's output is its weights · V (its columns of the attention concat, before W_O), as for `ablate`.
//
// Metrics, at the last position of the text: the logit difference logit[a] − logit[b] of two tokens, the logit of
// one token, or the loss (−mean ln p(token i+1 | tokens ..i), Hugging Face's labels = input_ids loss). Logits
// come from the model's own head (final norm, soft-capping) in double.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/embed.h"
#include "model/model_config.h"
#include "model/trace.h"

namespace attnscope::model {

class Transformer;

// Run option ablate[i].mean: heads given values are marked 2 in head_keep (built here when run_impl did not already
// size it) and their layer's values [n, heads·head_dim] hold them (head_dim numbers: every position; n·head_dim:
// one row each). An error names ablate[i].mean when its length is neither.
core::Status ablation_values(const ModelDescription& m, const RunOptions& o, int n, std::vector<std::uint8_t>& head_keep,
                             std::vector<std::vector<float>>& values);

// A token the user picks: an id (>= 0), or a text that is one token of the vocabulary (its spelling, e.g.
// "ĠMary", or a text the tokenizer encodes as one token, e.g. " Mary").
struct TokenChoice {
  std::int32_t id = -1;
  std::string text;
};

struct Metric {
  enum class Kind { kLogitDiff, kLogit, kLoss };
  Kind kind = Kind::kLoss;
  TokenChoice a, b;  // kLogitDiff: a and b; kLogit: a
};

// Every head's mean output over texts (mean ablation): [layers, heads, head_dim], averaged over every position of
// every text.
struct HeadMeans {
  int layers = 0, heads = 0, head_dim = 0;
  std::vector<float> values;
  int positions = 0;  // how many rows were averaged
};

// Direct logit attribution toward one token at the last position: head (l, h)'s output through W_O, through the
// final norm with its scale frozen at the one the full residual had (LayerNorm: centred, / sqrt(var + eps);
// RMSNorm: / rms), times gamma ⊙ the token's unembedding column. The biases (b_O, the norm's beta, the head's
// bias) and soft-capping are not a head's and are left out, as TransformerLens's per-head decomposition does.
struct Attribution {
  int layers = 0, heads = 0;
  std::vector<float> values;  // [layers, heads]
  std::int32_t id = -1;
  double logit = 0.0;  // the token's logit at the last position (before soft-capping)
  double scale = 1.0;  // the frozen final-norm scale (1 without a final norm)
};

class Inside {
 public:
  enum class Sites { kPatchHeads, kPatchResidual, kAblateHeads };

  static core::Result<HeadMeans> head_means(const Transformer& t, const std::vector<std::string>& texts);
  // granularity heads: sites [layers, heads], residual: [layers, n] (the input of layer l at position p, i.e.
  // TransformerLens's resid_pre). The corrupted run with one site taken from the clean run.
  static core::Result<std::unique_ptr<Inside>> patching(const Transformer& t, std::string_view clean,
                                                        std::string_view corrupted, const Metric& metric, bool residual);
  // Sites [layers, heads]: the text's run with that one head ablated (zero, or its mean from `means`, as
  // head_means lays them out; empty = zero).
  static core::Result<std::unique_ptr<Inside>> ablation(const Transformer& t, std::string_view text,
                                                        const Metric& metric, std::vector<float> means);
  static core::Result<Attribution> attribution(const Transformer& t, std::string_view text, const TokenChoice& token);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int sites() const { return rows_ * cols_; }
  double base() const { return base_; }    // the metric without intervention (the corrupted run for patching)
  double clean() const { return clean_; }  // patching: the clean run's metric
  std::int32_t id_a() const { return ids_[0]; }
  std::int32_t id_b() const { return ids_[1]; }
  const SideTrace& side() const { return main_; }  // the text (the corrupted one for patching), traced in full
  // The metric with each site of [begin, end) intervened on, in row-major site order.
  core::Result<std::vector<float>> run(int begin, int end) const;

 private:
  Inside(const Transformer& t, const char* op);
  core::Result<double> metric_of(const SideTrace& s) const;
  core::Status cache_directions();  // dirs_ for the metric's tokens
  core::Result<double> forward_from(std::size_t layer, std::vector<float> x, std::span<const std::uint8_t> keep,
                                    std::span<const std::vector<float>> values) const;

  const Transformer& t_;
  const char* op_;
  EmbedArgs ea_;
  RunVocab vocab_;
  Sites kind_ = Sites::kAblateHeads;
  Metric metric_;
  std::int32_t ids_[2] = {-1, -1};
  std::vector<double> dirs_[2];  // the head's column of each metric token (lm_direction): two logits, not the vocabulary
  SideTrace main_, clean_side_;
  std::vector<float> means_;
  int rows_ = 0, cols_ = 0;
  double base_ = 0.0, clean_ = 0.0;
};

}  // namespace attnscope::model
