#pragma once
// Tensor-core roofs: kernels that keep every SM's tensor cores busy with products whose
// operands never change (no loads in the loop), so that FLOPs / time is the pipe's peak
// for one input type at the clock the device runs it at. The harness measures them once
// per run beside the FP32 FMA and DRAM copy roofs and places each result against the
// roof of its own dtype (a bf16 GEMM against the bf16 tensor-core peak, not FP32's).
//
//   sm_90:      wgmma m64n256k{8,16,32} from shared memory, 2 warpgroups a CTA, one CTA
//               an SM (tensor_peak_wgmma.cu, sm_90a machine code): tf32, bf16, f16, e4m3
//   sm_80-89:   mma.sync m16n8k16 (bf16, f16) / m16n8k8 (tf32) in registers, 8
//               independent accumulators a warp, 8 warps a CTA (tensor_peak_mma.cu)
//   otherwise:  none (cudaErrorNotSupported)
// Operands are nonzero (zeros would draw less power and read a higher clock than real
// work can).
#include <cuda_runtime_api.h>

namespace kernels::peaks {

enum class TensorType { tf32, bf16, f16, fp8_e4m3 };

// "tf32", "bf16", "f16", "fp8_e4m3": the report's names, which are also the problems'
// dtype parameter values.
const char* tensor_type_name(TensorType t);

// Whether this device (compute capability major.minor) has a peak kernel for t.
bool tensor_peak_supported(TensorType t, int cc_major, int cc_minor);

// FLOPs (2 per multiply-add) that one tensor_peak() launch does on a device of this
// compute capability with `blocks` CTAs of `iterations` loop steps each.
double tensor_peak_flops(TensorType t, int cc_major, int blocks, int iterations);

// Launches the peak kernel of t on `stream` (asynchronous); `sink` receives one float a
// CTA (blocks floats). cudaErrorNotSupported where tensor_peak_supported() is false.
cudaError_t tensor_peak(TensorType t, int cc_major, int cc_minor, int blocks, int iterations, float* sink,
                        cudaStream_t stream);

}  // namespace kernels::peaks
