#pragma once
// What a person sees: a progress line per result as it completes (a live "running" line
// on a terminal), and at the end what those lines leave to be said: the results that did
// not pass or are marked, the fastest per shape and the counts (console_summary.cpp).
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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
  // --table: end with a row for every result, not only those that need a look.
  void full_table(bool on) { full_table_ = on; }

 private:
  void print_integrity(const Result& r);
  void print_table(const std::vector<Result>& results) const;
  void print_recap(const std::vector<Result>& results) const;
  void print_counts(const std::vector<Result>& results) const;
  std::FILE* out_;
  bool quiet_;
  bool tty_;
  bool pending_line_ = false;
  bool full_table_ = false;
  std::string last_reason_;  // of the last result printed that did not pass
  Progress progress_;
  std::set<std::string> ran_;  // the results this run finished (not those resumed from a journal)
};

// "gemm/tiled M=4096 N=4096 K=4096"
std::string display_name(const Result& r);
// A reason repeated line after line (every CUDA result on a machine without a GPU says the
// same long sentence) is written once: `reason`, or `repeat_text` where it equals `last`
// (a non-empty one); `last` becomes `reason`.
std::string reason_once(const std::string& reason, std::string& last, std::string_view repeat_text);

// "63% of bf16 tensor" / "81% of DRAM"; empty when not profiled (the progress line and the
// table both show it).
std::string peak_text(const Result& r);

}  // namespace harness
