// safetensors parsing with one named check per format rule, f16/bf16 -> f32 conversion, and an F32 writer.
// Layer: io (depends on core/ only).
#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/text.h"
#include "io/json_reader.h"

namespace attnscope::io {
namespace {

using nlohmann::json;

core::Status fail(const char* fn, const std::string& text) {
  return core::invalid_error(fn, "safetensors", "safetensors " + text);
}

std::string dump(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// True (and *out set) for a JSON integer in [0, max].
bool as_non_negative(const json& v, std::uint64_t max, std::uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<std::uint64_t>();
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    *out = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else {
    return false;
  }
  return *out <= max;
}

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16 -> binary32, exact for every input (subnormals scaled by 2^-24, inf and NaN kept).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_to_float(sign | 0x7F800000u | (mantissa << 13));  // inf / NaN
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));        // rebias 15 -> 127
}

// Bytes per element of the safetensors dtypes (0: unknown).
std::size_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

std::string range_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

}  // namespace

core::Result<std::uint64_t> safetensors_header_length(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                                                      const char* fn) {
  if (bytes.size() < 8 || file_size < 8) {
    return fail(fn, "buffer (" + std::to_string(std::min<std::uint64_t>(bytes.size(), file_size)) +
                        " bytes) is shorter than the 8-byte header length");
  }
  const std::uint64_t header_len = load_u32(bytes.data()) | static_cast<std::uint64_t>(load_u32(bytes.data() + 4)) << 32;
  const std::uint64_t available = file_size - 8;
  if (header_len > available) {
    return fail(fn, "header length (" + std::to_string(header_len) + ") exceeds the " + std::to_string(available) +
                        " bytes after the 8-byte prefix");
  }
  return header_len;
}

core::Result<SafetensorsIndex> parse_safetensors_header(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                                                        const char* fn) {
  // 1. The 8-byte little-endian header length, and the header within the buffer.
  auto len = safetensors_header_length(bytes, file_size, fn);
  if (!len.ok()) return len.status();
  const auto header_size = static_cast<std::size_t>(len.value());  // <= file size, so it fits
  if (bytes.size() < 8 + header_size) {
    return fail(fn, "header (" + std::to_string(header_size) + " bytes) is not in the first " +
                        std::to_string(bytes.size()) + " bytes given");
  }
  const std::string_view header_text(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  const std::uint64_t data_size = file_size - 8 - header_size;

  // 2. The header: a JSON object, names unique.
  json header;
  std::string reason, duplicate;
  if (!detail::parse_json(header_text, &header, &reason, &duplicate)) {
    return fail(fn, "header is not valid JSON (" + reason + ")");
  }
  if (!header.is_object()) return fail(fn, std::string("header must be a JSON object, got ") + header.type_name());
  if (!duplicate.empty()) return fail(fn, "header names " + core::quote_name(duplicate) + " more than once");

  // 3. Each entry: __metadata__ (strings only) or a tensor with dtype, shape and data_offsets.
  std::vector<TensorEntry> pending;
  std::vector<std::pair<std::string, std::string>> metadata;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) return fail(fn, std::string("__metadata__ must be an object, got ") + entry.type_name());
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string()) {
          return fail(fn, "__metadata__[" + core::quote_name(m.key()) + "] must be a string, got " +
                              m.value().type_name());
        }
        metadata.emplace_back(m.key(), m.value().get<std::string>());
      }
      continue;
    }
    const std::string what = "tensor " + core::quote_name(name);
    if (!entry.is_object()) return fail(fn, what + " must be an object, got " + entry.type_name());
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (entry.find(field) == entry.end()) return fail(fn, what + " is missing \"" + field + "\"");
    }
    TensorEntry p;
    p.name = name;
    const json& dtype = *entry.find("dtype");
    if (!dtype.is_string()) return fail(fn, what + " dtype must be a string, got " + dtype.type_name());
    p.dtype = dtype.get<std::string>();
    p.elem = dtype_size(p.dtype);
    if (p.elem == 0) return fail(fn, what + " has unknown dtype " + core::quote_name(p.dtype));

    const json& shape = *entry.find("shape");
    bool shape_ok = shape.is_array();
    p.count = 1;
    bool overflow = false;
    for (std::size_t d = 0; shape_ok && d < shape.size(); ++d) {
      std::uint64_t dim = 0;
      shape_ok = as_non_negative(shape[d], static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), &dim);
      if (!shape_ok) break;
      p.shape.push_back(static_cast<std::int64_t>(dim));
      if (dim != 0 && p.count > std::numeric_limits<std::uint64_t>::max() / 8 / dim) overflow = true;
      else p.count *= dim;
    }
    if (!shape_ok) return fail(fn, what + " shape must be an array of non-negative integers, got " + dump(shape));

    const json& offsets = *entry.find("data_offsets");
    const std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    if (!offsets.is_array() || offsets.size() != 2 || !as_non_negative(offsets[0], kMax, &p.begin) ||
        !as_non_negative(offsets[1], kMax, &p.end)) {
      return fail(fn, what + " data_offsets must be an array of two non-negative integers, got " + dump(offsets));
    }
    if (p.begin > p.end) {
      return fail(fn, what + " data_offsets " + range_text(p.begin, p.end) + " are reversed (begin > end)");
    }
    if (p.end > data_size) {
      return fail(fn, what + " data_offsets " + range_text(p.begin, p.end) + " exceed the data section (" +
                          std::to_string(data_size) + " bytes)");
    }
    if (overflow || p.count * p.elem != p.end - p.begin) {
      return fail(fn, what + " shape " + dump(shape) + " needs " +
                          (overflow ? std::string("more bytes than fit in 64 bits")
                                    : std::to_string(p.count * p.elem) + " bytes (" + std::to_string(p.count) + " x " +
                                          p.dtype + ")") +
                          " but data_offsets " + range_text(p.begin, p.end) + " hold " +
                          std::to_string(p.end - p.begin));
    }
    pending.push_back(std::move(p));
  }

  // 4. The ranges must tile the data section: sorted by offset, each begins where the previous ended.
  std::sort(pending.begin(), pending.end(), [](const TensorEntry& a, const TensorEntry& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.name < b.name;
  });
  std::uint64_t cursor = 0;
  const TensorEntry* prev = nullptr;
  for (const TensorEntry& p : pending) {
    if (p.begin < cursor) {
      return fail(fn, "tensors " + core::quote_name(prev->name) + " " + range_text(prev->begin, prev->end) + " and " +
                          core::quote_name(p.name) + " " + range_text(p.begin, p.end) + " overlap");
    }
    if (p.begin > cursor) {
      return fail(fn, "data bytes [" + std::to_string(cursor) + ", " + std::to_string(p.begin) +
                          ") belong to no tensor (tensors must cover the data section contiguously)");
    }
    cursor = p.end;
    prev = &p;
  }
  if (cursor != data_size) {
    return fail(fn, "data bytes [" + std::to_string(cursor) + ", " + std::to_string(data_size) +
                        ") belong to no tensor (tensors must cover the data section contiguously)");
  }
  SafetensorsIndex index;
  index.data_offset = 8 + header_size;
  index.tensors = std::move(pending);
  index.metadata = std::move(metadata);
  return index;
}

bool is_float_dtype(const std::string& dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }

void to_f32(const std::string& dtype, const std::uint8_t* src, std::size_t count, float* dst) {
  if (dtype == "F32") {
    for (std::size_t i = 0; i < count; ++i) dst[i] = bits_to_float(load_u32(src + 4 * i));
    return;
  }
  const bool f16 = dtype == "F16";
  for (std::size_t i = 0; i < count; ++i) {
    const auto h = static_cast<std::uint16_t>(src[2 * i] | src[2 * i + 1] << 8);
    dst[i] = f16 ? half_to_float(h) : bits_to_float(static_cast<std::uint32_t>(h) << 16);
  }
}

core::Result<std::vector<NamedTensor>> parse_safetensors(std::span<const std::uint8_t> bytes, const char* fn) {
  auto parsed = parse_safetensors_header(bytes, bytes.size(), fn);
  if (!parsed.ok()) return parsed.status();
  const SafetensorsIndex& index = parsed.value();
  for (const TensorEntry& p : index.tensors) {
    if (!is_float_dtype(p.dtype)) {
      return fail(fn, "tensor " + core::quote_name(p.name) + " has unsupported dtype " + core::quote_name(p.dtype) +
                          " (supported: F32, F16, BF16)");
    }
  }
  const std::span<const std::uint8_t> data = bytes.subspan(static_cast<std::size_t>(index.data_offset));
  // 5. Convert to f32.
  std::vector<NamedTensor> out;
  out.reserve(index.tensors.size());
  for (const TensorEntry& p : index.tensors) {
    NamedTensor t;
    t.name = p.name;
    t.dtype = p.dtype;
    t.shape = p.shape;
    t.data.resize(static_cast<std::size_t>(p.count));
    to_f32(p.dtype, data.data() + p.begin, t.data.size(), t.data.data());
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::uint8_t> write_safetensors(const std::vector<NamedTensor>& tensors) {
  std::string header = "{";
  std::uint64_t offset = 0;
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const NamedTensor& x = tensors[t];
    if (t) header += ",";
    header += json(x.name).dump(-1, ' ', false, json::error_handler_t::replace) + ":{\"dtype\":\"F32\",\"shape\":[";
    for (std::size_t d = 0; d < x.shape.size(); ++d) {
      if (d) header += ',';
      header += std::to_string(x.shape[d]);
    }
    const std::uint64_t end = offset + 4 * x.data.size();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';

  std::vector<std::uint8_t> out;
  out.reserve(8 + header.size() + static_cast<std::size_t>(offset));
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(header.size()) >> (8 * k)));
  out.insert(out.end(), header.begin(), header.end());
  for (const NamedTensor& x : tensors) {
    for (float v : x.data) {
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(bits >> (8 * k)));
    }
  }
  return out;
}

}  // namespace attnscope::io
