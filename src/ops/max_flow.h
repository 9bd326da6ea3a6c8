// max_flow.h: maximum flow on a directed graph with real (double) capacities, Dinic's algorithm (Dinic 1970:
// BFS levels, then a blocking flow by DFS with per-node arc cursors). Layer: ops (no validation: callers give
// non-negative finite capacities and node ids in range).
// Used by attention flow (attention/analysis.h): many source/sink pairs on one layered graph of a few thousand
// nodes and ~10^5 arcs, so the graph is stored once as compressed rows (each node's arcs contiguous, the BFS and
// the DFS read memory in order), and each solve starts again from the original capacities.
#pragma once

#include <cstdint>
#include <vector>

namespace attnscope::ops {

class MaxFlow {
 public:
  explicit MaxFlow(int nodes);

  // Adds the edge from -> to with `capacity` (its residual twin has capacity 0). Only before the first solve().
  void add_edge(int from, int to, double capacity);

  // The value of a maximum flow from `source` to `sink` over the original capacities. `allowed` (optional, one
  // flag per node) restricts the search to the flagged nodes; it must contain every node on a source-sink path
  // (e.g. the nodes that can reach the sink), so the value is unchanged. Residual capacities at most `eps` count
  // as saturated.
  double solve(int source, int sink, const std::vector<std::uint8_t>* allowed = nullptr, double eps = 1e-12);

 private:
  void build();
  bool levels(int source, int sink, const std::vector<std::uint8_t>* allowed, double eps);
  double push(int u, int sink, double limit, double eps);

  int nodes_;
  std::vector<int> from_, to_;       // edges as added
  std::vector<double> capacity_;
  bool built_ = false;
  std::vector<int> start_;           // [nodes + 1]: node u's arcs are start_[u] .. start_[u+1]-1
  std::vector<int> head_, twin_;     // per arc: its end node, the index of its reverse arc
  std::vector<double> orig_, cap_;   // per arc: original and residual capacity
  std::vector<int> level_, cursor_, queue_;
  std::vector<int> touched_;         // arcs whose residual capacity a solve changed
};

}  // namespace attnscope::ops
