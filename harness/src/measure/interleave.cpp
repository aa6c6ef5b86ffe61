#include "measure/interleave.hpp"

namespace harness {

std::vector<std::size_t> run_in_rounds(std::size_t n, const std::function<bool(std::size_t)>& step) {
  std::vector<std::size_t> rounds(n, 0);
  std::vector<bool> done(n, false);
  for (std::size_t left = n; left > 0;) {
    for (std::size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      ++rounds[i];
      if (step(i)) {
        done[i] = true;
        --left;
      }
    }
  }
  return rounds;
}

}  // namespace harness
