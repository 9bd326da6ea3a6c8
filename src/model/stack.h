// stack.h: runs a side's rows through a stack of blocks (description.h), keeping what the caller asked for.
// Layer: model. Padding keys ('<pad>' rows n_real..n) are blocked for every query (ops::key_padding_mask), and
// memory pads in cross-attention. A stack with a final norm gives output = LN(last block's output) and keeps
// the last block's output in last_layer_output.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "model/block.h"
#include "model/description.h"
#include "model/layer_stream.h"
#include "model/trace.h"

namespace attnscope::model {

// A stack's weights, looked up once when the model is created (spans into the model's Parameters).
struct StackWeights {
  std::vector<BlockWeights> blocks;  // one per BlockSpec (unused for kSimple)
  NormWeights final_norm;
  // streamWeights: every block's weights are the layer buffer, which run_stack fills before each block
  const LayerStream* stream = nullptr;
};

struct StackArgs {
  const ModelDescription* m = nullptr;
  const StackSpec* spec = nullptr;
  const StackWeights* w = nullptr;
  bool full_all = true;                      // every layer keeps the full trace
  bool weights = true;                       // every layer keeps its attention weights
  const std::vector<int>* full_layers = nullptr;  // and these layers keep the full trace
  // Empty, or [blocks * num_heads]: 0 ablates that layer's head (run option `ablate`, see MhaArgs::head_keep).
  std::span<const std::uint8_t> head_keep;
  // Empty, or one per block: the weights · V [n, heads·head_dim] whose columns replace the heads marked 2 in
  // head_keep (mean ablation, activation patching; model/inside.h).
  std::span<const std::vector<float>> head_values;
  // Start at this block, side.input being its input (a re-run from cached residuals, model/inside.h); side.layers
  // then holds the blocks from here on.
  std::size_t first_block = 0;
  const char* op = "run";
  const char* what = "text";  // argument named in errors ("text", "source", "target")
  // Decoding (generate): one cache per block; side.input holds only the new rows, nothing is traced but the
  // output.
  std::vector<KvCache>* caches = nullptr;
  // Run options heads / summaries (RunOptions): layers not kept in full run tiled attention (no [H, n, n]);
  // `heads` (layer, head) pairs get their [n, n] map in LayerTrace::head_maps; summaries fill LayerTrace::summary.
  bool tiled = false;
  std::span<const std::pair<int, int>> heads;
  bool summaries = false;
  int top_k = 0;
  // Each layer keeps its output [n, d] in LayerTrace::output (run option layerOutputs); layers kept in full always do.
  bool keep_outputs = true;
};

// side.input -> side.layers, side.output. memory: the encoder side for blocks with cross-attention.
core::Status run_stack(const StackArgs& a, SideTrace& side, const SideTrace* memory);

}  // namespace attnscope::model
