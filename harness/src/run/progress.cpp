// Elapsed time and ETA of the running line (see progress.hpp).
#include "run/progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace harness {

Progress::Progress()
    : now_([] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }) {}

void Progress::started() {
  if (begin_ < 0) begin_ = now_();
}

std::string Progress::text(std::size_t index, std::size_t total) const {
  if (begin_ < 0) return {};
  const double now = now_();
  std::string out = clock_text(now - begin_) + " elapsed";
  if (finished_ == 0) return out;
  // The mean over finished results, times what is left counting the one that runs; less
  // the time the running one has already taken (never below zero).
  const double mean = (last_finish_ - begin_) / static_cast<double>(finished_);
  const double left = std::max(0.0, mean * static_cast<double>(total - std::min(total, index) + 1) - (now - last_finish_));
  return out + ", ~" + clock_text(left) + " left";
}

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace harness
