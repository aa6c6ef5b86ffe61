#include "run/console.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "measure/sensors.hpp"
#include "measure/steady.hpp"

namespace harness {

std::string display_name(const Result& r) {
  return fmt::format("{}/{} {}", r.problem, r.variant, r.params.describe());
}

std::string reason_once(const std::string& reason, std::string& last, std::string_view repeat_text) {
  const bool repeat = !reason.empty() && reason == last;
  last = reason;
  return repeat ? std::string(repeat_text) : reason;
}

Console::Console(std::FILE* out, bool quiet, std::optional<bool> tty, Progress progress)
    : out_(out), quiet_(quiet), tty_(tty ? *tty : isatty(fileno(out)) != 0), progress_(std::move(progress)) {}

void Console::start(const std::string& name, std::size_t index, std::size_t total) {
  progress_.started();
  if (quiet_ || !tty_) return;
  fmt::print(out_, "\r\033[K[{:>{}}/{}] running  {}  {}", index, fmt::formatted_size("{}", total), total, name,
             progress_.text(index, total));
  std::fflush(out_);
  pending_line_ = true;
}

// The profiling pass's roofline position: the roof of the result's dtype, or DRAM where
// that binds; empty when not profiled or no peaks.
std::string peak_text(const Result& r) {
  if (!r.profile.is_object() || !r.profile.contains("roofline")) return {};
  const auto& rf = r.profile["roofline"];
  if (!rf.is_object() || !rf.contains("pct_of_roof") || !rf["pct_of_roof"].is_number()) return {};
  const bool memory = rf.value("bound", "") == "memory";
  const std::string pipe = rf.contains("compute_pipe") && rf["compute_pipe"].is_string()
                               ? rf["compute_pipe"].get<std::string>() : std::string("FP32");
  return fmt::format("{:.0f}% of {}", rf["pct_of_roof"].get<double>(), memory ? std::string("DRAM") : pipe);
}

namespace {
// "±1.2%", or "n/a" for one sample (no spread to state).
std::string noise_text(const Stats& s, const char* sign) {
  return s.has_noise() ? fmt::format("{}{:.1f}%", sign, s.rel_noise * 100) : "noise n/a";
}

std::string outcome_text(const Result& r) {
  if (r.status == Status::passed && r.timing) {
    const auto& s = r.timing->stats;
    std::string text = fmt::format("{} {}", format_seconds(s.median), noise_text(s, "±"));
    if (!r.timing->noise_reached && s.has_noise()) text += " (noisy)";
    if (r.work.flops > 0) text += "  " + format_rate(r.gflops);
    if (r.energy_per_launch_j > 0) text += "  " + format_energy(r.energy_per_launch_j);
    if (r.flop_per_j > 0) text += "  " + format_flop_per_j(r.flop_per_j);
    if (r.work.bytes > 0) text += fmt::format("  {:.1f} GB/s", r.gbytes_per_s);
    if (const std::string peak = peak_text(r); !peak.empty()) text += "  " + peak;
    if (r.workspace_peak_bytes > 0) text += "  +" + format_bytes(static_cast<double>(r.workspace_peak_bytes));
    return text;
  }
  return r.reason;
}
}  // namespace

void Console::result(const Result& r, std::size_t index, std::size_t total) {
  progress_.finished();
  ran_.insert(r.name);
  const bool marked = r.integrity.suspicious || r.integrity.outside;
  if (quiet_ && ((r.status == Status::passed && !marked) || r.status == Status::skipped)) return;
  if (pending_line_) fmt::print(out_, "\r\033[K");
  pending_line_ = false;
  const char* color = "";
  const char* reset = "";
  if (tty_) {
    reset = "\033[0m";
    switch (r.status) {
      case Status::passed: color = "\033[32m"; break;
      case Status::failed: color = "\033[31m"; break;
      case Status::skipped: color = "\033[33m"; break;
      case Status::error:
      case Status::crashed:
      case Status::timeout: color = "\033[1;31m"; break;
    }
  }
  const std::string outcome =
      r.status == Status::passed ? outcome_text(r) : reason_once(r.reason, last_reason_, "(the same reason as above)");
  fmt::print(out_, "[{:>{}}/{}] {}{:<7}{} {}  {}\n", index, fmt::formatted_size("{}", total), total, color,
             to_string(r.status), reset, display_name(r) + (r.device.empty() ? "" : " [" + r.device + "]"), outcome);
  // NVML's line when the clock fell (below 95% of its maximum, or a power or thermal
  // limit seen); without NVML the probe's warning when it fell under the threshold.
  const SensorStats* sensors = r.timing && r.timing->sensors ? &*r.timing->sensors : nullptr;
  if (sensors && sensors->clock_fell()) {
    fmt::print(out_, "    {}\n", clock_text(*sensors));
  } else if (!sensors && r.throttled && r.timing && r.timing->clocks) {
    const ClockStats& c = *r.timing->clocks;
    fmt::print(out_, "    warning: the SM clock fell to {:.0f} MHz (< {:g} x the maximum {:.0f} MHz) in {} of {} batches: "
                     "throttled\n",
               c.min_mhz, c.threshold, c.max_mhz, c.throttled_batches, c.mhz.size());
  }
  if (r.timing && r.timing->steady) fmt::print(out_, "    {}\n", steady_text(*r.timing->steady));
  if (r.timing && !r.timing->note.empty()) fmt::print(out_, "    note: {}\n", r.timing->note);
  print_integrity(r);
  std::fflush(out_);
}

// Issue 33's marks (a passed result so marked is printed under --quiet too).
void Console::print_integrity(const Result& r) {
  if (r.integrity.suspicious) fmt::print(out_, "    warning: suspicious: {}\n", *r.integrity.suspicious);
  if (r.integrity.outside) fmt::print(out_, "    warning: work outside the timed region: {}\n", *r.integrity.outside);
}

}  // namespace harness
