// Host emulation of the few CUDA features the gemm kernels use (tests/gemm_emulation/run.sh):
// one block at a time, one std::thread per CUDA thread, __syncthreads as a std::barrier,
// __shared__ as static.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
using std::min;
using std::max;
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<>* emu_bar = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> emu_warp_bars;
inline float emu_shfl[1024];
inline void __syncthreads() { emu_bar->arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned, float v, int off) {
  const unsigned t = threadIdx.x + threadIdx.y * blockDim.x;
  auto& wb = *emu_warp_bars[t / 32];
  emu_shfl[t] = v;
  wb.arrive_and_wait();
  const float r = emu_shfl[(t / 32) * 32 + ((t % 32) ^ static_cast<unsigned>(off))];
  wb.arrive_and_wait();
  return r;
}
#undef __shared__
#define __shared__ static
#define cudaGetLastError() cudaSuccess
#define __launch_bounds__(...)
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __forceinline__
#define __forceinline__ inline
inline void emu_launch(dim3 grid, dim3 block, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = block;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        std::barrier<> bar(n);
        emu_bar = &bar;
        emu_warp_bars.clear();
        for (unsigned w = 0; w < (n + 31) / 32; ++w) emu_warp_bars.push_back(std::make_unique<std::barrier<>>(std::min(32u, n - 32 * w)));
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < n; ++t)
          ts.emplace_back([&, t] {
            threadIdx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
            blockIdx = dim3(x, y, z);
            body();
          });
        for (auto& th : ts) th.join();
      }
}
