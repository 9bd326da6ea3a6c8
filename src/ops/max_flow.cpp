// max_flow.cpp: Dinic's maximum flow over compressed rows. Layer: ops.
#include "ops/max_flow.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace attnscope::ops {

namespace {
inline std::size_t z(int i) { return static_cast<std::size_t>(i); }
}  // namespace

MaxFlow::MaxFlow(int nodes) : nodes_(nodes) {}

void MaxFlow::add_edge(int from, int to, double capacity) {
  from_.push_back(from);
  to_.push_back(to);
  capacity_.push_back(capacity);
}

// Compressed rows: every edge gives an arc at its tail (capacity c) and a twin at its head (capacity 0).
void MaxFlow::build() {
  const std::size_t m = from_.size();
  start_.assign(z(nodes_) + 1, 0);
  for (std::size_t e = 0; e < m; ++e) {
    ++start_[z(from_[e]) + 1];
    ++start_[z(to_[e]) + 1];
  }
  for (int u = 0; u < nodes_; ++u) start_[z(u) + 1] += start_[z(u)];
  std::vector<int> fill(start_.begin(), start_.end() - 1);
  head_.resize(2 * m);
  twin_.resize(2 * m);
  orig_.resize(2 * m);
  for (std::size_t e = 0; e < m; ++e) {
    const int a = fill[z(from_[e])]++, b = fill[z(to_[e])]++;
    head_[z(a)] = to_[e];
    head_[z(b)] = from_[e];
    twin_[z(a)] = b;
    twin_[z(b)] = a;
    orig_[z(a)] = capacity_[e];
    orig_[z(b)] = 0.0;
  }
  cap_ = orig_;
  level_.resize(z(nodes_));
  cursor_.resize(z(nodes_));
  queue_.resize(z(nodes_));
  built_ = true;
}

// 1. BFS from the source over arcs with residual capacity (and allowed heads); true when the sink is reached.
bool MaxFlow::levels(int source, int sink, const std::vector<std::uint8_t>* allowed, double eps) {
  std::fill(level_.begin(), level_.end(), -1);
  int qh = 0, qt = 0;
  level_[z(source)] = 0;
  queue_[z(qt++)] = source;
  while (qh < qt) {
    const int u = queue_[z(qh++)];
    const int next = level_[z(u)] + 1;
    for (int a = start_[z(u)], end = start_[z(u) + 1]; a < end; ++a) {
      const int v = head_[z(a)];
      if (cap_[z(a)] > eps && level_[z(v)] < 0 && (allowed == nullptr || (*allowed)[z(v)] != 0)) {
        level_[z(v)] = next;
        if (v == sink) return true;  // nodes at the sink's level or deeper cannot lie on a shortest path
        queue_[z(qt++)] = v;
      }
    }
  }
  return false;
}

// 2. A blocking-flow step from u: pushes up to `limit` along arcs one level down, over as many arcs as it takes,
//    advancing u's cursor past saturated or dead arcs; a node that passes nothing on leaves this phase (level -1).
double MaxFlow::push(int u, int sink, double limit, double eps) {
  if (u == sink) return limit;
  double sent = 0.0;
  const int want = level_[z(u)] + 1;
  for (int& a = cursor_[z(u)], end = start_[z(u) + 1]; a < end; ++a) {
    const int v = head_[z(a)];
    if (cap_[z(a)] <= eps || level_[z(v)] != want) continue;
    const double pushed = push(v, sink, std::min(limit - sent, cap_[z(a)]), eps);
    if (pushed > 0.0) {
      cap_[z(a)] -= pushed;
      cap_[z(twin_[z(a)])] += pushed;
      touched_.push_back(a);
      sent += pushed;
      if (limit - sent <= eps) return sent;  // the cursor stays: this arc may have capacity left
    }
  }
  if (sent <= 0.0) level_[z(u)] = -1;
  return sent;
}

double MaxFlow::solve(int source, int sink, const std::vector<std::uint8_t>* allowed, double eps) {
  if (!built_) build();
  // undo the previous solve's pushes (arc and twin), cheaper than copying every capacity
  for (const int a : touched_) {
    cap_[z(a)] = orig_[z(a)];
    cap_[z(twin_[z(a)])] = orig_[z(twin_[z(a)])];
  }
  touched_.clear();
  if (source == sink) return 0.0;
  double total = 0.0;
  while (levels(source, sink, allowed, eps)) {
    for (int u = 0; u < nodes_; ++u) cursor_[z(u)] = start_[z(u)];
    const double f = push(source, sink, std::numeric_limits<double>::infinity(), eps);
    if (f <= 0.0) break;
    total += f;
  }
  return total;
}

}  // namespace attnscope::ops
