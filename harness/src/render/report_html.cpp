#include "render/report_html.hpp"

#include <cmath>

#include <fmt/format.h>

#include "render/report_svg.hpp"

namespace harness::html {

namespace {
const char* const kStyle = R"css(
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 1120px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 20px; margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { max-width: 460px; overflow-wrap: anywhere; }
td.diff, tr.diff td { background: #fff3cd; }
tr.slower td.verdict, tr.failed td.verdict, td.bad { color: #b00020; font-weight: bold; }
tr.faster td.verdict, td.good { color: #1d7a1d; font-weight: bold; }
tr.same td { color: #444; }
tr.new td.verdict, tr.missing td.verdict { color: #8a6100; }
p.summary { font-size: 15px; font-weight: bold; }
p.exit { font-size: 15px; padding: 6px 10px; border-radius: 4px; display: inline-block; }
p.exit.ok { background: #e5f4e5; } p.exit.fail { background: #fbe3e6; }
p.nochart, p.note { color: #555; font-style: italic; }
svg.chart, svg.bars, svg.tl { display: block; margin: 12px 0 20px 0; max-width: 100%; height: auto; border: 1px solid #eee; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: bold; }
code { font-size: 12px; overflow-wrap: anywhere; }
footer { margin-top: 40px; font-size: 12px; color: #777; }
table.env th { text-align: left; width: 130px; }
tr.passed td.status { color: #2a7a2a; }
tr.failed td.status, tr.error td.status, tr.crashed td.status, tr.timeout td.status { color: #b00020; font-weight: bold; }
tr.skipped td { color: #777; }
td.note { max-width: 420px; font-size: 12px; }
nav a { margin-right: 14px; }
)css";
}  // namespace

const char* stylesheet() { return kStyle; }

std::string page_head(const std::string& title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
      svg::escape(title), kStyle);
}

std::string page_tail(const std::string& footer) {
  return fmt::format("<footer>{}</footer>\n</body>\n</html>\n", svg::escape(footer));
}

std::string vendor_variant(const std::vector<const Result*>& rows) {
  for (const char* vendor : {"cublas", "cub", "cudnn", "cusparse"}) {
    for (const Result* r : rows) {
      const std::string& v = r->variant;
      if (v == vendor || (v.rfind(vendor, 0) == 0 && v.size() > std::string(vendor).size() &&
                          v[std::string(vendor).size()] == '_'))
        return v;
    }
  }
  return "";
}

std::string value_text(const ParamValue& v) {
  return std::visit([](const auto& x) -> std::string {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::string>) return x;
    else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
    else return fmt::format("{}", x);
  }, v);
}

std::string params_text(const Result& r) {
  std::string s;
  for (const auto& [n, v] : r.params.entries()) {
    if (!s.empty()) s += ' ';
    s += n + "=" + value_text(v);
  }
  return s;
}

}  // namespace harness::html
