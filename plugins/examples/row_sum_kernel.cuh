#pragma once
// The row_sum kernel: plain CUDA, no harness includes (as kernels/ would hold it).
//   isum[r] = sum_c xi[r, c]   (int32, exact: wraps like the host's uint32 arithmetic)
//   bsum[r] = bf16(sum_c xb[r, c])  accumulated in float
// One warp per row, lanes striding over the columns, then a shuffle reduction.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace examples {

cudaError_t row_sum_cuda(int rows, int cols, const std::int32_t* xi, const __nv_bfloat16* xb, std::int32_t* isum,
                         __nv_bfloat16* bsum, cudaStream_t stream);

}  // namespace examples
