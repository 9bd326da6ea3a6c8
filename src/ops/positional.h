// positional.h: sinusoidal positional encoding (Vaswani et al. 2017, section 3.5).
// Layer: ops. Depends on core only.
#pragma once

#include <vector>

#include "core/status.h"

namespace attnscope::ops {

// JS positionalEncoding({ n, d, base = 10000 }) -> [n, d] row-major:
//   PE[p, 2i] = sin(p / base^(2i/d)),  PE[p, 2i+1] = cos(p / base^(2i/d)).
// d may be odd (the last column is then a sine). Computed in double, rounded once to float.
// base must be a positive finite number.
core::Result<std::vector<float>> positional_encoding(int n, int d, double base);

}  // namespace attnscope::ops
