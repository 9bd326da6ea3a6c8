// mask.h: turn an explicit 0/1 mask and/or the causal rule into -inf entries of a score matrix.
// Layer: ops. Internal (no validation: mask is empty or has s.rows * s.cols entries).
// Causal is top-left aligned as torch.tril(ones(nq, nk)): key j is blocked for query i when j > i.
// The two combine: an entry is blocked when either blocks it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.h"

namespace attnscope::ops {

// Writes -inf into s[i, j] for every blocked (i, j); mask is [s.rows, s.cols], nonzero = may attend. s may be rows
// first_row.. of the whole score matrix (mask then its rows too): the causal rule blocks j > first_row + i.
void apply_attention_mask(core::MatView s, std::span<const std::uint8_t> mask, bool causal, int first_row = 0);

// Writes -inf into columns j >= valid_len of every row (additive attention's validLen).
void apply_valid_len(core::MatView s, int valid_len);

// A key-padding mask [nq, nk]: 1 (may attend) for keys j < nk_real, 0 for the padding keys after them (PyTorch's
// key_padding_mask inverted). Empty when nothing is padded (nk_real >= nk).
std::vector<std::uint8_t> key_padding_mask(int nq, int nk, int nk_real);

}  // namespace attnscope::ops
