// Attention files: the safetensors index of attentions.<i> / cross_attentions.<i>, their token metadata, and
// head-by-head widening with the probability-row checks. Layer: io (depends on core/ only).
#include "io/attention_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/text.h"
#include "io/json_reader.h"
#include "io/safetensors.h"

namespace attnscope::io {
namespace {

using nlohmann::json;

core::Status bad(const char* fn, const std::string& text) {
  return core::invalid_error(fn, "bytes", "attention file " + text);
}

// "attentions.12" -> 12 (false for anything else: a sign, leading zeros, no digits, too large).
bool layer_index(const std::string& name, const std::string& prefix, int* out) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  if (*first == '0' && last - first > 1) return false;
  int v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || v < 0 || v > 1'000'000) return false;
  *out = v;
  return true;
}

// The __metadata__ value `key` as a JSON array of strings.
core::Result<std::vector<std::string>> token_list(const std::string& key, const std::string& text, const char* fn) {
  json v;
  std::string reason, duplicate;
  const std::string what = "__metadata__." + key;
  if (!detail::parse_json(text, &v, &reason, &duplicate)) return bad(fn, what + " is not valid JSON (" + reason + ")");
  if (!v.is_array()) return bad(fn, what + " must be a JSON array of strings, got " + std::string(v.type_name()));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      return bad(fn, what + "[" + std::to_string(i) + "] must be a string, got " + std::string(v[i].type_name()));
    }
    out.push_back(v[i].get<std::string>());
  }
  if (out.empty()) return bad(fn, what + " holds no tokens (at least one is needed)");
  return out;
}

// A tensor entry as [heads, rows, cols] with rows = n and cols = keys, or why not.
core::Result<AttentionTensor> attention_tensor(const TensorEntry& e, std::uint64_t data_offset, std::size_t n,
                                               std::size_t keys, const char* keys_name, const char* fn) {
  const std::string what = "tensor " + core::quote_name(e.name);
  if (!is_float_dtype(e.dtype)) {
    return bad(fn, what + " has dtype " + core::quote_name(e.dtype) + " (supported: F32, F16, BF16)");
  }
  std::vector<std::int64_t> s = e.shape;
  const bool batched = s.size() == 4 && s[0] == 1;
  if (batched) s.erase(s.begin());
  const std::string expected = "[heads," + std::to_string(n) + "," + std::to_string(keys) + "] or [1,heads," +
                               std::to_string(n) + "," + std::to_string(keys) + "]";
  if (s.size() != 3) {
    return bad(fn, what + " shape " + core::shape_text(e.shape) + " must be " + expected + " (" + std::to_string(n) +
                       " tokens, " + std::to_string(keys) + " " + keys_name + ")");
  }
  if (static_cast<std::uint64_t>(s[1]) != n || static_cast<std::uint64_t>(s[2]) != keys) {
    return bad(fn, what + " shape " + core::shape_text(e.shape) + " disagrees with the token count: expected " +
                       expected + " (" + std::to_string(n) + " tokens, " + std::to_string(keys) + " " + keys_name + ")");
  }
  if (s[0] < 1) return bad(fn, what + " shape " + core::shape_text(e.shape) + " has no heads");
  AttentionTensor t;
  t.name = e.name;
  t.dtype = e.dtype;
  t.heads = s[0];
  t.rows = s[1];
  t.cols = s[2];
  t.offset = data_offset + e.begin;
  t.elem = e.elem;
  return t;
}

// A weight or a row sum as messages write it (7 significant digits: "1.25", "-0.001", "nan", "inf").
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

}  // namespace

std::int64_t AttentionFileIndex::max_heads() const {
  std::int64_t h = 0;
  for (const AttentionLayer& l : layers) h = std::max(h, l.self.heads);
  return h;
}

double row_sum_tolerance(const std::string& dtype) { return dtype == "F32" ? 1e-3 : 1e-2; }

core::Result<std::uint64_t> attention_file_header_length(std::span<const std::uint8_t> first8, std::uint64_t file_size,
                                                         const char* fn) {
  // The cap first: a 10 GB length in a 12 GB file is as absurd as one beyond a small file.
  if (first8.size() >= 8) {
    std::uint64_t len = 0;
    for (int k = 7; k >= 0; --k) len = len << 8 | first8[static_cast<std::size_t>(k)];
    if (len > kMaxAttentionHeader) {
      return bad(fn, "header length (" + std::to_string(len) + " bytes) exceeds the " +
                         std::to_string(kMaxAttentionHeader) + "-byte limit (not an attention file, or corrupt)");
    }
  }
  return safetensors_header_length(first8, file_size, fn);
}

core::Result<AttentionFileIndex> parse_attention_file_header(std::span<const std::uint8_t> bytes,
                                                             std::uint64_t file_size, const char* fn) {
  auto len = attention_file_header_length(bytes, file_size, fn);
  if (!len.ok()) return len.status();
  auto parsed = parse_safetensors_header(bytes, file_size, fn);
  if (!parsed.ok()) return parsed.status();
  const SafetensorsIndex& st = parsed.value();

  AttentionFileIndex index;
  index.header_end = st.data_offset;
  const std::string* tokens_text = nullptr;
  const std::string* source_text = nullptr;
  for (const auto& [key, value] : st.metadata) {
    if (key == "tokens") tokens_text = &value;
    if (key == "source_tokens") source_text = &value;
    if (key == "model") index.model = value;
  }
  if (tokens_text == nullptr) {
    return bad(fn, "__metadata__.tokens is required (a JSON array of the n query tokens)");
  }
  auto tokens = token_list("tokens", *tokens_text, fn);
  if (!tokens.ok()) return tokens.status();
  index.tokens = std::move(tokens).value();
  if (source_text != nullptr) {
    auto source = token_list("source_tokens", *source_text, fn);
    if (!source.ok()) return source.status();
    index.source_tokens = std::move(source).value();
    index.has_source_tokens = true;
  }

  // Sort the tensors into layers by name.
  std::map<int, const TensorEntry*> self, cross;
  for (const TensorEntry& e : st.tensors) {
    int i = 0;
    if (layer_index(e.name, "attentions.", &i)) {
      self[i] = &e;
    } else if (layer_index(e.name, "cross_attentions.", &i)) {
      cross[i] = &e;
    } else {
      return bad(fn, "tensor " + core::quote_name(e.name) +
                         " is not attentions.<i> or cross_attentions.<i> (i = 0, 1, ... without leading zeros)");
    }
  }
  if (self.empty()) return bad(fn, "holds no attentions.<i> tensor (attentions.0 is required)");
  const int num_layers = self.rbegin()->first + 1;
  for (int i = 0; i < num_layers; ++i) {
    if (self.find(i) == self.end()) {
      return bad(fn, "has attentions." + std::to_string(num_layers - 1) + " but no attentions." + std::to_string(i) +
                         " (layers are numbered 0 to L-1)");
    }
  }
  if (!cross.empty()) {
    const int last = cross.rbegin()->first;
    if (last >= num_layers) {
      return bad(fn, "tensor \"cross_attentions." + std::to_string(last) + "\" has no attentions." +
                         std::to_string(last) + " (the file has " + std::to_string(num_layers) + " layers)");
    }
    if (!index.has_source_tokens) {
      return bad(fn, "__metadata__.source_tokens is required with cross_attentions (a JSON array of the m source "
                     "tokens)");
    }
  }
  const std::size_t n = index.tokens.size();
  for (int i = 0; i < num_layers; ++i) {
    AttentionLayer layer;
    auto s = attention_tensor(*self[i], st.data_offset, n, n, "keys", fn);
    if (!s.ok()) return s.status();
    layer.self = std::move(s).value();
    const auto c = cross.find(i);
    if (c != cross.end()) {
      auto x = attention_tensor(*c->second, st.data_offset, n, index.source_tokens.size(), "source tokens", fn);
      if (!x.ok()) return x.status();
      layer.cross = std::move(x).value();
    }
    index.layers.push_back(std::move(layer));
  }
  return index;
}

ByteRange head_range(const AttentionTensor& t, std::int64_t head) {
  const std::uint64_t size = static_cast<std::uint64_t>(t.rows) * static_cast<std::uint64_t>(t.cols) * t.elem;
  return {t.offset + static_cast<std::uint64_t>(head) * size, size};
}

core::Result<std::vector<float>> read_head(const AttentionTensor& t, std::int64_t head,
                                           std::span<const std::uint8_t> head_bytes, const char* fn) {
  const std::string what = "tensor " + core::quote_name(t.name) + " head " + std::to_string(head);
  if (head < 0 || head >= t.heads) {
    return core::range_error(fn, "head", "head (" + std::to_string(head) + ") must be from 0 to " +
                                             std::to_string(t.heads - 1) + " (" + core::quote_name(t.name) + ")");
  }
  const ByteRange range = head_range(t, head);
  if (head_bytes.size() != range.length) {
    return bad(fn, what + " needs " + std::to_string(range.length) + " bytes, got " +
                       std::to_string(head_bytes.size()) + " (the file is truncated)");
  }
  const auto rows = static_cast<std::size_t>(t.rows);
  const auto cols = static_cast<std::size_t>(t.cols);
  std::vector<float> w(rows * cols);
  to_f32(t.dtype, head_bytes.data(), w.size(), w.data());
  const double limit = 1.0 + row_sum_tolerance(t.dtype);
  for (std::size_t i = 0; i < rows; ++i) {
    const float* row = w.data() + i * cols;
    double sum = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      if (!std::isfinite(row[j]) || row[j] < 0.0f) {
        return bad(fn, what + " [row " + std::to_string(i) + ", column " + std::to_string(j) + "] is " +
                           number(row[j]) + ": attention weights must be finite and >= 0");
      }
      sum += row[j];
    }
    if (sum > limit) {
      return bad(fn, what + " row " + std::to_string(i) + " sums to " + number(sum) +
                         ", more than 1 + " + (t.dtype == "F32" ? "1e-3" : "1e-2") + " allowed for " + t.dtype +
                         ": not a probability row");
    }
  }
  return w;
}

core::Result<AttentionFile> read_attention_file(std::span<const std::uint8_t> bytes, const char* fn) {
  auto index = parse_attention_file_header(bytes, bytes.size(), fn);
  if (!index.ok()) return index.status();
  AttentionFile file;
  file.index = std::move(index).value();
  auto read_all = [&](const AttentionTensor& t, std::vector<float>* out) -> core::Status {
    const auto size = static_cast<std::size_t>(t.rows * t.cols);
    out->resize(static_cast<std::size_t>(t.heads) * size);
    for (std::int64_t h = 0; h < t.heads; ++h) {
      const ByteRange r = head_range(t, h);  // within bytes: parse_safetensors_header checked every range
      auto w = read_head(t, h, bytes.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.length)), fn);
      if (!w.ok()) return w.status();
      std::copy(w.value().begin(), w.value().end(), out->begin() + static_cast<std::ptrdiff_t>(h) * static_cast<std::ptrdiff_t>(size));
    }
    return core::Status::Ok();
  };
  for (const AttentionLayer& layer : file.index.layers) {
    file.self.emplace_back();
    file.cross.emplace_back();
    core::Status s = read_all(layer.self, &file.self.back());
    if (s.ok() && layer.cross) s = read_all(*layer.cross, &file.cross.back());
    if (!s.ok()) return s;
  }
  return file;
}

}  // namespace attnscope::io
