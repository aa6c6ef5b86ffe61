#pragma once
// What a person sees: a progress line per result as it completes (a live "running" line
// on a terminal), and a summary table at the end.
#include <cstdio>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace harness {

class Console {
 public:
  Console(std::FILE* out, bool quiet);
  void start(const std::string& name, std::size_t index, std::size_t total);
  void result(const Result& r, std::size_t index, std::size_t total);
  void summary(const std::vector<Result>& results);
  bool tty() const { return tty_; }

 private:
  std::FILE* out_;
  bool quiet_;
  bool tty_;
  bool pending_line_ = false;
};

std::string format_seconds(double s);   // "1.234 ms"
std::string format_rate(double gflops); // "45.2 TFLOP/s"
std::string format_bytes(double bytes); // "1.50 GiB"
// "gemm/tiled M=4096 N=4096 K=4096"
std::string display_name(const Result& r);

}  // namespace harness
