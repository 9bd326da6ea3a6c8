// Out of memory as an Error, not an abort (issue 31). Layer: bindings; no math.
//
// The module is built without exception catching (cmake/wasm.cmake), so an `operator new` that finds no memory
// aborts the whole module. The operations whose memory grows with their input (loading a checkpoint, run,
// generate) therefore first reserve what they will need: one malloc of an upper estimate, freed at once. malloc
// returns null when wasm memory cannot grow (ALLOW_MEMORY_GROWTH: malloc does not abort), which is reported as
// an Error naming the operation; when it succeeds the memory stays grown (wasm memory never shrinks), so the
// operation's own allocations fit in what is already there and no growth happens outside a reservation.
// tests/js/memory-faults.test.js checks that: wasm memory growth failing from the k-th attempt on, k swept,
// gives an Error every time, never an abort, and the heap goes back to its level.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/status.h"
#include "model/block.h"
#include "model/transformer.h"

namespace attnscope::bindings {

// Grows the heap so that `bytes` more fit; false when wasm memory cannot grow that far.
// The pointers go through a volatile: a malloc whose result is only freed may be removed by the optimiser (LLVM
// elides such pairs), and with it the growth. The reservation is taken in blocks of at most 512 MiB, all held until
// the last is taken: wasm32's dlmalloc refuses any single request of 2 GiB or more (HALF_MAX_SIZE_T), so one malloc
// of a Llama-3.2-1B checkpoint's 2.4 GB failed as "out of memory" with the heap far from full.
inline bool reserve_heap(double bytes) {
  if (!(bytes < 4294967296.0)) return false;  // wasm32: the whole address space is 4 GiB
  constexpr double kBlock = 512.0 * 1048576.0;
  constexpr int kMaxBlocks = 8;  // 8 x 512 MiB = 4 GiB
  static void* volatile blocks[kMaxBlocks] = {};
  int taken = 0;
  bool ok = true;
  for (double left = bytes; left > 0 && taken < kMaxBlocks; left -= kBlock) {
    blocks[taken] = std::malloc(static_cast<std::size_t>(std::min(left, kBlock)));
    if (blocks[taken] == nullptr) {
      ok = false;
      break;
    }
    ++taken;
  }
  for (int i = taken - 1; i >= 0; --i) {
    std::free(blocks[i]);
    blocks[i] = nullptr;
  }
  return ok;
}

inline std::string megabytes(double bytes) {
  return std::to_string(static_cast<long long>(bytes / 1048576.0 + 0.5)) + " MB";
}

// "<op>: out of memory: <what> needs about N MB more and WebAssembly memory could not grow ..."
inline core::Status out_of_memory(const char* op, const char* arg, const std::string& what, double bytes) {
  return core::make_error(core::ErrorKind::kRange, op, arg,
                          "out of memory: " + what + " needs about " + megabytes(bytes) +
                              " and WebAssembly memory could not grow to hold it (a wasm32 module has at most "
                              "4 GB, and the browser may allow less); nothing was kept");
}

// An upper estimate of the bytes run() (or one generate step) allocates for `text_bytes` bytes of text on `m`:
// the kept attention weights and hidden states of every layer, one layer's transient scores and feed-forward, the
// logits (and the lens' or logProbs' per-position ones), as float32, with a margin. n is bounded by the model's
// longest text, since a longer one is refused before anything is allocated.
inline double run_bytes(const model::Transformer& m, double text_bytes, const model::RunOptions& o) {
  const model::ModelDescription& d = m.description();
  const double n = std::min<double>(text_bytes + 8.0, std::max(1, m.options().max_tokens)) +
                   std::max(o.pad_to, 0) + std::max(o.pad_multiple, 0);
  const double layers = static_cast<double>(d.main.blocks.size() + d.source.blocks.size());
  const double h = std::max(1, d.num_heads), dm = std::max(1, d.d_model), ff = std::max(1, d.d_ff);
  const double vocab = std::max(1, d.embedding.vocab_size);
  const bool kept = o.level != model::TraceLevel::kNone;
  const double full = static_cast<double>(o.full_layers.size() + o.full_source_layers.size()) +
                      (o.level == model::TraceLevel::kFull ? layers : 0.0);
  // run option heads ('none' or a list): the layers run tiled attention (attention/tiled.h), whose transients are
  // a tile of scores per head, not [H, n, n]; only the requested maps are n x n (T5's relative bias keeps a stack
  // materialised: model/stack.cpp)
  const bool has_bias = !d.main.blocks.empty() && d.main.blocks[0].attn.relative_buckets > 0;
  const bool tiled = o.heads_mode != model::RunOptions::Heads::kAll && !has_bias;
  // tiled: per head at most one chunk's scratch (a 64 x 256 score tile, two 64 x head_dim accumulators, row state:
  // attention/tiled.cpp), and each listed map twice (the layer's, then the result's copy)
  const double scores = tiled ? h * 65536.0 + 2.0 * static_cast<double>(o.heads.size()) * n * n : 3.0 * h * n * n;
  // weights (and cross), outputs, residuals; at trace 'none' a layer keeps its output [n, d] only (model/stack.cpp:
  // the input too with a full trace, counted in `full`): 6 n d there made a 1B-shaped model's 2,048-token run ask
  // for 2 GB on top of its 2.5 GB of weights. Run option layerOutputs (false by default with `heads` 'none' or a
  // list) drops even that: the stack then holds one layer's activations whatever the number of layers.
  const bool outputs = o.layer_outputs.value_or(o.heads_mode == model::RunOptions::Heads::kAll) || o.lens.has_value();
  // the feed-forward's [rows, d_ff] gate, up and product: every row at once only where a layer keeps ffHidden (a full
  // trace), else blocks of kFeedForwardRows (+1: a last single row joins the block before; model/block.cpp)
  const double ff_rows = full > 0 ? n : std::min(n, model::kFeedForwardRows + 1.0);
  // (layerOutputs concerns the main side: an encoder's layers keep their outputs)
  const double source_layers = static_cast<double>(d.source.blocks.size());
  double floats = (kept ? layers * (h * n * n * 2.0 + n * dm * 6.0) : (outputs ? layers : source_layers) * n * dm * 2.0)
                  + full * (h * n * n * 2.0 + n * dm * 8.0 + n * ff * 2.0)  // full traces: scores, q/k/v, ff
                  // one layer's transients and the side's [n, d] rows: embeddings, positional, input, the stack's
                  // and the block's x, the norm, q, k, v, concat, the attention's output (11 at most; 12 counted)
                  + scores + 4.0 * ff_rows * ff + 12.0 * n * dm
                  + (source_layers > 0 ? 4.0 * n * dm : 0.0)  // the encoder side's rows while the decoder runs
                  + vocab * 4.0 + static_cast<double>(std::max(o.positional_rows, 0)) * dm;
  if (o.summaries) floats += layers * h * n * (2.0 * std::max(o.summary_top_k, 0) + 4.0);  // per-head summaries
  if (o.lens || o.log_probs) floats += layers * n * 16.0 + n * vocab * 2.0;
  if (o.lens) floats += layers * n * dm;  // every layer's rows through the final norm (Transformer::run_heads)
  // streamWeights: the head's float32 products, a batch of its rows at a time (model/heads.h: next's row, the lens'
  // and logProbs' rows); the table itself is not held (its 8 MiB read piece was reserved with the model)
  if (m.stream() != nullptr) {
    const double rows = 1.0 + (o.lens ? layers * n : 0.0) + (o.log_probs ? n : 0.0);
    floats += std::min(rows, std::max(1.0, model::LayerStream::kHeadBatchBytes / 4.0 / vocab)) * vocab;
  }
  return floats * 4.0 * 1.25 + (4 << 20);
}

// generate(): every step runs on the prompt and what was produced, plus the key/value cache of every layer.
inline double generate_bytes(const model::Transformer& m, double text_bytes, int max_new_tokens) {
  model::RunOptions o;
  o.level = model::TraceLevel::kNone;
  const double extra = std::max(0, max_new_tokens) * 8.0;  // a new token decodes to a few bytes
  const model::ModelDescription& d = m.description();
  const double n = std::min<double>(text_bytes + 8.0 + std::max(0, max_new_tokens), std::max(1, m.options().max_tokens));
  const int head_dim = d.main.blocks.empty() ? 0 : d.main.blocks[0].attn.head_dim;
  const double width = std::max(d.d_model, d.num_heads * head_dim);
  const double cache = static_cast<double>(d.main.blocks.size() + d.source.blocks.size()) * 2.0 * n * width * 4.0;
  return run_bytes(m, text_bytes + extra, o) + cache * 1.25;
}

}  // namespace attnscope::bindings
