// fuzz_attention_file.cpp: io::read_attention_file on arbitrary bytes, and the lazy path (header, then head by head).
// Invariants: no crash/UB; errors are "fuzzAttentionFile: ..." with argument "bytes" or "safetensors"; on success
// every layer's self-attention is [heads, n, n] and its cross-attention [heads, n, m] (n tokens, m source tokens),
// every weight finite and >= 0, every row summing to at most 1 + the dtype's tolerance; and parsing only the first
// header_end bytes then reading each head from its head_range gives the same index and bit-identical weights.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_common.h"
#include "io/attention_file.h"

namespace {

void check_tensor(const attnscope::io::AttentionTensor& t, const std::vector<float>& w, std::size_t n,
                  std::size_t keys, std::span<const std::uint8_t> all) {
  FUZZ_CHECK(t.heads >= 1, "'%s': %lld heads", t.name.c_str(), static_cast<long long>(t.heads));
  FUZZ_CHECK(static_cast<std::size_t>(t.rows) == n && static_cast<std::size_t>(t.cols) == keys,
             "'%s': [%lld, %lld] for n %zu keys %zu", t.name.c_str(), static_cast<long long>(t.rows),
             static_cast<long long>(t.cols), n, keys);
  const std::size_t size = n * keys;
  FUZZ_CHECK(w.size() == static_cast<std::size_t>(t.heads) * size, "'%s': %zu values", t.name.c_str(), w.size());
  const double limit = 1.0 + attnscope::io::row_sum_tolerance(t.dtype);
  for (std::size_t r = 0; r < w.size() / (keys ? keys : 1) && keys; ++r) {
    double sum = 0;
    for (std::size_t j = 0; j < keys; ++j) {
      const float v = w[r * keys + j];
      FUZZ_CHECK(std::isfinite(v) && v >= 0.0f, "'%s': weight %g", t.name.c_str(), static_cast<double>(v));
      sum += v;
    }
    FUZZ_CHECK(sum <= limit, "'%s': row sum %g", t.name.c_str(), sum);
  }
  // lazy: each head from its own byte range
  for (std::int64_t h = 0; h < t.heads; ++h) {
    const auto range = attnscope::io::head_range(t, h);
    FUZZ_CHECK(range.offset + range.length <= all.size(), "'%s' head %lld beyond the buffer", t.name.c_str(),
               static_cast<long long>(h));
    auto one = attnscope::io::read_head(t, h, all.subspan(range.offset, range.length), "fuzzAttentionFile");
    FUZZ_CHECK(one.ok(), "lazy read of '%s' head %lld failed: %s", t.name.c_str(), static_cast<long long>(h),
               one.status().message.c_str());
    FUZZ_CHECK(std::memcmp(one.value().data(), w.data() + static_cast<std::size_t>(h) * size, size * 4) == 0,
               "lazy read of '%s' head %lld differs", t.name.c_str(), static_cast<long long>(h));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr const char* fn = "fuzzAttentionFile";
  const std::span<const std::uint8_t> all(data, size);
  auto r = attnscope::io::read_attention_file(all, fn);
  if (!r.ok()) {
    fuzz::check_error(r.status(), fn);
    FUZZ_CHECK(r.status().argument == "bytes" || r.status().argument == "safetensors", "argument '%s'",
               r.status().argument.c_str());
    return 0;
  }
  const auto& f = r.value();
  // the header alone gives the same index
  auto index = attnscope::io::parse_attention_file_header(all.first(f.index.header_end), size, fn);
  FUZZ_CHECK(index.ok(), "header-only parse failed: %s", index.status().message.c_str());
  FUZZ_CHECK(index.value().layers.size() == f.index.layers.size() && index.value().tokens == f.index.tokens,
             "header-only parse differs");
  const std::size_t n = f.index.tokens.size();
  FUZZ_CHECK(n >= 1 && !f.index.layers.empty(), "no tokens or layers");
  for (std::size_t l = 0; l < f.index.layers.size(); ++l) {
    const auto& layer = f.index.layers[l];
    check_tensor(layer.self, f.self[l], n, n, all);
    if (layer.cross) check_tensor(*layer.cross, f.cross[l], n, f.index.source_tokens.size(), all);
    else FUZZ_CHECK(f.cross[l].empty(), "layer %zu: cross weights without a tensor", l);
  }
  return 0;
}
