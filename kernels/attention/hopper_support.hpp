#pragma once
// Host-side pieces shared by the Hopper attention kernels (flash_hopper_forward.cu,
// flash_hopper_backward.cu): whether the device can run them, and their TMA maps.
#include <cuda.h>  // CUtensorMap

namespace kernels::attention::detail {

// nullptr when the current device can run the Hopper kernels (wgmma and setmaxnreg need
// sm_90a machine code, TMA the driver's tensor-map encoder), else why not; `backward` picks
// the kernel named in the message. The answer is kept per device (the launch paths ask on
// every call).
const char* hopper_device_unsupported(bool backward);

// The TMA map of a (B x heads, N, d) tensor of 16-bit elements (bf16 or f16 by
// `half_floats`) seen as (d, N, heads), boxes {64 d, box_rows, 1}, 128B swizzle; rows past
// N of a head read as zero. Through arch's map cache. False when the driver rejects it.
bool head_tensor_map(CUtensorMap* map, bool half_floats, const void* base, int d, int n, long long heads,
                     int box_rows);
// The same for elements of `type` (elem_bytes each): boxes {128 bytes of d, box_rows, 1}
// (fp8 Q, K: 128 elements; fp8 V^T: d = the padded keys, n = the head size).
bool head_tensor_map(CUtensorMap* map, CUtensorMapDataType type, int elem_bytes, const void* base, int d, int n,
                     long long heads, int box_rows);

}  // namespace kernels::attention::detail
