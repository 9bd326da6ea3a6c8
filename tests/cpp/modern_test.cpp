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
#include <map>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "model/block.h"
#include "model/hf_checkpoint.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "support/compare.h"
#include "support/fixtures.h"
#include "tokenizers/hf_tokenizer.h"

using attnscope::model::AttentionSettings;
using attnscope::model::BlockArgs;
using attnscope::model::BlockOutput;
using attnscope::model::BlockWeights;
using attnscope::model::NormKind;
using attnscope::model::NormWeights;
using attnscope::ops::RopeSpec;
using attnscope::ops::RopeType;
using attnscope::test::max_abs_error;
using nlohmann::json;

namespace {

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

// ---- whole checkpoints: config.json + model.safetensors + tokenizer.json (generate_models.py) -------------------

namespace {

using attnscope::test::read_bytes;
using attnscope::test::read_text;

attnscope::model::TextEncoder tokenizer_of(const std::string& dir) {
  auto t = attnscope::tokenizers::HfTokenizer::from_json(read_text(dir + "/tokenizer.json"), "loadPretrained",
                                                         "tokenizer");
  INFO(t.status().message);
  REQUIRE(t.ok());
  return attnscope::model::TextEncoder::checkpoint(std::move(t).value());
}

attnscope::core::Result<std::unique_ptr<attnscope::model::Transformer>> load_checkpoint(
    const std::string& config, attnscope::model::TextEncoder tok, const std::vector<std::uint8_t>& file,
    std::size_t chunk) {
  auto l = attnscope::model::HfCheckpointLoader::begin(config, std::move(tok), file, file.size(), "loadPretrained");
  if (!l.ok()) return l.status();
  for (std::size_t at = 0; at < file.size(); at += chunk) {
    auto s = l.value()->feed(at, std::span<const std::uint8_t>(file.data() + at, std::min(chunk, file.size() - at)));
    if (!s.ok()) return s;
  }
  return l.value()->finish();
}

const char* const kCheckpoints[] = {
    "llama-f32-untied-gqa-llama3", "llama-bf16-tied-mqa-headdim-linear-v5", "mistral-f16-window-dynamic",
    "qwen2-f32-sliding-yarn",      "qwen3-bf16-qknorm-headdim",             "gemma-f32",
    "gemma2-f32-softcap",          "gemma3-bf16-local-rope",                "phi3-f32-fused-partial",
};

}  // namespace

TEST_CASE("loadPretrained: decoder checkpoints of every model_type match the float64 reference", "[modern][hf]") {
  for (const char* name : kCheckpoints) {
    const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR "/modern/") + name;
    const json want = json::parse(read_text(dir + "/expected.json"));
    auto model = load_checkpoint(read_text(dir + "/config.json"), tokenizer_of(dir),
                                 read_bytes(dir + "/model.safetensors"), 1021);
    INFO(name << ": " << model.status().message);
    REQUIRE(model.ok());
    double max_attn = 0, max_hidden = 0, max_out = 0, max_prob = 0;
    for (const json& t : want["texts"]) {
      const std::string text = t["text"];
      auto r = model.value()->run(text, attnscope::model::RunOptions{});
      INFO(name << " \"" << text << "\": " << r.status().message);
      REQUIRE(r.ok());
      const auto& side = r.value().main;
      CHECK(side.ids == t["ids"].get<std::vector<std::int32_t>>());
      REQUIRE(side.layers.size() == t["attentions"].size());
      for (std::size_t i = 0; i < side.layers.size(); ++i) {
        const auto wa = t["attentions"][i].get<std::vector<double>>();
        const auto wh = t["layer_outputs"][i].get<std::vector<double>>();
        attnscope::test::check_close(side.layers[i].attention.weights, wa, 2e-5, 0.0,
                                     std::string(name) + " attentions[" + std::to_string(i) + "]");
        attnscope::test::check_close(side.layers[i].output, wh, 1e-4, 1e-3,
                                     std::string(name) + " layers[" + std::to_string(i) + "].output");
        max_attn = std::max(max_attn, max_abs_error(side.layers[i].attention.weights, wa));
        max_hidden = std::max(max_hidden, max_abs_error(side.layers[i].output, wh));
      }
      const auto wo = t["output"].get<std::vector<double>>();
      attnscope::test::check_close(side.output, wo, 1e-4, 1e-3, std::string(name) + " output");
      max_out = std::max(max_out, max_abs_error(side.output, wo));
      const auto& next = r.value().next;
      CHECK(next.ids == t["next"]["ids"].get<std::vector<std::int32_t>>());
      const auto wp = t["next"]["probs"].get<std::vector<double>>();
      attnscope::test::check_close(next.probs, wp, 1e-6, 2e-3, std::string(name) + " next.probs");
      max_prob = std::max(max_prob, max_abs_error(next.probs, wp));
      auto g = model.value()->generate(text, t["generate"]["max_new_tokens"].get<int>());
      REQUIRE(g.ok());
      CHECK(g.value().ids == t["generate"]["ids"].get<std::vector<std::int32_t>>());
    }
    std::printf("modern checkpoint %-40s max abs error: attentions %.2e, layer outputs %.2e, output %.2e, next.probs %.2e\n",
                name, max_attn, max_hidden, max_out, max_prob);
  }
}

TEST_CASE("loadPretrained: generate stops at any end id (config or generation_config)", "[modern][hf]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const json want = json::parse(read_text(dir + "/expected.json"));
  const json& t = want["texts"][0];
  const auto ids = t["generate"]["ids"].get<std::vector<std::int32_t>>();
  REQUIRE(ids.size() >= 2);
  const auto file = read_bytes(dir + "/model.safetensors");
  // generation_config.json's eos_token_id [257, second new id] replaces config.json's: one id, then the stop
  auto l = attnscope::model::HfCheckpointLoader::begin(read_text(dir + "/config.json"), tokenizer_of(dir), file,
                                                       file.size(), "loadPretrained");
  REQUIRE(l.ok());
  auto end_ids = attnscope::model::generation_config_end_ids(
      R"({"bos_token_id": 256, "eos_token_id": [257, )" + std::to_string(ids[1]) + "]}", "loadPretrained");
  REQUIRE(end_ids.ok());
  l.value()->set_end_ids(end_ids.value());
  auto bad = attnscope::model::generation_config_end_ids(R"({"eos_token_id": [1, "x"]})", "loadPretrained");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message ==
        "loadPretrained: generationConfig.eos_token_id must be an integer or a list of integers, got array");
  REQUIRE(l.value()->feed(0, file).ok());
  auto model = l.value()->finish();
  REQUIRE(model.ok());
  auto g = model.value()->generate(t["text"].get<std::string>(), 4);
  REQUIRE(g.ok());
  CHECK(g.value().ids == std::vector<std::int32_t>{ids[0]});
  CHECK(g.value().stopped_at_end);
}

TEST_CASE("loadPretrained: broken decoder checkpoints name the field, value or tensor", "[modern][hf]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const json config = json::parse(read_text(dir + "/config.json"));
  const auto file = read_bytes(dir + "/model.safetensors");
  auto error_of = [&](const json& c) {
    auto r = load_checkpoint(c.dump(), tokenizer_of(dir), file, file.size());
    REQUIRE_FALSE(r.ok());
    return r.status().message;
  };
  json c = config;
  c["rope_scaling"] = {{"rope_type", "longrope"}, {"long_factor", {1.0}}, {"short_factor", {1.0}}};
  CHECK(error_of(c) ==
        "loadPretrained: config.rope_scaling.rope_type 'longrope' is not supported (default, linear, dynamic, llama3, yarn)");
  c = config;
  c["rope_parameters"] = {{"rope_type", "su"}, {"rope_theta", 10.0}};
  CHECK(error_of(c) ==
        "loadPretrained: config.rope_parameters.rope_type 'su' is not supported (default, linear, dynamic, llama3, yarn)");
  c = config;
  c["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"mscale", 0.7}};
  CHECK(error_of(c) == "loadPretrained: config.rope_scaling.mscale 0.7 is not supported (absent)");
  c = config;
  c["hidden_act"] = "mish";
  CHECK(error_of(c) ==
        "loadPretrained: config.hidden_act 'mish' is not supported (silu, gelu_pytorch_tanh, gelu_new, gelu, relu)");
  c = config;
  c["num_key_value_heads"] = 3;
  CHECK(error_of(c) ==
        "loadPretrained: config.num_attention_heads (4) must be a multiple of config.num_key_value_heads (3)");
  c = config;
  c["num_hidden_layers"] = 3;  // the file has two layers
  CHECK(error_of(c) == "loadPretrained: weights: tensor \"layers.2.input_layernorm.weight\" [16] is missing (is the "
                       "file from another model?)");
  c = config;
  c["vocab_size"] = 200;  // the tokenizer's ids go to 257
  CHECK(error_of(c) == "loadPretrained: tokenizer has 258 tokens but config.vocab_size is 200 (is the tokenizer from "
                       "another model?)");
  c = config;
  c["eos_token_id"] = "</s>";
  CHECK(error_of(c) == "loadPretrained: config.eos_token_id must be an integer or a list of integers, got string");
  // and the good checkpoint still loads and runs afterwards
  auto ok = load_checkpoint(config.dump(), tokenizer_of(dir), file, file.size());
  REQUIRE(ok.ok());
  CHECK(ok.value()->run("ok", attnscope::model::RunOptions{}).ok());
  // a text longer than max_position_embeddings
  c = config;
  c["max_position_embeddings"] = 4;
  auto short_model = load_checkpoint(c.dump(), tokenizer_of(dir), file, file.size());
  REQUIRE(short_model.ok());
  auto r = short_model.value()->run("Hello", attnscope::model::RunOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message == "run: text has 5 tokens, more than config.max_position_embeddings (4)");
}

TEST_CASE("loadPretrained: a sharded checkpoint in any order equals the single file; shard errors", "[modern][hf]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const std::string config = read_text(dir + "/config.json");
  const json want = json::parse(read_text(dir + "/expected.json"));
  const auto a = read_bytes(dir + "/sharded/model-00001-of-00002.safetensors");
  const auto b = read_bytes(dir + "/sharded/model-00002-of-00002.safetensors");
  auto load_shards = [&](const std::vector<const std::vector<std::uint8_t>*>& files)
      -> attnscope::core::Result<std::unique_ptr<attnscope::model::Transformer>> {
    std::vector<std::span<const std::uint8_t>> headers;
    std::vector<std::uint64_t> sizes;
    for (const auto* f : files) {
      headers.emplace_back(*f);
      sizes.push_back(f->size());
    }
    auto l = attnscope::model::HfCheckpointLoader::begin_shards(config, tokenizer_of(dir), headers, sizes,
                                                                "loadPretrained");
    if (!l.ok()) return l.status();
    // shards fed last first, in odd-sized chunks
    for (std::size_t s = files.size(); s-- > 0;) {
      const auto& f = *files[s];
      for (std::size_t at = 0; at < f.size(); at += 777) {
        auto st = l.value()->feed_shard(s, at, std::span<const std::uint8_t>(f.data() + at, std::min<std::size_t>(777, f.size() - at)));
        if (!st.ok()) return st;
      }
    }
    return l.value()->finish();
  };
  // second shard listed first
  auto model = load_shards({&b, &a});
  INFO(model.status().message);
  REQUIRE(model.ok());
  const json& t = want["texts"][0];
  auto r = model.value()->run(t["text"].get<std::string>(), attnscope::model::RunOptions{});
  REQUIRE(r.ok());
  attnscope::test::check_close(r.value().main.output, t["output"].get<std::vector<double>>(), 1e-4, 1e-3,
                               "sharded output");
  CHECK(r.value().next.ids == t["next"]["ids"].get<std::vector<std::int32_t>>());
  // a tensor in two shards, a tensor in no shard: named
  auto twice = load_shards({&a, &b, &a});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message ==
        "loadPretrained: weights: tensor \"model.embed_tokens.weight\" is in two shards (weights[0] and weights[2])");
  auto half = load_shards({&b});
  REQUIRE_FALSE(half.ok());
  CHECK(half.status().message.find("is missing") != std::string::npos);
  auto none = load_shards({&b, &b});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message.find("is in two shards (weights[0] and weights[1])") != std::string::npos);
}
