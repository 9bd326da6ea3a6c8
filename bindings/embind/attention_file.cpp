// EMSCRIPTEN_BINDINGS for attention files (src/io/attention_file.h; JS bindings/js/attention_file.js, which backs
// `as.readAttentionFile(bytes)` and the CLI's --attention-file). Layer: bindings; no math. The handle holds only the
// file's index, never its weights: JS hands over the header, then the bytes of one head at a time, so a file far
// larger than wasm memory can be viewed head by head.
//   AttentionFileHandle
//     headerBytes(first8, fileSize) -> bytes open() needs (8 + header length), or an error descriptor
//     open(header, fileSize)        -> null or an error descriptor (every rule but the weights' values)
//     info()                        -> { tokens, sourceTokens?, model?, n, m, numHeads, layers: [{ self, cross? }] }
//                                      each { name, dtype, heads, rows, cols, offset, headBytes } (offset absolute)
//     head(layer, cross, h, bytes)  -> Float32Array [rows, cols] (widened, checked) or an error descriptor
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "convert.h"
#include "errors.h"
#include "io/attention_file.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;
constexpr const char* kReadAttentionFile = "readAttentionFile";

val attention_tensor_out(const io::AttentionTensor& t) {
  val o = val::object();
  o.set("name", val(t.name));
  o.set("dtype", val(t.dtype));
  o.set("heads", val(static_cast<double>(t.heads)));
  o.set("rows", val(static_cast<double>(t.rows)));
  o.set("cols", val(static_cast<double>(t.cols)));
  o.set("offset", val(static_cast<double>(t.offset)));
  o.set("headBytes", val(static_cast<double>(io::head_range(t, 0).length)));
  return o;
}

class AttentionFileHandle {
 public:
  val headerBytes(val first8, double file_size) const {
    const std::vector<std::uint8_t> bytes = u8_in(first8);
    auto r = io::attention_file_header_length(bytes, static_cast<std::uint64_t>(file_size), kReadAttentionFile);
    if (!r.ok()) return error_out(r.status());
    return val(static_cast<double>(8 + r.value()));
  }

  val open(val header, double file_size) {
    const std::vector<std::uint8_t> bytes = u8_in(header);
    auto r = io::parse_attention_file_header(bytes, static_cast<std::uint64_t>(file_size), kReadAttentionFile);
    if (!r.ok()) return error_out(r.status());
    index_ = std::move(r).value();
    return val::null();
  }

  val info() const {
    val o = val::object();
    o.set("tokens", strings_out(index_.tokens));
    if (index_.has_source_tokens) o.set("sourceTokens", strings_out(index_.source_tokens));
    if (index_.model) o.set("model", val(*index_.model));
    o.set("n", val(static_cast<double>(index_.tokens.size())));
    o.set("m", val(static_cast<double>(index_.source_tokens.size())));
    o.set("numHeads", val(static_cast<double>(index_.max_heads())));
    val layers = val::array();
    for (std::size_t i = 0; i < index_.layers.size(); ++i) {
      val l = val::object();
      l.set("self", attention_tensor_out(index_.layers[i].self));
      if (index_.layers[i].cross) l.set("cross", attention_tensor_out(*index_.layers[i].cross));
      layers.set(i, l);
    }
    o.set("layers", layers);
    return o;
  }

  // The JS side passes a valid layer (from info()) and exactly headBytes bytes; read_head re-checks both.
  val head(int layer, bool cross, double h, val bytes) const {
    if (layer < 0 || static_cast<std::size_t>(layer) >= index_.layers.size() ||
        (cross && !index_.layers[static_cast<std::size_t>(layer)].cross)) {
      return error_out(core::range_error(kReadAttentionFile, "layer",
                                         "layer (" + std::to_string(layer) + ") has no " +
                                             (cross ? "cross-attention" : "self-attention") + " in this file"));
    }
    const io::AttentionLayer& l = index_.layers[static_cast<std::size_t>(layer)];
    const io::AttentionTensor& t = cross ? *l.cross : l.self;
    const std::vector<std::uint8_t> b = u8_in(bytes);
    auto r = io::read_head(t, static_cast<std::int64_t>(h), b, kReadAttentionFile);
    if (!r.ok()) return error_out(r.status());
    return f32_out(r.value());
  }

 private:
  io::AttentionFileIndex index_;
};

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_attention_file) {
  using attnscope::bindings::AttentionFileHandle;
  emscripten::class_<AttentionFileHandle>("AttentionFileHandle")
      .constructor<>()
      .function("headerBytes", &AttentionFileHandle::headerBytes)
      .function("open", &AttentionFileHandle::open)
      .function("info", &AttentionFileHandle::info)
      .function("head", &AttentionFileHandle::head);
}
