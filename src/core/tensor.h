// Tensor: an owning, row-major float32 matrix; MatView / ConstMatView: non-owning 2-D strided views.
// Layer: core. Attention works on 2-D slices ([rows, cols] with a leading dimension `ld`), so a
// head's columns inside a [n, d_model] projection are a view (ld = d_model), never a copy.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace attnscope::core {

struct ConstMatView {
  const float* data = nullptr;
  int rows = 0;
  int cols = 0;
  int ld = 0;  // distance in floats between the starts of consecutive rows (>= cols)

  const float& at(int i, int j) const { return data[static_cast<std::size_t>(i) * ld + j]; }
  // Columns [c0, c0 + width) of every row: same ld.
  ConstMatView cols_block(int c0, int width) const { return {data + c0, rows, width, ld}; }
};

struct MatView {
  float* data = nullptr;
  int rows = 0;
  int cols = 0;
  int ld = 0;

  float& at(int i, int j) const { return data[static_cast<std::size_t>(i) * ld + j]; }
  MatView cols_block(int c0, int width) const { return {data + c0, rows, width, ld}; }
  operator ConstMatView() const { return {data, rows, cols, ld}; }  // NOLINT(google-explicit-constructor)
};

// Owning [rows, cols] row-major matrix (ld == cols), zero-initialised.
class Tensor {
 public:
  Tensor() = default;
  Tensor(int rows, int cols) : data_(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), 0.0f),
                               rows_(rows), cols_(cols) {}
  Tensor(int rows, int cols, std::vector<float> data) : data_(std::move(data)), rows_(rows), cols_(cols) {}

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t size() const { return data_.size(); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float& at(int i, int j) { return data_[static_cast<std::size_t>(i) * cols_ + j]; }
  float at(int i, int j) const { return data_[static_cast<std::size_t>(i) * cols_ + j]; }

  MatView view() { return {data_.data(), rows_, cols_, cols_}; }
  ConstMatView view() const { return {data_.data(), rows_, cols_, cols_}; }
  std::span<const float> span() const { return data_; }
  std::vector<float>& vec() { return data_; }
  const std::vector<float>& vec() const { return data_; }
  std::vector<float> take() { rows_ = cols_ = 0; return std::move(data_); }

 private:
  std::vector<float> data_;
  int rows_ = 0;
  int cols_ = 0;
};

// A read-only [rows, cols] view of a contiguous row-major span.
inline ConstMatView as_view(std::span<const float> x, int rows, int cols) { return {x.data(), rows, cols, cols}; }

}  // namespace attnscope::core
