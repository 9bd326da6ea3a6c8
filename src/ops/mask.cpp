// mask.cpp: blocked entries become -inf before the softmax. Layer: ops.
#include "ops/mask.h"

#include <algorithm>

#include <limits>

namespace attnscope::ops {

void apply_attention_mask(core::MatView s, std::span<const std::uint8_t> mask, bool causal, int first_row) {
  constexpr float kBlocked = -std::numeric_limits<float>::infinity();
  if (!mask.empty()) {
    for (int i = 0; i < s.rows; ++i) {
      const std::uint8_t* mask_i = mask.data() + static_cast<std::size_t>(i) * s.cols;
      for (int j = 0; j < s.cols; ++j) {
        if (mask_i[j] == 0) s.at(i, j) = kBlocked;
      }
    }
  }
  if (causal) {
    for (int i = 0; i < s.rows; ++i) {
      for (int j = first_row + i + 1; j < s.cols; ++j) s.at(i, j) = kBlocked;
    }
  }
}

void apply_valid_len(core::MatView s, int valid_len) {
  constexpr float kBlocked = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < s.rows; ++i) {
    for (int j = valid_len < 0 ? s.cols : valid_len; j < s.cols; ++j) s.at(i, j) = kBlocked;
  }
}

std::vector<std::uint8_t> key_padding_mask(int nq, int nk, int nk_real) {
  std::vector<std::uint8_t> m;
  if (nk_real >= nk) return m;
  m.assign(static_cast<std::size_t>(nq) * static_cast<std::size_t>(nk), 0);
  for (int i = 0; i < nq; ++i) {
    std::fill_n(m.begin() + static_cast<std::ptrdiff_t>(i) * nk, nk_real, std::uint8_t{1});
  }
  return m;
}

}  // namespace attnscope::ops
