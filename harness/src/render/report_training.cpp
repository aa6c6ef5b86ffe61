#include "render/report_training.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/report_fields.hpp"
#include "render/report_render.hpp"
#include "render/report_svg.hpp"

namespace harness {

using namespace fields;

namespace {

const json* extra_at(const Result& r, const char* key) {
  if (!r.extra.is_object()) return nullptr;
  const auto it = r.extra.find(key);
  return it == r.extra.end() ? nullptr : &*it;
}

std::optional<double> number_at(const json* j, const char* key = nullptr) {
  if (j && key) j = j->is_object() && j->contains(key) ? &(*j)[key] : nullptr;
  if (!j || !j->is_number()) return std::nullopt;
  return j->get<double>();
}

// The cells after the varying parameters, in kHead's order.
constexpr const char* kHead[] = {"ms/step", "tokens/s", "MFU", "forward", "backward", "optimizer"};

std::vector<std::string> cells(const Result& r) {
  const json* phases = extra_at(r, "phase_ms");
  // Both writers time the step with CUDA events (mean of the timed steps): phase_ms.step;
  // else the harness's median.
  std::optional<double> step = number_at(phases, "step");
  if (!step && is_timed(r)) step = median_s(r) * 1e3;
  std::vector<std::string> out;
  out.push_back(step ? fmt::format("{:.2f}", *step) : "-");
  const auto tps = number_at(extra_at(r, "tokens_per_s"));
  out.push_back(tps ? fmt::format("{:.0f}", *tps) : "-");
  const auto mfu = number_at(extra_at(r, "mfu"));
  out.push_back(mfu ? fmt::format("{:.1f}%", *mfu * 100) : "-");
  for (const char* phase : {"forward", "backward", "optimizer"}) {
    const auto ms = number_at(phases, phase);
    out.push_back(!ms ? "-" : step && *step > 0 ? fmt::format("{:.2f} ms ({:.0f}%)", *ms, 100 * *ms / *step)
                                               : fmt::format("{:.2f} ms", *ms));
  }
  return out;
}

// Why phases are missing, once per reason: "ours_bf16, cublas_bf16: unavailable with ...".
std::vector<std::string> notes(const std::vector<const Result*>& rows) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (const Result* r : rows) {
    const json* why = extra_at(*r, "phase_times");
    if (!why || !why->is_string()) continue;
    const std::string reason = why->get<std::string>();
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& p) { return p.first == reason; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {reason, {}});
    it->second.push_back(r->variant);
  }
  std::vector<std::string> out;
  for (const auto& [reason, variants] : by_reason)
    out.push_back(fmt::format("{}: phase times {}", fmt::join(variants, ", "), reason));
  out.push_back("ms/step: the mean CUDA-event step time each side recorded (phase_ms.step); tokens/s from it; "
                "MFU: model FLOPs per step / step time / the dense bf16 peak (- where not recorded); the phases "
                "with their share of the step.");
  return out;
}

}  // namespace

std::vector<const Result*> training_rows(const std::vector<const Result*>& prow) {
  std::vector<const Result*> out;
  for (const Result* r : prow)
    if (extra_at(*r, "phase_ms") || extra_at(*r, "tokens_per_s")) out.push_back(r);
  return out;
}

std::string training_table_markdown(const std::vector<const Result*>& prow) {
  const auto rows = training_rows(prow);
  if (rows.empty()) return "";
  const auto params = split_params(rows).columns;
  std::string o = "\n### Training step\n\n| variant |";
  for (const auto& n : params) o += fmt::format(" {} |", md_escape(n));
  for (const char* h : kHead) o += fmt::format(" {} |", h);
  o += "\n|---|";
  for (std::size_t i = 0; i < params.size() + std::size(kHead); ++i) o += "---:|";
  o += "\n";
  for (const Result* r : rows) {
    o += fmt::format("| {} |", md_escape(r->variant));
    for (const auto& n : params) o += fmt::format(" {} |", r->params.has(n) ? md_escape(param_text(pv(*r, n))) : "");
    for (const auto& c : cells(*r)) o += fmt::format(" {} |", c);
    o += "\n";
  }
  o += "\n";
  for (const auto& n : notes(rows)) o += md_escape(n) + "\n\n";
  return o;
}

std::string training_table_html(const std::vector<const Result*>& prow) {
  using svg::escape;
  const auto rows = training_rows(prow);
  if (rows.empty()) return "";
  const auto params = split_params(rows).columns;
  std::string o = "<table class=\"results training\">\n<thead><tr><th>variant</th>";
  for (const auto& n : params) o += fmt::format("<th>{}</th>", escape(n));
  for (const char* h : kHead) o += fmt::format("<th>{}</th>", h);
  o += "</tr></thead>\n<tbody>\n";
  for (const Result* r : rows) {
    o += fmt::format("<tr><td>{}</td>", escape(r->variant));
    for (const auto& n : params)
      o += fmt::format("<td class=\"num\">{}</td>", r->params.has(n) ? escape(param_text(pv(*r, n))) : "");
    for (const auto& c : cells(*r)) o += fmt::format("<td class=\"num\">{}</td>", escape(c));
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n";
  for (const auto& n : notes(rows)) o += fmt::format("<p class=\"note\">{}</p>\n", escape(n));
  return o;
}

}  // namespace harness
