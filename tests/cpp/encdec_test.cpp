// encdec_test.cpp: the parts of the encoder-decoder checkpoints that have hand-workable values — T5's relative
// position buckets (T5Attention._relative_position_bucket) and bias layout, Marian's sin | cos positional halves
// (MarianSinusoidalPositionalEmbedding), BART's learned-position offset — and the config reader's errors. The whole
// forward of every model_type is checked against the float64 reference in tests/js/encdec.test.js.
#include <catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "model/block.h"
#include "model/embed.h"
#include "model/hf_checkpoint.h"
#include "model/parameters.h"

using attnscope::model::AttentionSettings;
using attnscope::model::relative_position_bucket;

TEST_CASE("relative_position_bucket: T5's buckets, worked by hand", "[encdec]") {
  // bidirectional, 32 buckets, max distance 128: 16 per direction, exact below 8, then 8 + floor(log(r/8) /
  // log(16) * 8), at most 15; keys after the query (r > 0) in buckets 16..31
  CHECK(relative_position_bucket(0, true, 32, 128) == 0);
  CHECK(relative_position_bucket(-1, true, 32, 128) == 1);
  CHECK(relative_position_bucket(1, true, 32, 128) == 17);
  CHECK(relative_position_bucket(-7, true, 32, 128) == 7);
  CHECK(relative_position_bucket(-8, true, 32, 128) == 8);    // log(1) = 0
  CHECK(relative_position_bucket(-20, true, 32, 128) == 10);  // log(2.5) / log(16) * 8 = 2.64
  CHECK(relative_position_bucket(20, true, 32, 128) == 26);
  CHECK(relative_position_bucket(-200, true, 32, 128) == 15);  // 8 + 9 capped at 15
  // unidirectional (the decoder): future keys share bucket 0; exact below 16, then 16 + floor(log(r/16) / log(8) * 16)
  CHECK(relative_position_bucket(5, false, 32, 128) == 0);
  CHECK(relative_position_bucket(-5, false, 32, 128) == 5);
  CHECK(relative_position_bucket(-20, false, 32, 128) == 17);  // log(1.25) / log(8) * 16 = 1.72
  CHECK(relative_position_bucket(-1000, false, 32, 128) == 31);
}

TEST_CASE("relative_position_bias: bias[h, i, j] = table[bucket(j - (first + i)), h]", "[encdec]") {
  AttentionSettings s;
  s.relative_buckets = 4;  // bidirectional: 2 per direction, exact below 1
  s.relative_max_distance = 8;
  s.relative_bidirectional = true;
  // table [4 buckets, 2 heads]: row b = (10 b, 10 b + 1)
  const std::vector<float> table{0, 1, 10, 11, 20, 21, 30, 31};
  // queries at positions 1..2 (first 1), keys 0..2
  const std::vector<float> bias = attnscope::model::relative_position_bias(table, 2, 2, 3, 1, s);
  REQUIRE(bias.size() == 12);
  // query 1: keys 0 (r -1 -> bucket 1), 1 (r 0 -> 0), 2 (r 1 -> 2 + 1 = 3); head 0
  CHECK(bias[0] == 10.0f);
  CHECK(bias[1] == 0.0f);
  CHECK(bias[2] == 30.0f);
  // query 2, head 1: keys 0 (r -2 -> 1 + floor(log(2) / log(8) * 1) = 1), 1 (r -1 -> 1), 2 (0)
  CHECK(bias[6 + 3] == 11.0f);
  CHECK(bias[6 + 4] == 11.0f);
  CHECK(bias[6 + 5] == 1.0f);
}

TEST_CASE("positional rows: Marian's halves and BART's offset of 2", "[encdec]") {
  attnscope::model::ModelDescription m;
  m.d_model = 4;
  m.embedding.positional = attnscope::model::PositionalKind::kSinusoidal;
  m.embedding.sinusoid_halves = true;
  attnscope::model::EmbedArgs a;
  a.m = &m;
  auto rows = attnscope::model::positional_rows(a, 2);
  REQUIRE(rows.ok());
  const std::vector<float>& r = rows.value();
  // position 0: sin 0 = 0 in the first half, cos 0 = 1 in the second
  CHECK(r[0] == 0.0f);
  CHECK(r[1] == 0.0f);
  CHECK(r[2] == 1.0f);
  CHECK(r[3] == 1.0f);
  // position 1: angles 1 / 10000^(0/4) and 1 / 10000^(2/4)
  CHECK(r[4] == Approx(std::sin(1.0)));
  CHECK(r[5] == Approx(std::sin(0.01)));
  CHECK(r[6] == Approx(std::cos(1.0)));
  CHECK(r[7] == Approx(std::cos(0.01)));

  // learned, offset 2: position p reads row p + 2 of the table; the source side its own table
  m.d_model = 1;
  m.embedding.positional = attnscope::model::PositionalKind::kLearned;
  m.embedding.sinusoid_halves = false;
  m.embedding.positional_offset = 2;
  m.embedding.max_positions = 3;
  m.embedding.per_side = true;
  m.has_source = true;
  auto params = attnscope::model::Parameters::declare(m, attnscope::model::Parameters::Init::kRequired, 0, "test");
  REQUIRE(params.ok());
  attnscope::model::Parameters& p = params.value();
  REQUIRE(p.store("positional.weight", {5, 1}, {0, 1, 2, 3, 4}, "test", "weights").ok());
  REQUIRE(p.store("source.positional.weight", {5, 1}, {5, 6, 7, 8, 9}, "test", "weights").ok());
  a.params = &p;
  auto target = attnscope::model::positional_rows(a, 3);
  REQUIRE(target.ok());
  CHECK(target.value() == std::vector<float>{2, 3, 4});
  a.side = "source.";
  auto source = attnscope::model::positional_rows(a, 3);
  REQUIRE(source.ok());
  CHECK(source.value() == std::vector<float>{7, 8, 9});
}

TEST_CASE("describe_hf: encoder-decoder configs and their errors", "[encdec]") {
  using attnscope::model::describe_hf;
  auto t5 = describe_hf(R"({"model_type": "t5", "d_model": 8, "num_heads": 2, "d_kv": 3, "num_layers": 1})", "create");
  REQUIRE(t5.ok());
  const auto& m = t5.value().description;
  CHECK(m.architecture == "encoder-decoder");
  CHECK(m.source.blocks.size() == 1);
  CHECK(m.main.blocks.size() == 1);  // num_decoder_layers defaults to num_layers
  CHECK(m.main.blocks[0].attn.head_dim == 3);
  CHECK(m.main.blocks[0].attn.relative_table);
  CHECK_FALSE(m.main.blocks[0].attn.relative_bidirectional);
  CHECK(m.source.blocks[0].attn.relative_bidirectional);
  CHECK(m.head.hidden_scale == Approx(1.0 / std::sqrt(8.0)));  // tied by default
  CHECK(t5.value().decoder_start == 0);
  auto bad = describe_hf(R"({"model_type": "t5", "feed_forward_proj": "gated-foo"})", "create");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message ==
        "create: config.feed_forward_proj 'gated-foo' is not supported (relu, gelu, gelu_new, silu and their gated- "
        "forms)");
  auto marian = describe_hf(R"({"model_type": "marian", "share_encoder_decoder_embeddings": false})", "create");
  REQUIRE_FALSE(marian.ok());
  CHECK(marian.status().message == "create: config.share_encoder_decoder_embeddings false is not supported (true)");
  // buckets T5's bucket function cannot use (found by fuzz_seq2seq_config): fewer than 4 leave the encoder no exact
  // bucket (log(0)), a max_distance not above half of them divides by log(1) = 0 in the decoder
  auto few = describe_hf(R"({"model_type": "t5", "relative_attention_num_buckets": 2})", "create");
  REQUIRE_FALSE(few.ok());
  CHECK(few.status().message == "create: config.relative_attention_num_buckets (2) must be from 4 to 65536");
  auto near = describe_hf(R"({"model_type": "t5", "relative_attention_num_buckets": 8, "relative_attention_max_distance": 4})", "create");
  REQUIRE_FALSE(near.ok());
  CHECK(near.status().message == "create: config.relative_attention_max_distance (4) must be an integer >= 5");
  CHECK(describe_hf(R"({"model_type": "t5", "relative_attention_num_buckets": 8, "relative_attention_max_distance": 5})", "create").ok());
}

TEST_CASE("relative_position_bucket: far offsets at the limits the config allows stay in range", "[encdec]") {
  // 65,536 buckets with max_distance one above half of them: log(max_distance / max_exact) is tiny, so the float
  // before the cap is far above what an int holds; the cap applies before the conversion
  for (const bool bidirectional : {true, false}) {
    for (const int r : {-(1 << 30), -(1 << 20), -40000, 40000, 1 << 20}) {
      const int b = relative_position_bucket(r, bidirectional, 65536, 32769);
      CHECK(b >= 0);
      CHECK(b < 65536);
    }
  }
  CHECK(relative_position_bucket(-(1 << 20), false, 65536, 32769) == 65535);
  CHECK(relative_position_bucket(-(1 << 20), true, 65536, 32769) == 32767);
  CHECK(relative_position_bucket(1 << 20, true, 65536, 32769) == 65535);
}
