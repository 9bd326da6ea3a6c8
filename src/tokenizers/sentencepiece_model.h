// SentencePiece's model file (`.model`, `.spm`: a serialized sentencepiece.ModelProto, sentencepiece_model.proto of
// sentencepiece 0.1.97) read without a protobuf library: the pieces (piece, score, type), the trainer spec fields
// the encoder needs (model_type, byte_fallback, treat_whitespace_as_suffix, unk/bos/eos/pad ids, unk_surface) and
// the normalizer and denormalizer specs (name, precompiled_charsmap, add_dummy_prefix, remove_extra_whitespaces,
// escape_whitespaces). Unknown fields are skipped as protobuf does. A truncated or malformed file is an error naming
// the argument and the field ("loadTokenizer: sentencepiece is truncated in pieces[12].piece (...)").
// Layer: tokenizers (depends on core/ only).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnscope::tokenizers {

struct SpmNormalizerSpec {
  bool present = false;
  std::string name;
  std::string precompiled_charsmap;  // <uint32 trie bytes><double array><\0-terminated normalized strings>
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
};

struct SpmModelProto {
  // ModelProto.SentencePiece.Type
  enum PieceType : int { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  enum ModelType : int { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };
  struct Piece {
    std::string piece;
    float score = 0.0f;
    int type = kNormal;
  };
  std::vector<Piece> pieces;
  int model_type = kUnigram;
  bool byte_fallback = false, treat_whitespace_as_suffix = false;
  std::int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  std::string unk_surface = " \xE2\x81\x87 ";
  SpmNormalizerSpec normalizer, denormalizer;
};

// Parses the bytes of a ModelProto. Errors: "<fn>: <arg> is truncated in <field> (byte N of M)", "<fn>: <arg> is not
// a SentencePiece model (<field>: wire type 3 ...)", "<fn>: <arg> has no pieces".
core::Result<SpmModelProto> parse_sentencepiece_model(std::span<const std::uint8_t> bytes, const char* fn,
                                                      const char* arg);

}  // namespace attnscope::tokenizers
