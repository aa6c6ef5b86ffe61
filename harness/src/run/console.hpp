#pragma once
// What a person sees: a progress line per result as it completes (a live "running" line
// on a terminal), and a summary table at the end.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"  // format_seconds, format_rate, format_bytes
#include "run/progress.hpp"
#include "types/result.hpp"

namespace harness {

class Console {
 public:
  // tty: whether `out` is a terminal (default: ask it; tests force it); progress: the
  // clock of the running line's elapsed time and ETA.
  Console(std::FILE* out, bool quiet, std::optional<bool> tty = std::nullopt, Progress progress = {});
  void start(const std::string& name, std::size_t index, std::size_t total);
  void result(const Result& r, std::size_t index, std::size_t total);
  void summary(const std::vector<Result>& results);
  bool tty() const { return tty_; }

 private:
  void print_integrity(const Result& r);
  std::FILE* out_;
  bool quiet_;
  bool tty_;
  bool pending_line_ = false;
  Progress progress_;
};

// "gemm/tiled M=4096 N=4096 K=4096"
std::string display_name(const Result& r);

}  // namespace harness
