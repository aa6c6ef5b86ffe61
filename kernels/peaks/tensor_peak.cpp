// tensor_peak.hpp: picks the kernel by compute capability (see the header).
#include "peaks/tensor_peak.hpp"

#include "peaks/tensor_peak_launch.hpp"

namespace kernels::peaks {

const char* tensor_type_name(TensorType t) {
  switch (t) {
    case TensorType::tf32: return "tf32";
    case TensorType::bf16: return "bf16";
    case TensorType::f16: return "f16";
    case TensorType::fp8_e4m3: return "fp8_e4m3";
  }
  return "?";
}

bool tensor_peak_supported(TensorType t, int cc_major, int cc_minor) {
  if (cc_major == 9 && cc_minor == 0) return true;  // the wgmma kernel is sm_90a machine code
  return cc_major >= 8 && t != TensorType::fp8_e4m3;
}

double tensor_peak_flops(TensorType t, int cc_major, int blocks, int iterations) {
  return cc_major == 9 ? wgmma_peak_flops(t, blocks, iterations) : mma_peak_flops(t, blocks, iterations);
}

cudaError_t tensor_peak(TensorType t, int cc_major, int cc_minor, int blocks, int iterations, float* sink,
                        cudaStream_t stream) {
  if (!tensor_peak_supported(t, cc_major, cc_minor) || blocks <= 0 || iterations <= 0 || sink == nullptr)
    return tensor_peak_supported(t, cc_major, cc_minor) ? cudaErrorInvalidValue : cudaErrorNotSupported;
  return cc_major == 9 ? wgmma_peak_launch(t, blocks, iterations, sink, stream)
                       : mma_peak_launch(t, blocks, iterations, sink, stream);
}

}  // namespace kernels::peaks
