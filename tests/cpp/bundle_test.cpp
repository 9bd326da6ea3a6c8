// bundle_test.cpp: the bundled trained models (model/bundle.h) loaded from models/<name>/ and compared with the
// PyTorch outputs their training scripts exported (models/<name>/reference.json, training/common.py): greedy
// outputs exactly, attention weights within 2e-5, last logits within 1e-4 abs + 1e-3 rel (API.md); then the
// loader's errors. Regenerate the references by retraining: training/README.md.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "model/bundle.h"
#include "model/heads.h"
#include "support/compare.h"
#include "support/fixtures.h"

namespace {

namespace fx = attnscope::test;
namespace model = attnscope::model;
using attnscope::test::check_close;
using fx::json;

constexpr double kWeightsAtol = 2e-5;
constexpr double kLogitsAtol = 1e-4, kLogitsRtol = 1e-3;

std::string models_dir() { return fx::fixtures_dir() + "/../../models/"; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) FAIL("cannot open " << path << " (the bundled models live in models/; training/README.md)");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  const std::string s = read_text(path);
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

std::unique_ptr<model::Transformer> load_transformer(const std::string& name) {
  auto r = model::load_bundled_transformer(read_text(models_dir() + name + "/config.json"),
                                           read_bytes(models_dir() + name + "/model.safetensors"), "loadBundled");
  INFO(r.status().message);
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<std::int32_t> ids(const json& a) { return a.get<std::vector<std::int32_t>>(); }

// Every shipped model (a folder of models/ with a config.json), sorted, optionally only one architecture and held-
// out metric: the tests cover whatever the training scripts exported, by kind.
std::vector<std::string> shipped(const std::string& architecture = "", const std::string& metric = "") {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir())) {
    const std::string name = entry.path().filename().string();
    if (!std::filesystem::exists(entry.path() / "config.json")) continue;
    if (!architecture.empty() && fx::read_json(models_dir() + name + "/config.json").at("architecture") != architecture) {
      continue;
    }
    if (!metric.empty() && fx::read_json(models_dir() + name + "/heldout.json").at("metric") != metric) continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The logits of the model's head at the last real row of a run's main side (heads.h, as run() computes `next`).
std::vector<float> last_logits(const model::Transformer& t, const model::RunTrace& r) {
  const model::UserRows none;
  model::EmbedArgs a;
  a.m = &t.description();
  a.params = &t.parameters();
  a.encoder = &t.encoder();
  a.user = &none;
  model::RunVocab vocab;
  const auto d = static_cast<std::size_t>(r.d_model);
  const std::span<const float> h(r.main.output.data() + static_cast<std::size_t>(r.main.n_real - 1) * d, d);
  const std::vector<double> logits = model::lm_logits(a, vocab, h).value();
  return std::vector<float>(logits.begin(), logits.end());
}

// Greedy outputs of every case of reference.json equal PyTorch's.
void check_greedy(const model::Transformer& t, const json& ref) {
  for (const json& c : ref.at("cases")) {
    const std::string input = c.at("input");
    auto g = t.generate(input, c.value("maxNewTokens", 32));
    INFO(input << ": " << g.status().message);
    REQUIRE(g.ok());
    CHECK(g.value().ids == ids(c.at("outputIds")));
    // the core's text keeps a generated "<unk>" visible; the training scripts' decode drops every special token
    std::string text;
    for (const std::string& tok : g.value().tokens) text += tok == "<unk>" ? "" : tok;
    CHECK(text == c.at("output").get<std::string>());
  }
}

void check_layers(const std::vector<model::LayerTrace>& layers, const json& want, bool cross, const std::string& what) {
  REQUIRE(layers.size() == want.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& got = cross ? layers[l].cross.weights : layers[l].attention.weights;
    check_close(got, fx::floats(want[l]), kWeightsAtol, 0.0, what + " layer " + std::to_string(l));
  }
}

}  // namespace

TEST_CASE("load_bundled_transformer: decoder-only models equal PyTorch's reference", "[model][bundle]") {
  const std::vector<std::string> names = shipped("decoder");
  REQUIRE(names.size() >= 2);  // reverse and at least one language model
  for (const std::string& name : names) {
    SECTION(name) {
      const auto t = load_transformer(name);
      const json ref = fx::read_json(models_dir() + name + "/reference.json");
      check_greedy(*t, ref);
      // teacher-forced: the first case's text (reverse: prompt + answer; LMs: the prompt)
      const json& c = ref.at("cases").at(0);
      const json& tf = c.at("teacherForced");
      const std::string text = tf.contains("text") ? tf.at("text").get<std::string>() : c.at("input").get<std::string>();
      auto r = t->run(text, model::TraceLevel::kWeights);
      REQUIRE(r.ok());
      CHECK(r.value().main.ids == ids(tf.at("ids")));
      check_layers(r.value().main.layers, tf.at("selfAttention"), false, std::string(name) + " self-attention");
      check_close(last_logits(*t, r.value()), fx::floats(tf.at("lastLogits")), kLogitsAtol, kLogitsRtol,
                  std::string(name) + " last logits");
    }
  }
}

// The first `n` code points of UTF-8 text (the char vocabulary has one token per code point).
std::string first_code_points(const std::string& text, int n) {
  std::size_t end = 0;
  for (int count = 0; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0u) != 0x80u && count++ == n) break;
  }
  return text.substr(0, end);
}

TEST_CASE("load_bundled_transformer: the language models' held-out loss equals PyTorch's", "[model][bundle]") {
  // heldout.json: mean cross-entropy (nats) of each character given the ones before it, texts truncated to
  // maxPositions, the first character of each text not predicted; one causal run per text gives every position.
  const std::vector<std::string> names = shipped("decoder", "loss");
  REQUIRE(!names.empty());
  for (const std::string& name : names) {
    SECTION(name) {
      const auto t = load_transformer(name);
      const json heldout = fx::read_json(models_dir() + name + "/heldout.json");
      const model::UserRows none;
      model::EmbedArgs a;
      a.m = &t->description();
      a.params = &t->parameters();
      a.encoder = &t->encoder();
      a.user = &none;
      const auto d = static_cast<std::size_t>(t->description().d_model);
      double total = 0.0;
      long long count = 0;
      for (const json& text : heldout.at("texts")) {
        auto r = t->run(first_code_points(text.get<std::string>(), t->description().embedding.max_positions),
                        model::TraceLevel::kNone);
        REQUIRE(r.ok());
        const model::SideTrace& side = r.value().main;
        model::RunVocab vocab;
        for (int i = 0; i + 1 < side.n; ++i) {
          const std::vector<double> logits = model::lm_logits(
              a, vocab, std::span<const float>(side.output.data() + static_cast<std::size_t>(i) * d, d)).value();
          double max = logits[0];
          for (const double x : logits) max = std::max(max, x);
          double sum = 0.0;
          for (const double x : logits) sum += std::exp(x - max);
          total += max + std::log(sum) - logits[static_cast<std::size_t>(side.ids[static_cast<std::size_t>(i) + 1])];
          ++count;
        }
      }
      const double loss = total / static_cast<double>(count);
      const double pytorch = fx::number(heldout.at("pytorchLoss"));
      INFO(name << ": attnscope held-out loss " << loss << " over " << count << " characters, PyTorch " << pytorch);
      CHECK(std::abs(loss - pytorch) < 1e-4);
      WARN(name << " held-out loss (attnscope): " << loss << " nats/char over " << count << " characters");
    }
  }
}

TEST_CASE("load_bundled_transformer: dates equals PyTorch's greedy outputs and encoder attention", "[model][bundle]") {
  const auto t = load_transformer("dates");
  const json ref = fx::read_json(models_dir() + "dates/reference.json");
  check_greedy(*t, ref);
  auto g = t->generate("November 22, 2026", 32);
  REQUIRE(g.ok());
  CHECK(g.value().text == "2026-11-22");
  CHECK(g.value().stopped_at_end);
  // The encoder side of a run is the source alone (no begin token), as PyTorch's encoder reads it.
  const json& c = ref.at("cases").at(0);
  const json& tf = c.at("teacherForced");
  auto r = t->run(c.at("input").get<std::string>(), tf.at("target").get<std::string>(), model::TraceLevel::kWeights);
  REQUIRE(r.ok());
  CHECK(r.value().source.ids == ids(c.at("inputIds")));
  check_layers(r.value().source.layers, tf.at("encoderSelfAttention"), false, "dates encoder self-attention");
}

TEST_CASE("BundledGru: dates-bahdanau equals PyTorch's reference", "[model][bundle]") {
  auto loaded = model::BundledGru::load(read_text(models_dir() + "dates-bahdanau/config.json"),
                                        read_bytes(models_dir() + "dates-bahdanau/model.safetensors"), "loadBundled");
  INFO(loaded.status().message);
  REQUIRE(loaded.ok());
  const model::BundledGru& gru = *loaded.value();
  const json ref = fx::read_json(models_dir() + "dates-bahdanau/reference.json");
  for (const json& c : ref.at("cases")) {
    model::Generation g;
    auto r = gru.generate(c.at("input").get<std::string>(), c.at("maxNewTokens").get<int>(), &g);
    REQUIRE(r.ok());
    CHECK(g.ids == ids(c.at("outputIds")));
    CHECK(g.text == c.at("output").get<std::string>());
    CHECK(r.value().source_ids == ids(c.at("inputIds")));
  }
  const json& c = ref.at("cases").at(0);
  const json& tf = c.at("teacherForced");
  auto r = gru.run(c.at("input").get<std::string>(), c.at("output").get<std::string>());
  REQUIRE(r.ok());
  const model::GruSeq2SeqTrace& tr = r.value().trace;
  CHECK(tr.inputs == ids(tf.at("targetIds")));
  CHECK(r.value().input_tokens.front() == "<s>");
  CHECK(r.value().tokens.back() == "</s>");
  check_close(tr.weights, fx::floats(tf.at("attention")), kWeightsAtol, 0.0, "alignment [T, S]");
  check_close(tr.encoder_outputs, fx::floats(tf.at("encoderOutputs")), 1e-5, 1e-4, "encoder outputs");
  check_close(tr.encoder_final, fx::floats(tf.at("encoderState")), 1e-5, 1e-4, "encoder final state");
  const auto v = static_cast<std::size_t>(gru.model().config().vocab_size);
  const std::vector<float> last(tr.logits.end() - static_cast<std::ptrdiff_t>(v), tr.logits.end());
  check_close(last, fx::floats(tf.at("lastLogits")), kLogitsAtol, kLogitsRtol, "last logits");
}

TEST_CASE("read_bundle_info: every shipped model names itself", "[model][bundle]") {
  const std::vector<std::string> names = shipped();
  REQUIRE(names.size() >= 5);
  for (const std::string& name : names) {
    auto info = model::read_bundle_info(read_text(models_dir() + name + "/config.json"), "loadBundled");
    INFO(name << ": " << info.status().message);
    REQUIRE(info.ok());
    CHECK(info.value().name == name);
    CHECK(!info.value().task.empty());
    CHECK(!info.value().description.empty());
  }
}

TEST_CASE("load_bundled_transformer: bad config and weights are errors naming the argument", "[model][bundle]") {
  const std::string config = read_text(models_dir() + "reverse/config.json");
  const std::vector<std::uint8_t> weights = read_bytes(models_dir() + "reverse/model.safetensors");
  auto edited = [&](const std::function<void(json&)>& edit) {
    json c = json::parse(config);
    edit(c);
    return c.dump();
  };
  auto message = [&](const std::string& cfg, const std::vector<std::uint8_t>& w) {
    auto r = model::load_bundled_transformer(cfg, w, "loadBundled");
    REQUIRE_FALSE(r.ok());
    return r.status().message;
  };
  CHECK(message("{", weights).rfind("loadBundled: config: not valid JSON (", 0) == 0);
  CHECK(message(edited([](json& c) { c["format"] = "attnscope-model/2"; }), weights) ==
        "loadBundled: config: format (\"attnscope-model/2\") must be \"attnscope-model/1\"");
  CHECK(message(edited([](json& c) { c["tokenizer"]["bos"] = "<go>"; }), weights) ==
        "loadBundled: config: tokenizer.bos (\"<go>\") is not in tokenizer.vocab");
  CHECK(message(edited([](json& c) { c["tokenizer"]["kind"] = "bpe"; }), weights) ==
        "loadBundled: config: tokenizer.kind (\"bpe\") must be \"char\"");
  CHECK(message(edited([](json& c) { c["numHeads"] = 5; }), weights) ==
        "loadBundled: config: dModel (64) must be divisible by numHeads (5)");
  CHECK(message(edited([](json& c) { c["activation"] = "swish"; }), weights) ==
        "loadBundled: config: activation (\"swish\") must be one of 'relu', 'gelu', 'gelu-tanh'");
  CHECK(message(edited([](json& c) { c["dFF"] = 0; }), weights) ==
        "loadBundled: config: dFF (0) must be a positive integer");
  CHECK(message(edited([](json& c) { c["architecture"] = "gru-bahdanau"; }), weights) ==
        "loadBundled: config: architecture (\"gru-bahdanau\") must be 'encoder-decoder' or 'decoder' for a transformer");
  // weights: the file of another model, a truncated file
  CHECK(message(config, read_bytes(models_dir() + "dates/model.safetensors")).rfind("loadBundled: weights: tensor ", 0) ==
        0);
  CHECK(message(config, std::vector<std::uint8_t>(weights.begin(), weights.begin() + 3)) ==
        "loadBundled: weights: safetensors buffer (3 bytes) is shorter than the 8-byte header length");
  // one layer fewer in the config than in the file: the file's extra tensors are not parameters
  CHECK(message(edited([](json& c) { c["numLayers"] = 2; }), weights) ==
        "loadBundled: weights: tensor \"decoder.layers.2.self_attn.wq\" is not a parameter of this model (see "
        "docs/model.md for the names)");
  // and one more: a tensor is missing
  CHECK(message(edited([](json& c) { c["numLayers"] = 4; }), weights) ==
        "loadBundled: weights: tensor \"decoder.layers.3.linear1.bias\" [128] is missing");
}

TEST_CASE("BundledGru: bad config and inputs are errors naming the argument", "[model][bundle]") {
  const std::string config = read_text(models_dir() + "dates-bahdanau/config.json");
  const std::vector<std::uint8_t> weights = read_bytes(models_dir() + "dates-bahdanau/model.safetensors");
  json c = json::parse(config);
  c["numHiddens"] = 0;
  auto bad = model::BundledGru::load(c.dump(), weights, "loadBundled");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message == "loadBundled: config: numHiddens (0) must be a positive integer");
  c = json::parse(config);
  c["embedSize"] = 16;
  bad = model::BundledGru::load(c.dump(), weights, "loadBundled");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message.rfind("loadBundled: weights: tensor \"", 0) == 0);
  auto gru = model::BundledGru::load(config, weights, "loadBundled");
  REQUIRE(gru.ok());
  model::Generation g;
  auto empty = gru.value()->generate("", 8, &g);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message == "generate: input has no tokens");
  auto many = gru.value()->generate("1 May 2000", 5000, &g);
  REQUIRE_FALSE(many.ok());
  CHECK(many.status().message == "generate: maxNewTokens (5000) must be an integer from 0 to 4096");
  // still correct afterwards
  auto ok = gru.value()->generate("1 May 2000", 16, &g);
  REQUIRE(ok.ok());
  CHECK(g.text == "2000-05-01");
}
