// limits.h: the size limits of the model layer, in one place. Layer: model.
// They keep every allocation within the wasm heap (at most 4 GiB with -sMAXIMUM_MEMORY=4GB, TOOLCHAIN.md 17):
// the parameter limit is checked before anything is allocated, so an oversized model is an error, not an abort.
#pragma once

namespace attnscope::model {

inline constexpr int kMaxDModel = 8192;
inline constexpr int kMaxLayers = 256;
inline constexpr int kMaxDFF = 65536;
inline constexpr int kMaxPositions = 1 << 16;
inline constexpr int kMaxTokensLimit = 1 << 16;
// Floats of parameters per model: 3 GiB of float32 leaves room for the activations of a run under 4 GiB.
inline constexpr long long kMaxParameters = 3LL << 28;
// Bytes of a checkpoint's parameters at their stored width (BF16 / F16 matrices stay 2 bytes: issue 30): 3 GiB.
inline constexpr long long kMaxParameterBytes = 3LL << 30;

}  // namespace attnscope::model
