// modern_test.cpp: the parts of the decoder checkpoints (Llama, Mistral, Qwen2/3, Gemma 1/2/3, Phi-3): RMSNorm and
// RoPE (ops/rms_norm.h, ops/rope.h) on hand-worked values, and whole decoder blocks (model/block.h with
// description.h's AttentionSettings: GQA/MQA, head_dim != d/heads, RoPE with every scaling, q/k norms, post
// norms, soft-capping, sliding windows, gated MLPs) against tests/fixtures/modern/block_cases.json, written by
// tests/fixtures/modern/generate.py (float64 PyTorch from Hugging Face's modeling code).
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "model/block.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "support/compare.h"

using attnscope::model::AttentionSettings;
using attnscope::model::BlockArgs;
using attnscope::model::BlockOutput;
using attnscope::model::BlockWeights;
using attnscope::model::NormKind;
using attnscope::model::NormWeights;
using attnscope::ops::RopeSpec;
using attnscope::ops::RopeType;
using nlohmann::json;

namespace {

double max_abs_error(const std::vector<float>& got, const std::vector<double>& want) {
  double m = 0.0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) m = std::max(m, std::abs(got[i] - want[i]));
  return m;
}

}  // namespace

TEST_CASE("rms_norm_rows: Llama's w and Gemma's (1 + w), hand-worked", "[modern][ops]") {
  // row [3, 4]: mean of squares 12.5, rms sqrt(12.5 + eps)
  const std::vector<float> x{3.0f, 4.0f};
  const std::vector<float> w{2.0f, -1.0f};
  const double r = std::sqrt(12.5 + 1e-6);
  std::vector<float> y(2);
  attnscope::ops::rms_norm_rows(x, 1, 2, w, 1e-6f, false, y);
  CHECK(y[0] == Approx(3.0 / r * 2.0).epsilon(1e-6));
  CHECK(y[1] == Approx(4.0 / r * -1.0).epsilon(1e-6));
  attnscope::ops::rms_norm_rows(x, 1, 2, w, 1e-6f, true, y);
  CHECK(y[0] == Approx(3.0 / r * 3.0).epsilon(1e-6));
  CHECK(std::abs(y[1]) < 1e-7);  // 1 + (-1) = 0
}

TEST_CASE("rope: rotate_half pairing (i, i + r/2), partial rotary, position 0 unchanged", "[modern][ops]") {
  RopeSpec s;
  s.theta = 100.0;
  s.rotary_dim = 4;  // of head_dim 6: dims 4, 5 pass through
  const auto f = attnscope::ops::rope_frequencies(s, 2);
  REQUIRE(f.inv_freq.size() == 2);
  CHECK(f.inv_freq[0] == Approx(1.0));
  CHECK(f.inv_freq[1] == Approx(0.1));  // 100^(-2/4)
  // one head, rows at positions 0 and 1
  std::vector<float> x{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6};
  attnscope::ops::apply_rope(x, 2, 1, 6, 0, f);
  for (int i = 0; i < 6; ++i) CHECK(x[static_cast<std::size_t>(i)] == Approx(i + 1));
  // position 1: pairs (x0, x2) at angle 1, (x1, x3) at angle 0.1
  CHECK(x[6] == Approx(1 * std::cos(1.0) - 3 * std::sin(1.0)));
  CHECK(x[8] == Approx(3 * std::cos(1.0) + 1 * std::sin(1.0)));
  CHECK(x[7] == Approx(2 * std::cos(0.1) - 4 * std::sin(0.1)));
  CHECK(x[9] == Approx(4 * std::cos(0.1) + 2 * std::sin(0.1)));
  CHECK(x[10] == 5.0f);
  CHECK(x[11] == 6.0f);
}

TEST_CASE("rope: llama3 scaling keeps high frequencies, divides low ones, blends between", "[modern][ops]") {
  // Llama-3.2-1B: head_dim 64, theta 5e5, factor 32, low 1, high 4, original 8192 (MODERN-LLMS.md 1.4:
  // 15 of 32 frequencies unchanged, 14 divided by 32, 3 blended)
  RopeSpec s;
  s.theta = 500000.0;
  s.rotary_dim = 64;
  s.type = RopeType::kLlama3;
  s.factor = 32.0;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_max_positions = 8192;
  RopeSpec plain = s;
  plain.type = RopeType::kDefault;
  const auto f = attnscope::ops::rope_frequencies(s, 10), g = attnscope::ops::rope_frequencies(plain, 10);
  int same = 0, divided = 0, blended = 0;
  for (std::size_t j = 0; j < 32; ++j) {
    const double ratio = f.inv_freq[j] / g.inv_freq[j];
    if (std::abs(ratio - 1.0) < 1e-12) ++same;
    else if (std::abs(ratio - 1.0 / 32) < 1e-12) ++divided;
    else ++blended;
  }
  CHECK(same == 15);
  CHECK(divided == 14);
  CHECK(blended == 3);
}

TEST_CASE("decoder blocks of the modern checkpoints match Hugging Face's eager forward", "[modern][block]") {
  std::ifstream in(ATTNSCOPE_FIXTURES_DIR "/modern/block_cases.json");
  REQUIRE(in.good());
  json fx;
  in >> fx;
  for (const json& c : fx["cases"]) {
    const std::string name = c["name"];
    SECTION(name) {
      const int n = c["n"], d = c["d"], nh = c["nh"], dff = c["dff"];
      std::map<std::string, std::vector<float>> w;
      for (const auto& [k, v] : c["weights"].items()) w[k] = v.get<std::vector<float>>();
      auto span = [&](const char* k) { return w.count(k) ? std::span<const float>(w[k]) : std::span<const float>(); };
      BlockWeights bw;
      bw.self_attn = {span("wq"), span("wk"), span("wv"), span("wo"), span("bq"), span("bk"), span("bv"), span("bo")};
      bw.ff = {span("w1"), span("b1"), span("w2"), span("b2"), span("w3"), span("b3")};
      bw.norm[0] = NormWeights{span("norm1"), {}};
      bw.norm[1] = NormWeights{span("norm2"), {}};
      bw.post[0] = NormWeights{span("post_attn_norm"), {}};
      bw.post[1] = NormWeights{span("post_ff_norm"), {}};
      bw.q_norm = span("q_norm");
      bw.k_norm = span("k_norm");
      const NormKind kind = c["plus_one"].get<bool>() ? NormKind::kRmsPlusOne : NormKind::kRms;
      AttentionSettings s;
      s.kv_heads = c["nkv"];
      s.head_dim = c["hd"];
      s.qkv_bias = c["qkv_bias"];
      s.out_bias = c["o_bias"];
      s.has_qk_norm = c["qk_norm"];
      s.qk_norm = kind;
      s.scale = c["scale"];
      s.softcap = c["softcap"];
      s.sliding_window = c["window"];
      const json& r = c["rope"];
      s.rope = true;
      s.rope_spec.theta = r["theta"];
      s.rope_spec.rotary_dim = r["rotary_dim"];
      s.rope_spec.max_positions = r["max_positions"];
      s.rope_spec.factor = r["factor"];
      s.rope_spec.low_freq_factor = r["low_freq_factor"];
      s.rope_spec.high_freq_factor = r["high_freq_factor"];
      s.rope_spec.original_max_positions = r["original_max_positions"];
      const std::string type = r["type"];
      s.rope_spec.type = type == "linear"   ? RopeType::kLinear
                         : type == "dynamic" ? RopeType::kDynamic
                         : type == "llama3"  ? RopeType::kLlama3
                         : type == "yarn"    ? RopeType::kYarn
                                             : RopeType::kDefault;
      const std::vector<float> x = c["x"].get<std::vector<float>>();
      BlockArgs a;
      a.x = x;
      a.n = n, a.d_model = d, a.num_heads = nh, a.d_ff = dff;
      a.w = &bw;
      a.norm_first = true;
      a.activation = c["act"] == "silu" ? attnscope::ops::Activation::kSilu : attnscope::ops::Activation::kGeluTanh;
      a.eps = c["eps"];
      a.causal = true;
      a.attn = &s;
      a.norm_kind = kind;
      a.ff.gated = true;
      a.ff.bias = c["mlp_bias"];
      a.post_norms = c["post_norms"];
      const BlockOutput o = attnscope::model::run_block(a);
      REQUIRE(o.overflowed == nullptr);
      const std::vector<double> want_att = c["attention"].get<std::vector<double>>();
      const std::vector<double> want_out = c["output"].get<std::vector<double>>();
      REQUIRE(o.self_attn.weights.size() == want_att.size());
      REQUIRE(o.output.size() == want_out.size());
      attnscope::test::check_close(o.self_attn.weights, want_att, 2e-5, 0.0, "attention");
      attnscope::test::check_close(o.output, want_out, 1e-4, 1e-3, "output");
      std::printf("modern block %-34s max abs error: attention %.2e, output %.2e\n", name.c_str(),
                  max_abs_error(o.self_attn.weights, want_att), max_abs_error(o.output, want_out));

      // the same block decoded one row at a time through a KV cache (generate) gives the same last rows. Not for
      // dynamic NTK past max_position_embeddings: its frequencies change with the length, and cached keys keep
      // the rotation of their step (as in Hugging Face's generate); loadPretrained rejects such lengths anyway.
      if (type == "dynamic" && n > s.rope_spec.max_positions) return;
      attnscope::model::KvCache cache;
      std::vector<float> last;
      for (int i = 0; i < n; ++i) {
        BlockArgs step = a;
        step.x = std::span<const float>(x).subspan(static_cast<std::size_t>(i) * static_cast<std::size_t>(d),
                                                   static_cast<std::size_t>(d));
        step.n = 1;
        step.cache = &cache;
        last = attnscope::model::run_block(step).output;
      }
      const std::vector<double> want_last(want_out.end() - d, want_out.end());
      attnscope::test::check_close(last, want_last, 1e-4, 1e-3, "cached last row");
      CHECK(cache.k.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(s.kv_heads * s.head_dim));
    }
  }
}
