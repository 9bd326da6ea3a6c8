// stream_test.cpp: loadPretrained's streamWeights (model/layer_stream.h). A checkpoint whose decoder layers and token
// tables are read from the file when a run needs them gives results bit-identical to the same checkpoint held
// resident: run (every layer's attention weights and output, the output, next, the logit lens, logProbs), the tiled
// path with summaries, generate and direct logit attribution, on the small decoder fixtures of tests/fixtures/modern
// (float32, F16 and BF16; Llama tied and untied, Mistral untied, Qwen3, Phi-3, Gemma, Gemma 2's soft-capping and
// Gemma 3's sqrt(d) embedding scale; one and two layers, a single file and two shards), with the stream's usual
// sizes and with a read piece of 1,000 bytes and a head batch of 3 rows. Each run reads every layer once, the
// embedding rows of its distinct ids once, and the head's table once per batch. Reads that fail and non-finite
// streamed values are errors naming the tensor and the file; the model works again afterwards.
#include <catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/hf_checkpoint.h"
#include "model/inside.h"
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

// What the test's reader does: counts the bytes it reads and its calls, and fails every call when told to (`fail`),
// or only call number `fail_at` (0-based, counting every call).
struct Reads {
  std::uint64_t bytes = 0;
  int calls = 0;
  bool fail = false;
  int fail_at = -1;
};

// The stream's sizes in most tests, and the small ones: a read piece of 1,000 bytes (a 16-wide BF16 table's 31
// rows) and a head batch of 3 rows of logits.
LayerStream::Sizes small_sizes(std::size_t vocab) {
  LayerStream::Sizes s;
  s.read_bytes = 1000;
  s.head_batch_bytes = 3.0 * 4.0 * static_cast<double>(vocab);
  return s;
}

// Loads `files` (the shards, fed last first in 997-byte chunks) resident, or streamed with a reader over the same
// bytes in memory: only resident_ranges is fed then.
attnscope::core::Result<std::unique_ptr<Transformer>> load(const std::string& dir, const std::string& config,
                                                           const std::vector<const Bytes*>& files, bool stream,
                                                           Reads* reads = nullptr, LayerStream::Sizes stream_sizes = {}) {
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
    if (reads != nullptr && (reads->fail || reads->calls++ == reads->fail_at)) {
      return std::string("the file 'model.safetensors' changed size");
    }
    const Bytes& f = *files.at(shard);
    if (offset + dst.size() > f.size()) return std::string("past the end");
    std::memcpy(dst.data(), f.data() + offset, dst.size());
    if (reads != nullptr) reads->bytes += dst.size();
    return std::string();
  }, stream_sizes);
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
  for (std::size_t i = 0; i < x.layers.size(); ++i) {
    CHECK(x.layers[i].lens_ids == y.layers[i].lens_ids);
    same(x.layers[i].lens_probs, y.layers[i].lens_probs, what + " lens " + std::to_string(i));
  }
  same(a.value().log_probs, b.value().log_probs, what + " logProbs");
}

// The bytes a run reads from the embedding table: one row per distinct id of the text.
std::uint64_t embedding_bytes(const LayerStream& s, const std::vector<std::int32_t>& ids, int n_real) {
  const std::set<std::int32_t> distinct(ids.begin(), ids.begin() + n_real);
  return distinct.size() * s.embedding_row_bytes();
}

}  // namespace

TEST_CASE("streamWeights: run, lens, logProbs, tiled summaries and generate are bit-identical to the resident model",
          "[stream]") {
  // tied: Llama BF16, Qwen3 BF16 (tie_word_embeddings), Gemma (tied by default; its rows scaled by sqrt(d)), Gemma 2
  // with soft-capping; untied: Llama F32, Mistral F16, Phi-3 F32
  const char* const names[] = {"llama-f32-untied-gqa-llama3", "llama-bf16-tied-mqa-headdim-linear-v5",
                               "qwen3-bf16-qknorm-headdim",   "phi3-f32-fused-partial",
                               "gemma3-bf16-local-rope",      "gemma2-f32-softcap",
                               "mistral-f16-window-dynamic"};
  for (const char* name : names) {
    const std::string dir = std::string(ATTNSCOPE_FIXTURES_DIR "/modern/") + name;
    const json config = json::parse(read_text(dir + "/config.json"));
    const Bytes file = read_bytes(dir + "/model.safetensors");
    const json want = json::parse(read_text(dir + "/expected.json"));
    const auto vocab = config["vocab_size"].get<std::size_t>();
    for (const bool small : {false, true}) {
      for (const int layers : {1, config["num_hidden_layers"].get<int>()}) {
        json c = config;
        c["num_hidden_layers"] = layers;  // one layer: the file's other layer is not used
        const std::string what = std::string(name) + " (" + std::to_string(layers) + " layers" +
                                 (small ? ", small pieces" : "") + ")";
        auto resident = load(dir, c.dump(), {&file}, false);
        Reads reads;
        auto streamed = load(dir, c.dump(), {&file}, true, &reads, small ? small_sizes(vocab) : LayerStream::Sizes{});
        INFO(what << ": " << streamed.status().message);
        REQUIRE(resident.ok());
        REQUIRE(streamed.ok());
        const Transformer& r = *resident.value();
        const Transformer& t = *streamed.value();
        const LayerStream* s = t.stream();
        REQUIRE(s != nullptr);
        REQUIRE(s->has_tables());
        CHECK(s->layers() == static_cast<std::size_t>(layers));
        // the streamed model holds layer 0's values (the buffer) and neither token table
        CHECK(t.parameters().weight("embedding.weight").empty());
        CHECK(t.parameters().weight("lm_head.weight").empty());
        CHECK_FALSE(r.parameters().weight("embedding.weight").empty());
        CHECK(t.parameters().count() < r.parameters().count());
        CHECK(r.parameter_shapes() == t.parameter_shapes());
        CHECK(reads.bytes == 0);  // nothing is read before a run
        const int batch = s->head_batch(s->head_rows());
        CHECK(batch == (small ? 3 : static_cast<int>(LayerStream::kHeadBatchBytes / (4.0 * static_cast<double>(vocab)))));
        for (const json& tx : want["texts"]) {
          const std::string text = tx["text"];
          std::uint64_t before = reads.bytes;
          same_runs(r, t, text, RunOptions{}, what + " \"" + text + "\"");
          auto plain = r.run(text, RunOptions{});
          REQUIRE(plain.ok());
          const int n = plain.value().main.n_real;
          const std::uint64_t looked_up = embedding_bytes(*s, plain.value().main.ids, n);
          // each layer once, the text's distinct embedding rows once, the head's table once (next: one row)
          CHECK(reads.bytes - before == s->layer_bytes() * static_cast<std::uint64_t>(layers) + looked_up + s->head_bytes());
          RunOptions tiled;
          tiled.level = attnscope::model::TraceLevel::kNone;
          tiled.heads_mode = RunOptions::Heads::kList;
          tiled.heads = {{0, 1}, {layers - 1, 0}};
          tiled.summaries = true;
          same_runs(r, t, text, tiled, what + " tiled \"" + text + "\"");
          // next, the lens (every layer's every position) and logProbs: one pass over the head's table per batch
          RunOptions lens;
          lens.lens = 4;
          lens.log_probs = true;
          before = reads.bytes;
          same_runs(r, t, text, lens, what + " lens \"" + text + "\"");
          const int rows = 1 + layers * n + (n - 1);
          const std::uint64_t passes = static_cast<std::uint64_t>((rows + batch - 1) / batch);
          CHECK(reads.bytes - before ==
                s->layer_bytes() * static_cast<std::uint64_t>(layers) + looked_up + passes * s->head_bytes());
          // generate: the prompt, then per new token its embedding row, every layer and the head's table once
          before = reads.bytes;
          auto g1 = r.generate(text, 4);
          auto g2 = t.generate(text, 4);
          REQUIRE(g1.ok());
          REQUIRE(g2.ok());
          CHECK(g1.value().ids == g2.value().ids);
          CHECK(g1.value().text == g2.value().text);
          const auto steps = static_cast<std::uint64_t>(g2.value().ids.size() + (g2.value().stopped_at_end ? 1 : 0));
          CHECK(reads.bytes - before == looked_up + (steps - 1) * s->embedding_row_bytes() +
                                            steps * (s->layer_bytes() * static_cast<std::uint64_t>(layers) + s->head_bytes()));
          // direct logit attribution reads one row of the head's table; the loss metric, the head for every position
          const attnscope::model::TokenChoice token{7, ""};
          auto a1 = attnscope::model::Inside::attribution(r, text, token);
          auto a2 = attnscope::model::Inside::attribution(t, text, token);
          REQUIRE(a1.ok() == a2.ok());
          if (a1.ok()) {
            same(a1.value().values, a2.value().values, what + " attribution");
            CHECK(a1.value().logit == a2.value().logit);
          }
          if (n >= 2) {
            auto l1 = attnscope::model::Inside::ablation(r, text, attnscope::model::Metric{}, {});
            auto l2 = attnscope::model::Inside::ablation(t, text, attnscope::model::Metric{}, {});
            REQUIRE(l1.ok() == l2.ok());
            if (l1.ok()) CHECK(l1.value()->base() == l2.value()->base());
          }
        }
      }
    }
  }
}

TEST_CASE("streamWeights: each run reads the layers and the head's table once, the lookup its ids' rows; resident "
          "parts only are fed", "[stream]") {
  const std::string dir = kBf16Dir;
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  Reads reads;
  auto streamed = load_bf16_streamed(file, reads);
  auto resident = load(dir, config, {&file}, false);
  REQUIRE(resident.ok());
  const LayerStream* s = streamed->stream();
  // layer bytes: every "model.layers.N." tensor of the file, counted from its header; the table: embed_tokens
  auto index = attnscope::io::parse_safetensors_header(file, file.size(), "test");
  REQUIRE(index.ok());
  std::uint64_t layer_bytes = 0, layer_values = 0, table_bytes = 0, table_values = 0, row_bytes = 0;
  for (const auto& e : index.value().tensors) {
    if (e.name == "model.embed_tokens.weight") {
      table_bytes = e.end - e.begin;
      table_values = e.count;
      row_bytes = table_bytes / static_cast<std::uint64_t>(e.shape[0]);
    }
    if (e.name.find("layers.") == std::string::npos) continue;
    layer_bytes += e.end - e.begin;
    layer_values += e.count;
  }
  REQUIRE(table_bytes > 0);
  CHECK(s->layer_bytes() * 2 == layer_bytes);  // two layers of equal size
  CHECK(s->head_bytes() == table_bytes);        // tied: the head is the embedding table
  CHECK(s->embedding_row_bytes() == row_bytes);
  // resident count - streamed count = layer 1's values (layer 0's are the buffer) and the table's
  CHECK(resident.value()->parameters().count() - streamed->parameters().count() ==
        static_cast<long long>(layer_values / 2 + table_values));
  // "Hello Hello Hello": the lookup reads each distinct id's row once
  auto hello = resident.value()->run("Hello Hello Hello", RunOptions{});
  REQUIRE(hello.ok());
  const std::vector<std::int32_t>& ids = hello.value().main.ids;
  const std::set<std::int32_t> distinct(ids.begin(), ids.end());
  REQUIRE(distinct.size() < ids.size());
  REQUIRE(streamed->run("Hello Hello Hello", RunOptions{}).ok());
  CHECK(reads.bytes == layer_bytes + table_bytes + distinct.size() * row_bytes);
  // the lens at every position of every layer and logProbs: still one pass over the table (they fit one batch)
  reads.bytes = 0;
  RunOptions o;
  o.lens = 2;
  o.log_probs = true;
  REQUIRE(streamed->run("Hello Hello Hello", o).ok());
  CHECK(reads.bytes == layer_bytes + table_bytes + distinct.size() * row_bytes);
  // no head row asked for (topK 0, no lens, no logProbs): the table is not read, only the lookup's rows
  reads.bytes = 0;
  RunOptions none;
  none.top_k = 0;
  REQUIRE(streamed->run("Hello Hello Hello", none).ok());
  CHECK(reads.bytes == layer_bytes + distinct.size() * row_bytes);
  reads.bytes = 0;
  REQUIRE(streamed->generate("Hello", 3).ok());  // the prompt, then one step per new token after the first
  CHECK(reads.bytes >= 2 * (layer_bytes + table_bytes));
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

TEST_CASE("streamWeights: a failed read or a non-finite layer or table is an error naming it; the model works after",
          "[stream]") {
  const std::string dir = kBf16Dir;
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  auto index = attnscope::io::parse_safetensors_header(file, file.size(), "test");
  REQUIRE(index.ok());
  auto entry = [&](const std::string& name) {
    for (const auto& e : index.value().tensors) {
      if (e.name == name) return e;
    }
    FAIL("no tensor " << name);
    return index.value().tensors.front();
  };
  const auto table = entry("model.embed_tokens.weight");
  const std::uint64_t table_begin = index.value().data_offset + table.begin;
  const std::uint64_t table_end = index.value().data_offset + table.end;
  Reads reads;
  auto streamed = load_bf16_streamed(file, reads);
  auto good = streamed->run("Hello", RunOptions{});
  REQUIRE(good.ok());
  // the first read of a run is the lookup's: the embedding table, named with the bytes of its rows
  reads.fail = true;
  auto bad = streamed->run("Hello", RunOptions{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message.rfind("run: weights: reading the embedding table (tensor \"model.embed_tokens.weight\", bytes ", 0) == 0);
  CHECK(bad.status().message.find("of weights) failed: the file 'model.safetensors' changed size") != std::string::npos);
  auto g = streamed->generate("Hello", 2);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().message.rfind("generate: weights: reading the embedding table", 0) == 0);
  reads.fail = false;
  // a layer's read: the call after the lookup's (the text's ids here are one run of adjacent rows or more: count them)
  const int calls_before = reads.calls;
  REQUIRE(streamed->run("Hello", RunOptions{}).ok());
  const int calls_per_run = reads.calls - calls_before;
  int lookups = 0;
  {
    std::set<std::int32_t> ids(good.value().main.ids.begin(), good.value().main.ids.end());
    std::int32_t last = -2;
    for (const std::int32_t id : ids) lookups += id != last + 1 ? 1 : 0, last = id;
  }
  reads.fail_at = reads.calls + lookups;
  auto layer = streamed->run("Hello", RunOptions{});
  REQUIRE_FALSE(layer.ok());
  CHECK(layer.status().message.rfind("run: weights: reading layer 0 (tensor \"model.layers.0.", 0) == 0);
  // the head's pass, the run's last read: the whole table, named as the tied head reads it
  reads.fail_at = reads.calls + calls_per_run - 1;
  auto head = streamed->run("Hello", RunOptions{});
  REQUIRE_FALSE(head.ok());
  CHECK(head.status().message == "run: weights: reading the embedding table (tensor \"model.embed_tokens.weight\", bytes " +
                                     std::to_string(table_begin) + " to " + std::to_string(table_end) +
                                     " of weights) failed: the file 'model.safetensors' changed size");
  reads.fail_at = -1;
  auto again = streamed->run("Hello", RunOptions{});
  REQUIRE(again.ok());
  same(good.value().main.output, again.value().main.output, "after a failed read");
  same(good.value().next.probs, again.value().next.probs, "next.probs after a failed read");

  // a NaN in layer 1's up_proj: the resident load refuses it, the streamed model's run names it
  Bytes broken = file;
  const auto up = entry("model.layers.1.mlp.up_proj.weight");
  broken[index.value().data_offset + up.begin] = 0xC0;  // BF16 0x7FC0: a NaN
  broken[index.value().data_offset + up.begin + 1] = 0x7F;
  auto resident = load(dir, config, {&broken}, false);
  REQUIRE_FALSE(resident.ok());
  auto lazy = load(dir, config, {&broken}, true);
  REQUIRE(lazy.ok());
  auto nan = lazy.value()->run("Hello", RunOptions{});
  REQUIRE_FALSE(nan.ok());
  CHECK(nan.status().message == "run: weights: tensor \"model.layers.1.mlp.up_proj.weight\" has a value (NaN) that is not finite");

  // an infinity in the table's last row (no text's token): the resident load refuses it, the streamed head finds it
  Bytes inf = file;
  inf[table_end - 2] = 0x80;  // BF16 0x7F80: +infinity, the table's last value
  inf[table_end - 1] = 0x7F;
  REQUIRE_FALSE(load(dir, config, {&inf}, false).ok());
  auto lazy_table = load(dir, config, {&inf}, true);
  REQUIRE(lazy_table.ok());
  auto bad_table = lazy_table.value()->run("Hello", RunOptions{});
  REQUIRE_FALSE(bad_table.ok());
  CHECK(bad_table.status().message ==
        "run: weights: tensor \"model.embed_tokens.weight\" has a value (Infinity) that is not finite");
}

TEST_CASE("streamWeights: an untied head's failed read names lm_head.weight", "[stream]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const Bytes file = read_bytes(dir + "/model.safetensors");
  Reads reads;
  auto m = load(dir, read_text(dir + "/config.json"), {&file}, true, &reads);
  REQUIRE(m.ok());
  const LayerStream* s = m.value()->stream();
  REQUIRE(m.value()->run("Hello", RunOptions{}).ok());
  const int calls = reads.calls;
  REQUIRE(m.value()->run("Hello", RunOptions{}).ok());
  reads.fail_at = reads.calls + (reads.calls - calls) - 1;  // the run's last read: the head's one piece
  auto bad = m.value()->run("Hello", RunOptions{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message.rfind("run: weights: reading the LM head (tensor \"lm_head.weight\", bytes ", 0) == 0);
  // the head's pass read lm_head.weight's bytes, not the embedding table's
  auto index = attnscope::io::parse_safetensors_header(file, file.size(), "test");
  REQUIRE(index.ok());
  for (const auto& e : index.value().tensors) {
    if (e.name != "lm_head.weight") continue;
    CHECK(bad.status().message.find("bytes " + std::to_string(index.value().data_offset + e.begin) + " to " +
                                    std::to_string(index.value().data_offset + e.end) + " of weights") != std::string::npos);
    CHECK(s->head_bytes() == e.end - e.begin);
  }
}

TEST_CASE("streamWeights: only decoder checkpoints stream; a gap over a resident tensor is refused", "[stream]") {
  const std::string dir = ATTNSCOPE_FIXTURES_DIR "/modern/llama-f32-untied-gqa-llama3";
  const std::string config = read_text(dir + "/config.json");
  const Bytes file = read_bytes(dir + "/model.safetensors");
  auto l = HfCheckpointLoader::begin_shards(config, tokenizer_of(dir), {std::span<const std::uint8_t>(file)},
                                            {file.size()}, "loadPretrained", false, true);
  REQUIRE(l.ok());
  const auto ranges = l.value()->resident_ranges(0);
  REQUIRE(ranges.size() == 1);  // the final norm: embed_tokens and lm_head stay in the file with the layers
  // a first chunk past the start of the resident tensor leaves its beginning unfed: refused
  auto s = l.value()->feed_shard(0, ranges[0].first + 4, std::span<const std::uint8_t>(file.data() + ranges[0].first + 4, 4));
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
