// The vendor reference: cusparseSpMV on CSR (f32 values and compute, 32-bit indices).
#include <cusparse.h>

#include <mutex>
#include <string>

#include "spmv/spmv.hpp"

namespace kernels::spmv {
namespace {

// One handle per process (creating one costs milliseconds), made on first use, kept; and
// the descriptors of the last (matrix, x, y) pointers, so that the timed calls do no
// descriptor set-up. One caller at a time (the harness runs one stream).
struct State {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  CsrView key{};
  const float* x = nullptr;
  float* y = nullptr;
  std::size_t buffer_bytes = 0;  // cusparseSpMV_bufferSize of these descriptors
};
State& state() {
  static State s;
  return s;
}
std::mutex& guard() {
  static std::mutex m;
  return m;
}

std::string error(const char* what, cusparseStatus_t s) {
  return std::string(what) + ": " + cusparseGetErrorString(s);
}

#define KSPMV_TRY(call)                                     \
  do {                                                      \
    const cusparseStatus_t st_ = (call);                    \
    if (st_ != CUSPARSE_STATUS_SUCCESS) return error(#call, st_); \
  } while (0)

bool same(const CsrView& a, const CsrView& b) {
  return a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz && a.row_ptr == b.row_ptr && a.col == b.col &&
         a.val == b.val;
}

// Handle and descriptors for (a, x, y), rebuilt when a pointer or size changed.
std::string bind(const CsrView& a, const float* x, float* y) {
  State& s = state();
  if (!s.handle) KSPMV_TRY(cusparseCreate(&s.handle));
  if (s.mat && same(s.key, a) && s.x == x && s.y == y) return {};
  if (s.mat) cusparseDestroySpMat(s.mat);
  if (s.vx) cusparseDestroyDnVec(s.vx);
  if (s.vy) cusparseDestroyDnVec(s.vy);
  s.mat = nullptr;
  s.vx = s.vy = nullptr;
  s.key = CsrView{};  // stale until every descriptor below exists
  s.x = nullptr;
  s.y = nullptr;
  KSPMV_TRY(cusparseCreateCsr(&s.mat, a.rows, a.cols, a.nnz, const_cast<std::int32_t*>(a.row_ptr),
                              const_cast<std::int32_t*>(a.col), const_cast<float*>(a.val), CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  KSPMV_TRY(cusparseCreateDnVec(&s.vx, a.cols, const_cast<float*>(x), CUDA_R_32F));
  KSPMV_TRY(cusparseCreateDnVec(&s.vy, a.rows, y, CUDA_R_32F));
  const float alpha = 1, beta = 0;
  KSPMV_TRY(cusparseSpMV_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s.mat, s.vx, &beta, s.vy,
                                    CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &s.buffer_bytes));
  s.key = a;
  s.x = x;
  s.y = y;
  return {};
}

}  // namespace

std::string cusparse_buffer_bytes(const CsrView& a, const float* x, float* y, std::size_t& bytes) {
  std::lock_guard<std::mutex> lock(guard());
  if (a.rows <= 0 || a.cols <= 0) {
    bytes = 0;
    return {};
  }
  if (std::string e = bind(a, x, y); !e.empty()) return e;
  bytes = state().buffer_bytes;
  return {};
}

std::string cusparse_csr(const CsrView& a, const float* x, float* y, void* buffer, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(guard());
  if (a.rows <= 0 || a.cols <= 0) return {};
  if (std::string e = bind(a, x, y); !e.empty()) return e;
  const float alpha = 1, beta = 0;  // beta = 0: y is written, not read
  State& s = state();
  KSPMV_TRY(cusparseSetStream(s.handle, stream));
  KSPMV_TRY(cusparseSpMV(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s.mat, s.vx, &beta, s.vy, CUDA_R_32F,
                         CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  return {};
}

}  // namespace kernels::spmv
