#include "render/report_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "render/report_html.hpp"
#include "render/report_svg.hpp"
#include "core/units.hpp"

namespace harness {

namespace {

using nlohmann::json;
using svg::escape;

// ---------------------------------------------------------------------------------------
// The trace page

struct Ev {
  std::string name, cat;
  int pid = 0, tid = 0;
  double ts = 0, dur = 0;  // microseconds
  json args;
  double end() const { return ts + dur; }
};

struct Flow {
  double id = 0, ts = 0;
  int pid = 0, tid = 0;
};

struct Track {
  std::string label;
  int pid, tid, depth;  // depth: -1 = every event of (pid, tid) on one row
};

std::string fmt_us(double us) { return format_seconds(us * 1e-6); }

std::string window_svg(const std::string& id, const std::string& title, const std::vector<Ev>& evs,
                       const std::vector<std::pair<Flow, Flow>>& flows, const std::vector<Track>& tracks, double t0,
                       double t1, svg::ColorMap& kernel_colors) {
  const double label_w = 170, plot_w = 860, row_h = 20, top = 40, width = label_w + plot_w + 16;
  const double height = top + static_cast<double>(tracks.size()) * row_h + 40;
  const double span = std::max(t1 - t0, 1e-3);
  auto px = [&](double t) { return label_w + std::clamp((t - t0) / span, 0.0, 1.0) * plot_w; };
  auto row_of = [&](const Ev& e) -> int {
    for (std::size_t i = 0; i < tracks.size(); ++i)
      if (tracks[i].pid == e.pid && tracks[i].tid == e.tid &&
          (tracks[i].depth < 0 || tracks[i].depth == e.args.value("depth", 0)))
        return static_cast<int>(i);
    return -1;
  };
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" class=\"tl\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      escape(id), width, height, width, height);
  o += fmt::format("<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", escape(title));
  o += fmt::format("<text x=\"8\" y=\"34\" font-size=\"11\" fill=\"#555\">{} shown, from {} after the trace began</text>\n",
                   fmt_us(span), fmt_us(t0));
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const double y = top + static_cast<double>(i) * row_h;
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", label_w, y,
                     plot_w, row_h, i % 2 ? "#fafafa" : "#f3f3f3");
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n", label_w - 6,
                     y + 14, escape(tracks[i].label));
  }
  const char* const kRangeColors[] = {"#9fb6cd", "#b9cfa5", "#e3c48f", "#d9a7a0", "#c8b5d6", "#a9d3d0"};
  for (const Ev& e : evs) {
    if (e.end() < t0 || e.ts > t1) continue;
    const int row = row_of(e);
    if (row < 0) continue;
    const double x0 = px(e.ts), x1 = px(e.end()), y = top + row * row_h + 2;
    const bool gpu = e.pid == 2;
    const std::string fill = gpu ? (e.cat == "kernel" ? kernel_colors(e.name) : e.cat == "memcpy" ? "#6b6b6b" : "#a0a0a0")
                             : e.cat == "api" ? "#7f7f7f"
                                              : kRangeColors[std::clamp(e.args.value("depth", 0), 0, 5)];
    std::string tip = fmt::format("{} ({}): {}", e.name, e.cat, fmt_us(e.dur));
    if (e.args.contains("grid"))
      tip += fmt::format("; grid {} block {}, {} registers, {} B static + {} B dynamic shared memory", e.args["grid"].dump(),
                         e.args["block"].dump(), e.args.value("registers_per_thread", 0),
                         e.args.value("static_smem_bytes", 0), e.args.value("dynamic_smem_bytes", 0));
    if (e.args.contains("bytes")) tip += fmt::format("; {} bytes", e.args["bytes"].dump());
    o += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#fff\" "
                     "stroke-width=\"0.3\"><title>{}</title></rect>\n",
                     x0, y, std::max(0.8, x1 - x0), row_h - 4, fill, escape(tip));
    if (x1 - x0 > 60)
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#111\">{}</text>\n", x0 + 3, y + 12,
                       escape(svg::elide(e.name, static_cast<std::size_t>((x1 - x0) / 6))));
  }
  for (const auto& [s, f] : flows) {
    if (f.ts < t0 || s.ts > t1) continue;
    int rs = -1, rf = -1;
    for (std::size_t i = 0; i < tracks.size(); ++i) {
      if (tracks[i].pid == s.pid && tracks[i].tid == s.tid) rs = static_cast<int>(i);
      if (tracks[i].pid == f.pid && tracks[i].tid == f.tid) rf = static_cast<int>(i);
    }
    if (rs < 0 || rf < 0) continue;
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#d04a02\" stroke-width=\"1\" "
                     "stroke-opacity=\"0.7\"/>\n",
                     px(s.ts), top + rs * row_h + row_h - 2, px(f.ts), top + rf * row_h + 2);
  }
  for (int i = 0; i <= 5; ++i) {
    const double t = t0 + span * i / 5;
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">+{}</text>\n", px(t),
                     top + static_cast<double>(tracks.size()) * row_h + 14, fmt_us(t - t0));
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">time (host clock; GPU "
                   "stamps aligned to it)</text>\n",
                   label_w + plot_w / 2, top + static_cast<double>(tracks.size()) * row_h + 32);
  return o + "</svg>\n";
}

// A trace's complete events, the launch arrows (flow start -> end) and the tracks to draw.
struct TraceData {
  std::vector<Ev> evs;
  std::vector<std::pair<Flow, Flow>> flows;
  std::vector<Track> tracks;
};

TraceData read_trace(const json& trace) {
  TraceData t;
  std::map<double, Flow> starts, ends;
  std::map<std::pair<int, int>, std::string> thread_names;
  int max_depth = 0;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    const int pid = e.value("pid", 0), tid = e.value("tid", 0);
    if (ph == "M" && e.value("name", "") == "thread_name")
      thread_names[{pid, tid}] = e.contains("args") ? e["args"].value("name", "") : "";
    if ((ph == "s" || ph == "f") && e.contains("id") && e["id"].is_number())
      (ph == "s" ? starts : ends)[e["id"].get<double>()] = {e["id"].get<double>(), e.value("ts", 0.0), pid, tid};
    if (ph != "X") continue;
    Ev v{e.value("name", ""), e.value("cat", ""), pid, tid, e.value("ts", 0.0), e.value("dur", 0.0),
         e.contains("args") ? e["args"] : json::object()};
    if (pid == 1 && tid == 1) max_depth = std::max(max_depth, v.args.value("depth", 0));
    t.evs.push_back(std::move(v));
  }
  for (const auto& [id, f] : ends)
    if (auto it = starts.find(id); it != starts.end()) t.flows.emplace_back(it->second, f);
  const char* const kDepthNames[] = {"suite", "case", "variant", "phase", "sub-phase", "deeper"};
  for (int d = 0; d <= max_depth; ++d)
    t.tracks.push_back({fmt::format("NVTX: {}", kDepthNames[std::min(d, 5)]), 1, 1, d});
  t.tracks.push_back({"CUDA API (launches)", 1, 2, -1});
  for (const auto& [key, name] : thread_names)
    if (key.first == 2) t.tracks.push_back({"GPU " + name, 2, key.second, -1});
  return t;
}

// Zoom: per variant range that has GPU work, the span of that work and its launches, and
// a table of its kernels.
std::string variant_zooms(const TraceData& t, svg::ColorMap& kernel_colors) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<double, double>> span;
  std::map<std::string, std::vector<const Ev*>> kernels_of;
  for (const Ev& e : t.evs) {
    if (e.pid != 2) continue;
    const std::string v = e.args.value("variant", "");
    if (!span.count(v)) order.push_back(v), span[v] = {e.ts, e.end()};
    span[v].first = std::min(span[v].first, e.ts);
    span[v].second = std::max(span[v].second, e.end());
    if (e.cat == "kernel") kernels_of[v].push_back(&e);
  }
  for (const auto& [s, f] : t.flows)
    for (const Ev& e : t.evs)
      if (e.pid == 2 && e.ts == f.ts && e.tid == f.tid) {
        auto& sp = span[e.args.value("variant", "")];
        sp.first = std::min(sp.first, s.ts);
        break;
      }
  std::string o = "<h2>Profiling pass per variant</h2>\n";
  constexpr std::size_t kMaxZoom = 60;
  std::size_t i = 0;
  for (const auto& v : order) {
    if (i == kMaxZoom) {
      o += fmt::format("<p class=\"note\">{} more variants not drawn (the first {} are).</p>\n", order.size() - kMaxZoom,
                       kMaxZoom);
      break;
    }
    const auto [a, b] = span[v];
    const double pad = (b - a) * 0.04 + 0.5;
    o += fmt::format("<h3>{}</h3>\n", escape(v.empty() ? "(outside a variant range)" : v));
    o += window_svg(fmt::format("trace-{}", i++), v, t.evs, t.flows, t.tracks, a - pad, b + pad, kernel_colors);
    o += "<details><summary>kernels</summary>\n<table><thead><tr><th>kernel</th><th>start</th><th>duration</th>"
         "<th>grid</th><th>block</th><th>registers</th><th>shared memory</th><th>stream</th></tr></thead><tbody>\n";
    for (const Ev* k : kernels_of[v])
      o += fmt::format("<tr><td class=\"name\">{}</td><td class=\"num\">+{}</td><td class=\"num\">{}</td><td>{}</td>"
                       "<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} B + {} B</td><td class=\"num\">{}</td></tr>\n",
                       escape(k->name), fmt_us(k->ts - a), fmt_us(k->dur), escape(k->args.value("grid", json()).dump()),
                       escape(k->args.value("block", json()).dump()), k->args.value("registers_per_thread", 0),
                       k->args.value("static_smem_bytes", 0), k->args.value("dynamic_smem_bytes", 0), k->tid);
    o += "</tbody></table>\n</details>\n";
  }
  if (order.empty()) o += "<p class=\"nochart\">The trace has no GPU activity.</p>\n";
  return o;
}

}  // namespace

std::string render_trace_html(const json& trace, const std::string& path) {
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    throw InputError(fmt::format("{}: not a Chrome trace (no traceEvents array)", path));
  const TraceData t = read_trace(trace);
  const std::vector<Ev>& evs = t.evs;
  double t0 = std::numeric_limits<double>::infinity(), t1 = 0;
  std::size_t kernels = 0, copies = 0, fills = 0;
  for (const Ev& e : evs) {
    t0 = std::min(t0, e.ts);
    t1 = std::max(t1, e.end());
    kernels += e.cat == "kernel";
    copies += e.cat == "memcpy";
    fills += e.cat == "memset";
  }
  if (evs.empty()) t0 = 0;
  std::string o = html::page_head("harness timeline: " + path);
  o += fmt::format("<p class=\"summary\">{} NVTX ranges, {} kernels, {} copies, {} fills, {} launch arrows over {}</p>\n",
                   std::count_if(evs.begin(), evs.end(), [](const Ev& e) { return e.pid == 1 && e.tid == 1; }), kernels,
                   copies, fills, t.flows.size(), fmt_us(t1 - t0));
  o += "<p>The whole run first (the timed phases dominate it), then each variant's profiling pass, zoomed in: the "
       "kernel trace's runs with an arrow from each launch call to its GPU work. Hover for names, durations and kernel "
       "arguments. The same file opens in <code>https://ui.perfetto.dev</code> or <code>chrome://tracing</code>.</p>\n";
  svg::ColorMap kernel_colors;
  o += "<h2>The whole run</h2>\n";
  o += window_svg("trace-all", "whole run", evs, t.flows, t.tracks, t0, t1, kernel_colors);
  o += variant_zooms(t, kernel_colors);
  return o + html::page_tail("Drawn by harness report --format trace-html from a harness run --trace file.");
}

}  // namespace harness
