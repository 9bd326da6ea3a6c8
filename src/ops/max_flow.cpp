// max_flow.cpp: Dinic's maximum flow. Layer: ops.
#include "ops/max_flow.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace attnscope::ops {

MaxFlow::MaxFlow(int nodes)
    : adj_(static_cast<std::size_t>(nodes)), level_(static_cast<std::size_t>(nodes)),
      cursor_(static_cast<std::size_t>(nodes)), queue_(static_cast<std::size_t>(nodes)) {}

void MaxFlow::add_edge(int from, int to, double capacity) {
  adj_[static_cast<std::size_t>(from)].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity, capacity});
  adj_[static_cast<std::size_t>(to)].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0.0, 0.0});
}

// 1. BFS from the source over edges with residual capacity; true when the sink is reached.
bool MaxFlow::levels(int source, int sink, double eps) {
  std::fill(level_.begin(), level_.end(), -1);
  int head = 0, tail = 0;
  level_[static_cast<std::size_t>(source)] = 0;
  queue_[static_cast<std::size_t>(tail++)] = source;
  while (head < tail) {
    const int u = queue_[static_cast<std::size_t>(head++)];
    for (const int e : adj_[static_cast<std::size_t>(u)]) {
      const Edge& ed = edges_[static_cast<std::size_t>(e)];
      if (ed.cap > eps && level_[static_cast<std::size_t>(ed.to)] < 0) {
        level_[static_cast<std::size_t>(ed.to)] = level_[static_cast<std::size_t>(u)] + 1;
        queue_[static_cast<std::size_t>(tail++)] = ed.to;
      }
    }
  }
  return level_[static_cast<std::size_t>(sink)] >= 0;
}

// 2. One augmenting path along increasing levels (DFS), advancing each node's cursor past dead edges.
double MaxFlow::push(int u, int sink, double limit, double eps) {
  if (u == sink) return limit;
  const auto& out = adj_[static_cast<std::size_t>(u)];
  for (int& i = cursor_[static_cast<std::size_t>(u)]; i < static_cast<int>(out.size()); ++i) {
    const int e = out[static_cast<std::size_t>(i)];
    Edge& ed = edges_[static_cast<std::size_t>(e)];
    if (ed.cap <= eps || level_[static_cast<std::size_t>(ed.to)] != level_[static_cast<std::size_t>(u)] + 1) continue;
    const double pushed = push(ed.to, sink, std::min(limit, ed.cap), eps);
    if (pushed > 0.0) {
      ed.cap -= pushed;
      edges_[static_cast<std::size_t>(e ^ 1)].cap += pushed;
      return pushed;
    }
  }
  return 0.0;
}

double MaxFlow::solve(int source, int sink, double eps) {
  for (Edge& e : edges_) e.cap = e.orig;
  if (source == sink) return 0.0;
  double total = 0.0;
  while (levels(source, sink, eps)) {
    std::fill(cursor_.begin(), cursor_.end(), 0);
    for (;;) {
      const double f = push(source, sink, std::numeric_limits<double>::infinity(), eps);
      if (f <= 0.0) break;
      total += f;
    }
  }
  return total;
}

}  // namespace attnscope::ops
