#pragma once
// `harness report RUN1.json RUN2.json ...`: one suite's results over several runs (commits,
// dates), in the order given. Each result's median time per run with its quartiles, and
// the verdict `harness compare` gives each step (this run against the previous one that
// timed the result): a "slower" step is flagged as a regression.
#include <string>
#include <vector>

#include "compare/compare.hpp"
#include "report/report_model.hpp"

namespace harness {

struct HistoryRow {
  std::size_t run = 0;                 // index into the runs
  std::string label, date, commit;     // label: "2025-06-01 12:00 abc1234"
  std::string result;                  // the result's name
  std::string problem, case_name, variant, shape;
  std::optional<double> median, q1, q3;  // seconds; absent when not timed
  std::string status;
  std::string verdict;                 // against the previous run with the result; "" for the first
};

// Throws InputError for fewer than two runs.
std::vector<HistoryRow> history_rows(const std::vector<Report>& runs, const CompareOptions& options = {});

// A long table: run,label,date,commit,result,problem,variant,status,median_s,q1_s,q3_s,verdict_vs_previous.
std::string render_history_csv(const std::vector<Report>& runs);
std::string render_history_html(const std::vector<Report>& runs);

}  // namespace harness
