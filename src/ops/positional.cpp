// positional.cpp: sinusoidal positional encoding in double precision. Layer: ops.
#include "ops/positional.h"

#include <cmath>

#include "core/check.h"
#include "ops/validate.h"

namespace attnscope::ops {

core::Result<std::vector<float>> positional_encoding(int n, int d, double base) {
  constexpr const char* fn = "positionalEncoding";
  ATTN_TRY(core::check_positive(fn, "n", n));
  ATTN_TRY(core::check_positive(fn, "d", d));
  ATTN_TRY(check_positive_finite(fn, "base", base));
  std::vector<float> pe(static_cast<std::size_t>(n) * static_cast<std::size_t>(d));
  // One inverse frequency per sin/cos pair: 1 / base^(2i/d), shared by all positions.
  std::vector<double> inv_freq(static_cast<std::size_t>((d + 1) / 2));
  for (int i = 0; 2 * i < d; ++i) inv_freq[i] = std::pow(base, -2.0 * i / d);
  for (int p = 0; p < n; ++p) {
    float* pe_p = pe.data() + static_cast<std::size_t>(p) * d;
    for (int c = 0; c < d; ++c) {
      const double angle = p * inv_freq[c / 2];
      pe_p[c] = static_cast<float>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

}  // namespace attnscope::ops
