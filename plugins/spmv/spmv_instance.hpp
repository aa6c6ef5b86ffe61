#pragma once
// The instance of an spmv case. It keeps its own buffers (the core's operands have fixed
// shapes from the parameters; a sparse matrix has arrays per format):
//   host    the CSR matrix (built once per case, not timed), x (uniform [-1, 1) from the
//           seed), the cpu backend's y, the tolerance bound of every row;
//   device  CSR and x uploaded at prepare(cuda), y; plus the format of the variant that
//           runs, converted on the host and uploaded on its first launch -- the checked
//           run, never a timed one -- and kept until a variant asks for another format
//           (one extra format resident at a time). Its conversion and upload times,
//           stored elements and padding go to the result's "extra" object.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/problem.hpp"
#include "spmv/formats.hpp"
#include "spmv/spmv.hpp"
#include "spmv_matrix.hpp"

namespace spmv_plugin {

enum class Format { csr, coo, ell, hybrid, jds };
const char* to_string(Format f);

// A device array (cudaMalloc; OutOfMemory when the device is full).
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { reset(); }
  void reset();
  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  // Allocates `bytes` and copies `host` (when non-null) into it.
  void assign(const void* host, std::size_t bytes, const char* what);
  template <class T>
  void assign(const std::vector<T>& v, const char* what) {
    assign(v.data(), v.size() * sizeof(T), what);
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class SpmvInstance final : public harness::Instance {
 public:
  SpmvInstance(const harness::Params& p, std::uint64_t seed);

  void prepare(harness::Backend backend) override;
  void reset_outputs(harness::Backend backend, cudaStream_t stream) override;
  std::vector<harness::Output> read_outputs(harness::Backend backend) override;
  std::size_t device_bytes() const override;
  nlohmann::json extra() override;
  bool reseed(std::uint64_t seed) override;

  const kernels::spmv::Csr& host_matrix() const { return a_; }
  const float* host_x() const { return x_.data(); }
  float* host_y() { return y_host_.data(); }
  // Which format the launch used (for extra()), and one figure of the variant's own
  // (lanes per row, cuSPARSE's buffer); cheap: called inside the timed runs.
  void note_variant(Format f, const char* key = nullptr, double value = 0) {
    last_format_ = f;
    last_key_ = key;
    last_value_ = value;
  }

  // Device views (prepare(cuda) first). The format accessors convert and upload on first use.
  kernels::spmv::CsrView csr() const;
  const float* x() const { return d_x_.as<const float>(); }
  float* y() const { return d_y_.as<float>(); }
  const std::int32_t* coo_rows();
  kernels::spmv::EllView ell();
  struct HybridView {
    kernels::spmv::EllView ell;
    std::int32_t tail_nnz;
    const std::int32_t *row, *col;
    const float* val;
  };
  HybridView hybrid();
  kernels::spmv::JdsView jds();

  // The per-row bound of the check, 2 (L_i + 1) 2^-24 sum_j |a_ij x_j| (see the problem's
  // tolerance_rule), and its maximum.
  const std::vector<double>& row_bounds() const { return bound_; }
  const std::vector<double>& exact() const { return exact_; }

 private:
  struct FormatInfo {
    Format format = Format::csr;
    double conversion_ms = 0, upload_ms = 0;
    std::int64_t stored = 0;        // stored elements (ELL: rows x width; others: nnz)
    double bytes_per_run = 0;       // matrix bytes a run reads in this format + x + y
    nlohmann::json detail;          // width, tail, ...
  };
  // Converts (timed) and uploads (timed) `f` unless it is the resident extra format.
  template <class Convert>
  void ensure(Format f, Convert convert);
  void drop_extra();
  void fill_x(std::uint64_t seed);
  double vector_bytes() const;
  std::size_t extra_device_bytes() const;  // the resident extra format's arrays

  harness::Params params_;
  kernels::spmv::Csr a_;
  double build_ms_ = 0;
  std::vector<float> x_, y_host_;
  std::vector<double> bound_, exact_;  // per row: the check's bound, the double sum
  double max_bound_ = 0;
  bool cuda_ready_ = false;
  DeviceArray d_row_ptr_, d_col_, d_val_, d_x_, d_y_;
  // The resident extra format: up to five arrays (meaning per format).
  Format extra_format_ = Format::csr;
  DeviceArray d_extra_[5];
  FormatInfo extra_info_;
  std::int32_t ell_width_ = 0, jds_diagonals_ = 0, tail_nnz_ = 0;
  Format last_format_ = Format::csr;  // of the variant that ran last (extra())
  const char* last_key_ = nullptr;
  double last_value_ = 0;
};

}  // namespace spmv_plugin
