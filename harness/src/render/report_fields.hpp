#pragma once
// The fields of a decoded result as the report pages show them (markdown, CSV, HTML and
// the charts read them here, once): figures read defensively (a report of an older
// harness may lack fields), parameters as text, the environment lines, the table cells.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace harness::fields {

using nlohmann::json;

// Figures of a result as the tables and charts show them.
bool is_timed(const Result& r);
const Stats& stats_of(const Result& r);
double median_s(const Result& r);
double mean_s(const Result& r);
double min_s(const Result& r);
double max_s(const Result& r);
double stddev_s(const Result& r);
double rel_noise(const Result& r);
bool noise_reached(const Result& r);
std::size_t sample_count(const Result& r);
double flops_of(const Result& r);
double bytes_of(const Result& r);
double intensity_of(const Result& r);
double gflops_of(const Result& r);
double gbps_of(const Result& r);
double io_bytes(const Result& r);
double ws_bytes(const Result& r);
std::string status_text(const Result& r);
std::optional<bool> check_passed(const Result& r);
bool oom(const Result& r);
// A parameter as JSON (null when the result does not have it).
json pv(const Result& r, const std::string& name);
// In the problem's declared order (the decoder keeps it).
std::vector<std::string> param_order_of(const Result& r);
std::vector<std::string> problems_of(const std::vector<Result>& rows);
std::vector<const Result*> rows_of(const std::vector<Result>& rows, const std::string& problem);
std::vector<std::string> param_names(const std::vector<const Result*>& rows);
// Splits a problem's parameters into those that vary (table columns) and those with one
// value in every row (said once, above the table).
struct ParamSplit {
  std::vector<std::string> columns;
  std::vector<std::string> fixed;
};
ParamSplit split_params(const std::vector<const Result*>& prow);
std::string param_text(const json& v);
std::string fixed_text(const Result& any, const std::vector<std::string>& fixed);
std::string summary_line(const std::vector<Result>& rows);
// The environment as (label, value) lines, shared by markdown and HTML.
std::vector<std::pair<std::string, std::string>> environment_lines(const Report& report);
// The cells of a result row in the tables (markdown and HTML), after the parameters.
struct Cells {
  std::string status, median, noise, gflops, gbps, peak, memory, note;
};
// `peaks`: the report's device peaks (the "% of peak" cell is "-" without them).
Cells cells_of(const Result& r, const std::optional<ReportPeaks>& peaks);
extern const char* const kTableHead[8];

// Where a GPU result stands against the device's roofs: the roof of its dtype's pipe
// (compute_peak) or DRAM, whichever binds at the result's arithmetic intensity (work
// FLOPs / work bytes), and its percentage of that roof. Absent for CPU results, results
// without work or time, and reports without peaks.
struct PeakShare {
  double pct = 0;
  std::string bound;  // "compute" or "memory"
  std::string roof;   // "bf16 tensor", "FP32" or "DRAM"
};
std::optional<PeakShare> peak_share(const Result& r, const std::optional<ReportPeaks>& peaks);
// NVML's figures of a result (clock, power, energy per launch, FLOP/J): columns of the
// md and html tables where any row of the table has them (older reports: no columns).
bool has_sensors(const Result& r);
bool any_sensors(const std::vector<const Result*>& rows);
struct SensorCells {
  std::string clock, power, energy, flop_per_j;
};
SensorCells sensor_cells_of(const Result& r);
extern const char* const kSensorHead[4];

}  // namespace harness::fields
