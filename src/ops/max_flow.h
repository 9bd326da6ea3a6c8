// max_flow.h: maximum flow on a directed graph with real (double) capacities, Dinic's algorithm (Dinic 1970:
// BFS levels, then blocking flows by DFS with per-node edge cursors). Layer: ops (no validation: callers give
// non-negative finite capacities and node ids in range).
// Used by attention flow (attention/analysis.h), where each query is a single source/sink pair on a layered
// graph of a few thousand nodes; the graph is built once and reset() between queries.
#pragma once

#include <cstdint>
#include <vector>

namespace attnscope::ops {

class MaxFlow {
 public:
  explicit MaxFlow(int nodes);

  // Adds the edge from -> to with `capacity` (and its residual twin of capacity 0).
  void add_edge(int from, int to, double capacity);

  // The value of a maximum flow from `source` to `sink`, on the original capacities (the residual state of any
  // earlier call is undone first). Capacities below `eps` in the residual graph count as saturated.
  double solve(int source, int sink, double eps = 1e-12);

 private:
  struct Edge {
    int to;
    double cap;   // residual capacity
    double orig;  // capacity as added (0 for the residual twin)
  };
  bool levels(int source, int sink, double eps);
  double push(int u, int sink, double limit, double eps);

  std::vector<std::vector<int>> adj_;  // edge indices per node
  std::vector<Edge> edges_;            // edge e and its twin e ^ 1
  std::vector<int> level_, cursor_, queue_;
};

}  // namespace attnscope::ops
