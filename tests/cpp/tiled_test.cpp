// tiled_test.cpp: run options heads / summaries (attention/tiled.h). The tiled (online-softmax) self-attention
// against the materialised path of the same model and against the float64 PyTorch expectations of
// tests/fixtures/modern (every decoder checkpoint: GQA/MQA, windows, soft-capping, q/k norms, RoPE scalings);
// per-head summaries against float64 sums over the materialised weights, computed here; ablation honoured.
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "model/hf_checkpoint.h"
#include "support/compare.h"
#include "support/fixtures.h"
#include "tokenizers/hf_tokenizer.h"

using attnscope::model::RunOptions;
using attnscope::model::RunTrace;
using attnscope::model::TraceLevel;
using attnscope::test::max_abs_error;
using attnscope::test::read_bytes;
using attnscope::test::read_text;
using nlohmann::json;

namespace {

// Within 1e-5 of the largest magnitude of `want` (float32 sums of a few hundred terms differ in their last bits
// between the two orders of summation; relative to each element, cancellation would magnify that).
double check_scaled(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  double scale = 1.0;
  for (const float x : want) scale = std::max(scale, static_cast<double>(std::abs(x)));
  attnscope::test::check_close(got, want, 1e-5 * scale, 0.0, what);
  return max_abs_error(got, want) / scale;
}

std::unique_ptr<attnscope::model::Transformer> load(const std::string& name, int max_positions = 0) {
  const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR "/modern/") + name;
  auto t = attnscope::tokenizers::HfTokenizer::from_json(read_text(dir + "/tokenizer.json"), "loadPretrained",
                                                         "tokenizer");
  REQUIRE(t.ok());
  json config = json::parse(read_text(dir + "/config.json"));
  if (max_positions > 0) config["max_position_embeddings"] = max_positions;
  const std::vector<std::uint8_t> file = read_bytes(dir + "/model.safetensors");
  auto l = attnscope::model::HfCheckpointLoader::begin(
      config.dump(), attnscope::model::TextEncoder::checkpoint(std::move(t).value()), file, file.size(), "loadPretrained");
  REQUIRE(l.ok());
  REQUIRE(l.value()->feed(0, file).ok());
  auto m = l.value()->finish();
  INFO(name << ": " << m.status().message);
  REQUIRE(m.ok());
  return std::move(m).value();
}

RunTrace run(const attnscope::model::Transformer& m, const std::string& text, const RunOptions& o) {
  auto r = m.run(text, o);
  INFO(r.status().message);
  REQUIRE(r.ok());
  return std::move(r).value();
}

RunOptions tiled_options(int top_k = 4) {
  RunOptions o;
  o.level = TraceLevel::kNone;
  o.heads_mode = RunOptions::Heads::kNone;
  o.summaries = true;
  o.summary_top_k = top_k;
  o.layer_outputs = true;  // these tests compare every layer's output (JS layerOutputs: true; off by default when tiled)
  return o;
}

// A text of about n tokens for the byte-level fixtures (one token per byte or so).
std::string long_text(int n) {
  const std::string words = "the quick brown fox jumps over the lazy dog while seven wizards quietly box ";
  std::string s;
  while (static_cast<int>(s.size()) < n) s += words;
  return s.substr(0, static_cast<std::size_t>(n));
}

// Float64 summaries of weights [H, n, n] over rows < rows, as tiled.h defines them.
struct Want {
  std::vector<double> entropy, distance, sink;
};
Want summaries_of(const std::vector<float>& w, int H, int n, int rows) {
  Want s;
  for (int h = 0; h < H; ++h) {
    double e = 0, d = 0, k = 0;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < n; ++j) {
        const double p = w[(static_cast<std::size_t>(h) * n + i) * n + j];
        if (p > 0) e -= p * std::log(p);
        d += p * std::abs(i - j);
      }
      k += w[(static_cast<std::size_t>(h) * n + i) * n];
    }
    s.entropy.push_back(e / rows);
    s.distance.push_back(d / rows);
    s.sink.push_back(k / rows);
  }
  return s;
}

// The summaries of one layer agree with float64 sums over the materialised weights; every top-k entry is a key
// whose weight is the one reported, in descending order, and no other key is heavier than the last one kept.
double check_summary(const attnscope::attention::HeadSummaries& got, const std::vector<float>& w, int H, int n,
                     const std::string& what) {
  const Want want = summaries_of(w, H, n, n);
  REQUIRE(got.num_heads == H);
  REQUIRE(got.rows == n);
  attnscope::test::check_close(got.entropy, want.entropy, 1e-5, 1e-5, what + " entropy");
  attnscope::test::check_close(got.distance, want.distance, 1e-4, 1e-5, what + " distance");
  attnscope::test::check_close(got.sink, want.sink, 1e-6, 1e-5, what + " sink");
  double err = std::max({max_abs_error(got.entropy, want.entropy), max_abs_error(got.distance, want.distance),
                         max_abs_error(got.sink, want.sink)});
  const int k = got.top_k;
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < n; ++i) {
      const float* row = w.data() + (static_cast<std::size_t>(h) * n + i) * n;
      const std::size_t at = (static_cast<std::size_t>(h) * n + i) * static_cast<std::size_t>(k);
      int listed = 0;
      for (int t = 0; t < k; ++t) {
        const int id = got.top_ids[at + t];
        if (id < 0) break;
        ++listed;
        err = std::max(err, std::abs(double(got.top_weights[at + t]) - row[id]));
        REQUIRE(std::abs(double(got.top_weights[at + t]) - row[id]) < 1e-5);
        if (t > 0) REQUIRE(got.top_weights[at + t] <= got.top_weights[at + t - 1] + 1e-7f);
      }
      const int positive = static_cast<int>(std::count_if(row, row + n, [](float p) { return p > 0.0f; }));
      REQUIRE(listed == std::min(k, positive));
      if (listed > 0) {  // nothing heavier left out (beyond float rounding of equal weights)
        const float last = got.top_weights[at + listed - 1];
        for (int j = 0; j < n; ++j) {
          bool in = false;
          for (int t = 0; t < listed; ++t) in = in || got.top_ids[at + t] == j;
          if (!in) REQUIRE(row[j] <= last + 1e-5f);
        }
      }
    }
  }
  return err;
}

const char* const kCheckpoints[] = {
    "llama-f32-untied-gqa-llama3", "llama-bf16-tied-mqa-headdim-linear-v5", "mistral-f16-window-dynamic",
    "qwen2-f32-sliding-yarn",      "qwen3-bf16-qknorm-headdim",             "gemma-f32",
    "gemma2-f32-softcap",          "gemma3-bf16-local-rope",                "phi3-f32-fused-partial",
};

}  // namespace

TEST_CASE("tiled attention equals the float64 PyTorch expectations of every decoder checkpoint", "[tiled]") {
  for (const char* name : kCheckpoints) {
    const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR "/modern/") + name;
    const json want = json::parse(read_text(dir + "/expected.json"));
    const auto model = load(name);
    double max_out = 0;
    for (const json& t : want["texts"]) {
      const RunTrace r = run(*model, t["text"], tiled_options());
      REQUIRE(r.main.layers.size() == t["layer_outputs"].size());
      for (std::size_t i = 0; i < r.main.layers.size(); ++i) {
        CHECK(r.main.layers[i].attention.weights.empty());  // never materialised
        const auto wh = t["layer_outputs"][i].get<std::vector<double>>();
        attnscope::test::check_close(r.main.layers[i].output, wh, 1e-4, 1e-3, std::string(name) + " tiled layer output");
      }
      const auto wo = t["output"].get<std::vector<double>>();
      attnscope::test::check_close(r.main.output, wo, 1e-4, 1e-3, std::string(name) + " tiled output");
      max_out = std::max(max_out, max_abs_error(r.main.output, wo));
      CHECK(r.next.ids == t["next"]["ids"].get<std::vector<std::int32_t>>());
      // without the layer outputs (the tiled default): none kept, the same output and next tokens bit for bit
      RunOptions lean = tiled_options();
      lean.layer_outputs.reset();
      const RunTrace q = run(*model, t["text"], lean);
      for (const auto& l : q.main.layers) CHECK(l.output.empty());
      CHECK(q.main.output == r.main.output);
      CHECK(q.next.ids == r.next.ids);
    }
    std::printf("tiled %-40s max abs error of the output vs float64 PyTorch: %.2e\n", name, max_out);
  }
}

TEST_CASE("tiled attention at a few hundred tokens equals the materialised path; summaries equal float64 sums",
          "[tiled]") {
  // max_position_embeddings raised so that 300 tokens fit (the RoPE scalings here do not read it, except
  // mistral's dynamic NTK, which both paths compute the same way)
  for (const char* name : kCheckpoints) {
    const auto model = load(name, 512);
    const std::string text = long_text(300);  // > one key tile (256): the online softmax rescales across tiles
    RunOptions full;
    full.level = TraceLevel::kWeights;
    full.summaries = true;
    full.summary_top_k = 4;
    const RunTrace a = run(*model, text, full);
    const RunTrace b = run(*model, text, tiled_options());
    const int n = a.main.n, H = a.num_heads;
    REQUIRE(n >= 256);
    double out_err = 0, sum_err = 0;
    for (std::size_t i = 0; i < a.main.layers.size(); ++i) {
      const auto& la = a.main.layers[i];
      const auto& lb = b.main.layers[i];
      REQUIRE(lb.attention.weights.empty());
      out_err = std::max(out_err, check_scaled(lb.output, la.output, std::string(name) + " layer output"));
      REQUIRE(la.has_summary);
      REQUIRE(lb.has_summary);
      sum_err = std::max(sum_err, check_summary(la.summary, la.attention.weights, H, n, std::string(name) + " full"));
      sum_err = std::max(sum_err, check_summary(lb.summary, la.attention.weights, H, n, std::string(name) + " tiled"));
    }
    out_err = std::max(out_err, check_scaled(b.main.output, a.main.output, std::string(name) + " output"));
    std::printf("tiled %-40s n=%d: max abs diff vs materialised / max |value| %.2e; summaries vs float64 %.2e\n", name, n, out_err,
                sum_err);
  }
}

TEST_CASE("heads: only the listed maps, equal to the materialised ones; ablation honoured by the tiled path",
          "[tiled]") {
  const auto model = load("llama-f32-untied-gqa-llama3", 512);
  const std::string text = long_text(280);
  RunOptions full;
  full.level = TraceLevel::kWeights;
  full.ablate = {{1, 2}};
  const RunTrace a = run(*model, text, full);
  RunOptions o = tiled_options();
  o.ablate = {{1, 2}};
  o.heads_mode = RunOptions::Heads::kList;
  o.heads = {{1, 3}, {0, 0}, {1, 2}};
  o.full_layers = {0};  // a layer kept in full: its listed map is the materialised one
  const RunTrace b = run(*model, text, o);
  const int n = a.main.n;
  const auto cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  REQUIRE(b.heads.size() == 3);
  for (std::size_t k = 0; k < b.heads.size(); ++k) {
    const auto& h = b.heads[k];
    CHECK(h.layer == o.heads[k].first);
    CHECK(h.head == o.heads[k].second);
    const auto& w = a.main.layers[static_cast<std::size_t>(h.layer)].attention.weights;
    const std::vector<float> slice(w.begin() + static_cast<std::ptrdiff_t>(h.head * cells),
                                   w.begin() + static_cast<std::ptrdiff_t>((h.head + 1) * cells));
    attnscope::test::check_close(h.weights, slice, 1e-6, 0.0, "heads map");
  }
  // the ablated head's map is zeros, and the run after it equals the materialised ablated run
  CHECK(*std::max_element(b.heads[2].weights.begin(), b.heads[2].weights.end()) == 0.0f);
  CHECK(!b.main.layers[0].attention.weights.empty());  // in `full`
  CHECK(b.main.layers[1].attention.weights.empty());
  check_scaled(b.main.output, a.main.output, "ablated output");
  CHECK(b.main.layers[1].summary.entropy[2] == 0.0f);
  // errors name the option
  RunOptions bad = tiled_options();
  bad.heads_mode = RunOptions::Heads::kList;
  bad.heads = {{0, 9}};
  auto e = model->run(text, bad);
  REQUIRE(!e.ok());
  CHECK(e.status().message == "run: heads[0].head (9) must be an integer from 0 to 3 (layer 0 has 4 heads)");
  bad = tiled_options();
  bad.level = TraceLevel::kWeights;
  e = model->run(text, bad);
  REQUIRE(!e.ok());
  CHECK(e.status().message.find("heads (a list or 'none') needs trace 'none'") != std::string::npos);
  CHECK(model->run(text, tiled_options()).ok());  // and the model still runs
}
