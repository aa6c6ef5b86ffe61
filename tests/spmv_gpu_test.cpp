// Every CUDA spmv variant (cusparse too) against the double CPU reference, through the
// registry, on every structure at odd sizes (rows not a multiple of any block, empty
// rows, rows of thousands of elements that merge-path splits over many threads) and on
// the .mtx files; and the figures a result reports (format, padding, conversion time).
// Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "family_gpu_check.hpp"
#include "spmv_instance.hpp"
#include "test_support.hpp"

namespace {

harness::Params spmv_params(const std::string& structure, std::int64_t n, double density = 0.01,
                            std::int64_t max_row = 1000, std::int64_t block = 16, const std::string& matrix = "") {
  harness::Params p;
  p.set("structure", structure);
  p.set("n", n);
  p.set("density", density);
  p.set("max_row", max_row);
  p.set("block", block);
  p.set("matrix", matrix);
  return harness::test::params_of(harness::test::problem_named("spmv"), p);
}

TEST(SpmvGpu, EveryVariantMatchesTheReferenceOnEveryStructure) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<harness::Params> cases = {
      spmv_params("laplace2d", 1),   spmv_params("laplace2d", 7),   spmv_params("laplace2d", 255),
      spmv_params("laplace3d", 2),   spmv_params("laplace3d", 13),  spmv_params("laplace3d", 37),
      spmv_params("random", 1, 1.0), spmv_params("random", 333, 0.002), spmv_params("random", 5001, 0.003),
      spmv_params("random", 1001, 0.5),
      spmv_params("powerlaw", 97, 0, 60), spmv_params("powerlaw", 20011, 0, 7777), spmv_params("powerlaw", 100003, 0, 50000),
      spmv_params("blockdiag", 45, 0, 0, 7), spmv_params("blockdiag", 1000, 0, 0, 333), spmv_params("blockdiag", 3, 0, 0, 64),
  };
  for (const auto& p : cases) EXPECT_GE(harness::test::check_cuda_variants_against_cpu("spmv", p), 7) << p.describe();
  for (const char* f : {"general_real.mtx", "symmetric_real.mtx", "pattern_general.mtx", "integer_symmetric.mtx",
                        "arrow_2000.mtx"})
    EXPECT_EQ(harness::test::check_cuda_variants_against_cpu(
                  "spmv", spmv_params("file", 64, 0.001, 1000, 16, std::string("tests/data/mtx/") + f)),
              8)
        << f;
}

// What a result's "extra" says after each format ran: ELL's padding on the arrow matrix
// (one row of 2000: 2000 x 2000 stored for 5998 non-zeros), none for JDS; the hybrid
// spills the long row to COO; conversion times are measured.
TEST(SpmvGpu, ExtraReportsFormatPaddingAndConversion) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto p = spmv_params("file", 64, 0.001, 1000, 16, "tests/data/mtx/arrow_2000.mtx");
  auto inst = harness::test::problem_named("spmv").make_instance(p, 1);
  inst->prepare(harness::Backend::cuda);
  harness::Workspace ws;
  auto run = [&](const char* name) {
    const harness::Variant* v = harness::Registry::instance().find_variant("spmv", name);
    EXPECT_NE(v, nullptr);
    (void)harness::test::run_once(*v, *inst, p, &ws);
    return inst->extra();
  };
  const auto ell = run("ell");
  EXPECT_EQ(ell["format"], "ell");
  EXPECT_EQ(ell["ell_width"], 2000);
  EXPECT_EQ(ell["stored_elements"], 2000 * 2000);
  EXPECT_NEAR(ell["padding_overhead"].get<double>(), 4e6 / 5998.0 - 1, 1e-9);
  EXPECT_GE(ell["conversion_ms"].get<double>(), 0.0);
  const auto jds = run("jds");
  EXPECT_EQ(jds["padding_overhead"], 0.0);
  EXPECT_EQ(jds["diagonals"], 2000);
  const auto hyb = run("ell_coo");
  EXPECT_EQ(hyb["ell_width"], 2);
  EXPECT_EQ(hyb["coo_tail_nnz"], 1998);
  EXPECT_EQ(run("csr_vector")["lanes_per_row"], 4);
}

}  // namespace
