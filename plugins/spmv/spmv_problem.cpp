// The `spmv` problem: y = A x for a sparse A (f32 values, i32 indices) in the formats of
// the course notes (COO, CSR scalar/vector, ELL, hybrid ELL + COO, JDS), a merge-path CSR
// that balances long rows, cuSPARSE as the vendor reference and a double-accumulating
// CPU reference. The matrix is a named structure (kernels/spmv/generators.hpp) or a
// Matrix Market file (`structure: file`, `matrix: path`). Building it and converting it
// to a variant's format happen outside the timed runs (their times are in the result's
// "extra": matrix_build_ms, conversion_ms, upload_ms).
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "spmv/formats.hpp"
#include "spmv/spmv.hpp"
#include "spmv_instance.hpp"
#include "spmv_matrix.hpp"

namespace {

using harness::Backend;
using spmv_plugin::Format;
using spmv_plugin::SpmvInstance;

class SpmvProblem final : public harness::Problem {
 public:
  std::string name() const override { return "spmv"; }
  std::string description() const override {
    return "sparse matrix-vector product y = A x (f32, i32 indices), A generated with a named structure or read "
           "from a Matrix Market file";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {
        harness::enum_param("structure", "laplace2d", {"laplace2d", "laplace3d", "random", "powerlaw", "blockdiag", "file"},
                            "laplace2d/3d: 5/7-point stencil on an n^2 / n^3 grid; random: density; powerlaw: a few "
                            "rows up to max_row long; blockdiag: dense blocks; file: the Matrix Market file `matrix`"),
        harness::int_param("n", 64, 1, INT32_MAX, "grid side (laplace2d, laplace3d) or rows = cols (the others)"),
        harness::float_param("density", 1e-3, 0.0, 1.0, "random: mean fraction of non-zeros per row"),
        harness::int_param("max_row", 1000, 0, INT32_MAX, "powerlaw: the longest row (clamped to n)"),
        harness::int_param("block", 16, 1, 1 << 16, "blockdiag: block size"),
        harness::string_param("matrix", "", "file: path of a .mtx file (coordinate real|integer|pattern, "
                                            "general|symmetric), relative to the working directory"),
    };
  }
  std::optional<std::string> reject(const harness::Params& p) const override { return spmv_plugin::matrix_problem(p); }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p, std::uint64_t seed) const override {
    return std::make_unique<SpmvInstance>(p, seed);
  }
  // FLOPs: a multiply and an add per non-zero. Bytes: the CSR matrix (val, col, row_ptr),
  // x and y once each -- the least any format moves, so GB/s is the effective bandwidth
  // of every variant on one scale (each format's own traffic is in "extra").
  harness::Work work(const harness::Params& p) const override {
    const spmv_plugin::Shape s = spmv_plugin::shape_of(p);
    return {2.0 * static_cast<double>(s.nnz),
            8.0 * static_cast<double>(s.nnz) + 4.0 * static_cast<double>(s.rows + 1) + 4.0 * static_cast<double>(s.cols) +
                4.0 * static_cast<double>(s.rows)};
  }
  // CSR, x, y, and the largest extra format but ELL (JDS: perm, row_len, col, val).
  std::size_t device_bytes(const harness::Params& p) const override {
    const spmv_plugin::Shape s = spmv_plugin::shape_of(p);
    return static_cast<std::size_t>(16 * s.nnz + 20 * s.rows + 4 * s.cols + 16);
  }
  // The outputs carry their own tolerance (per row bound); this is the fallback.
  harness::Tolerance tolerance(const harness::Params&) const override { return {1e-5, 1e-5}; }
  std::string tolerance_rule() const override {
    return "row i (L_i non-zeros): |y_i - y_ref_i| <= 2 (L_i + 1) 2^-24 sum_j |a_ij x_j| (the float summation bound "
           "gamma_L of any order or tree, doubled; the reference accumulates in double). Checked as two outputs: "
           "'(y - exact) / row_bound' within 1 of the reference's (each row its own bound; exact = the double sum) and "
           "'y' within the largest row bound";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

HARNESS_REGISTER_PROBLEM(SpmvProblem);

SpmvInstance& instance_of(harness::Instance& inst) { return dynamic_cast<SpmvInstance&>(inst); }

void check(cudaError_t e, const char* variant) {
  if (e != cudaSuccess) throw harness::CudaError(fmt::format("spmv/{}: {}", variant, cudaGetErrorString(e)), e, false);
}

void launch_cpu(harness::Instance& i, harness::LaunchContext&) {
  SpmvInstance& s = instance_of(i);
  kernels::spmv::cpu(s.host_matrix(), s.host_x(), s.host_y());
  s.note_variant(Format::csr);
}

void launch_coo_atomic(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  const std::int32_t* rows = s.coo_rows();
  check(kernels::spmv::coo_atomic(s.csr(), rows, s.x(), s.y(), ctx.stream), "coo_atomic");
  s.note_variant(Format::coo);
}

void launch_csr_scalar(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  check(kernels::spmv::csr_scalar(s.csr(), s.x(), s.y(), ctx.stream), "csr_scalar");
  s.note_variant(Format::csr);
}

void launch_csr_vector(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  const auto a = s.csr();
  const int lanes = kernels::spmv::csr_vector_lanes(a.rows, a.nnz);
  check(kernels::spmv::csr_vector(a, lanes, s.x(), s.y(), ctx.stream), "csr_vector");
  s.note_variant(Format::csr, "lanes_per_row", lanes);
}

void launch_csr_merge(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  const auto a = s.csr();
  void* ws = ctx.workspace->get(0, kernels::spmv::csr_merge_workspace_bytes(a.rows, a.nnz));
  check(kernels::spmv::csr_merge(a, ws, s.x(), s.y(), ctx.stream), "csr_merge");
  s.note_variant(Format::csr);
}

void launch_ell(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  check(kernels::spmv::ell(s.ell(), s.x(), s.y(), ctx.stream), "ell");
  s.note_variant(Format::ell);
}

void launch_ell_coo(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  const auto h = s.hybrid();
  check(kernels::spmv::ell_coo(h.ell, h.tail_nnz, h.row, h.col, h.val, s.x(), s.y(), ctx.stream), "ell_coo");
  s.note_variant(Format::hybrid);
}

void launch_jds(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  check(kernels::spmv::jds(s.jds(), s.x(), s.y(), ctx.stream), "jds");
  s.note_variant(Format::jds);
}

void launch_cusparse(harness::Instance& i, harness::LaunchContext& ctx) {
  SpmvInstance& s = instance_of(i);
  const auto a = s.csr();
  std::size_t bytes = 0;
  if (std::string e = kernels::spmv::cusparse_buffer_bytes(a, s.x(), s.y(), bytes); !e.empty())
    throw harness::CudaError("spmv/cusparse: " + e, 0, false);
  void* buffer = ctx.workspace->get(0, std::max<std::size_t>(bytes, 256));
  if (std::string e = kernels::spmv::cusparse_csr(a, s.x(), s.y(), buffer, ctx.stream); !e.empty())
    throw harness::CudaError("spmv/cusparse: " + e, 0, false);
  s.note_variant(Format::csr, "cusparse_buffer_bytes", static_cast<double>(bytes));
}

// ELL stores rows x (longest row) elements: past 2^28 (2 GiB of col + val) it is skipped.
constexpr std::int64_t kEllMaxStored = std::int64_t{1} << 28;

std::optional<std::string> ell_constraint(const harness::Params& p) {
  const spmv_plugin::Shape s = spmv_plugin::shape_of(p);
  const std::int64_t stored = s.rows * s.max_row;
  if (stored > kEllMaxStored)
    return fmt::format("ELL would store {} x {} = {} elements ({:.1f}x the {} non-zeros), over the 2^28 limit", s.rows,
                       s.max_row, stored, static_cast<double>(stored) / static_cast<double>(std::max<std::int64_t>(s.nnz, 1)),
                       s.nnz);
  return std::nullopt;
}

std::optional<std::string> hybrid_constraint(const harness::Params& p) {
  const spmv_plugin::Shape s = spmv_plugin::shape_of(p);
  if (s.rows * s.hybrid_width > kEllMaxStored)
    return fmt::format("the hybrid's ELL part would store {} x {} elements, over the 2^28 limit", s.rows, s.hybrid_width);
  return std::nullopt;
}

std::size_t merge_workspace(const harness::Params& p) {
  const spmv_plugin::Shape s = spmv_plugin::shape_of(p);
  return kernels::spmv::csr_merge_workspace_bytes(s.rows, s.nnz);
}

}  // namespace

HARNESS_REGISTER_VARIANT(spmv, cpu, cpu, "CSR, a double accumulator per row", launch_cpu);
HARNESS_REGISTER_VARIANT(spmv, coo_atomic, cuda, "COO: a thread per non-zero, atomicAdd into a zeroed y", launch_coo_atomic);
HARNESS_REGISTER_VARIANT(spmv, csr_scalar, cuda, "CSR: a thread per row", launch_csr_scalar);
HARNESS_REGISTER_VARIANT(spmv, csr_vector, cuda,
                         "CSR: a group of 2..32 lanes per row (power of two >= mean row length), shuffle reduction",
                         launch_csr_vector);
HARNESS_REGISTER_VARIANT_FULL(spmv, csr_merge, cuda,
                              "CSR merge-path: tiles of 896 (row ends + non-zeros) staged in shared memory, 7 per thread, "
                              "segmented-scan carries, deterministic fix-up kernel",
                              launch_csr_merge, nullptr, merge_workspace);
HARNESS_REGISTER_VARIANT_IF(spmv, ell, cuda, "ELL: column-major, padded to the longest row, a thread per row", launch_ell,
                            ell_constraint);
HARNESS_REGISTER_VARIANT_IF(spmv, ell_coo, cuda,
                            "hybrid: ELL as wide as 90% of the rows need, the rest in COO (atomicAdd)", launch_ell_coo,
                            hybrid_constraint);
HARNESS_REGISTER_VARIANT(spmv, jds, cuda, "JDS: rows sorted by length, transposed by diagonal, a thread per row",
                         launch_jds);
HARNESS_REGISTER_VARIANT(spmv, cusparse, cuda, "cusparseSpMV, CSR, ALG_DEFAULT, f32 compute", launch_cusparse);
