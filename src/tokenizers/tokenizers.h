// Umbrella header for the tokenizers layer: word/char tokenizers (word_char.h), GPT-2 byte-level BPE (bpe.h),
// BERT WordPiece (wordpiece.h), Hugging Face tokenizer.json / vocab files (hf_tokenizer.h) and the Unicode helpers
// they share (unicode.h). Layer: tokenizers (depends on core/ only).
#pragma once

#include "tokenizers/bpe.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/unicode.h"
#include "tokenizers/wordpiece.h"
#include "tokenizers/word_char.h"
