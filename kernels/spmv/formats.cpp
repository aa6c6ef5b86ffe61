// Host conversions between the SpMV formats (see formats.hpp for the layouts).
#include "spmv/formats.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace kernels::spmv {

std::int32_t Csr::max_row_length() const {
  std::int32_t m = 0;
  for (std::int32_t r = 0; r < rows; ++r) m = std::max(m, row_length(r));
  return m;
}

Csr csr_from_coo(std::int32_t rows, std::int32_t cols, std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  a.col.reserve(entries.size());
  a.val.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (!a.col.empty() && i > 0 && entries[i - 1].row == e.row && entries[i - 1].col == e.col) {
      a.val.back() += e.val;  // a duplicate: summed
      continue;
    }
    a.col.push_back(e.col);
    a.val.push_back(e.val);
    ++a.row_ptr[static_cast<std::size_t>(e.row) + 1];
  }
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  return a;
}

std::vector<Entry> coo_from_csr(const Csr& a) {
  std::vector<Entry> out;
  out.reserve(a.col.size());
  for (std::int32_t r = 0; r < a.rows; ++r)
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) out.push_back({r, a.col[k], a.val[k]});
  return out;
}

std::vector<std::int32_t> coo_rows(const Csr& a) {
  std::vector<std::int32_t> rows(a.col.size());
  for (std::int32_t r = 0; r < a.rows; ++r)
    std::fill(rows.begin() + a.row_ptr[r], rows.begin() + a.row_ptr[r + 1], r);
  return rows;
}

Ell ell_from_csr(const Csr& a, std::int32_t width) {
  Ell e;
  e.rows = a.rows;
  e.width = width;
  const std::size_t n = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(width);
  e.col.assign(n, -1);
  e.val.assign(n, 0.0f);
  for (std::int32_t r = 0; r < a.rows; ++r) {
    const std::int32_t len = std::min(a.row_length(r), width);
    for (std::int32_t k = 0; k < len; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * a.rows + r;  // column-major
      e.col[at] = a.col[a.row_ptr[r] + k];
      e.val[at] = a.val[a.row_ptr[r] + k];
    }
  }
  return e;
}

std::int32_t hybrid_threshold(const Csr& a, double coverage) {
  if (a.rows == 0) return 0;
  std::vector<std::int32_t> len(static_cast<std::size_t>(a.rows));
  for (std::int32_t r = 0; r < a.rows; ++r) len[r] = a.row_length(r);
  // The length at the coverage quantile: that many rows fit entirely.
  auto at = static_cast<std::size_t>(std::clamp(coverage, 0.0, 1.0) * static_cast<double>(a.rows));
  at = std::min(at, len.size() - 1);
  std::nth_element(len.begin(), len.begin() + static_cast<std::ptrdiff_t>(at), len.end());
  return len[at];
}

Hybrid hybrid_from_csr(const Csr& a, std::int32_t threshold) {
  Hybrid h;
  h.ell = ell_from_csr(a, threshold);
  for (std::int32_t r = 0; r < a.rows; ++r)
    for (std::int32_t k = a.row_ptr[r] + threshold; k < a.row_ptr[r + 1]; ++k) {
      h.coo_row.push_back(r);
      h.coo_col.push_back(a.col[k]);
      h.coo_val.push_back(a.val[k]);
    }
  return h;
}

Jds jds_from_csr(const Csr& a) {
  Jds j;
  j.rows = a.rows;
  j.perm.resize(static_cast<std::size_t>(a.rows));
  std::iota(j.perm.begin(), j.perm.end(), 0);
  std::stable_sort(j.perm.begin(), j.perm.end(),
                   [&](std::int32_t p, std::int32_t q) { return a.row_length(p) > a.row_length(q); });
  j.row_len.resize(j.perm.size());
  for (std::size_t i = 0; i < j.perm.size(); ++i) j.row_len[i] = a.row_length(j.perm[i]);
  const std::int32_t diagonals = j.row_len.empty() ? 0 : j.row_len.front();
  // Diagonal d holds one element of each sorted row longer than d: count with a sweep
  // over the non-increasing lengths.
  j.jd_ptr.assign(static_cast<std::size_t>(diagonals) + 1, 0);
  std::int32_t longer = a.rows;  // sorted rows with length > d
  for (std::int32_t d = 0; d < diagonals; ++d) {
    while (longer > 0 && j.row_len[longer - 1] <= d) --longer;
    j.jd_ptr[d + 1] = j.jd_ptr[d] + longer;
  }
  j.col.resize(a.col.size());
  j.val.resize(a.val.size());
  for (std::int32_t d = 0; d < diagonals; ++d)
    for (std::int32_t i = 0; i < j.jd_ptr[d + 1] - j.jd_ptr[d]; ++i) {
      const std::int32_t src = a.row_ptr[j.perm[i]] + d;
      j.col[j.jd_ptr[d] + i] = a.col[src];
      j.val[j.jd_ptr[d] + i] = a.val[src];
    }
  return j;
}

namespace {
Csr csr_from_entries(std::int32_t rows, std::int32_t cols, std::vector<Entry> e) {
  return csr_from_coo(rows, cols, std::move(e));
}
}  // namespace

Csr csr_from_ell(const Ell& e, std::int32_t cols) {
  std::vector<Entry> out;
  for (std::int32_t k = 0; k < e.width; ++k)
    for (std::int32_t r = 0; r < e.rows; ++r) {
      const std::size_t at = static_cast<std::size_t>(k) * e.rows + r;
      if (e.col[at] >= 0) out.push_back({r, e.col[at], e.val[at]});
    }
  return csr_from_entries(e.rows, cols, std::move(out));
}

Csr csr_from_hybrid(const Hybrid& h, std::int32_t cols) {
  std::vector<Entry> out = coo_from_csr(csr_from_ell(h.ell, cols));
  for (std::size_t i = 0; i < h.coo_row.size(); ++i) out.push_back({h.coo_row[i], h.coo_col[i], h.coo_val[i]});
  return csr_from_entries(h.ell.rows, cols, std::move(out));
}

Csr csr_from_jds(const Jds& j, std::int32_t cols) {
  std::vector<Entry> out;
  for (std::int32_t d = 0; d < j.diagonals(); ++d)
    for (std::int32_t i = 0; i < j.jd_ptr[d + 1] - j.jd_ptr[d]; ++i)
      out.push_back({j.perm[i], j.col[j.jd_ptr[d] + i], j.val[j.jd_ptr[d] + i]});
  return csr_from_entries(j.rows, cols, std::move(out));
}

void cpu(const Csr& a, const float* x, float* y) {
  for (std::int32_t r = 0; r < a.rows; ++r) {
    double s = 0;
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      s += static_cast<double>(a.val[k]) * static_cast<double>(x[a.col[k]]);
    y[r] = static_cast<float>(s);
  }
}

}  // namespace kernels::spmv
