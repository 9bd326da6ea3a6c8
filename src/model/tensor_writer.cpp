// tensor_writer.cpp: a file tensor's elements to the model's storage (tensor_writer.h). Layer: model.
#include "model/tensor_writer.h"

#include <algorithm>
#include <cmath>

#include "io/safetensors.h"

namespace attnscope::model {

namespace {

using Op = TensorTarget::Op;

// Element e of a file tensor, value v, to its place in target t's storage dst (TensorTarget::Op).
template <class T>
void scatter(const TensorTarget& t, T* dst, std::uint64_t e, T v) {
  switch (t.op) {
    case Op::kCopy: dst[e] = v; break;
    case Op::kTranspose: {  // [rows=out, cols=in] -> [in, out]
      const std::uint64_t r = e / static_cast<std::uint64_t>(t.cols), c = e % static_cast<std::uint64_t>(t.cols);
      dst[c * static_cast<std::uint64_t>(t.rows) + r] = v;
      break;
    }
    case Op::kColumns: {
      const std::uint64_t r = e / static_cast<std::uint64_t>(t.total), c = e % static_cast<std::uint64_t>(t.total);
      if (c >= static_cast<std::uint64_t>(t.first) && c < static_cast<std::uint64_t>(t.first + t.cols)) {
        dst[r * static_cast<std::uint64_t>(t.cols) + (c - static_cast<std::uint64_t>(t.first))] = v;
      }
      break;
    }
    case Op::kRowsTransposed: {  // rows [first, first + cols) of [total, rows=in] -> [in, cols]
      const std::uint64_t r = e / static_cast<std::uint64_t>(t.rows), c = e % static_cast<std::uint64_t>(t.rows);
      if (r >= static_cast<std::uint64_t>(t.first) && r < static_cast<std::uint64_t>(t.first + t.cols)) {
        dst[c * static_cast<std::uint64_t>(t.cols) + (r - static_cast<std::uint64_t>(t.first))] = v;
      }
      break;
    }
  }
}

// GGUF's Q8_0 (ggml quantize_row_q8_0_ref): scale = max|v| / 127, q = round(v / scale); the scale is kept as float32
// (ggml stores it as F16). A non-finite value gives a non-finite scale, which check_finite reports.
void quantize_q8_block(const float* v, std::int8_t* q, float& scale) {
  float amax = 0.0f;
  for (int t = 0; t < core::kQ8Block; ++t) amax = std::isfinite(v[t]) ? std::max(amax, std::fabs(v[t])) : v[t];
  scale = amax / 127.0f;
  const float inv = scale != 0.0f && std::isfinite(scale) ? 1.0f / scale : 0.0f;
  for (int t = 0; t < core::kQ8Block; ++t) q[t] = static_cast<std::int8_t>(std::lround(v[t] * inv));
}

// A half-width PyTorch Linear weight [rows=out, cols=in] to [in, out] (TensorTarget::Op::kTranspose), elements
// first.. first + count - 1: the whole rows in 64 × 64 tiles (each tile's reads and writes stay in cache: element by
// element, every write of a 1B model's 8192-row matrix touched another cache line, and streamed layers transpose every
// layer on every run), the partial rows at either end element by element. The same bits land where scatter puts them.
void transpose_half(const TensorTarget& t, std::uint16_t* dst, const std::uint8_t* src, std::uint64_t first,
                    std::uint64_t count) {
  const auto cols = static_cast<std::uint64_t>(t.cols), rows = static_cast<std::uint64_t>(t.rows);
  const std::uint64_t end = first + count;
  auto bits = [&](std::uint64_t e) {  // element e of the file tensor, little-endian
    const std::uint8_t* p = src + 2 * (e - first);
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  };
  std::uint64_t e = first;
  for (; e < end && e % cols != 0; ++e) dst[(e % cols) * rows + e / cols] = bits(e);
  const std::uint64_t r0 = e / cols, r1 = end / cols;  // whole rows [r0, r1)
  constexpr std::uint64_t kTile = 64;
  for (std::uint64_t rb = r0; rb < r1; rb += kTile) {
    const std::uint64_t re = std::min(rb + kTile, r1);
    for (std::uint64_t cb = 0; cb < cols; cb += kTile) {
      const std::uint64_t ce = std::min(cb + kTile, cols);
      for (std::uint64_t c = cb; c < ce; ++c) {
        std::uint16_t* out = dst + c * rows;
        for (std::uint64_t r = rb; r < re; ++r) out[r] = bits(r * cols + c);
      }
    }
  }
  for (e = std::max(e, r1 * cols); e < end; ++e) dst[(e % cols) * rows + e / cols] = bits(e);
}

}  // namespace

void write_elements(const std::string& dtype, std::size_t elem, const std::vector<TensorTarget>& targets,
                    const std::vector<TensorStorage*>& storage, const std::uint8_t* src, std::uint64_t first,
                    std::uint64_t count) {
  // half-width transposes: the whole range at once, tiled
  for (std::size_t ti = 0; ti < targets.size(); ++ti) {
    if (storage[ti]->half != nullptr && targets[ti].op == Op::kTranspose) transpose_half(targets[ti], storage[ti]->half, src, first, count);
  }
  // widen in blocks (f32 targets) or copy the 16-bit patterns (half-width targets), then scatter each element
  constexpr std::uint64_t kBlock = 16384;
  float buf[kBlock];
  for (std::uint64_t done = 0; done < count; done += kBlock) {
    const std::uint64_t k = std::min(kBlock, count - done);
    const std::uint8_t* block = src + done * elem;
    bool widened = false;
    for (std::size_t ti = 0; ti < targets.size(); ++ti) {
      const TensorTarget& t = targets[ti];
      TensorStorage& st = *storage[ti];
      if (st.q8.q != nullptr) {
        if (!widened) io::to_f32(dtype, block, static_cast<std::size_t>(k), buf);
        widened = true;
        for (std::uint64_t i = 0; i < k; ++i) {
          const std::uint64_t e = first + done + i;
          const auto r = static_cast<std::int64_t>(e / static_cast<std::uint64_t>(st.in));
          const auto c = static_cast<std::int64_t>(e % static_cast<std::uint64_t>(st.in));
          st.pending[static_cast<std::size_t>(c % core::kQ8Block)] = buf[i];
          if (c % core::kQ8Block == core::kQ8Block - 1 || c == st.in - 1) {  // a block complete, or the row's last
            const std::int64_t at = (c / core::kQ8Block) * st.out + r;
            quantize_q8_block(st.pending.data(), st.q8.q + at * core::kQ8Block, st.q8.scales[at]);
            std::fill(st.pending.begin(), st.pending.end(), 0.0f);  // a partial last block is zero-padded
          }
        }
        continue;
      }
      if (st.half != nullptr) {
        if (t.op == Op::kTranspose) continue;  // done above
        for (std::uint64_t i = 0; i < k; ++i) {
          const auto bits = static_cast<std::uint16_t>(block[2 * i] | (block[2 * i + 1] << 8));  // little-endian
          scatter(t, st.half, first + done + i, bits);
        }
        continue;
      }
      if (!widened) io::to_f32(dtype, block, static_cast<std::size_t>(k), buf);
      widened = true;
      float* dst = st.f32;
      for (std::uint64_t i = 0; i < k; ++i) scatter(t, dst, first + done + i, buf[i]);
    }
  }
}


}  // namespace attnscope::model
