// compare.h: the one array matcher for C++ tests (llm.c's check_tensor, as Catch2 assertions).
// Layer: tests/support; Catch2 v2 only, independent of src/. Element i passes when
// |got[i] - want[i]| <= atol + rtol * |want[i]| (NaN never passes; equal infinities pass). On failure
// it reports, via INFO + FAIL_CHECK: what, n, tolerance, failures count, max abs error and max rel
// error (with their indices), the first failing index and the first few (got, want) pairs.
#pragma once

#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::test {

namespace detail {

template <class Want>
inline void check_close_impl(const float* got, const Want* want, std::size_t n, double atol, double rtol,
                             const char* what) {
  std::size_t failures = 0;
  std::size_t first_fail = n;
  double max_abs = 0.0, max_rel = 0.0;
  std::size_t max_abs_at = 0, max_rel_at = 0;
  std::ostringstream pairs;
  pairs.precision(9);
  constexpr std::size_t kShownPairs = 6;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double w = static_cast<double>(want[i]);
    bool ok;
    double abs_err;
    if (std::isnan(g) || std::isnan(w)) {
      ok = false;
      abs_err = INFINITY;
    } else if (std::isinf(g) || std::isinf(w)) {
      ok = g == w;
      abs_err = ok ? 0.0 : INFINITY;
    } else {
      abs_err = std::fabs(g - w);
      ok = abs_err <= atol + rtol * std::fabs(w);
    }
    const double rel_err = w != 0.0 ? abs_err / std::fabs(w) : (abs_err == 0.0 ? 0.0 : INFINITY);
    if (abs_err > max_abs) max_abs = abs_err, max_abs_at = i;
    if (rel_err > max_rel) max_rel = rel_err, max_rel_at = i;
    if (!ok) {
      if (failures < kShownPairs) pairs << "\n  [" << i << "] got " << g << " want " << w << " (abs err " << abs_err << ")";
      if (first_fail == n) first_fail = i;
      ++failures;
    }
  }
  if (failures == 0) {
    SUCCEED(what);
    return;
  }
  std::ostringstream msg;
  msg.precision(4);
  msg << what << ": " << failures << " of " << n << " elements outside |err| <= " << atol << " + " << rtol
      << "*|want|; max abs err " << max_abs << " at [" << max_abs_at << "], max rel err " << max_rel << " at ["
      << max_rel_at << "], first failure at [" << first_fail << "]; first pairs:" << pairs.str();
  FAIL_CHECK(msg.str());
}

}  // namespace detail

// got[0..n) vs a float64 reference.
inline void check_close(const float* got, const double* want, std::size_t n, double atol, double rtol,
                        const char* what) {
  detail::check_close_impl(got, want, n, atol, rtol, what);
}
// got[0..n) vs a float32 reference (e.g. a scalar twin).
inline void check_close(const float* got, const float* want, std::size_t n, double atol, double rtol,
                        const char* what) {
  detail::check_close_impl(got, want, n, atol, rtol, what);
}
inline void check_close(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                        const char* what) {
  REQUIRE(got.size() == want.size());
  detail::check_close_impl(got.data(), want.data(), got.size(), atol, rtol, what);
}
inline void check_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                        const char* what) {
  REQUIRE(got.size() == want.size());
  detail::check_close_impl(got.data(), want.data(), got.size(), atol, rtol, what);
}
inline void check_close(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                        const std::string& what) {
  check_close(got, want, atol, rtol, what.c_str());
}
inline void check_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                        const std::string& what) {
  check_close(got, want, atol, rtol, what.c_str());
}

// The largest |got[i] - want[i]| over the common length (the figure a test prints beside its check).
template <class Want>
double max_abs_error(const std::vector<float>& got, const std::vector<Want>& want) {
  double m = 0.0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    m = std::max(m, std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
  }
  return m;
}

}  // namespace attnscope::test
