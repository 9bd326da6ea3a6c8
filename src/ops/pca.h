// pca.h: principal component analysis in float64 with a cyclic Jacobi eigen-solver for the symmetric covariance
// (Golub & Van Loan, Matrix Computations, 4th ed., §8.5.2 "The cyclic Jacobi algorithm"). Layer: ops (no
// validation: callers give finite data of the stated shapes).
#pragma once

#include <vector>

namespace attnscope::ops {

// Eigen-decomposition of the symmetric d x d matrix `a` (row-major; only read): eigenvalues in descending order
// and the matching unit eigenvectors as rows of `vectors` [d, d].
struct SymmetricEigen {
  std::vector<double> values;
  std::vector<double> vectors;
};
SymmetricEigen symmetric_eigen(std::vector<double> a, int d);

// PCA of the rows of x [rows, d] (rows >= 1): the data are centred on their mean; the first `k` principal
// components (k <= d), their eigenvalues (population covariance, divided by rows) and the total variance (the
// covariance's trace). Sign convention, one per component: its coordinate of largest magnitude (the first of
// equal ones) is positive, so the result does not depend on the solver's arbitrary signs.
struct Pca {
  std::vector<double> mean;        // [d]
  std::vector<double> components;  // [k, d]
  std::vector<double> variances;   // [k]
  double total_variance = 0.0;
};
Pca pca(const std::vector<double>& x, int rows, int d, int k);

}  // namespace attnscope::ops
