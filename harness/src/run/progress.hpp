#pragma once
// The time side of the terminal's "running" line: how long the run has taken and, from the
// mean time of the results finished so far, about how long the rest will take
// ("1m02s elapsed, ~3m10s left"). Results resumed from a journal are not timed here: the
// mean is over this process's results only.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace harness {

class Progress {
 public:
  using Now = std::function<double()>;  // seconds on any steady clock
  Progress();
  explicit Progress(Now now) : now_(std::move(now)) {}
  // A result starts (the first one starts the clock).
  void started();
  void finished() {
    if (begin_ < 0) begin_ = now_();  // a result reported without a start (a skip)
    ++finished_;
    last_finish_ = now_();
  }
  // "12s elapsed" before any result finished, then "1m02s elapsed, ~3m10s left".
  std::string text(std::size_t index, std::size_t total) const;

 private:
  Now now_;
  double begin_ = -1;        // when this process started its first result
  double last_finish_ = 0;
  std::size_t finished_ = 0;
};

// "45s", "1m02s", "2h05m": a duration as a person reads a clock.
std::string clock_text(double seconds);

}  // namespace harness
