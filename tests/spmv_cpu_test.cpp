// The spmv family without a GPU: format conversions lose nothing (CSR -> COO, ELL,
// hybrid, JDS -> CSR) on every generated structure at odd sizes and on the .mtx files;
// the generators' closed-form counts match what they build; the Matrix Market reader
// accepts the good files of tests/data/mtx (written by scripts/make_test_matrices.py)
// and rejects each hostile one with its file:line message; the cpu variant through the
// registry; and the CLI: a suite naming a hostile file is a located input error, exit 2.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "family_support.hpp"
#include "harness/error.hpp"
#include "harness/random.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/mtx.hpp"
#include "spmv_instance.hpp"
#include "test_support.hpp"

namespace {

namespace ks = kernels::spmv;
const std::string kData = "tests/data/mtx/";

bool same(const ks::Csr& a, const ks::Csr& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col == b.col && a.val == b.val;
}

std::vector<ks::GenSpec> odd_specs() {
  using S = ks::Structure;
  return {{S::laplace2d, 7, 0, 0, 1},   {S::laplace2d, 1, 0, 0, 1},       {S::laplace3d, 5, 0, 0, 1},
          {S::random, 101, 0.05, 0, 1}, {S::random, 333, 0.002, 0, 1},    {S::powerlaw, 97, 0, 60, 1},
          {S::powerlaw, 1001, 0, 5000, 1}, {S::blockdiag, 45, 0, 0, 7},   {S::blockdiag, 3, 0, 0, 16}};
}

std::vector<ks::Csr> test_matrices() {
  std::vector<ks::Csr> out;
  for (const auto& s : odd_specs()) out.push_back(ks::generate(s, 7));
  for (const char* f : {"general_real.mtx", "symmetric_real.mtx", "pattern_general.mtx", "integer_symmetric.mtx",
                        "arrow_2000.mtx"})
    out.push_back(ks::read_matrix_market(kData + f));
  return out;
}

TEST(SpmvFormats, EveryConversionRoundTrips) {
  for (const ks::Csr& a : test_matrices()) {
    SCOPED_TRACE(std::to_string(a.rows) + " rows, " + std::to_string(a.nnz()) + " nnz");
    EXPECT_TRUE(same(ks::csr_from_coo(a.rows, a.cols, ks::coo_from_csr(a)), a));
    const ks::Ell e = ks::ell_from_csr(a, a.max_row_length());
    EXPECT_EQ(e.stored(), static_cast<std::int64_t>(a.rows) * a.max_row_length());
    EXPECT_TRUE(same(ks::csr_from_ell(e, a.cols), a));
    const std::int32_t t = ks::hybrid_threshold(a);
    EXPECT_LE(t, a.max_row_length());
    const ks::Hybrid h = ks::hybrid_from_csr(a, t);
    std::int64_t beyond = 0;
    for (std::int32_t r = 0; r < a.rows; ++r) beyond += std::max(0, a.row_length(r) - t);
    EXPECT_EQ(static_cast<std::int64_t>(h.coo_row.size()), beyond);
    EXPECT_TRUE(same(ks::csr_from_hybrid(h, a.cols), a));
    const ks::Jds j = ks::jds_from_csr(a);
    EXPECT_TRUE(std::is_sorted(j.row_len.rbegin(), j.row_len.rend()));  // non-increasing
    std::vector<std::int32_t> perm = j.perm;
    std::sort(perm.begin(), perm.end());
    for (std::int32_t i = 0; i < a.rows; ++i) ASSERT_EQ(perm[i], i);
    EXPECT_EQ(j.jd_ptr.back(), a.nnz());
    EXPECT_TRUE(same(ks::csr_from_jds(j, a.cols), a));
    const auto rows = ks::coo_rows(a);
    for (std::int32_t r = 0; r < a.rows; ++r)
      for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) ASSERT_EQ(rows[k], r);
  }
}

TEST(SpmvFormats, EllIsColumnMajorAndPaddedWithMinusOne) {
  // 3 x 3 grid: row 4 (the centre) has 5 elements, row 0 (a corner) 3.
  const ks::Csr a = ks::generate({ks::Structure::laplace2d, 3, 0, 0, 1}, 1);
  const ks::Ell e = ks::ell_from_csr(a, 5);
  for (std::int32_t k = 0; k < 5; ++k) {
    EXPECT_EQ(e.col[static_cast<std::size_t>(k) * 9 + 4], a.col[a.row_ptr[4] + k]);
    EXPECT_EQ(e.val[static_cast<std::size_t>(k) * 9 + 4], a.val[a.row_ptr[4] + k]);
  }
  EXPECT_EQ(e.col[3 * 9 + 0], -1);
  EXPECT_EQ(e.val[3 * 9 + 0], 0.0f);
  // The hybrid of a stencil keeps every row in ELL when 90% of the rows need the width.
  EXPECT_EQ(ks::hybrid_threshold(ks::generate({ks::Structure::laplace2d, 50, 0, 0, 1}, 1)), 5);
}

TEST(SpmvGenerators, CountsMatchAndStructuresLookAsNamed) {
  for (const auto& s : odd_specs()) {
    const ks::Csr a = ks::generate(s, 11);
    EXPECT_EQ(a.nnz(), ks::nnz_of(s));
    EXPECT_EQ(a.rows, ks::rows_of(s));
    const auto len = ks::row_lengths(s);
    for (std::int32_t r = 0; r < a.rows; ++r) ASSERT_EQ(a.row_length(r), len[r]);
    for (std::int32_t r = 0; r < a.rows; ++r)  // sorted, distinct, in range
      for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        ASSERT_GE(a.col[k], 0);
        ASSERT_LT(a.col[k], a.cols);
        if (k > a.row_ptr[r]) {
          ASSERT_LT(a.col[k - 1], a.col[k]);
        }
      }
    EXPECT_TRUE(same(a, ks::generate(s, 11)));  // deterministic
  }
  // Laplacian rows sum to 0 inside the grid (4 - 4 x 1, 6 - 6 x 1), are symmetric.
  const ks::Csr l3 = ks::generate({ks::Structure::laplace3d, 6, 0, 0, 1}, 1);
  const std::int32_t centre = 2 * 36 + 2 * 6 + 2;
  EXPECT_EQ(l3.row_length(centre), 7);
  float sum = 0;
  for (std::int32_t k = l3.row_ptr[centre]; k < l3.row_ptr[centre + 1]; ++k) sum += l3.val[k];
  EXPECT_EQ(sum, 0.0f);
  // Power law: the longest row is max_row (+ 1..4), most rows are short.
  const ks::GenSpec pl{ks::Structure::powerlaw, 20011, 0, 3000, 1};
  const ks::Csr p = ks::generate(pl, 3);
  EXPECT_GE(p.max_row_length(), 3001);
  EXPECT_LE(p.max_row_length(), 3004);
  std::int32_t short_rows = 0;
  for (std::int32_t r = 0; r < p.rows; ++r) short_rows += p.row_length(r) <= 5;
  EXPECT_GT(short_rows, p.rows * 9 / 10);
  // Random: different seeds, different columns and values; the same lengths.
  const ks::GenSpec rs{ks::Structure::random, 501, 0.02, 0, 1};
  const ks::Csr r1 = ks::generate(rs, 1), r2 = ks::generate(rs, 2);
  EXPECT_EQ(r1.row_ptr, r2.row_ptr);
  EXPECT_NE(r1.col, r2.col);
  EXPECT_NE(r1.val, r2.val);
}

TEST(SpmvReference, KnownValuesWithDoubleAccumulation) {
  // [[1, 0, 2], [0, 0, 0], [1e8, 1, -1e8]] x [1, 1, 1]: the last row needs a double sum.
  const ks::Csr a = ks::csr_from_coo(3, 3, {{2, 2, -1e8f}, {0, 0, 1}, {2, 0, 1e8f}, {0, 2, 2}, {2, 1, 1}});
  const float x[3] = {1, 1, 1};
  float y[3] = {-7, -7, -7};
  ks::cpu(a, x, y);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 0.0f);  // an empty row is written
  EXPECT_EQ(y[2], 1.0f);
}

TEST(SpmvMatrixMarket, ReadsTheGoodFiles) {
  const ks::Csr g = ks::read_matrix_market(kData + "general_real.mtx");
  EXPECT_EQ(g.rows, 7);
  EXPECT_EQ(g.cols, 5);
  EXPECT_EQ(g.nnz(), 9);  // 10 entries, (4, 3) twice: summed
  EXPECT_EQ(g.row_length(2), 0);
  EXPECT_EQ(g.row_length(3), 2);
  EXPECT_EQ(g.col[g.row_ptr[3] + 1], 2);
  EXPECT_FLOAT_EQ(g.val[g.row_ptr[3] + 1], 0.75f);
  EXPECT_FLOAT_EQ(g.val[g.row_ptr[6] + 1], 4.0f);  // "+4"
  const ks::Csr s = ks::read_matrix_market(kData + "symmetric_real.mtx");
  EXPECT_EQ(s.nnz(), 9 + 4);  // four off-diagonal entries mirrored
  EXPECT_EQ(s.col[s.row_ptr[0] + 1], 1);
  EXPECT_FLOAT_EQ(s.val[s.row_ptr[0] + 1], -1.0f);  // (1, 2) mirrors (2, 1)
  EXPECT_FLOAT_EQ(s.val[s.row_ptr[0] + 2], 2.5f);   // (1, 5) mirrors (5, 1)
  const ks::Csr p = ks::read_matrix_market(kData + "pattern_general.mtx");  // CRLF
  EXPECT_EQ(p.rows, 9);
  EXPECT_EQ(p.nnz(), 11);
  for (float v : p.val) EXPECT_EQ(v, 1.0f);
  const ks::Csr i = ks::read_matrix_market(kData + "integer_symmetric.mtx");
  EXPECT_EQ(i.nnz(), 7);
  EXPECT_EQ(i.val[i.row_ptr[3]], 1.0f);  // (4, 2)
  const ks::Csr arrow = ks::read_matrix_market(kData + "arrow_2000.mtx");
  EXPECT_EQ(arrow.rows, 2000);
  EXPECT_EQ(arrow.max_row_length(), 2000);
  EXPECT_EQ(arrow.nnz(), 2000 + 2 * 1999);
}

struct Hostile {
  const char* file;
  int line;
  const char* what;
};
// The same table as EXPECTED in scripts/make_test_matrices.py.
const Hostile kHostile[] = {
    {"bad_header.mtx", 1, "bad header"},
    {"unsupported_array.mtx", 1, "unsupported format 'array'"},
    {"truncated.mtx", 6, "expected 3 fields"},
    {"too_few_entries.mtx", 7, "truncated: 4 of 10 entries"},
    {"index_out_of_range.mtx", 5, "out of range"},
    {"non_numeric.mtx", 4, "non-numeric value 'abc'"},
    {"bad_size.mtx", 3, "bad size line"},
    {"empty.mtx", 1, "empty file"},
    {"extra_entries.mtx", 5, "more entries than the 2"},
};

TEST(SpmvMatrixMarket, RejectsEachHostileFileWithItsLine) {
  for (const Hostile& h : kHostile) {
    const std::string path = kData + h.file;
    try {
      (void)ks::read_matrix_market(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const ks::MtxError& e) {
      const std::string msg = e.what();
      const std::string located = path + ":" + std::to_string(h.line) + ": ";
      EXPECT_EQ(msg.rfind(located, 0), 0u) << msg;
      EXPECT_NE(msg.find(h.what), std::string::npos) << msg;
    }
  }
  try {
    (void)ks::read_matrix_market(kData + "no_such.mtx");
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const ks::MtxError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such.mtx: cannot open file"), std::string::npos) << e.what();
  }
}

harness::Params spmv_params(const std::string& structure, std::int64_t n, const std::string& matrix = "") {
  harness::Params p;
  p.set("structure", structure);
  p.set("n", n);
  p.set("density", 0.03);
  p.set("max_row", std::int64_t{200});
  p.set("block", std::int64_t{5});
  p.set("matrix", matrix);
  return harness::test::params_of(harness::test::problem_named("spmv"), p);
}

// The cpu variant through the registry: poisoned y fully written, equal to the
// reference function on the instance's matrix; the work counts; and the row-bound check:
// an element moved by half its row's bound passes, by twice its bound fails, even where
// the largest bound of the matrix (the plain `y` output's) would let it through.
// The re-check after timing (issue 33): reseeding refills x (and the check's per-row
// figures) and keeps the matrix; reseeding back gives the original outputs.
TEST(SpmvPlugin, ReseedRefillsXAndKeepsTheMatrix) {
  const harness::Problem& problem = harness::test::problem_named("spmv");
  const harness::Variant* cpu = harness::Registry::instance().find_variant("spmv", "cpu");
  const auto p = spmv_params("random", 77);
  auto inst = problem.make_instance(p, 5);
  auto* s = dynamic_cast<spmv_plugin::SpmvInstance*>(inst.get());
  ASSERT_NE(s, nullptr);
  inst->prepare(harness::Backend::cpu);
  const auto original = harness::test::run_once(*cpu, *inst, p);
  const std::vector<std::int32_t> cols = s->host_matrix().col;
  ASSERT_TRUE(inst->reseed(9));
  std::vector<float> x9(static_cast<std::size_t>(s->host_matrix().cols));
  harness::fill_uniform(x9, 9, 1, -1.0f, 1.0f);
  EXPECT_EQ(std::vector<float>(s->host_x(), s->host_x() + x9.size()), x9);
  EXPECT_EQ(s->host_matrix().col, cols);
  const auto fresh = harness::test::run_once(*cpu, *inst, p);
  EXPECT_NE(fresh[0].data, original[0].data);
  EXPECT_TRUE(harness::compare_outputs(fresh, fresh, problem.tolerance(p)).passed);  // bounds follow x
  ASSERT_TRUE(inst->reseed(5));
  EXPECT_EQ(harness::test::run_once(*cpu, *inst, p)[0].data, original[0].data);
}

TEST(SpmvPlugin, CpuVariantWorkAndTheRowBoundCheck) {
  const harness::Problem& problem = harness::test::problem_named("spmv");
  const harness::Variant* cpu = harness::Registry::instance().find_variant("spmv", "cpu");
  ASSERT_NE(cpu, nullptr);
  for (const auto& p : {spmv_params("laplace2d", 9), spmv_params("laplace3d", 3), spmv_params("random", 77),
                        spmv_params("powerlaw", 301), spmv_params("blockdiag", 23),
                        spmv_params("file", 64, kData + "general_real.mtx")}) {
    SCOPED_TRACE(p.describe());
    EXPECT_FALSE(problem.reject(p).has_value());
    auto inst = problem.make_instance(p, 5);
    auto* s = dynamic_cast<spmv_plugin::SpmvInstance*>(inst.get());
    ASSERT_NE(s, nullptr);
    inst->prepare(harness::Backend::cpu);
    const auto out = harness::test::run_once(*cpu, *inst, p);
    ASSERT_EQ(out.size(), 2u);
    const ks::Csr& a = s->host_matrix();
    std::vector<float> want(static_cast<std::size_t>(a.rows));
    ks::cpu(a, s->host_x(), want.data());
    EXPECT_EQ(out[0].floats(), want);
    const harness::Work w = problem.work(p);
    EXPECT_EQ(w.flops, 2.0 * static_cast<double>(a.nnz()));
    EXPECT_EQ(w.bytes, 8.0 * static_cast<double>(a.nnz()) + 4.0 * (a.rows + 1) + 4.0 * a.cols + 4.0 * a.rows);
    EXPECT_TRUE(harness::compare_outputs(out, out, problem.tolerance(p)).passed);

    // The row with the smallest non-zero bound.
    const auto& bound = s->row_bounds();
    std::size_t row = bound.size();
    for (std::size_t i = 0; i < bound.size(); ++i)
      if (bound[i] > 0 && (row == bound.size() || bound[i] < bound[row])) row = i;
    ASSERT_LT(row, bound.size());
    auto moved = [&](double by) {
      std::vector<float> y = want, scaled(want.size());
      y[row] = static_cast<float>(y[row] + by * bound[row]);
      for (std::size_t i = 0; i < y.size(); ++i)
        scaled[i] = static_cast<float>((y[i] - s->exact()[i]) / std::max(bound[i], 1e-300));
      auto o = out;
      o[0] = harness::Output::of<float>("y", y);
      o[0].tolerance = out[0].tolerance;
      o[1] = harness::Output::of<float>("(y - exact) / row_bound", scaled);
      o[1].tolerance = out[1].tolerance;
      return harness::compare_outputs(o, out, problem.tolerance(p)).passed;
    };
    EXPECT_TRUE(moved(0.5));
    EXPECT_FALSE(moved(2.0));
    // Never written (poison) is caught.
    inst->reset_outputs(harness::Backend::cpu, nullptr);
    EXPECT_FALSE(harness::compare_outputs(inst->read_outputs(harness::Backend::cpu), out, problem.tolerance(p)).passed);
  }
}

// Parameter rules, reported at suite load: a file structure needs a path, a path needs
// the file structure, sizes stay within 2^27 rows and 32-bit non-zero counts.
TEST(SpmvPlugin, RejectsParametersThatMakeNoMatrix) {
  const harness::Problem& problem = harness::test::problem_named("spmv");
  auto why = [&](const harness::Params& p) { return problem.reject(p).value_or(""); };
  EXPECT_NE(why(spmv_params("file", 64)).find("structure: file needs a Matrix Market file"), std::string::npos);
  EXPECT_NE(why(spmv_params("laplace2d", 9, kData + "general_real.mtx")).find("read only with structure: file"),
            std::string::npos);
  EXPECT_NE(why(spmv_params("laplace3d", 513)).find("more than 2^27"), std::string::npos);
  EXPECT_NE(why(spmv_params("laplace2d", 2000000000)).find("more than 2^27"), std::string::npos);
  harness::Params dense = spmv_params("random", 100000);
  dense.set("density", 0.5);
  EXPECT_NE(why(dense).find("32-bit"), std::string::npos);
  EXPECT_NE(why(spmv_params("file", 64, kData + "truncated.mtx")).find("truncated.mtx:6: expected 3 fields"),
            std::string::npos);
  EXPECT_EQ(why(spmv_params("powerlaw", 1000003)), "");
}

TEST(SpmvCli, HostileMatrixFileIsALocatedInputError) {
  const std::string suite = harness::test::temp_path("spmv_hostile.yaml");
  {
    std::ofstream f(suite);
    f << "suite: spmv_hostile\ncases:\n  - problem: spmv\n    params: {structure: file, matrix: "
         "tests/data/mtx/index_out_of_range.mtx}\n";
  }
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tests/data/mtx/index_out_of_range.mtx:5: index (6, 1) out of range"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(suite + ":4:"), std::string::npos) << r.output;  // and where the suite names it
  // A file that is not there.
  {
    std::ofstream f(suite);
    f << "cases:\n  - problem: spmv\n    params: {structure: file, matrix: tests/data/mtx/missing.mtx}\n";
  }
  const auto m = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite);
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_NE(m.output.find("tests/data/mtx/missing.mtx: cannot open file"), std::string::npos) << m.output;
}

TEST(SpmvCli, TheSuitesLoad) {
  for (const char* s : {"suites/spmv.yaml", "suites/sanitizer.yaml"}) {
    const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + s + " --dry-run --filter '^spmv/'");
    EXPECT_EQ(r.exit_code, 0) << s << ": " << r.output;
    EXPECT_NE(r.output.find("spmv/cusparse"), std::string::npos) << s << ": " << r.output;
  }
}

}  // namespace
