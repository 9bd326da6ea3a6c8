// The ModelProto reader of sentencepiece_model.h: protobuf's wire format (varint keys; wire types 0 varint,
// 1 fixed64, 2 length-delimited, 5 fixed32; groups are refused) walked message by message, each field checked
// against the bytes left. WireField numbers from sentencepiece_model.proto (0.1.97). Layer: tokenizers.
#include "tokenizers/sentencepiece_model.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace attnscope::tokenizers {
namespace spm_wire {  // named: the unity build joins this file with others

struct WireField {
  std::uint32_t number = 0;
  int wire = 0;
  std::uint64_t varint = 0;                // wire 0
  std::uint32_t fixed32 = 0;               // wire 5
  std::span<const std::uint8_t> bytes;     // wire 2
};

// A field's path in messages ("pieces[3].score"): a string, or a callable that builds one. Paths are built only
// when an error needs them (a Llama tokenizer.model has 32,000 pieces of 3 fields each).
template <class Name>
std::string path_text(const Name& name) {
  if constexpr (std::is_invocable_v<const Name&>) {
    return name();
  } else {
    return std::string(name);
  }
}

// Walks one message's fields; errors name `arg`, the field path and the byte offset in the whole file.
class WireReader {
 public:
  WireReader(std::span<const std::uint8_t> all, const char* fn, const char* arg) : all_(all), fn_(fn), arg_(arg) {}

  template <class Name>
  core::Status truncated(const Name& where, std::size_t at) const {
    return core::invalid_error(fn_, arg_, std::string(arg_) + " is truncated or malformed in " + path_text(where) +
                                              " (byte " + std::to_string(at) + " of " + std::to_string(all_.size()) +
                                              "): not a complete SentencePiece model file");
  }
  template <class Name>
  core::Status bad(const Name& where, const std::string& what) const {
    return core::invalid_error(fn_, arg_, std::string(arg_) + " is not a SentencePiece model (" + path_text(where) + ": " +
                                              what + ")");
  }

  // Calls visit(field) for each field of msg; msg is a sub-span of all_. where: the message's path (a string or a
  // callable, see path_text); name_of(field number): how messages call a field of it ("pieces[3]",
  // "normalizer_spec.name").
  template <class Where, class Visit, class NameOf>
  core::Status each(std::span<const std::uint8_t> msg, const Where& where, NameOf name_of, Visit visit) const {
    std::size_t i = 0;
    const std::size_t base = static_cast<std::size_t>(msg.data() - all_.data());
    while (i < msg.size()) {
      std::uint64_t key = 0;
      if (!varint(msg, i, key)) return truncated(path_text(where) + " (a field key)", base + i);
      WireField f;
      f.number = static_cast<std::uint32_t>(key >> 3);
      f.wire = static_cast<int>(key & 7);
      if (f.number == 0 || key >> 32 != 0) return bad(where, "field number " + std::to_string(key >> 3));
      const auto name = [&] { return name_of(f.number); };
      switch (f.wire) {
        case 0:
          if (!varint(msg, i, f.varint)) return truncated(name, base + i);
          break;
        case 1:
          if (msg.size() - i < 8) return truncated(name, base + i);
          i += 8;
          break;
        case 5:
          if (msg.size() - i < 4) return truncated(name, base + i);
          std::memcpy(&f.fixed32, msg.data() + i, 4);  // little-endian hosts (x86, wasm)
          i += 4;
          break;
        case 2: {
          std::uint64_t n = 0;
          if (!varint(msg, i, n)) return truncated(name, base + i);
          if (n > msg.size() - i) return truncated(name, base + i);
          f.bytes = msg.subspan(i, static_cast<std::size_t>(n));
          i += static_cast<std::size_t>(n);
          break;
        }
        default: return bad(name, "wire type " + std::to_string(f.wire) + " is not used by sentencepiece_model.proto");
      }
      core::Status s = visit(f);
      if (!s.ok()) return s;
    }
    return core::Status::Ok();
  }

  template <class Name>
  core::Status expect(const WireField& f, int wire, const Name& where) const {
    if (f.wire == wire) return core::Status::Ok();
    return bad(where, "wire type " + std::to_string(f.wire) + " where " + std::to_string(wire) + " was expected");
  }

 private:
  static bool varint(std::span<const std::uint8_t> m, std::size_t& i, std::uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= m.size()) return false;
      const std::uint8_t b = m[i++];
      out |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) return true;
    }
    return false;
  }

  std::span<const std::uint8_t> all_;
  const char* fn_;
  const char* arg_;
};

std::string text_of(std::span<const std::uint8_t> b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

float float_of(std::uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

core::Status read_normalizer(const WireReader& rd, std::span<const std::uint8_t> msg, const std::string& where,
                             SpmNormalizerSpec& n) {
  n.present = true;
  auto name_of = [&](std::uint32_t number) {
    static const char* names[] = {"", ".name", ".precompiled_charsmap", ".add_dummy_prefix", ".remove_extra_whitespaces",
                                  ".escape_whitespaces", ".normalization_rule_tsv"};
    return where + (number < 7 ? std::string(names[number]) : " field " + std::to_string(number));
  };
  return rd.each(msg, where, name_of, [&](const WireField& f) -> core::Status {
    switch (f.number) {
      case 1:
      case 2: {
        core::Status s = rd.expect(f, 2, [&] { return where + (f.number == 1 ? ".name" : ".precompiled_charsmap"); });
        if (!s.ok()) return s;
        (f.number == 1 ? n.name : n.precompiled_charsmap) = text_of(f.bytes);
        return core::Status::Ok();
      }
      case 3:
      case 4:
      case 5: {
        static const char* names[] = {".add_dummy_prefix", ".remove_extra_whitespaces", ".escape_whitespaces"};
        core::Status s = rd.expect(f, 0, [&] { return where + names[f.number - 3]; });
        if (!s.ok()) return s;
        bool& b = f.number == 3 ? n.add_dummy_prefix : f.number == 4 ? n.remove_extra_whitespaces : n.escape_whitespaces;
        b = f.varint != 0;
        return core::Status::Ok();
      }
      default: return core::Status::Ok();
    }
  });
}

core::Status read_trainer(const WireReader& rd, std::span<const std::uint8_t> msg, SpmModelProto& m) {
  auto name_of = [](std::uint32_t n) { return "trainer_spec field " + std::to_string(n); };
  return rd.each(msg, "trainer_spec", name_of, [&](const WireField& f) -> core::Status {
    auto int_field = [&](const char* name, auto& out) -> core::Status {
      core::Status s = rd.expect(f, 0, [&] { return std::string("trainer_spec.") + name; });
      if (!s.ok()) return s;
      out = static_cast<std::remove_reference_t<decltype(out)>>(static_cast<std::int64_t>(f.varint));
      return core::Status::Ok();
    };
    switch (f.number) {
      case 3: return int_field("model_type", m.model_type);
      case 24: return int_field("treat_whitespace_as_suffix", m.treat_whitespace_as_suffix);
      case 35: return int_field("byte_fallback", m.byte_fallback);
      case 40: return int_field("unk_id", m.unk_id);
      case 41: return int_field("bos_id", m.bos_id);
      case 42: return int_field("eos_id", m.eos_id);
      case 43: return int_field("pad_id", m.pad_id);
      case 44: {
        core::Status s = rd.expect(f, 2, "trainer_spec.unk_surface");
        if (!s.ok()) return s;
        m.unk_surface = text_of(f.bytes);
        return core::Status::Ok();
      }
      default: return core::Status::Ok();
    }
  });
}

}  // namespace spm_wire

using namespace spm_wire;  // NOLINT

core::Result<SpmModelProto> parse_sentencepiece_model(std::span<const std::uint8_t> bytes, const char* fn,
                                                      const char* arg) {
  const WireReader rd(bytes, fn, arg);
  SpmModelProto m;
  if (bytes.empty()) return core::invalid_error(fn, arg, std::string(arg) + " is empty (a SentencePiece model file was expected)");
  auto name_of = [&](std::uint32_t n) -> std::string {
    switch (n) {
      case 1: return "pieces[" + std::to_string(m.pieces.size()) + "]";
      case 2: return "trainer_spec";
      case 3: return "normalizer_spec";
      case 5: return "denormalizer_spec";
      default: return "ModelProto field " + std::to_string(n);
    }
  };
  core::Status s = rd.each(bytes, "ModelProto", name_of, [&](const WireField& f) -> core::Status {
    switch (f.number) {
      case 1: {
        const std::size_t index = m.pieces.size();
        const auto where = [index] { return "pieces[" + std::to_string(index) + "]"; };
        core::Status e = rd.expect(f, 2, where);
        if (!e.ok()) return e;
        SpmModelProto::Piece p;
        bool has_piece = false;
        auto piece_field = [&](std::uint32_t n) {
          return where() + (n == 1 ? ".piece" : n == 2 ? ".score" : n == 3 ? ".type" : " field " + std::to_string(n));
        };
        e = rd.each(f.bytes, where, piece_field, [&](const WireField& g) -> core::Status {
          if (g.number == 1) {
            core::Status t = rd.expect(g, 2, [&] { return where() + ".piece"; });
            if (!t.ok()) return t;
            p.piece = text_of(g.bytes);
            has_piece = true;
          } else if (g.number == 2) {
            core::Status t = rd.expect(g, 5, [&] { return where() + ".score"; });
            if (!t.ok()) return t;
            p.score = float_of(g.fixed32);
          } else if (g.number == 3) {
            core::Status t = rd.expect(g, 0, [&] { return where() + ".type"; });
            if (!t.ok()) return t;
            if (g.varint < 1 || g.varint > 6) return rd.bad(where() + ".type", "value " + std::to_string(g.varint) + " (1..6)");
            p.type = static_cast<int>(g.varint);
          }
          return core::Status::Ok();
        });
        if (!e.ok()) return e;
        if (!has_piece || p.piece.empty()) return rd.bad(where() + ".piece", "the piece is empty");
        m.pieces.push_back(std::move(p));
        return core::Status::Ok();
      }
      case 2: {
        core::Status e = rd.expect(f, 2, "trainer_spec");
        return e.ok() ? read_trainer(rd, f.bytes, m) : e;
      }
      case 3:
      case 5: {
        const char* where = f.number == 3 ? "normalizer_spec" : "denormalizer_spec";
        core::Status e = rd.expect(f, 2, where);
        return e.ok() ? read_normalizer(rd, f.bytes, where, f.number == 3 ? m.normalizer : m.denormalizer) : e;
      }
      default: return core::Status::Ok();
    }
  });
  if (!s.ok()) return s;
  if (m.pieces.empty()) return core::invalid_error(fn, arg, std::string(arg) + " is not a SentencePiece model (it has no pieces)");
  return m;
}

}  // namespace attnscope::tokenizers
