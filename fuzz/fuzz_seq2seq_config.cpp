// fuzz_seq2seq_config.cpp: the encoder-decoder checkpoints' config.json reader (model/hf_seq2seq_config.cpp via
// describe_hf: model_type t5, mt5, bart, mbart, marian) and what follows from its description before any weight
// arrives: the parameters both stacks declare and T5's relative position buckets. The input is config.json (seeds:
// tests/fixtures/encdec's configs and variants, written by fuzz/make_seq2seq_seeds.py).
// Invariants: no crash/UB/leak; an error names "loadPretrained", its argument "config" and starts
// "loadPretrained: config"; an accepted description has positive sizes, an encoder stack when it is an
// encoder-decoder, K/V heads dividing the heads and a positive head_dim in every block of both stacks, and a
// relative position bias whose bucket of every offset (0, ±1, ±max_distance, ±2^20) lies in [0, buckets); its
// parameters are declared or refused with the same contract.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_config.h"
#include "model/block.h"
#include "model/hf_checkpoint.h"
#include "model/parameters.h"

namespace {
void check_stack(const attnscope::model::StackSpec& stack, const attnscope::model::ModelDescription& d) {
  for (const auto& b : stack.blocks) {
    const int kv = b.attn.kv_heads > 0 ? b.attn.kv_heads : d.num_heads;
    FUZZ_CHECK(kv > 0 && d.num_heads % kv == 0, "%s: %d K/V heads, %d heads", stack.name.c_str(), kv, d.num_heads);
    const int head_dim = b.attn.head_dim > 0 ? b.attn.head_dim : d.d_model / d.num_heads;
    FUZZ_CHECK(head_dim > 0, "%s: head_dim %d", stack.name.c_str(), head_dim);
    const int buckets = b.attn.relative_buckets;
    FUZZ_CHECK(buckets >= 0, "%s: relative_buckets %d", stack.name.c_str(), buckets);
    if (buckets == 0) continue;
    const int m = b.attn.relative_max_distance;
    for (const int r : {0, 1, -1, m, -m, 1 << 20, -(1 << 20)}) {
      const int k = attnscope::model::relative_position_bucket(r, b.attn.relative_bidirectional, buckets, m);
      FUZZ_CHECK(k >= 0 && k < buckets, "%s: bucket %d of offset %d (buckets %d, max_distance %d, %s)",
                 stack.name.c_str(), k, r, buckets, m, b.attn.relative_bidirectional ? "bidirectional" : "causal");
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto c = fuzz::describe_config(data, size);
  if (!c) return 0;  // refused, with the error checked
  const attnscope::model::ModelDescription& d = c->description;
  FUZZ_CHECK(d.d_model > 0 && d.num_heads > 0, "accepted sizes d %d heads %d", d.d_model, d.num_heads);
  FUZZ_CHECK(d.embedding.vocab_size > 0, "vocab_size %d", d.embedding.vocab_size);
  FUZZ_CHECK(d.architecture != "encoder-decoder" || d.has_source, "an encoder-decoder without an encoder stack");
  check_stack(d.main, d);
  if (d.has_source) check_stack(d.source, d);
  using attnscope::model::Parameters;
  auto p = Parameters::declare(d, Parameters::Init::kRequired, 0, "loadPretrained");
  if (!p.ok()) fuzz::check_error(p.status(), "loadPretrained");
  return 0;
}
