#pragma once
// Whether the current device can run the Hopper attention kernels (flash_hopper_*.cu:
// wgmma and setmaxnreg need sm_90a machine code, TMA needs the driver's tensor-map encoder).
namespace kernels::attention::detail {

// nullptr when it can, else why not; `backward` picks the kernel named in the message.
const char* hopper_device_unsupported(bool backward);

}  // namespace kernels::attention::detail
