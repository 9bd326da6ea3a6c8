// pca.cpp: covariance, cyclic Jacobi rotations, sorting and the sign convention. Layer: ops.
#include "ops/pca.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace attnscope::ops {

namespace {
inline std::size_t at(int i, int j, int d) {
  return static_cast<std::size_t>(i) * static_cast<std::size_t>(d) + static_cast<std::size_t>(j);
}
}  // namespace

SymmetricEigen symmetric_eigen(std::vector<double> a, int d) {
  // v accumulates the rotations: a = v^T diag v at the end, eigenvectors are v's rows.
  std::vector<double> v(static_cast<std::size_t>(d) * static_cast<std::size_t>(d), 0.0);
  for (int i = 0; i < d; ++i) v[at(i, i, d)] = 1.0;
  double scale = 0.0;
  for (const double x : a) scale = std::max(scale, std::abs(x));
  for (int sweep = 0; sweep < 100 && scale > 0.0; ++sweep) {
    // 1. stop when the off-diagonal part is negligible next to the matrix's largest entry
    double off = 0.0;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) off += a[at(p, q, d)] * a[at(p, q, d)];
    if (std::sqrt(off) <= 1e-15 * scale * d) break;
    // 2. one rotation per (p, q) pair zeroes a[p, q] (Golub & Van Loan Alg. 8.5.1, sym.schur2)
    for (int p = 0; p < d; ++p) {
      for (int q = p + 1; q < d; ++q) {
        const double apq = a[at(p, q, d)];
        if (apq == 0.0) continue;
        const double tau = (a[at(q, q, d)] - a[at(p, p, d)]) / (2.0 * apq);
        const double t = (tau >= 0.0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1.0 + tau * tau));
        const double c = 1.0 / std::sqrt(1.0 + t * t), s = t * c;
        for (int k = 0; k < d; ++k) {  // columns p, q of a
          const double akp = a[at(k, p, d)], akq = a[at(k, q, d)];
          a[at(k, p, d)] = c * akp - s * akq;
          a[at(k, q, d)] = s * akp + c * akq;
        }
        for (int k = 0; k < d; ++k) {  // rows p, q of a
          const double apk = a[at(p, k, d)], aqk = a[at(q, k, d)];
          a[at(p, k, d)] = c * apk - s * aqk;
          a[at(q, k, d)] = s * apk + c * aqk;
        }
        for (int k = 0; k < d; ++k) {  // rows p, q of v
          const double vpk = v[at(p, k, d)], vqk = v[at(q, k, d)];
          v[at(p, k, d)] = c * vpk - s * vqk;
          v[at(q, k, d)] = s * vpk + c * vqk;
        }
      }
    }
  }
  // 3. sort by eigenvalue, descending
  std::vector<int> order(static_cast<std::size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return a[at(x, x, d)] > a[at(y, y, d)]; });
  SymmetricEigen out;
  out.values.resize(static_cast<std::size_t>(d));
  out.vectors.resize(v.size());
  for (int r = 0; r < d; ++r) {
    const int src = order[static_cast<std::size_t>(r)];
    out.values[static_cast<std::size_t>(r)] = a[at(src, src, d)];
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(at(src, 0, d)), d,
                out.vectors.begin() + static_cast<std::ptrdiff_t>(at(r, 0, d)));
  }
  return out;
}

Pca pca(const std::vector<double>& x, int rows, int d, int k) {
  Pca out;
  // 1. mean and centred covariance  C = Σ_r (x_r - μ)(x_r - μ)^T / rows   [d, d]
  out.mean.assign(static_cast<std::size_t>(d), 0.0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < d; ++j) out.mean[static_cast<std::size_t>(j)] += x[at(r, j, d)];
  for (double& m : out.mean) m /= rows;
  std::vector<double> cov(static_cast<std::size_t>(d) * static_cast<std::size_t>(d), 0.0), row(static_cast<std::size_t>(d));
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < d; ++j) row[static_cast<std::size_t>(j)] = x[at(r, j, d)] - out.mean[static_cast<std::size_t>(j)];
    for (int i = 0; i < d; ++i)
      for (int j = i; j < d; ++j) cov[at(i, j, d)] += row[static_cast<std::size_t>(i)] * row[static_cast<std::size_t>(j)];
  }
  for (int i = 0; i < d; ++i) {
    for (int j = i; j < d; ++j) {
      cov[at(i, j, d)] /= rows;
      cov[at(j, i, d)] = cov[at(i, j, d)];
    }
    out.total_variance += cov[at(i, i, d)];
  }
  // 2. eigenvectors, the first k kept, each signed so its largest-|x| coordinate is positive
  const SymmetricEigen e = symmetric_eigen(std::move(cov), d);
  out.components.assign(e.vectors.begin(), e.vectors.begin() + static_cast<std::ptrdiff_t>(at(k, 0, d)));
  out.variances.assign(e.values.begin(), e.values.begin() + k);
  for (int c = 0; c < k; ++c) {
    double* comp = out.components.data() + at(c, 0, d);
    int big = 0;
    for (int j = 1; j < d; ++j)
      if (std::abs(comp[j]) > std::abs(comp[big])) big = j;
    if (comp[big] < 0.0)
      for (int j = 0; j < d; ++j) comp[j] = -comp[j];
    // rounding can leave a tiny negative eigenvalue of a positive semi-definite matrix
    out.variances[static_cast<std::size_t>(c)] = std::max(0.0, out.variances[static_cast<std::size_t>(c)]);
  }
  return out;
}

}  // namespace attnscope::ops
