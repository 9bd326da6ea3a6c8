// embed.cpp: tokens -> embedding rows + positions (+ token types, + embedding LayerNorm) (embed.h).
// Layer: model.
#include "model/embed.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/block.h"
#include "model/embedding.h"
#include "ops/linear.h"
#include "ops/positional.h"

namespace attnscope::model {

void token_row(const EmbedArgs& a, std::int32_t id, const std::string& text, std::span<float> out) {
  const bool fixed = a.encoder->fixed_vocabulary();
  if (fixed) {
    auto u = a.user->by_id.find(id);
    if (u != a.user->by_id.end()) {
      std::copy(u->second.begin(), u->second.end(), out.begin());
      return;
    }
    // a checkpoint's table may be half-width: the row is widened as it is read
    const core::WeightSpan table = a.params->weight("embedding.weight");
    const auto d = static_cast<std::size_t>(a.m->d_model);
    if (!table.empty() && id >= 0 && static_cast<std::size_t>(id) < ops::table_rows(table, d)) {
      ops::table_row(table, static_cast<std::size_t>(id), d, out);
      return;
    }
    seeded_row(a.seed, static_cast<std::uint64_t>(static_cast<std::uint32_t>(id)), out);
    return;
  }
  auto u = a.user->by_text.find(text);
  if (u != a.user->by_text.end()) {
    std::copy(u->second.begin(), u->second.end(), out.begin());
    return;
  }
  seeded_row(a.seed, fnv1a64(text), out);
}

core::Status token_rows(const EmbedArgs& a, std::span<const std::int32_t> ids, const std::vector<std::string>& texts,
                        std::span<float> out) {
  const auto d = static_cast<std::size_t>(a.m->d_model);
  // streamWeights: the table's rows are read from the file (each distinct id once); an id past the table, and the
  // rules of token_row for the others
  const bool streamed = a.stream != nullptr && a.stream->has_tables() && a.encoder->fixed_vocabulary() && a.user->by_id.empty();
  if (streamed) ATTN_TRY(a.stream->embedding_rows(ids, out, a.op));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (streamed && ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < a.stream->embedding_table_rows()) continue;  // read above
    token_row(a, ids[i], texts[i], out.subspan(i * d, d));
  }
  return core::Status::Ok();
}

namespace {

void scale_rows(std::vector<float>& x, float s) {
  if (s == 1.0f) return;
  for (float& v : x) v *= s;
}

std::int32_t utf16_length(std::string_view text) {
  std::int32_t len = 0;
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b & 0xC0u) != 0x80u) len += b >= 0xF0u ? 2 : 1;
  }
  return len;
}

}  // namespace

core::Result<std::vector<float>> positional_rows(const EmbedArgs& a, int rows) {
  const EmbeddingSpec& e = a.m->embedding;
  const auto d = static_cast<std::size_t>(a.m->d_model);
  switch (e.positional) {
    case PositionalKind::kSinusoidal: {
      if (e.sinusoid_halves) {
        // MarianSinusoidalPositionalEmbedding._init_weight: angle(p, j) = p / base^(2 (j // 2) / d); columns
        // [0, ceil(d/2)) hold sin of the even j, the rest cos of the odd j (float64, stored as float32)
        const int dm = a.m->d_model, sentinel = (dm + 1) / 2;
        std::vector<float> out(static_cast<std::size_t>(rows) * d);
        for (int p = 0; p < rows; ++p) {
          for (int c = 0; c < dm; ++c) {
            const int j = c < sentinel ? 2 * c : 2 * (c - sentinel) + 1;
            const double angle = p / std::pow(e.positional_base, 2.0 * (j / 2) / dm);
            out[static_cast<std::size_t>(p) * d + static_cast<std::size_t>(c)] =
                static_cast<float>(c < sentinel ? std::sin(angle) : std::cos(angle));
          }
        }
        return out;
      }
      auto pe = ops::positional_encoding(rows, a.m->d_model, e.positional_base);
      if (!pe.ok()) return core::readdress(pe.status(), a.op, "positionalTable");
      return std::move(pe).value();
    }
    case PositionalKind::kLearned: {
      const auto table = (*a.params)[std::string(a.side) + "positional.weight"];
      const std::size_t skip = std::min(table.size(), static_cast<std::size_t>(e.positional_offset) * d);
      std::vector<float> out(static_cast<std::size_t>(rows) * d, 0.0f);
      std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(skip), std::min(out.size(), table.size() - skip),
                  out.begin());
      return out;
    }
    case PositionalKind::kNone: break;
  }
  return std::vector<float>(static_cast<std::size_t>(rows) * d, 0.0f);
}

core::Result<SideTrace> embed(const EmbedArgs& a, std::string_view text, const char* what, RunVocab& vocab, int pad_to,
                              int pad_multiple, bool begin_token) {
  SideInput in;
  if (begin_token) in.begin_id = a.encoder->specials().bos;
  return embed(a, text, what, vocab, pad_to, pad_multiple, in);
}

core::Result<SideTrace> embed(const EmbedArgs& a, std::string_view text, const char* what, RunVocab& vocab, int pad_to,
                              int pad_multiple, const SideInput& in) {
  const ModelDescription& m = *a.m;
  const EmbeddingSpec& e = m.embedding;
  tokenizers::Tokenization tk;
  if (in.ids != nullptr) {
    // the caller's ids (run's targetIds): rows of the token table, empty offsets
    const std::int32_t size = std::max(a.encoder->vocab_size(vocab), e.vocab_size);
    const std::string arg = std::string(what) + "Ids";
    for (std::size_t i = 0; i < in.ids->size(); ++i) {
      const std::int32_t id = (*in.ids)[i];
      if (id < 0 || id >= size) {
        return core::range_error(a.op, arg.c_str(),
                                 arg + "[" + std::to_string(i) + "] (" + std::to_string(id) +
                                     ") is not in the vocabulary (0 to " + std::to_string(size - 1) + ")");
      }
      tk.ids.push_back(id);
      tk.tokens.push_back(a.encoder->token_text(id, vocab));
      tk.offsets.insert(tk.offsets.end(), {0, 0});
    }
  } else {
    auto r = a.encoder->encode(text, vocab, a.op, what, in.post_process);
    if (!r.ok()) return r.status();
    tk = std::move(r).value();
  }
  const bool begin_token = in.begin_id >= 0;
  const std::int32_t len = utf16_length(text);
  if (m.wrap_cls_sep) {
    const SpecialIds& sp = a.encoder->specials();
    tk.tokens.insert(tk.tokens.begin(), a.encoder->token_text(sp.cls, vocab));
    tk.ids.insert(tk.ids.begin(), sp.cls);
    tk.offsets.insert(tk.offsets.begin(), {0, 0});
    tk.tokens.push_back(a.encoder->token_text(sp.sep, vocab));
    tk.ids.push_back(sp.sep);
    tk.offsets.insert(tk.offsets.end(), {len, len});
  }
  if (begin_token) {
    const std::int32_t bos = in.begin_id;
    tk.tokens.insert(tk.tokens.begin(), a.encoder->token_text(bos, vocab));
    tk.ids.insert(tk.ids.begin(), bos);
    tk.offsets.insert(tk.offsets.begin(), {0, 0});
  }
  const long long n = static_cast<long long>(tk.tokens.size());
  if (n == 0) return core::range_error(a.op, what, std::string(what) + " has no tokens");
  // a RoPE checkpoint's bound is its config's (named first: its maxTokens is the same number)
  if (e.bounded && n > e.max_positions) {
    return core::range_error(a.op, what, std::string(what) + " has " + std::to_string(n) +
                                             " tokens, more than config.max_position_embeddings (" +
                                             std::to_string(e.max_positions) + ")");
  }
  if (n > a.max_tokens) {
    return core::range_error(a.op, what, std::string(what) + " has " + std::to_string(n) +
                                             " tokens, more than maxTokens (" + std::to_string(a.max_tokens) + ")");
  }
  const bool bounded = e.positional == PositionalKind::kLearned || e.bounded;
  if (bounded && n > e.max_positions) {
    return core::range_error(a.op, what, std::string(what) + " has " + std::to_string(n) +
                                             " tokens, more than maxPositions (" + std::to_string(e.max_positions) +
                                             ")");
  }
  if (pad_multiple > 0) pad_to = static_cast<int>((n / pad_multiple + 1) * pad_multiple);
  if (pad_to != 0) {
    const char* arg = pad_multiple > 0 ? "padMultiple" : "padTo";
    // "padTo (9)" or "padMultiple (8) pads to 16": the argument the caller gave
    const std::string given = pad_multiple > 0 ? "padMultiple (" + std::to_string(pad_multiple) + ") pads to " +
                                                     std::to_string(pad_to) + ", which"
                                               : "padTo (" + std::to_string(pad_to) + ")";
    if (pad_to < n) {
      return core::range_error(a.op, arg, "padTo (" + std::to_string(pad_to) +
                                              ") must be at least the number of tokens of the " + what + " (" +
                                              std::to_string(n) + ")");
    }
    if (pad_to > a.max_tokens) {
      return core::range_error(a.op, arg, given + " must be at most maxTokens (" + std::to_string(a.max_tokens) + ")");
    }
    if (bounded && pad_to > e.max_positions) {
      return core::range_error(a.op, arg,
                               given + " must be at most maxPositions (" + std::to_string(e.max_positions) + ")");
    }
  }
  SideTrace s;
  const int d = m.d_model;
  s.n_real = static_cast<int>(n);
  s.n = std::max(s.n_real, pad_to);
  s.tokens = std::move(tk.tokens);
  s.offsets = std::move(tk.offsets);
  s.ids = std::move(tk.ids);
  // '<pad>': id -1, empty range at the end of the text (UTF-16 length), zero embedding row
  for (int i = s.n_real; i < s.n; ++i) {
    s.tokens.emplace_back("<pad>");
    s.ids.push_back(-1);
    s.offsets.insert(s.offsets.end(), {len, len});
  }
  const auto D = static_cast<std::size_t>(d), nd = static_cast<std::size_t>(s.n) * D;
  s.embeddings.assign(nd, 0.0f);
  if (in.rows) {
    ATTN_TRY(token_rows(a, std::span<const std::int32_t>(s.ids.data(), static_cast<std::size_t>(s.n_real)), s.tokens,
                        s.embeddings));
  }
  scale_rows(s.embeddings, e.scale);
  auto pos = positional_rows(a, s.n);
  if (!pos.ok()) return core::readdress(pos.status(), a.op, what);
  s.positional = std::move(pos).value();
  if (e.token_types > 0) {
    // token type 0 for every token (a single segment), added to the positional rows
    const auto types = (*a.params)["token_type.weight"];
    for (std::size_t i = 0; i < nd; ++i) s.positional[i] += types[i % D];
  }
  s.input.resize(nd);
  for (std::size_t i = 0; i < nd; ++i) s.input[i] = s.embeddings[i] + s.positional[i];
  if (e.norm) {
    const std::string side(a.side);
    const NormWeights w{(*a.params)[side + "embedding.norm.weight"], (*a.params)[side + "embedding.norm.bias"]};
    s.input = layer_norm(s.input, s.n, d, w, e.norm_eps);
  }
  return s;
}

core::Status embed_ids(const EmbedArgs& a, const std::vector<std::int32_t>& ids, int first_position, std::vector<float>& out) {
  const auto D = static_cast<std::size_t>(a.m->d_model);
  const int n = static_cast<int>(ids.size());
  out.assign(static_cast<std::size_t>(n) * D, 0.0f);
  const RunVocab none;
  std::vector<std::string> texts;
  for (const std::int32_t id : ids) texts.push_back(a.encoder->token_text(id, none));
  ATTN_TRY(token_rows(a, ids, texts, out));
  scale_rows(out, a.m->embedding.scale);
  auto pos = positional_rows(a, first_position + n);
  const auto& p = pos.value();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += p[static_cast<std::size_t>(first_position) * D + i];
  if (a.m->embedding.token_types > 0) {
    const auto types = (*a.params)["token_type.weight"];
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += types[i % D];
  }
  if (a.m->embedding.norm) {
    const std::string side(a.side);
    const NormWeights w{(*a.params)[side + "embedding.norm.weight"], (*a.params)[side + "embedding.norm.bias"]};
    out = layer_norm(out, n, a.m->d_model, w, a.m->embedding.norm_eps);
  }
  return core::Status::Ok();
}

}  // namespace attnscope::model
