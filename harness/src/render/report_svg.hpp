#pragma once
// Small, dependency-free SVG charts for the HTML report: points and lines on linear or
// logarithmic axes, dashed reference lines (rooflines), markers along the top edge
// (out-of-memory skips), a title, axis labels with units, and a legend.
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::svg {

struct Point {
  double x = 0, y = 0;
  std::string tip;   // shown on hover (SVG <title>)
  // Optional band around y (e.g. the quartiles): drawn as a shaded area when every point
  // of a line series has one, else as a vertical bar. NaN: none.
  double lo = std::numeric_limits<double>::quiet_NaN(), hi = std::numeric_limits<double>::quiet_NaN();
  bool flagged = false;  // drawn with a red ring (e.g. a regression step)
};

struct Series {
  std::string label;
  std::vector<Point> points;
  bool line = true;  // join the points (sorted by x)
  std::string color;  // "" = the palette color of the series' index
  // false: the line alone, no circle per point (long series such as a loss per step; a
  // series of one point keeps its circle). The line's tooltip is then `label`.
  bool markers = true;
};

// A dashed line through `points` (data coordinates), e.g. a roofline. With
// `sets_range` false the axes ignore it (it is clipped to the plot): a line that should
// span the whole plot can be given far-away end points. An empty label keeps it out of
// the legend; color "none" draws nothing (a way to widen the axes to a point).
struct RefLine {
  std::string label;
  std::vector<std::pair<double, double>> points;
  std::string color = "#444444";
  bool sets_range = true;
};

// A marker drawn at the top edge of the plot at `x`, e.g. "out of memory here".
struct EdgeMarker {
  double x = 0;
  std::size_t series = 0;   // index into Chart::series, for the color
  std::string tip;
};

// decimal: 1, 10, 1k, 1M; binary: powers of two (log axes), 2^17 and up as "2^17";
// bytes: powers of two (log axes) labelled 256 KiB, 1 MiB, 4 GiB.
enum class TickStyle { decimal, binary, bytes };

struct Axis {
  std::string label;        // with the unit: "GFLOP/s", "n (elements)"
  bool log = false;
  TickStyle ticks = TickStyle::decimal;
  bool from_zero = false;   // linear axes: start at 0
  // Categorical ticks (e.g. one per run, labelled by date or commit): ticks exactly here
  // with these labels instead of computed ones.
  std::vector<std::pair<double, std::string>> categories;
};

struct Chart {
  std::string id;           // the svg element's id
  std::string title;
  std::string subtitle;     // a second, smaller line under the title
  Axis x, y;
  std::vector<Series> series;
  std::vector<RefLine> refs;
  std::vector<EdgeMarker> edge_markers;
  std::string edge_marker_label = "out of memory";
  int width = 820, height = 440;
};

// The chart as one <svg> element (no scripts, no external references).
std::string render(const Chart& chart);

// Escapes text for XML/HTML content and attribute values.
std::string escape(std::string_view text);

// `text` cut to `n` characters, the last three "..." (labels that must fit a width).
std::string elide(const std::string& text, std::size_t n);

// Tick label text: 1, 2.5, 1k, 10M, 2^20 (binary style, powers of two >= 2^17).
std::string tick_label(double v, TickStyle style);

// The color of series i (a ten-color qualitative palette, then repeats).
std::string color(std::size_t i);

// One color per name for a whole page (a variant keeps its color across charts): names
// get palette colors in order of first request.
class ColorMap {
 public:
  std::string operator()(const std::string& name);
 private:
  std::map<std::string, std::size_t> index_;
};

}  // namespace harness::svg
