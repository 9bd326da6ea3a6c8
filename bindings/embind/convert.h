// Typed array <-> std::vector conversions for the Embind module (STYLE 4.6).
// Layer: bindings. Inputs: one bulk TypedArray.set per array (convertJSArrayToNumberVector);
// outputs: fresh JS-owned typed arrays copied out of the wasm heap at once, so no memory view ever
// reaches user code (views detach on memory growth, TOOLCHAIN.md 7).
#pragma once

#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnscope::bindings {

using emscripten::val;

inline bool given(const val& v) { return !v.isUndefined() && !v.isNull(); }

// The JS wrapper has already checked the type; an absent optional array becomes an empty vector.
inline std::vector<float> f32_in(const val& v) {
  if (!given(v)) return {};
  return emscripten::convertJSArrayToNumberVector<float>(v);
}

// A float32 input copied into the wasm heap without first zero-filling it (std::vector's resize writes
// every element once before TypedArray.set writes it again: ~4 MB of wasted stores per 128x512
// multiHeadAttention call). Views as a span; an absent optional array is empty.
class F32In {
 public:
  explicit F32In(const val& v) {
    if (!given(v)) return;
    size_ = v["length"].as<std::size_t>();
    data_.reset(new float[size_]);  // default-initialised: no zero fill
    val(emscripten::typed_memory_view(size_, data_.get())).call<void>("set", v);
  }
  operator std::span<const float>() const { return {data_.get(), size_}; }  // NOLINT: implicit by design
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<float[]> data_;
  std::size_t size_ = 0;
};

inline std::vector<std::uint8_t> u8_in(const val& v) {
  if (!given(v)) return {};
  return emscripten::convertJSArrayToNumberVector<std::uint8_t>(v);
}
inline std::vector<std::int32_t> i32_in(const val& v) {
  if (!given(v)) return {};
  return emscripten::convertJSArrayToNumberVector<std::int32_t>(v);
}

inline val f32_out(const std::vector<float>& x) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(x.size(), x.data()));
}
inline val i32_out(const std::vector<std::int32_t>& x) {
  return val::global("Int32Array").new_(emscripten::typed_memory_view(x.size(), x.data()));
}
inline val strings_out(const std::vector<std::string>& xs) {
  val arr = val::array();
  for (std::size_t i = 0; i < xs.size(); ++i) arr.set(i, val(xs[i]));
  return arr;
}

inline int int_in(const val& v, int fallback = 0) { return given(v) ? v.as<int>() : fallback; }
inline double num_in(const val& v, double fallback) { return given(v) ? v.as<double>() : fallback; }
inline bool bool_in(const val& v, bool fallback) { return given(v) ? v.as<bool>() : fallback; }
inline std::string str_in(const val& v, const std::string& fallback = "") {
  return given(v) ? v.as<std::string>() : fallback;
}

}  // namespace attnscope::bindings
