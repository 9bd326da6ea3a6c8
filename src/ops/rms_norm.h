// rms_norm.h: RMSNorm over the last dimension, as Hugging Face's LlamaRMSNorm (Llama, Mistral, Qwen2/3, Phi-3)
// and GemmaRMSNorm (Gemma 1/2/3). Layer: ops. Internal (no validation).
//   y = x / sqrt(mean(x²) + eps) · w          (LlamaRMSNorm)
//   y = x / sqrt(mean(x²) + eps) · (1 + w)    (GemmaRMSNorm: the stored weight is the offset from 1)
// The mean of squares is accumulated in double (Hugging Face accumulates in float32; the difference is far
// below API.md's tolerances and this is closer to the float64 reference).
#pragma once

#include <span>

namespace attnscope::ops {

// x [n, d] into y [n, d] (may alias x); weight [d], or empty for no weight (a weight of ones; (1 + 0) with
// offset_one). No validation.
void rms_norm_rows(std::span<const float> x, int n, int d, std::span<const float> weight, float eps, bool offset_one,
                   std::span<float> y);

}  // namespace attnscope::ops
