// EMSCRIPTEN_BINDINGS for JS `as.loadPretrained(...)` (bindings/js/pretrained.js): a Hugging Face checkpoint
// loaded in chunks. Layer: bindings; no math. CheckpointHandle.begin(config, tokenizer, headers, fileSizes,
// generationConfig) -> null or an error descriptor (headers / fileSizes: one per shard, one for a single file;
// generationConfig: generation_config.json text or null); feed(shard, offset, bytes) per chunk, each shard's in
// order; finishInto(modelHandle, read) hands the model to a ModelHandle (model_handle.h). Errors name
// "loadPretrained". streamWeights: begin(..., stream = true), residentRanges(shard) says what to feed, and `read`
// is the synchronous reader the model calls before each layer's forward (model/layer_stream.h).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <set>
#include <span>
#include <vector>
#include <string>
#include <utility>

#include "convert.h"
#include "errors.h"
#include "memory_reserve.h"
#include "io/safetensors.h"
#include "model/hf_checkpoint.h"
#include "model_handle.h"
#include "tokenizers/hf_tokenizer.h"
#include "spm_tokenizer_in.h"

namespace attnscope::bindings {
namespace {

using emscripten::val;
constexpr const char* kLoadPretrained = "loadPretrained";
constexpr std::uint64_t kMaxHeader = 100 << 20;  // a safetensors header larger than this is not read

// Whether a tensor of the file stays at 2 bytes a value once loaded: a BF16 / F16 matrix the kernels read
// (model::Parameters::stays_half, which names the model's tensors; here the file's: position and token-type
// tables and T5's relative bias are widened to float32).
bool stays_half_in_file(const io::TensorEntry& e) {
  if ((e.dtype != "BF16" && e.dtype != "F16") || e.shape.size() != 2) return false;
  for (const char* widened : {"position", "wpe.", "token_type", "relative_attention_bias"}) {
    if (e.name.find(widened) != std::string::npos) return false;
  }
  return true;
}

val pretrained_error(const core::Status& s) {
  return error_out(core::make_error(s.kind, kLoadPretrained, s.argument, s.detail()));
}

class CheckpointHandle {
 public:
  // tokenizer: { json } (tokenizer.json text) | { vocab, merges } (GPT-2 files) | { vocab, lowercase } (vocab.txt)
  // stream (JS streamWeights): the decoder layers stay in the files (model/layer_stream.h)
  val begin(std::string config, val tokenizer, val headers, val file_sizes, val generation_config, bool weights8,
            bool stream) {
    // { sentencepiece } (T5's spiece.model) or { source, target, vocab } (Marian's pair): spm_tokenizer_in.h
    std::optional<core::Result<std::unique_ptr<tokenizers::HfTokenizer>>> spm =
        spm_tokenizer_in(tokenizer, kLoadPretrained, "tokenizer");
    core::Result<std::unique_ptr<tokenizers::HfTokenizer>> t =
        spm.has_value() ? std::move(*spm)
        : given(tokenizer["json"])
            ? tokenizers::HfTokenizer::from_json(tokenizer["json"].as<std::string>(), kLoadPretrained, "tokenizer")
        : given(tokenizer["merges"])
            ? tokenizers::HfTokenizer::from_bpe_files(tokenizer["vocab"].as<std::string>(),
                                                      tokenizer["merges"].as<std::string>(), kLoadPretrained,
                                                      "tokenizer")
            : tokenizers::HfTokenizer::from_vocab_txt(tokenizer["vocab"].as<std::string>(),
                                                      bool_in(tokenizer["lowercase"], true), kLoadPretrained,
                                                      "tokenizer");
    if (!t.ok()) return pretrained_error(t.status());
    const unsigned shards = headers["length"].as<unsigned>();
    std::vector<std::vector<std::uint8_t>> heads(shards);
    std::vector<std::span<const std::uint8_t>> spans;
    std::vector<std::uint64_t> sizes;
    for (unsigned i = 0; i < shards; ++i) {
      heads[i] = u8_in(headers[i]);
      spans.emplace_back(heads[i]);
      sizes.push_back(static_cast<std::uint64_t>(file_sizes[i].as<double>()));
    }
    // what the weights take once loaded, reserved before the loader allocates them: BF16 / F16 matrices stay 2
    // bytes a value (model::Parameters::stays_half; Q8_0 under weights8 is less), everything else 4 (a Llama-3.2-1B
    // checkpoint is 2.47 GB of BF16: counted as float32 it asked for 4.7 GB and could not load); each shard's
    // tensor ends (where the JS side yields), its dtypes and stored bytes for summary()
    double widened = 0;
    summary_ = Summary{};
    for (unsigned i = 0; i < shards; ++i) {
      auto index = io::parse_safetensors_header(spans[i], sizes[i], kLoadPretrained);
      if (!index.ok()) break;  // begin_shards says why, naming the shard
      std::vector<double> ends;
      for (const io::TensorEntry& e : index.value().tensors) {
        ends.push_back(static_cast<double>(index.value().data_offset + e.end));
        if (!io::is_float_dtype(e.dtype)) continue;
        // streamed: layers 1.. are read into layer 0's buffer when they run, and the token tables piece by piece
        // (model/layer_stream.h), never held
        const bool in_file = stream && (model::hf_layer_index(e.name) > 0 || model::hf_streamed_table(e.name));
        if (!in_file) widened += static_cast<double>(e.count) * (stays_half_in_file(e) ? 2.0 : 4.0);
        summary_.bytes += static_cast<double>(e.end - e.begin);
        summary_.dtypes.insert(e.dtype);
      }
      summary_.ends.push_back(std::move(ends));
    }
    // + the chunks being fed and their widening buffers; streamed, the stream's read piece and an untied head's
    // transposed piece
    const double need = widened + 3.0 * (8 << 20) + (stream ? 2.0 * model::LayerStream::kReadBytes : 0.0);
    if (!reserve_heap(need)) {
      return pretrained_error(out_of_memory(kLoadPretrained, "weights", "loading the weights", need));
    }
    auto l = model::HfCheckpointLoader::begin_shards(config, model::TextEncoder::checkpoint(std::move(t).value()),
                                                     spans, sizes, model::kOpCreate, weights8, stream);
    if (!l.ok()) return pretrained_error(l.status());
    if (given(generation_config)) {
      auto s = l.value()->set_generation_config(generation_config.as<std::string>());
      if (!s.ok()) return pretrained_error(s);
    }
    loader_ = std::move(l).value();
    return val::null();
  }

  // Called first with the bytes of the texts begin() receives (config, tokenizer): grows the heap for them and
  // the tokenizer built from them, so that passing them in cannot run out of memory.
  val reserve(double bytes) const {
    const double need = bytes * 8.0 + (4 << 20);
    if (reserve_heap(need)) return val::null();
    return pretrained_error(out_of_memory(kLoadPretrained, "tokenizer", "reading config.json and the tokenizer", need));
  }

  // The end offsets in the file of shard `shard`'s tensors, in file order: the JS side feeds tensor by tensor and
  // yields between them, so that an AbortSignal can land.
  val tensor_ends(unsigned shard) const {
    val out = val::array();
    if (shard >= summary_.ends.size()) return out;
    for (std::size_t i = 0; i < summary_.ends[shard].size(); ++i) out.set(i, val(summary_.ends[shard][i]));
    return out;
  }

  // { modelType, dtype ('BF16', 'F32', or e.g. 'BF16+F32'), bytes (the float tensors' stored size) }; call
  // before finishInto.
  val summary() const {
    val o = val::object();
    if (loader_) o.set("modelType", val(loader_->model_type()));
    std::string dtype;
    for (const std::string& d : summary_.dtypes) dtype += (dtype.empty() ? "" : "+") + d;
    o.set("dtype", val(dtype));
    o.set("bytes", val(summary_.bytes));
    return o;
  }

  // 8 + the header length the file's first 8 bytes state (io::safetensors_header_length): how much of the file
  // begin() needs. 0 when the prefix is not valid or the header is larger than kMaxHeader: begin() then says why.
  double header_bytes(val prefix, double file_size) const {
    const std::vector<std::uint8_t> p = u8_in(prefix);
    auto len = io::safetensors_header_length(p, static_cast<std::uint64_t>(file_size), kLoadPretrained);
    return len.ok() && len.value() <= kMaxHeader ? 8.0 + static_cast<double>(len.value()) : 0.0;
  }

  val feed(unsigned shard, double offset, val bytes) {
    const std::vector<std::uint8_t> chunk = u8_in(bytes);
    auto s = loader_->feed_shard(shard, static_cast<std::uint64_t>(offset), chunk);
    return s.ok() ? val::null() : pretrained_error(s);
  }

  // streamWeights: the byte ranges of shard `shard` to feed, [begin, end, begin, end, ...] (everything but the
  // layers; the JS side then feeds an empty chunk at the file's size).
  val resident_ranges(unsigned shard) const {
    val out = val::array();
    if (!loader_) return out;
    int i = 0;
    for (const auto& [a, b] : loader_->resident_ranges(shard)) {
      out.set(i++, val(static_cast<double>(a)));
      out.set(i++, val(static_cast<double>(b)));
    }
    return out;
  }

  // read: null, or (streamWeights) the JS function (shard, offset, length) -> a Uint8Array of `length` bytes or a
  // string saying what went wrong; it must not throw. The model keeps it and calls it on this thread only (before
  // each layer's forward: model/layer_stream.h), never from a pool thread.
  val finish_into(ModelHandle& handle, val read) {
    model::LayerStream::Read reader;
    if (given(read)) {
      reader = [read](std::size_t shard, std::uint64_t offset, std::span<std::uint8_t> dst) -> std::string {
        const val r = read(static_cast<double>(shard), static_cast<double>(offset), static_cast<double>(dst.size()));
        if (r.isString()) return r.as<std::string>();
        if (!r.instanceof(val::global("Uint8Array")) || r["length"].as<double>() != static_cast<double>(dst.size())) {
          return "the reader did not return " + std::to_string(dst.size()) + " bytes";
        }
        // a view of the destination made after the call: the call cannot have moved wasm memory under it
        val(emscripten::typed_memory_view(dst.size(), dst.data())).call<void>("set", r);
        return std::string();
      };
    }
    auto r = loader_->finish(std::move(reader));
    loader_.reset();
    if (!r.ok()) return pretrained_error(r.status());
    handle.adopt(std::move(r).value(), kLoadPretrained);
    return val::null();
  }

 private:
  struct Summary {
    std::vector<std::vector<double>> ends;
    std::set<std::string> dtypes;
    double bytes = 0;
  };
  std::unique_ptr<model::HfCheckpointLoader> loader_;
  Summary summary_;
};

// as.streamableModelTypes: the model_types whose layers streamWeights keeps in the file (the core's list,
// model/hf_checkpoint.h decoder_model_types), for a caller deciding before it loads (web/stream-weights.js).
emscripten::val streamable_model_types() { return strings_out(model::decoder_model_types()); }

}  // namespace
}  // namespace attnscope::bindings

EMSCRIPTEN_BINDINGS(attnscope_pretrained) {
  using attnscope::bindings::CheckpointHandle;
  emscripten::class_<CheckpointHandle>("CheckpointHandle")
      .constructor<>()
      .function("begin", &CheckpointHandle::begin)
      .function("reserve", &CheckpointHandle::reserve)
      .function("tensorEnds", &CheckpointHandle::tensor_ends)
      .function("summary", &CheckpointHandle::summary)
      .function("headerBytes", &CheckpointHandle::header_bytes)
      .function("feed", &CheckpointHandle::feed)
      .function("residentRanges", &CheckpointHandle::resident_ranges)
      .function("finishInto", &CheckpointHandle::finish_into);
  emscripten::function("streamableModelTypes", &attnscope::bindings::streamable_model_types);
}
