// reference.h: float64 reference implementations, written as plain loops (llm.c's `_naive` style).
// Layer: tests/support; standard library only, independent of src/ (no shared code with what it judges).
// Conventions: row-major std::vector<double>; weight matrices [in, out]; masks 1 = may attend; causal
// blocks key j > i; a row whose entries are all blocked gets zero weights (attnscope's convention).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace attnscope::ref {

using Vec = std::vector<double>;
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline Vec to_double(std::span<const float> x) { return Vec(x.begin(), x.end()); }

// c[m, n] = a[m, k] · b[k, n]
inline Vec matmul(const Vec& a, int m, int k, const Vec& b, int n) {
  Vec c(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  return c;
}

// y[n, out] = x[n, in] · w[in, out] + b (b empty = no bias)
inline Vec linear(const Vec& x, int n, int in, const Vec& w, int out, const Vec& b) {
  Vec y = matmul(x, n, in, w, out);
  if (!b.empty())
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < out; ++j) y[i * out + j] += b[j];
  return y;
}

// Row softmax; -inf entries give 0; a row of only -inf gives zeros.
inline Vec softmax_rows(const Vec& x, int rows, int cols) {
  Vec y(x.size(), 0.0);
  for (int i = 0; i < rows; ++i) {
    double mx = kNegInf;
    for (int j = 0; j < cols; ++j) mx = std::max(mx, x[i * cols + j]);
    if (mx == kNegInf) continue;
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) sum += std::exp(x[i * cols + j] - mx);
    for (int j = 0; j < cols; ++j) y[i * cols + j] = std::exp(x[i * cols + j] - mx) / sum;
  }
  return y;
}

inline Vec layer_norm(const Vec& x, int n, int d, const Vec& gamma, const Vec& beta, double eps) {
  Vec y(x.size());
  for (int i = 0; i < n; ++i) {
    double mean = 0.0, var = 0.0;
    for (int c = 0; c < d; ++c) mean += x[i * d + c];
    mean /= d;
    for (int c = 0; c < d; ++c) var += (x[i * d + c] - mean) * (x[i * d + c] - mean);
    var /= d;  // biased, as torch.nn.LayerNorm
    for (int c = 0; c < d; ++c) {
      const double z = (x[i * d + c] - mean) / std::sqrt(var + eps);
      y[i * d + c] = z * (gamma.empty() ? 1.0 : gamma[c]) + (beta.empty() ? 0.0 : beta[c]);
    }
  }
  return y;
}

inline Vec positional(int n, int d, double base) {
  Vec pe(static_cast<std::size_t>(n) * d);
  for (int p = 0; p < n; ++p)
    for (int c = 0; c < d; ++c) {
      const int two_i = c - c % 2;
      const double angle = p / std::pow(base, static_cast<double>(two_i) / d);
      pe[p * d + c] = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return pe;
}

inline double relu(double x) { return x > 0.0 ? x : 0.0; }
inline double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

inline bool blocked(std::span<const std::uint8_t> mask, bool causal, int nk, int i, int j) {
  return (causal && j > i) || (!mask.empty() && mask[static_cast<std::size_t>(i) * nk + j] == 0);
}

struct Attn {
  Vec scores, weights, output;
};

// Single-head attention on [nq, dk] / [nk, dk] / [nk, dv] with strides, used by sdpa and mha.
// q_at(i, c), k_at(j, c), v_at(j, c) read element c of row i.
template <class Q, class K, class V>
Attn attend(Q q_at, K k_at, V v_at, int nq, int nk, int dk, int dv, std::span<const std::uint8_t> mask, bool causal,
            double scale) {
  Attn r;
  r.scores.assign(static_cast<std::size_t>(nq) * nk, 0.0);
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < nk; ++j) {
      if (blocked(mask, causal, nk, i, j)) {
        r.scores[i * nk + j] = kNegInf;
        continue;
      }
      double s = 0.0;
      for (int c = 0; c < dk; ++c) s += q_at(i, c) * k_at(j, c);
      r.scores[i * nk + j] = s * scale;
    }
  r.weights = softmax_rows(r.scores, nq, nk);
  r.output.assign(static_cast<std::size_t>(nq) * dv, 0.0);
  for (int i = 0; i < nq; ++i)
    for (int c = 0; c < dv; ++c) {
      double s = 0.0;
      for (int j = 0; j < nk; ++j) s += r.weights[i * nk + j] * v_at(j, c);
      r.output[i * dv + c] = s;
    }
  return r;
}

inline Attn sdpa(const Vec& q, const Vec& k, const Vec& v, int nq, int nk, int dk, int dv,
                 std::span<const std::uint8_t> mask, bool causal, double scale) {
  return attend([&](int i, int c) { return q[i * dk + c]; }, [&](int j, int c) { return k[j * dk + c]; },
                [&](int j, int c) { return v[j * dv + c]; }, nq, nk, dk, dv, mask, causal, scale);
}

struct MhaParams {
  Vec wq, wk, wv, wo, bq, bk, bv, bo;  // [in, out]; biases may be empty
};
struct Mha {
  Vec output, weights;  // [nq, d_model], [heads, nq, nk]
};

inline Mha mha(const Vec& query, const Vec& key, const Vec& value, int nq, int nk, int d_model, int heads, int kdim,
               int vdim, const MhaParams& p, std::span<const std::uint8_t> mask, bool causal) {
  const Vec q = linear(query, nq, d_model, p.wq, d_model, p.bq);
  const Vec k = linear(key, nk, kdim, p.wk, d_model, p.bk);
  const Vec v = linear(value, nk, vdim, p.wv, d_model, p.bv);
  const int hd = d_model / heads;
  Vec concat(static_cast<std::size_t>(nq) * d_model, 0.0);
  Mha r;
  for (int h = 0; h < heads; ++h) {
    const int off = h * hd;
    Attn a = attend([&](int i, int c) { return q[i * d_model + off + c]; },
                    [&](int j, int c) { return k[j * d_model + off + c]; },
                    [&](int j, int c) { return v[j * d_model + off + c]; }, nq, nk, hd, hd, mask, causal,
                    1.0 / std::sqrt(static_cast<double>(hd)));
    r.weights.insert(r.weights.end(), a.weights.begin(), a.weights.end());
    for (int i = 0; i < nq; ++i)
      for (int c = 0; c < hd; ++c) concat[i * d_model + off + c] = a.output[i * hd + c];
  }
  r.output = linear(concat, nq, d_model, p.wo, d_model, p.bo);
  return r;
}

// Bahdanau: score[i, j] = wv · tanh(q_i Wq + k_j Wk); keys j >= valid_len blocked (-1 = none).
inline Attn additive(const Vec& queries, const Vec& keys, const Vec& values, int nq, int nk, int dq, int dk, int dv,
                     int hidden, const Vec& wq, const Vec& wk, const Vec& wv, int valid_len) {
  const Vec qp = matmul(queries, nq, dq, wq, hidden);
  const Vec kp = matmul(keys, nk, dk, wk, hidden);
  Attn r;
  r.scores.assign(static_cast<std::size_t>(nq) * nk, kNegInf);
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < nk; ++j) {
      if (valid_len >= 0 && j >= valid_len) continue;
      double s = 0.0;
      for (int c = 0; c < hidden; ++c) s += wv[c] * std::tanh(qp[i * hidden + c] + kp[j * hidden + c]);
      r.scores[i * nk + j] = s;
    }
  r.weights = softmax_rows(r.scores, nq, nk);
  r.output = matmul(r.weights, nq, nk, values, dv);
  return r;
}

// Nadaraya-Watson with a Gaussian kernel: weights [nq, nt], y_pred [nq].
inline std::pair<Vec, Vec> kernel_regression(const Vec& x_train, const Vec& y_train, const Vec& x_query, double w) {
  const int nt = static_cast<int>(x_train.size()), nq = static_cast<int>(x_query.size());
  Vec s(static_cast<std::size_t>(nq) * nt);
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < nt; ++j) {
      const double z = (x_query[i] - x_train[j]) * w;
      s[i * nt + j] = -z * z / 2.0;
    }
  Vec weights = softmax_rows(s, nq, nt);
  Vec y = matmul(weights, nq, nt, y_train, 1);
  return {weights, y};
}

struct LayerParams {
  MhaParams attn, cross;  // cross: decoder only
  Vec w1, b1, w2, b2;
  Vec g1, be1, g2, be2, g3, be3;  // norm gammas / betas (g3/be3: decoder only)
};

inline Vec add(const Vec& a, const Vec& b) {
  Vec y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

inline Vec feed_forward(const Vec& x, int n, int d_model, int d_ff, const LayerParams& p, bool gelu_act) {
  Vec h = linear(x, n, d_model, p.w1, d_ff, p.b1);
  for (double& v : h) v = gelu_act ? gelu(v) : relu(v);
  return linear(h, n, d_ff, p.w2, d_model, p.b2);
}

struct EncoderRef {
  Vec output, weights;
};

// torch.nn.TransformerEncoderLayer(batch_first=True, dropout=0).
inline EncoderRef encoder_layer(const Vec& x, int n, int d_model, int heads, int d_ff, const LayerParams& p,
                                bool norm_first, bool gelu_act, double eps, std::span<const std::uint8_t> mask,
                                bool causal) {
  EncoderRef r;
  if (!norm_first) {
    const Mha sa = mha(x, x, x, n, n, d_model, heads, d_model, d_model, p.attn, mask, causal);
    const Vec x1 = layer_norm(add(x, sa.output), n, d_model, p.g1, p.be1, eps);
    r.output = layer_norm(add(x1, feed_forward(x1, n, d_model, d_ff, p, gelu_act)), n, d_model, p.g2, p.be2, eps);
    r.weights = sa.weights;
  } else {
    const Vec xn = layer_norm(x, n, d_model, p.g1, p.be1, eps);
    const Mha sa = mha(xn, xn, xn, n, n, d_model, heads, d_model, d_model, p.attn, mask, causal);
    const Vec x1 = add(x, sa.output);
    const Vec xn2 = layer_norm(x1, n, d_model, p.g2, p.be2, eps);
    r.output = add(x1, feed_forward(xn2, n, d_model, d_ff, p, gelu_act));
    r.weights = sa.weights;
  }
  return r;
}

struct DecoderRef {
  Vec output, self_weights, cross_weights;
};

// torch.nn.TransformerDecoderLayer(batch_first=True, dropout=0), causal self-attention by default.
inline DecoderRef decoder_layer(const Vec& x, const Vec& memory, int n, int m, int d_model, int heads, int d_ff,
                                const LayerParams& p, bool norm_first, bool gelu_act, double eps, bool causal,
                                std::span<const std::uint8_t> memory_mask) {
  DecoderRef r;
  const std::span<const std::uint8_t> none;
  if (!norm_first) {
    const Mha sa = mha(x, x, x, n, n, d_model, heads, d_model, d_model, p.attn, none, causal);
    const Vec x1 = layer_norm(add(x, sa.output), n, d_model, p.g1, p.be1, eps);
    const Mha ca = mha(x1, memory, memory, n, m, d_model, heads, d_model, d_model, p.cross, memory_mask, false);
    const Vec x2 = layer_norm(add(x1, ca.output), n, d_model, p.g2, p.be2, eps);
    r.output = layer_norm(add(x2, feed_forward(x2, n, d_model, d_ff, p, gelu_act)), n, d_model, p.g3, p.be3, eps);
    r.self_weights = sa.weights;
    r.cross_weights = ca.weights;
  } else {
    const Vec xn1 = layer_norm(x, n, d_model, p.g1, p.be1, eps);
    const Mha sa = mha(xn1, xn1, xn1, n, n, d_model, heads, d_model, d_model, p.attn, none, causal);
    const Vec x1 = add(x, sa.output);
    const Vec xn2 = layer_norm(x1, n, d_model, p.g2, p.be2, eps);
    const Mha ca = mha(xn2, memory, memory, n, m, d_model, heads, d_model, d_model, p.cross, memory_mask, false);
    const Vec x2 = add(x1, ca.output);
    const Vec xn3 = layer_norm(x2, n, d_model, p.g3, p.be3, eps);
    r.output = add(x2, feed_forward(xn3, n, d_model, d_ff, p, gelu_act));
    r.self_weights = sa.weights;
    r.cross_weights = ca.weights;
  }
  return r;
}

}  // namespace attnscope::ref
