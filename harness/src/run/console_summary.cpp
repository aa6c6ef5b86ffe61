// The end of a run's console. The progress lines above it already showed every result, so
// the end repeats only what a reader must not miss among hundreds of them: the results
// that did not pass or are marked (issue 34: the whole table again buried the few that
// matter). The full table is for `--table`, and for a resumed run, whose results from the
// journal were never on screen.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "run/console.hpp"
#include "run/speed_summary.hpp"

namespace harness {

namespace {

bool clean_pass(const Result& r) {
  return r.status == Status::passed && !r.integrity.suspicious && !r.integrity.outside;
}

// A mark of issue 33 replaces "passed": the figures beside it are not to be trusted.
std::string status_text(const Result& r) {
  if (r.status != Status::passed) return std::string(to_string(r.status));
  return r.integrity.suspicious ? "suspect" : r.integrity.outside ? "outside" : "passed";
}

// A row of the end: the name, the status and what to say about it.
struct Row {
  std::string name, status, detail;
};

void print_rows(std::FILE* out, const std::vector<Row>& rows) {
  std::size_t w = 6;
  for (const auto& row : rows) w = std::max(w, row.name.size());
  for (const auto& row : rows) fmt::print(out, "{:<{}}  {:<7}  {}\n", row.name, w, row.status, row.detail);
}

// The recap's rows: each result that did not pass or is marked, with its reason; skipped
// results one row per reason (a machine without a GPU skips every CUDA result alike).
std::vector<Row> recap_rows(const std::vector<Result>& results) {
  std::vector<Row> rows;
  std::map<std::string, std::pair<std::size_t, std::size_t>> skipped;  // reason -> (row, count)
  for (const auto& r : results) {
    if (clean_pass(r)) continue;
    if (r.status == Status::skipped) {
      auto [it, fresh] = skipped.try_emplace(r.reason, rows.size(), 0);
      if (fresh) rows.push_back({display_name(r), "skipped", r.reason});
      ++it->second.second;
      continue;
    }
    const std::string detail = r.integrity.suspicious ? "suspicious: " + *r.integrity.suspicious
                               : r.integrity.outside && r.status == Status::passed
                                   ? "work outside the timed region: " + *r.integrity.outside
                                   : r.reason;
    rows.push_back({display_name(r), status_text(r), detail});
  }
  for (const auto& [reason, at] : skipped)
    if (at.second > 1) rows[at.first].name += fmt::format(" (+{} more)", at.second - 1);
  return rows;
}

}  // namespace

void Console::print_table(const std::vector<Result>& results) const {
  std::size_t w = 6;
  for (const auto& r : results) w = std::max(w, display_name(r).size());
  fmt::print(out_, "\n{:<{}}  {:<7}  {:>12}  {:>7}  {:>14}  {:>11}  {}\n", "result", w, "status", "median", "noise",
             "rate", "bandwidth", "of peak");
  std::string last_reason;
  for (const auto& r : results) {
    if (r.status == Status::passed && r.timing) {
      const Stats& s = r.timing->stats;
      const std::string peak = peak_text(r);
      fmt::print(out_, "{:<{}}  {:<7}  {:>12}  {:>7}  {:>14}  {:>11}  {}\n", display_name(r), w, status_text(r),
                 format_seconds(s.median), s.has_noise() ? fmt::format("{:.1f}%", s.rel_noise * 100) : "n/a",
                 r.work.flops > 0 ? format_rate(r.gflops) : "-",
                 r.work.bytes > 0 ? fmt::format("{:.1f} GB/s", r.gbytes_per_s) : "-", peak.empty() ? "-" : peak);
    } else {
      fmt::print(out_, "{:<{}}  {:<7}  {}\n", display_name(r), w, to_string(r.status),
                 reason_once(r.reason, last_reason, "(the same reason)"));
    }
  }
}

void Console::print_recap(const std::vector<Result>& results) const {
  const std::vector<Row> rows = recap_rows(results);
  if (rows.empty()) return;
  const auto n = std::count_if(results.begin(), results.end(), [](const Result& r) { return !clean_pass(r); });
  fmt::print(out_, "\nNot passed or marked ({} of {}; --table lists every result):\n", n, results.size());
  print_rows(out_, rows);
}

void Console::print_counts(const std::vector<Result>& results) const {
  std::map<Status, int> counts;
  for (const auto& r : results) ++counts[r.status];
  std::string extra;
  if (counts[Status::crashed]) extra += fmt::format(", {} crashed", counts[Status::crashed]);
  if (counts[Status::timeout]) extra += fmt::format(", {} timed out", counts[Status::timeout]);
  fmt::print(out_, "\n{} results: {} passed, {} failed, {} skipped, {} errors{}\n", results.size(), counts[Status::passed],
             counts[Status::failed], counts[Status::skipped], counts[Status::error], extra);
}

void Console::summary(const std::vector<Result>& results) {
  const bool unseen = std::any_of(results.begin(), results.end(), [this](const Result& r) { return !ran_.count(r.name); });
  if (!results.empty() && (full_table_ || (!quiet_ && unseen))) print_table(results);
  else if (!quiet_) print_recap(results);
  if (!quiet_) {
    const std::string speed = speed_summary_text(speed_summary(results));
    if (!speed.empty())
      fmt::print(out_, "\nFastest per shape (median ratio ± one sigma from both sides' spread):\n{}", speed);
  }
  print_counts(results);
}

}  // namespace harness
