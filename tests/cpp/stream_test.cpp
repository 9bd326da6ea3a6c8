// stream_test.cpp: loadPretrained's streamWeights (model/layer_stream.h). A checkpoint whose decoder layers are read
// from the file before each layer's forward gives results bit-identical to the same checkpoint held resident:
// run (every layer's attention weights and output, the output, next), the tiled path with summaries and generate,
// on the small decoder fixtures of tests/fixtures/modern (float32 and BF16, Llama / Qwen3 / Phi-3 / Gemma 3, one
// and two layers, a single file and two shards). Reads that fail and non-finite streamed values are errors naming
// the tensor and the file; the model works again afterwards.
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/hf_checkpoint.h"
#include "support/fixtures.h"
#include "tokenizers/hf_tokenizer.h"

namespace {

using attnscope::model::HfCheckpointLoader;
using attnscope::model::LayerStream;
using attnscope::model::RunOptions;
using attnscope::model::Transformer;
using attnscope::test::read_bytes;
using attnscope::test::read_text;
using Bytes = std::vector<std::uint8_t>;
using nlohmann::json;

attnscope::model::TextEncoder tokenizer_of(const std::string& dir) {
  auto t = attnscope::tokenizers::HfTokenizer::from_json(read_text(dir + "/tokenizer.json"), "loadPretrained",
                                                         "tokenizer");
  REQUIRE(t.ok());
  return attnscope::model::TextEncoder::checkpoint(std::move(t).value());
}

// What the test's reader does: counts the bytes it reads, and fails when told to.
struct Reads {
  std::uint64_t bytes = 0;
  int calls = 0;
  bool fail = false;
};

// Loads `files` (the shards, fed last first in 997-byte chunks) resident, or streamed with a reader over the same
// bytes in memory: only resident_ranges is fed then.
attnscope::core::Result<std::unique_ptr<Transformer>> load(const std::string& dir, const std::string& config,
                                                           const std::vector<const Bytes*>& files, bool stream,
                                                           Reads* reads = nullptr) {
  std::vector<std::span<const std::uint8_t>> headers;
  std::vector<std::uint64_t> sizes;
  for (const Bytes* f : files) {
    headers.emplace_back(*f);
    sizes.push_back(f->size());
  }
  auto l = HfCheckpointLoader::begin_shards(config, tokenizer_of(dir), headers, sizes, "loadPretrained", false, stream);
  if (!l.ok()) return l.status();
  for (std::size_t s = files.size(); s-- > 0;) {
    const Bytes& f = *files[s];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, f.size()}};
    if (stream) ranges = l.value()->resident_ranges(s);
    for (const auto& [a, b] : ranges) {
      for (std::uint64_t at = a; at < b; at += 997) {
        const std::uint64_t n = std::min<std::uint64_t>(997, b - at);
        ATTN_TRY(l.value()->feed_shard(s, at, std::span<const std::uint8_t>(f.data() + at, n)));
      }
    }
    if (stream) ATTN_TRY(l.value()->feed_shard(s, f.size(), {}));
  }
  if (!stream) return l.value()->finish();
  return l.value()->finish([files, reads](std::size_t shard, std::uint64_t offset, std::span<std::uint8_t> dst) {
    if (reads != nullptr && reads->fail) return std::string("the file 'model.safetensors' changed size");
    const Bytes& f = *files.at(shard);
    if (offset + dst.size() > f.size()) return std::string("past the end");
    std::memcpy(dst.data(), f.data() + offset, dst.size());
    if (reads != nullptr) {
      reads->bytes += dst.size();
      ++reads->calls;
    }
    return std::string();
  });
}

const std::string kBf16Dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-bf16-tied-mqa-headdim-linear-v5";

// The two-layer BF16 Llama, streamed (its reads counted in `reads`).
std::unique_ptr<Transformer> load_bf16_streamed(const Bytes& file, Reads& reads) {
  auto m = load(kBf16Dir, read_text(kBf16Dir + "/config.json"), {&file}, true, &reads);
  INFO(m.status().message);
  REQUIRE(m.ok());
  return std::move(m).value();
}

// Equal bit for bit (NaN-free float vectors: == is exact).
template <class T>
void same(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  INFO(what);
  REQUIRE(a.size() == b.size());
  // memcmp of an empty vector's data() (null) is undefined behaviour (UBSan in the ASan tree)
  CHECK((a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0));
}

void same_runs(const Transformer& resident, const Transformer& streamed, const std::string& text,
               const RunOptions& o, const std::string& what) {
  auto a = resident.run(text, o);
  auto b = streamed.run(text, o);
  INFO(what << ": " << b.status().message);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const auto& x = a.value().main;
  const auto& y = b.value().main;
  REQUIRE(x.layers.size() == y.layers.size());
  for (std::size_t i = 0; i < x.layers.size(); ++i) {
    same(x.layers[i].attention.weights, y.layers[i].attention.weights, what + " attention " + std::to_string(i));
    same(x.layers[i].output, y.layers[i].output, what + " output " + std::to_string(i));
    same(x.layers[i].ff_hidden, y.layers[i].ff_hidden, what + " ff_hidden " + std::to_string(i));
    for (std::size_t h = 0; h < x.layers[i].head_maps.size(); ++h) {
      same(x.layers[i].head_maps[h], y.layers[i].head_maps[h], what + " head map");
    }
    same(x.layers[i].summary.entropy, y.layers[i].summary.entropy, what + " summary entropy");
  }
  same(x.output, y.output, what + " output");
  CHECK(a.value().next.ids == b.value().next.ids);
  same(a.value().next.probs, b.value().next.probs, what + " next.probs");
}

}  // namespace

TEST_CASE("streamWeights: run, tiled summaries and generate are bit-identical to the resident model", "[stream]") {
  const char* const names[] = {"llama-f32-untied-gqa-llama3", "llama-bf16-tied-mqa-headdim-linear-v5",
                               "qwen3-bf16-qknorm-headdim", "phi3-f32-fused-partial", "gemma3-bf16-local-rope"};
  for (const char* name : names) {
    const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR "/modern/") + name;
    const json config = json::parse(read_text(dir + "/config.json"));
    const Bytes file = read_bytes(dir + "/model.safetensors");
    const json want = json::parse(read_text(dir + "/expected.json"));
    for (const int layers : {1, config["num_hidden_layers"].get<int>()}) {
      json c = config;
      c["num_hidden_layers"] = layers;  // one layer: the file's other layer is not used
      const std::string what = std::string(name) + " (" + std::to_string(layers) + " layers)";
      auto resident = load(dir, c.dump(), {&file}, false);
      Reads reads;
      auto streamed = load(dir, c.dump(), {&file}, true, &reads);
      INFO(what << ": " << streamed.status().message);
      REQUIRE(resident.ok());
      REQUIRE(streamed.ok());
      const LayerStream* s = streamed.value()->stream();
      REQUIRE(s != nullptr);
      CHECK(s->layers() == static_cast<std::size_t>(layers));
      // the streamed model holds layer 0's values (the buffer) and not the others'
      const long long resident_count = resident.value()->parameters().count();
      const long long streamed_count = streamed.value()->parameters().count();
      if (layers == 1) CHECK(streamed_count == resident_count);
      if (layers > 1) CHECK(streamed_count < resident_count);
      CHECK(resident.value()->parameter_shapes() == streamed.value()->parameter_shapes());
      CHECK(reads.bytes == 0);  // nothing is read before a run
      for (const json& t : want["texts"]) {
        const std::string text = t["text"];
        const std::uint64_t before = reads.bytes;
        same_runs(*resident.value(), *streamed.value(), text, RunOptions{}, what + " \"" + text + "\"");
        CHECK(reads.bytes - before == s->layer_bytes() * static_cast<std::uint64_t>(layers));  // each layer once
        RunOptions tiled;
        tiled.level = attnscope::model::TraceLevel::kNone;
        tiled.heads_mode = RunOptions::Heads::kList;
        tiled.heads = {{0, 1}, {layers - 1, 0}};
        tiled.summaries = true;
        same_runs(*resident.value(), *streamed.value(), text, tiled, what + " tiled \"" + text + "\"");
        auto g1 = resident.value()->generate(text, 4);
        auto g2 = streamed.value()->generate(text, 4);
        REQUIRE(g1.ok());
        REQUIRE(g2.ok());
        CHECK(g1.value().ids == g2.value().ids);
      }
    }
  }
}

TEST_CASE("streamWeights: each run reads the layers once, no more; resident parts only are fed", "[stream]") {
  const std::string dir = kBf16Dir;
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  Reads reads;
  auto streamed = load_bf16_streamed(file, reads);
  auto resident = load(dir, config, {&file}, false);
  REQUIRE(resident.ok());
  const LayerStream* s = streamed->stream();
  // layer bytes: every "model.layers.N." tensor of the file, counted from its header
  auto index = attnscope::io::parse_safetensors_header(file, file.size(), "test");
  REQUIRE(index.ok());
  std::uint64_t layer_bytes = 0, layer_values = 0;
  for (const auto& e : index.value().tensors) {
    if (e.name.find("layers.") == std::string::npos) continue;
    layer_bytes += e.end - e.begin;
    layer_values += e.count;
  }
  CHECK(s->layer_bytes() * 2 == layer_bytes);  // two layers of equal size
  // resident count - streamed count = layer 1's values (layer 0's are the buffer)
  CHECK(resident.value()->parameters().count() - streamed->parameters().count() ==
        static_cast<long long>(layer_values / 2));
  REQUIRE(streamed->run("Hello", RunOptions{}).ok());
  CHECK(reads.bytes == layer_bytes);
  REQUIRE(streamed->generate("Hello", 3).ok());  // the prompt, then one step per new token after the first
  CHECK(reads.bytes % layer_bytes == 0);
  CHECK(reads.bytes >= 2 * layer_bytes);
}

TEST_CASE("streamWeights: two shards in any order equal the single resident file", "[stream]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  const Bytes a = read_bytes(dir + "/sharded/model-00001-of-00002.safetensors");
  const Bytes b = read_bytes(dir + "/sharded/model-00002-of-00002.safetensors");
  auto resident = load(dir, config, {&file}, false);
  auto streamed = load(dir, config, {&b, &a}, true);
  INFO(streamed.status().message);
  REQUIRE(resident.ok());
  REQUIRE(streamed.ok());
  same_runs(*resident.value(), *streamed.value(), "Hello world", RunOptions{}, "sharded");
}

TEST_CASE("streamWeights: a failed read or a non-finite layer is an error naming it; the model works after", "[stream]") {
  const std::string dir = kBf16Dir;
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  Reads reads;
  auto streamed = load_bf16_streamed(file, reads);
  auto good = streamed->run("Hello", RunOptions{});
  REQUIRE(good.ok());
  reads.fail = true;
  auto bad = streamed->run("Hello", RunOptions{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message.rfind("run: weights: reading layer 0 (tensor \"model.layers.0.", 0) == 0);
  CHECK(bad.status().message.find("of weights) failed: the file 'model.safetensors' changed size") != std::string::npos);
  auto g = streamed->generate("Hello", 2);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().message.rfind("generate: weights: reading layer 0", 0) == 0);
  reads.fail = false;
  auto again = streamed->run("Hello", RunOptions{});
  REQUIRE(again.ok());
  same(good.value().main.output, again.value().main.output, "after a failed read");

  // a NaN in layer 1's up_proj: the resident load refuses it, the streamed model's run names it
  auto index = attnscope::io::parse_safetensors_header(file, file.size(), "test");
  REQUIRE(index.ok());
  Bytes broken = file;
  for (const auto& e : index.value().tensors) {
    if (e.name == "model.layers.1.mlp.up_proj.weight") {
      broken[index.value().data_offset + e.begin] = 0xC0;  // BF16 0x7FC0: a NaN
      broken[index.value().data_offset + e.begin + 1] = 0x7F;
    }
  }
  auto resident = load(dir, config, {&broken}, false);
  REQUIRE_FALSE(resident.ok());
  auto lazy = load(dir, config, {&broken}, true);
  REQUIRE(lazy.ok());
  auto nan = lazy.value()->run("Hello", RunOptions{});
  REQUIRE_FALSE(nan.ok());
  CHECK(nan.status().message == "run: weights: tensor \"model.layers.1.mlp.up_proj.weight\" has a value (NaN) that is not finite");
}

TEST_CASE("streamWeights: only decoder checkpoints stream; a gap over a resident tensor is refused", "[stream]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  auto l = HfCheckpointLoader::begin_shards(config, tokenizer_of(dir), {std::span<const std::uint8_t>(file)},
                                            {file.size()}, "loadPretrained", false, true);
  REQUIRE(l.ok());
  const auto ranges = l.value()->resident_ranges(0);
  REQUIRE(ranges.size() >= 3);  // embed_tokens, norm, lm_head
  // skipping straight to the second resident tensor leaves the first unfed: refused
  auto s = l.value()->feed_shard(0, ranges[1].first, std::span<const std::uint8_t>(file.data() + ranges[1].first, 4));
  REQUIRE_FALSE(s.ok());
  CHECK(s.message.find("expected byte 0") != std::string::npos);

  const std::string bert = ATTNSCOPE_FIXTURES_DIR "/hf/bert-model-f32";
  const Bytes g = read_bytes(bert + "/model.safetensors");
  auto no = HfCheckpointLoader::begin_shards(read_text(bert + "/config.json"), tokenizer_of(bert),
                                             {std::span<const std::uint8_t>(g)}, {g.size()}, "loadPretrained", false, true);
  REQUIRE_FALSE(no.ok());
  CHECK(no.status().message ==
        "loadPretrained: streamWeights: only decoder-only checkpoints (llama, mistral, qwen2, qwen3, gemma, gemma2, "
        "gemma3_text, phi3) stream their layers; this is a bert checkpoint (load it without streamWeights)");
}
