#include "measure/interleave.hpp"

#include <random>
#include <utility>

namespace harness {

std::vector<std::size_t> run_in_rounds(std::size_t n, const std::function<bool(std::size_t)>& step,
                                       std::optional<std::uint64_t> shuffle_seed) {
  std::vector<std::size_t> rounds(n, 0);
  std::vector<std::size_t> order;  // the unfinished results, in this round's order
  for (std::size_t i = 0; i < n; ++i) order.push_back(i);
  std::mt19937_64 rng(shuffle_seed.value_or(0));
  while (!order.empty()) {
    if (shuffle_seed)  // Fisher-Yates (std::shuffle's permutation differs between standard libraries)
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    std::vector<std::size_t> next;  // fixed: still in plan order
    for (const std::size_t i : order) {
      ++rounds[i];
      if (!step(i)) next.push_back(i);
    }
    order = std::move(next);
  }
  return rounds;
}

}  // namespace harness
