// The one reader of typed JSON members, with one message style for every JSON file attnscope reads (a checkpoint's
// config.json and tokenizer.json, a bundled model's config.json):
//   wrong type     TypeError   "<fn>: <where><path> must be <what>, got <JSON type>"
//   out of range   RangeError  "<fn>: <where><path> (<value>) must be from <lo> to <hi>" (or "a positive integer")
//   missing        Error       "<fn>: <where><path> is required"
//   not supported  Error       "<fn>: <where><path> <value> is not supported (<supported>)"
// `where` names the file up to the member: "config." (Hugging Face config.json), "tokenizer." (tokenizer.json),
// "config: " (a bundle's config.json). A missing or null member takes the fallback when there is one.
// Layer: io (depends on core/ only). JSON_NOEXCEPTION as in json_reader.h: types are checked before every get<>().
#pragma once

#ifndef JSON_NOEXCEPTION
#define JSON_NOEXCEPTION
#endif
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "core/status.h"

namespace attnscope::io {

// A JSON value's type as messages name it ("object", "number", ...).
inline const char* json_type_name(nlohmann::json::value_t t) {
  using V = nlohmann::json::value_t;
  switch (t) {
    case V::null: return "null";
    case V::boolean: return "boolean";
    case V::string: return "string";
    case V::array: return "array";
    case V::object: return "object";
    case V::binary: return "binary";
    case V::discarded: return "discarded";
    default: return "number";
  }
}

class JsonFields {
 public:
  using json = nlohmann::json;
  // An upper bound at or above this is no bound a message states: "(0) must be a positive integer".
  static constexpr long long kNoLimit = 1LL << 30;

  JsonFields(const char* fn, const char* arg, std::string where) : fn_(fn), arg_(arg), where_(std::move(where)) {}

  const char* fn() const { return fn_; }
  const char* arg() const { return arg_; }
  // How messages name the member at `path` ("model.vocab" -> "tokenizer.model.vocab").
  std::string at(const std::string& path) const { return where_ + path; }

  core::Status type(const std::string& path, const char* want, const json& v) const {
    return core::type_error(fn_, arg_, at(path) + " must be " + want + ", got " + json_type_name(v.type()));
  }
  core::Status invalid(const std::string& text) const { return core::invalid_error(fn_, arg_, text); }
  core::Status range(const std::string& text) const { return core::range_error(fn_, arg_, text); }
  core::Status required(const std::string& path) const { return invalid(at(path) + " is required"); }
  core::Status unsupported(const std::string& path, const std::string& value, const char* supported) const {
    return invalid(at(path) + " " + value + " is not supported" +
                   (supported[0] ? std::string(" (") + supported + ")" : ""));
  }

  // obj[name] (named `path` in messages) as each type; missing or null -> fallback, or "is required" without one.
  core::Result<bool> boolean(const json& obj, const char* name, const std::string& path,
                             std::optional<bool> fallback) const {
    const json* v = find(obj, name);
    if (v == nullptr) return fallback ? core::Result<bool>(*fallback) : required(path);
    if (!v->is_boolean()) return type(path, "a boolean", *v);
    return v->get<bool>();
  }
  core::Result<std::string> string(const json& obj, const char* name, const std::string& path,
                                   std::optional<std::string> fallback) const {
    const json* v = find(obj, name);
    if (v == nullptr) return fallback ? core::Result<std::string>(std::move(*fallback)) : required(path);
    if (!v->is_string()) return type(path, "a string", *v);
    return v->get<std::string>();
  }
  // An integer in [lo, hi]: "(0) must be from 1 to 16384", or with hi >= kNoLimit "(0) must be a positive integer".
  core::Result<long long> integer(const json& obj, const char* name, const std::string& path, long long lo,
                                  long long hi, std::optional<long long> fallback) const {
    const json* v = find(obj, name);
    if (v == nullptr) return fallback ? core::Result<long long>(*fallback) : required(path);
    if (!v->is_number_integer()) return type(path, "an integer", *v);
    const bool huge = v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(hi);
    const long long x = huge ? hi : v->get<long long>();
    if (!huge && x >= lo && x <= hi) return x;
    const std::string bound = hi < kNoLimit ? "from " + std::to_string(lo) + " to " + std::to_string(hi)
                              : lo == 0     ? std::string("a non-negative integer")
                              : lo == 1     ? std::string("a positive integer")
                                            : "an integer >= " + std::to_string(lo);
    return range(at(path) + " (" + v->dump() + ") must be " + bound);
  }
  // A finite number (> 0 when `positive`).
  core::Result<double> number(const json& obj, const char* name, const std::string& path, bool positive,
                              std::optional<double> fallback) const {
    const json* v = find(obj, name);
    if (v == nullptr) return fallback ? core::Result<double>(*fallback) : required(path);
    if (!v->is_number()) return type(path, "a number", *v);
    const double x = v->get<double>();
    if (!std::isfinite(x) || (positive && !(x > 0.0))) {
      return range(at(path) + " (" + v->dump() + ") must be " + (positive ? "a positive number" : "finite"));
    }
    return x;
  }

 private:
  static const json* find(const json& obj, const char* name) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(name);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  const char* fn_;
  const char* arg_;
  std::string where_;
};

}  // namespace attnscope::io
