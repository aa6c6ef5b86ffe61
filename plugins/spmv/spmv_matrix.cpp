#include "spmv_matrix.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/mtx.hpp"

namespace spmv_plugin {
namespace {

using kernels::spmv::Csr;
using kernels::spmv::GenSpec;
using kernels::spmv::Structure;

constexpr std::int64_t kMaxIndex = INT32_MAX;
constexpr std::int64_t kMaxRows = std::int64_t{1} << 27;

bool from_file(const harness::Params& p) { return p.get_string("structure") == "file"; }

GenSpec gen_spec(const harness::Params& p) {
  static const std::map<std::string, Structure> names = {{"laplace2d", Structure::laplace2d},
                                                         {"laplace3d", Structure::laplace3d},
                                                         {"random", Structure::random},
                                                         {"powerlaw", Structure::powerlaw},
                                                         {"blockdiag", Structure::blockdiag}};
  GenSpec s;
  s.structure = names.at(p.get_string("structure"));
  s.n = p.get_int("n");
  s.density = p.get_float("density");
  s.max_row = p.get_int("max_row");
  s.block = p.get_int("block");
  return s;
}

// Files read once per process, by path (a suite names a few small files; the error of a
// bad one is kept too, so that it is reported the same way each time).
struct FileEntry {
  std::shared_ptr<const Csr> matrix;
  std::string error;
};
const FileEntry& file_entry(const std::string& path) {
  static std::mutex m;
  static std::map<std::string, FileEntry> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  FileEntry e;
  try {
    e.matrix = std::make_shared<const Csr>(kernels::spmv::read_matrix_market(path));
  } catch (const kernels::spmv::MtxError& err) {
    e.error = err.what();
  } catch (const std::bad_alloc&) {
    e.error = path + ": out of host memory reading the matrix";
  }
  return cache.emplace(path, std::move(e)).first->second;
}

Shape compute_shape(const harness::Params& p) {
  Shape s;
  if (from_file(p)) {
    const Csr& a = *file_entry(p.get_string("matrix")).matrix;
    s.rows = a.rows;
    s.cols = a.cols;
    s.nnz = a.nnz();
    s.max_row = a.max_row_length();
    s.hybrid_width = kernels::spmv::hybrid_threshold(a);
    return s;
  }
  const GenSpec g = gen_spec(p);
  s.rows = s.cols = kernels::spmv::rows_of(g);
  s.nnz = kernels::spmv::nnz_of(g);
  // The lengths alone give the longest row and the hybrid width (a CSR without columns).
  Csr lengths;
  lengths.rows = static_cast<std::int32_t>(s.rows);
  const auto len = kernels::spmv::row_lengths(g);
  lengths.row_ptr.assign(len.size() + 1, 0);
  for (std::size_t i = 0; i < len.size(); ++i) lengths.row_ptr[i + 1] = lengths.row_ptr[i] + len[i];
  s.max_row = lengths.max_row_length();
  s.hybrid_width = kernels::spmv::hybrid_threshold(lengths);
  return s;
}

}  // namespace

std::optional<std::string> matrix_problem(const harness::Params& p) {
  const std::string& path = p.get_string("matrix");
  if (from_file(p)) {
    if (path.empty()) return std::string("structure: file needs a Matrix Market file: `matrix: path/to/file.mtx`");
    const FileEntry& e = file_entry(path);
    if (!e.error.empty()) return e.error;
    return std::nullopt;
  }
  if (!path.empty())
    return fmt::format("matrix: '{}' is read only with structure: file (structure is {})", path, p.get_string("structure"));
  const GenSpec g = gen_spec(p);
  const std::int64_t n = g.n;
  // At most 2^27 rows (checked before n^2, n^3 can overflow): counting the non-zeros
  // of random and powerlaw walks every row, and a matrix this size is past what the
  // kernels' 32-bit indices and a GPU's memory hold anyway at a few non-zeros per row.
  const bool too_many_rows = (g.structure == Structure::laplace2d && n > 11585) ||
                             (g.structure == Structure::laplace3d && n > 512) || kernels::spmv::rows_of(g) > kMaxRows;
  if (too_many_rows)
    return fmt::format("{} at n = {} has more than 2^27 = {} rows", p.get_string("structure"), n, kMaxRows);
  // nnz, bounded before counting: random's mean row is density * n.
  if (g.structure == Structure::random && g.density * static_cast<double>(n) * static_cast<double>(n) > 2e9)
    return fmt::format("random at n = {}, density = {} has more non-zeros than 32-bit indices address", n, g.density);
  if (g.structure == Structure::blockdiag && static_cast<double>(g.block) * static_cast<double>(n) > 2e9)
    return fmt::format("blockdiag at n = {}, block = {} has more non-zeros than 32-bit indices address", n, g.block);
  if (kernels::spmv::nnz_of(g) > kMaxIndex)
    return fmt::format("{} at these sizes has more non-zeros than 32-bit indices address", p.get_string("structure"));
  return std::nullopt;
}

Shape shape_of(const harness::Params& p) {
  if (auto why = matrix_problem(p)) throw harness::InputError(*why);
  static std::mutex m;
  static std::map<std::string, Shape> cache;
  const std::string key = p.describe();
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const Shape s = compute_shape(p);
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(key, s).first->second;
}

Csr build_matrix(const harness::Params& p, std::uint64_t seed) {
  if (auto why = matrix_problem(p)) throw harness::InputError(*why);
  if (from_file(p)) return *file_entry(p.get_string("matrix")).matrix;
  return kernels::spmv::generate(gen_spec(p), seed);
}

}  // namespace spmv_plugin
