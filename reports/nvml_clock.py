#!/usr/bin/env python3
"""The SM clock and power of one GPU through NVML (the driver's libnvidia-ml.so.1, loaded
with ctypes: no pynvml needed), for the PyTorch reference scripts. They read the clock
after each timed sample, as the harness's clock probe does after each batch, and record it
in the result's `clocks` field (the harness's ClockStats: mhz per sample, median, min, the
device's maximum, batches under threshold x maximum), so that a table can put both sides'
clocks next to their times: under the 700 W cap one kernel can run at 1.6 GHz and the
other at 1.98.

Where NVML is missing or refuses (no driver, no permission), every call returns None and
the results carry no clocks; nothing fails.

  python3 reports/nvml_clock.py            the clock and power of GPU 0 now, or why not
"""
import argparse
import ctypes
import statistics
import sys

NVML_CLOCK_SM = 1
THRESHOLD = 0.75  # a sample under THRESHOLD x the maximum SM clock ran throttled (as the harness)


class GpuSensors:
    """SM clock (MHz) and power (W) of the GPU with the given UUID (torch's
    get_device_properties(i).uuid), else of NVML's device 0. `why` says why not, when
    `ok` is False."""

    def __init__(self, uuid=None, library="libnvidia-ml.so.1"):
        self.ok, self.why, self._handle = False, "", None
        try:
            self._nvml = ctypes.CDLL(library)
        except OSError as e:
            self.why = f"NVML not available ({e})"
            return
        if self._nvml.nvmlInit_v2() != 0:
            self.why = "nvmlInit failed"
            return
        handle = ctypes.c_void_p()
        found = False
        if uuid:
            text = str(uuid)
            text = text if text.startswith("GPU-") else "GPU-" + text
            found = self._nvml.nvmlDeviceGetHandleByUUID(text.encode(), ctypes.byref(handle)) == 0
        if not found and self._nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) != 0:
            self.why = "no NVML device"
            return
        self._handle, self.ok = handle, True
        self.max_mhz = self._uint("nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM) or 0

    def _uint(self, fn, *args):
        value = ctypes.c_uint()
        if self._handle is None or getattr(self._nvml, fn)(self._handle, *args, ctypes.byref(value)) != 0:
            return None
        return value.value

    def sm_mhz(self):
        return self._uint("nvmlDeviceGetClockInfo", NVML_CLOCK_SM) if self.ok else None

    def power_w(self):
        mw = self._uint("nvmlDeviceGetPowerUsage") if self.ok else None
        return None if mw is None else mw / 1000.0


def clock_stats(mhz, max_mhz, threshold=THRESHOLD):
    """The harness's `clocks` object (types/timing.hpp ClockStats) from per-sample clocks;
    None without samples."""
    xs = [float(x) for x in mhz if x]
    if not xs:
        return None
    throttled = sum(1 for x in xs if max_mhz and x < threshold * max_mhz)
    return {"mhz": xs, "min_mhz": min(xs), "median_mhz": statistics.median(xs), "max_mhz": float(max_mhz),
            "threshold": threshold, "throttled_batches": throttled, "throttled": throttled > 0}


def main(argv):
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    s = GpuSensors()
    if not s.ok:
        print(f"no clock: {s.why}")
        return 0
    print(f"SM clock {s.sm_mhz()} MHz (max {s.max_mhz}), power {s.power_w()} W")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
