// fuzz_hf_shards.cpp (issue 31): a decoder checkpoint (Llama, Qwen, Gemma, Phi-3…) in shards, as
// model.safetensors.index.json lists them: model::HfCheckpointLoader::begin_shards(config.json, tokenizer, each
// shard's header, sizes) -> feed_shard(shard, offset, chunk)... (each shard in order, the shards in the input's order)
// -> finish() -> run() and generate() on the model. (The index file itself is read by the page, web/views/picker.js,
// for its weight_map's file names; the core takes the shards in any order and checks that every tensor the model
// needs is in exactly one of them.)
//
// Input layout:
//   byte 0      bits 0-1: number of shards - 1 (0-3: 1 to 4 shards); bit 2: feed the shards in reverse order too and
//               compare; bits 3-7: chunk size in bytes (0: each shard in one feed)
//   bytes 1-2   config.json length, 15 bits little-endian (capped to what is left), then config.json; the top bit
//               of byte 2 loads with streamWeights (layer_stream.h): only resident_ranges are fed, each shard ends
//               with an empty chunk at its size, the layers are read from the shards' bytes while the model runs,
//               and a model that also loads resident must give the same output bit for bit
//   then        for each shard but the last: its length (2 bytes, little-endian, capped) and its bytes; the last
//               shard is the rest
// Seeds (fuzz/corpus/fuzz_hf_shards, made by fuzz/make_modern_seeds.py): tiny BF16/F32/F16 Llama, Qwen3, Gemma 2 and
// Phi-3 checkpoints over the harness tokenizer's 294 ids, in 1-3 shards; a tensor in two shards; a missing tensor.
// Invariants: no crash/UB/leak; every error names "loadPretrained" with argument config/tokenizer/weights (or
// streamWeights when streaming) and a
// message "loadPretrained: <argument>..."; the shards' order changes nothing (the same error message, or the same
// run output bit for bit); a model that loads runs with probability rows and finite outputs, and generates ids
// below its vocabulary size.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "model/hf_checkpoint.h"
#include "tokenizers/hf_tokenizer.h"

namespace {

namespace as = attnscope;
using as::core::Status;
constexpr const char* kFn = "loadPretrained";

struct Load {
  Status status;
  std::unique_ptr<as::model::Transformer> model;
};

Load load(const std::string& config, const std::vector<std::vector<std::uint8_t>>& shards, std::size_t chunk,
          bool stream) {
  // The tokenizer is immutable and not what this harness fuzzes: built once and shared (it was 73 % of a run).
  static const std::shared_ptr<const as::tokenizers::HfTokenizer> tok = [] {
    const fuzz::SmallBpe bpe = fuzz::small_bpe();
    auto t = as::tokenizers::HfTokenizer::from_bpe_files(bpe.vocab, bpe.merges, kFn, "tokenizer");
    FUZZ_CHECK(t.ok(), "harness tokenizer rejected: %s", t.status().message.c_str());
    return std::shared_ptr<const as::tokenizers::HfTokenizer>(std::move(t).value());
  }();
  std::vector<std::span<const std::uint8_t>> headers;
  std::vector<std::uint64_t> sizes;
  for (const auto& s : shards) {
    // as pretrained.js: 8 + the declared header length, capped to the file
    std::size_t head = std::min<std::size_t>(8, s.size());
    if (head == 8) {
      std::uint64_t len = 0;
      for (int i = 7; i >= 0; --i) len = (len << 8) | s[static_cast<std::size_t>(i)];
      head = static_cast<std::size_t>(std::min<std::uint64_t>(s.size(), 8 + std::min<std::uint64_t>(len, 100u << 20)));
    }
    headers.emplace_back(s.data(), head);
    sizes.push_back(s.size());
  }
  Load out;
  auto begun = as::model::HfCheckpointLoader::begin_shards(config, as::model::TextEncoder::checkpoint(tok), headers, sizes, kFn,
                                                          false, stream);
  if (!begun.ok()) {
    out.status = begun.status();
    return out;
  }
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto& s = shards[k];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, s.size()}};
    if (stream) ranges = begun.value()->resident_ranges(k);
    for (const auto& [a, b] : ranges) {
      FUZZ_CHECK(a <= b && b <= s.size(), "resident range [%llu, %llu) outside shard %zu of %zu bytes",
                 static_cast<unsigned long long>(a), static_cast<unsigned long long>(b), k, s.size());
      const std::size_t step = chunk == 0 ? std::max<std::size_t>(1, static_cast<std::size_t>(b - a)) : chunk;
      for (std::size_t at = static_cast<std::size_t>(a); at < b; at += step) {
        const Status st = begun.value()->feed_shard(
            k, at, std::span<const std::uint8_t>(s).subspan(at, std::min<std::size_t>(step, static_cast<std::size_t>(b) - at)));
        if (!st.ok()) {
          out.status = st;
          return out;
        }
      }
    }
    if (stream) {
      const Status st = begun.value()->feed_shard(k, s.size(), {});
      if (!st.ok()) {
        out.status = st;
        return out;
      }
    }
  }
  // the streamed layers are read from a copy of the shards (the model keeps the reader)
  as::model::LayerStream::Read read = nullptr;
  if (stream) {
    read = [files = shards](std::size_t shard, std::uint64_t offset, std::span<std::uint8_t> dst) -> std::string {
      if (shard >= files.size() || offset > files[shard].size() || dst.size() > files[shard].size() - offset) {
        return "a read past the end of shard " + std::to_string(shard);
      }
      if (!dst.empty()) std::memcpy(dst.data(), files[shard].data() + offset, dst.size());
      return std::string();
    };
  }
  auto model = begun.value()->finish(read);
  if (!model.ok()) {
    out.status = model.status();
    return out;
  }
  out.model = std::move(model).value();
  return out;
}

void check_load_error(const Status& s, bool stream) {
  fuzz::check_error(s, kFn);
  FUZZ_CHECK(s.argument == "config" || s.argument == "tokenizer" || s.argument == "weights" ||
                 (stream && s.argument == "streamWeights"),
             "error argument '%s': %s", s.argument.c_str(), s.message.c_str());
  FUZZ_CHECK(s.detail().compare(0, s.argument.size(), s.argument) == 0, "detail does not start with '%s': %s",
             s.argument.c_str(), s.message.c_str());
}

std::vector<float> check_model(const as::model::Transformer& model) {
  auto r = model.run("hello world", as::model::TraceLevel::kWeights);
  if (!r.ok()) {
    fuzz::check_error(r.status(), "run");
    return {};
  }
  const auto& t = r.value();
  const std::size_t n = static_cast<std::size_t>(t.main.n), h = static_cast<std::size_t>(t.num_heads);
  for (const auto& layer : t.main.layers) {
    fuzz::check_prob_rows(layer.attention.weights, h * n, n, "attention weights");
    FUZZ_CHECK(fuzz::all_finite(layer.output), "a layer output is not finite with an ok run");
  }
  FUZZ_CHECK(fuzz::all_finite(t.main.output), "output not finite with an ok run");
  auto g = model.generate("hello", 3);
  if (!g.ok()) {
    fuzz::check_error(g.status(), "generate");
  } else {
    for (const std::int32_t id : g.value().ids) {
      FUZZ_CHECK(id >= 0 && id < model.description().embedding.vocab_size, "generated id %d", id);
    }
  }
  return t.main.output;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::size_t count = (data[0] & 3) + 1;
  const bool reverse = data[0] & 4;
  const std::size_t chunk = data[0] >> 3;
  std::size_t at = 3;
  const bool stream = (data[2] & 0x80) != 0;
  const std::size_t config_len = std::min<std::size_t>(static_cast<std::size_t>(data[1] | ((data[2] & 0x7F) << 8)), size - at);
  const std::string config(reinterpret_cast<const char*>(data + at), config_len);
  at += config_len;
  std::vector<std::vector<std::uint8_t>> shards;
  for (std::size_t k = 0; k + 1 < count && at + 2 <= size; ++k) {
    const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(data[at] | (data[at + 1] << 8)), size - at - 2);
    shards.emplace_back(data + at + 2, data + at + 2 + len);  // each in its own allocation, for ASan
    at += 2 + len;
  }
  shards.emplace_back(data + at, data + size);

  const Load got = load(config, shards, chunk, stream);
  std::vector<float> out;
  if (!got.status.ok()) check_load_error(got.status, stream);
  else out = check_model(*got.model);
  if (stream && got.status.ok()) {
    // streaming changes where the layers' bytes come from, never the numbers
    const Load resident = load(config, shards, chunk, false);
    if (resident.status.ok()) {
      const std::vector<float> out2 = check_model(*resident.model);
      FUZZ_CHECK(out.size() == out2.size() && (out.empty() || std::memcmp(out.data(), out2.data(), out.size() * 4) == 0),
                 "the streamed model's output differs from the resident one's");
    }
  }
  if (!reverse || shards.size() < 2) return 0;
  std::vector<std::vector<std::uint8_t>> back(shards.rbegin(), shards.rend());
  const Load other = load(config, back, chunk, stream);
  FUZZ_CHECK(other.status.ok() == got.status.ok(), "shard order changed success: '%s' vs '%s'",
             got.status.message.c_str(), other.status.message.c_str());
  if (!got.status.ok()) {
    // which shard is named may change with the order ("weights[0]" / "weights[1]"); the problem may not
    return 0;
  }
  const std::vector<float> out2 = check_model(*other.model);
  FUZZ_CHECK(out.size() == out2.size() && (out.empty() || std::memcmp(out.data(), out2.data(), out.size() * 4) == 0),
             "the shards' order changed the output");
  return 0;
}
