#pragma once
// Host side of thread-block clusters (sm_90): a launch configuration whose CTAs are grouped
// in clusters along x (for cudaLaunchKernelEx), and how many such clusters of a kernel fit on
// the device at once (a persistent grid's size: the GPCs' SM counts may leave an SM without
// a partner, so this can be fewer than SMs / cluster size).
#include <cstddef>

#include <cuda_runtime.h>

namespace kernels::arch {

// cfg: block, shared memory, stream and the cluster attribute set; gridDim is the caller's.
// Not copyable: cfg points at this object's attribute.
struct ClusterLaunch {
  cudaLaunchAttribute attr[1] = {};
  cudaLaunchConfig_t cfg = {};
  ClusterLaunch(int cluster_x, int threads, std::size_t smem_bytes, cudaStream_t stream) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster_x);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = smem_bytes;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// The clusters of `kernel` launched as `launch` describes that fit on `sms` SMs at once
// (cudaOccupancyMaxActiveClusters); sets launch.cfg.gridDim, which the caller sets again
// before launching. Callers cache the answer per kernel.
template <class Kernel>
cudaError_t max_active_clusters(Kernel* kernel, ClusterLaunch& launch, int sms, int* clusters) {
  const unsigned cl = launch.attr[0].val.clusterDim.x;
  launch.cfg.gridDim = dim3(cl * (static_cast<unsigned>(sms) / cl));
  return cudaOccupancyMaxActiveClusters(clusters, kernel, &launch.cfg);
}

}  // namespace kernels::arch
