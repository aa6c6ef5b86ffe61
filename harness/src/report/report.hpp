#pragma once
// The JSON report (schema "harness-report", versioned), the per-result journal, and
// reading reports back.
//
// Layout: {schema, schema_version, environment, suite, summary, results: [...],
//          benchmarks: [...]}  where `benchmarks` follows Google Benchmark's JSON
// (name, run_type, iterations, real_time, cpu_time, time_unit, counters as fields) so
// its compare.py reads our reports.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "types/result.hpp"
#include "suite/suite.hpp"

namespace harness {

inline constexpr const char* kReportSchema = "harness-report";
// 2: results carry "param_order" (the declared order of their parameters). Version 1
// reports are still read (the order then comes from the result name).
inline constexpr int kReportSchemaVersion = 2;

nlohmann::json result_to_json(const Result& r);
// The inverse, and the single decoder of one result: journals (resume, isolated
// children) and reports (decode_report). A field missing or of the wrong type keeps its
// default; throws nlohmann::json::exception only when `j` is not an object or has
// neither a name nor problem and variant.
Result result_from_json(const nlohmann::json& j);
nlohmann::json settings_to_json(const MeasureSettings& s);
// Forgiving like result_from_json.
MeasureSettings settings_from_json(const nlohmann::json& s);
nlohmann::json benchmarks_json(const std::vector<Result>& results);
nlohmann::json make_report(const nlohmann::json& environment, const Suite& suite,
                           const std::vector<Result>& results);

// A report as written to its file: indented by 2 like dump(2), except that arrays of
// scalars (samples_s, param_order) take one line each. Ends with a newline; parses back to `report`.
std::string report_text(const nlohmann::json& report);

// Writes `text` to `path` atomically: a temporary file in the same folder, then rename.
// Throws InputError when the folder cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// Appends one JSON line per finished result and flushes it, so a crash or a kill loses
// nothing already measured.
// The results in a journal file, in file order: the run's journal (one result per line)
// or a pool child's events file ({"event":"result","result":{...}} lines; other events are
// skipped). A torn last line (the kill came mid-write) is ignored. strict (--resume of the
// run's journal): a file that cannot be opened, a line that is not JSON or not a result is
// an InputError naming path:line; otherwise they are skipped.
std::vector<Result> read_journal(const std::string& path, bool strict);

class Journal {
 public:
  // fresh: a new run's journal starts empty (an earlier run's lines at the same path are
  // dropped, as its report is replaced); otherwise lines are appended (--resume).
  explicit Journal(std::string path, bool fresh = false);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const nlohmann::json& entry);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads and checks a report (schema name and version); InputError with the reason.
nlohmann::json read_report(const std::string& path);

// The default output path: reports/run-<suite>-<UTC timestamp>.json
std::string default_report_path(const std::string& suite_name);

}  // namespace harness
