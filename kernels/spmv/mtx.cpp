// The Matrix Market reader of mtx.hpp. Every line is parsed with from_chars (no locale,
// no exceptions); each failure names its file and line.
#include "spmv/mtx.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string_view>
#include <vector>

namespace kernels::spmv {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

template <class T>
bool parse(std::string_view s, T& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // from_chars takes no '+'
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw MtxError(path + ": cannot open file (does it exist? paths are relative to the working directory)");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw MtxError(path_ + ":" + std::to_string(line_no_) + ": " + what);
  }
  // The next line (without '\r'); false at the end of the file.
  bool next(std::string& line) {
    if (!std::getline(in_, line)) {
      ++line_no_;  // errors at the end name the line after the last
      return false;
    }
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  // The next line that is not a comment or blank; false at the end of the file.
  bool next_data(std::string& line) {
    while (next(line)) {
      const auto f = line.find_first_not_of(" \t");
      if (f == std::string::npos || line[f] == '%') continue;
      return true;
    }
    return false;
  }

 private:
  std::string path_;
  std::ifstream in_;
  long line_no_ = 0;
};

}  // namespace

Csr read_matrix_market(const std::string& path) {
  Reader rd(path);
  std::string line;
  if (!rd.next(line)) rd.fail("empty file (expected a '%%MatrixMarket matrix coordinate ...' header)");
  const auto head = fields(line);
  if (head.size() != 5 || lower(head[0]) != "%%matrixmarket" || lower(head[1]) != "matrix")
    rd.fail("bad header (expected '%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric')");
  if (lower(head[2]) != "coordinate")
    rd.fail("unsupported format '" + std::string(head[2]) + "' (only 'coordinate', a sparse matrix, is read)");
  const std::string field = lower(head[3]), symmetry = lower(head[4]);
  if (field != "real" && field != "integer" && field != "pattern")
    rd.fail("unsupported field '" + std::string(head[3]) + "' (expected real, integer or pattern)");
  if (symmetry != "general" && symmetry != "symmetric")
    rd.fail("unsupported symmetry '" + std::string(head[4]) + "' (expected general or symmetric)");
  const bool pattern = field == "pattern", symmetric = symmetry == "symmetric";

  if (!rd.next_data(line)) rd.fail("truncated: no size line 'rows cols entries'");
  const auto size = fields(line);
  std::int64_t rows = 0, cols = 0, entries = 0;
  if (size.size() != 3 || !parse(size[0], rows) || !parse(size[1], cols) || !parse(size[2], entries))
    rd.fail("bad size line '" + line + "' (expected three integers: rows cols entries)");
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  if (rows < 1 || cols < 1 || entries < 0) rd.fail("bad size line '" + line + "' (rows and cols >= 1, entries >= 0)");
  if (rows > kMax || cols > kMax || entries > (symmetric ? kMax / 2 : kMax))
    rd.fail("matrix too large for 32-bit indices (" + line + ")");
  if (symmetric && rows != cols) rd.fail("a symmetric matrix must be square, not " + line);

  std::vector<Entry> es;
  es.reserve(static_cast<std::size_t>(std::min<std::int64_t>(entries, 1 << 24)) * (symmetric ? 2 : 1));
  const std::size_t want = pattern ? 2 : 3;
  for (std::int64_t e = 0; e < entries; ++e) {
    if (!rd.next_data(line))
      rd.fail("truncated: " + std::to_string(e) + " of " + std::to_string(entries) + " entries");
    const auto f = fields(line);
    if (f.size() != want)
      rd.fail("expected " + std::string(pattern ? "2 fields 'row col'" : "3 fields 'row col value'") + ", got " +
              std::to_string(f.size()) + ": '" + line + "'");
    std::int64_t i = 0, j = 0;
    if (!parse(f[0], i) || !parse(f[1], j)) rd.fail("non-integer index in '" + line + "'");
    if (i < 1 || i > rows || j < 1 || j > cols)
      rd.fail("index (" + std::to_string(i) + ", " + std::to_string(j) + ") out of range: the matrix is " +
              std::to_string(rows) + " x " + std::to_string(cols) + " (indices are 1-based)");
    double v = 1;
    if (!pattern) {
      bool ok;
      if (field == "integer") {
        std::int64_t iv = 0;
        ok = parse(f[2], iv);
        v = static_cast<double>(iv);
      } else {
        ok = parse(f[2], v);
      }
      if (!ok) {
        // A number from_chars refuses only for its range (1e999) is not "non-numeric".
        const std::string text(f[2]);
        char* end = nullptr;
        (void)std::strtod(text.c_str(), &end);
        if (field == "real" && end == text.c_str() + text.size())
          rd.fail("value '" + text + "' is not a finite float");
        rd.fail("non-numeric value '" + text + "' (field " + field + ")");
      }
      if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
        rd.fail("value '" + std::string(f[2]) + "' is not a finite float");
    }
    const auto r = static_cast<std::int32_t>(i - 1), c = static_cast<std::int32_t>(j - 1);
    es.push_back({r, c, static_cast<float>(v)});
    if (symmetric && r != c) es.push_back({c, r, static_cast<float>(v)});
  }
  if (rd.next_data(line))
    rd.fail("more entries than the " + std::to_string(entries) + " the size line announces: '" + line + "'");
  return csr_from_coo(static_cast<std::int32_t>(rows), static_cast<std::int32_t>(cols), std::move(es));
}

}  // namespace kernels::spmv
