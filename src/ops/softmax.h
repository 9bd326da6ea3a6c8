// softmax.h: row softmax, public (validated) and internal (in place on a strided view).
// Layer: ops. Max-subtracted; -inf entries (blocked) give exactly 0; a row with every entry -inf
// gives all zeros, never NaN (STYLE 4.4: no finite sentinels).
#pragma once

#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace attnscope::ops {

// JS softmax({ x, rows, cols }): x is [rows, cols] row-major; returns [rows, cols].
// Entries may be finite or -Infinity; NaN and +Infinity are rejected:
//   "softmax: x[3] (NaN) must be finite or -Infinity".
core::Result<std::vector<float>> softmax(std::span<const float> x, int rows, int cols);

// Internal: in-place row softmax of s (entries finite or -inf; blocked entries already -inf).
void masked_softmax_rows(core::MatView s);

}  // namespace attnscope::ops
