#!/usr/bin/env python3
"""Helpers for writing harness reports from Python (the PyTorch reference scripts), so
that `harness validate`, `harness compare` and `harness report` accept them.

  python3 reports/harness_report.py --normalize REPORT.json   fill in derived fields
                                                               (statistics from the samples,
                                                               summary counts, suite keys)
"""
import argparse
import datetime
import json
import math
import re
import sys


def stats(samples):
    """The harness's statistics of timing samples (seconds): quartiles interpolated
    linearly between ranks, sample standard deviation."""
    xs = sorted(samples)
    n = len(xs)

    def q(p):
        pos = p * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "min_s": xs[0], "max_s": xs[-1], "mean_s": mean, "median_s": q(0.5), "stddev_s": sd,
            "q1_s": q(0.25), "q3_s": q(0.75), "rel_noise": sd / mean if mean else 0.0,
            "noise_reached": True, "stop_reason": "pytorch", "wall_time_s": sum(xs)}


# harness/src/measure/collective.hpp: kCollective{BatchSeconds, OpLatency, Bandwidth, MinOps, MaxOps}
COLLECTIVE_BATCH_S, COLLECTIVE_OP_LATENCY_S, COLLECTIVE_BANDWIDTH, COLLECTIVE_MIN_OPS, COLLECTIVE_MAX_OPS = 2e-3, 10e-6, 100e9, 5, 200


def collective_ops_per_sample(nbytes):
    """K, the ops per timed batch of a collective of `nbytes`, as the harness's
    collective_ops_per_sample: ceil(2 ms / (10 us + bytes / 100 GB/s)) within [5, 200]."""
    if not (nbytes >= 0) or math.isinf(nbytes):
        nbytes = 0
    k = math.ceil(COLLECTIVE_BATCH_S / (COLLECTIVE_OP_LATENCY_S + nbytes / COLLECTIVE_BANDWIDTH))
    return min(COLLECTIVE_MAX_OPS, max(COLLECTIVE_MIN_OPS, k))


def combine_ranks(per_rank):
    """The ranks' batches (batch i of every rank after the same barrier) combined as the
    harness's combine_ranks: per batch the mean over ranks (nccl-tests' -a 1) and the
    slowest rank (-a 3), their medians (time_s, time_max_s), and every rank's own median."""
    batches = min((len(s) for s in per_rank), default=0)
    mean = [sum(s[i] for s in per_rank) / len(per_rank) for i in range(batches)]
    slowest = [max(s[i] for s in per_rank) for i in range(batches)]
    med = lambda xs: stats(xs)["median_s"] if xs else 0.0  # noqa: E731
    return {"mean": mean, "slowest": slowest, "time_s": med(mean), "time_max_s": med(slowest),
            "rank_median": [med(s) for s in per_rank]}


def collective_bandwidth(nbytes, seconds, bus_factor):
    """(algbw, busbw) in GB/s as nccl-tests defines them; zeros without a time."""
    if not seconds or seconds <= 0 or not nbytes:
        return 0.0, 0.0
    alg = nbytes / seconds / 1e9
    return alg, alg * bus_factor


def parse_names(text, known, what, words=("all",)):
    """'all' -> every name of `known`; else a comma-separated list of them, in the order
    given, once each. ValueError names an unknown one (`what`: mode, variant; `words`: the
    other accepted words, for the message)."""
    if text.strip() == "all":
        return list(known)
    out = []
    for m in (x.strip() for x in text.split(",")):
        if not m:
            continue
        if m not in known:
            raise ValueError(f"unknown {what} '{m}' ({what}s: {', '.join(known)}, or {', '.join(words)})")
        if m not in out:
            out.append(m)
    if not out:
        raise ValueError(f"no {what} given")
    return out


def cuda_torch(prog):
    """The torch module where PyTorch is installed and sees a CUDA device; else None, after
    saying which on stderr (the PyTorch scripts then exit 2). Imported here, on use, so that
    the scripts' --help and argument checks need no PyTorch."""
    try:
        import torch
    except ImportError:
        print(f"{prog}: PyTorch is not installed (python3 -c 'import torch' fails)", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{prog}: no CUDA device visible to PyTorch", file=sys.stderr)
        return None
    return torch


# ---- Model FLOP utilization (issue 36) --------------------------------------------------
# The formula of models/mfu.hpp (dense_bf16_peak), for the PyTorch references and the
# tables: dense bf16 tensor-core peak = SMs x FLOP/clk/SM x the maximum SM clock
# (cudaDevAttrClockRate, kHz); sm_90 only (4096 FLOP/clk/SM), "peak unknown" elsewhere.
# Keep the two in step (tests: models_cpu_test DenseBf16PeakAndModelFlopsUtilization,
# reports_scripts_py TinyHarnessReport).
DENSE_BF16_FLOP_PER_CLOCK_PER_SM = {(9, 0): 4096}

MFU_BASIS = ("model_flops_per_step / phase_ms.step (mean CUDA-event step time) / peak_tflops (dense bf16 tensor "
             "cores, for FP32 and bf16 runs alike)")


def dense_bf16_peak(cc_major, cc_minor, sm_count, clock_khz, name=""):
    """(TFLOP/s or None, source): the peak and its formula with the figures, or None and
    why it is unknown (models::dense_bf16_peak, word for word)."""
    arch = f"sm_{cc_major}{cc_minor}"
    if re.search(r"\bH20\b", name or ""):
        return None, f"peak unknown: {name} ({arch}) has cut-down tensor cores, not 4096 FLOP/clk/SM"
    per_clock = DENSE_BF16_FLOP_PER_CLOCK_PER_SM.get((cc_major, cc_minor), 0)
    if not per_clock:
        return None, f"peak unknown: dense bf16 FLOP/clk/SM of {arch} is not in the table (sm_90 only)"
    if not sm_count or sm_count <= 0 or not clock_khz or clock_khz <= 0:
        return None, f"peak unknown: the SM count or the maximum SM clock of the {arch} device is not known"
    return (sm_count * per_clock * clock_khz * 1e3 * 1e-12,
            f"{arch} dense bf16 tensor cores: {sm_count} SMs x {per_clock} FLOP/clk x {clock_khz / 1000:g} MHz "
            "(cudaDevAttrClockRate, the maximum SM clock)")


def mfu(flops_per_step, step_s, peak_tflops):
    """flops_per_step / step_s / the peak (a fraction), or None without a peak or a time."""
    if not peak_tflops or not step_s or step_s <= 0:
        return None
    return flops_per_step / step_s / (peak_tflops * 1e12)


def peak_of_environment(env):
    """(TFLOP/s or None, source) from a report's environment.gpu as `harness run` writes it
    (compute_capability "9.0", sm_count, sm_clock_max_mhz); for reports whose results
    predate the peak fields."""
    gpu = (env or {}).get("gpu") or {}
    try:
        major, minor = (int(x) for x in str(gpu.get("compute_capability", "")).split("."))
    except ValueError:
        return None, "peak unknown: the report names no compute capability"
    return dense_bf16_peak(major, minor, gpu.get("sm_count"), (gpu.get("sm_clock_max_mhz") or 0) * 1000,
                           gpu.get("name", ""))


def max_sm_clock_khz(index=0):
    """The maximum SM clock of CUDA device `index` in kHz, from the driver API
    (cuDeviceGetAttribute CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13, the attribute behind
    cudaDevAttrClockRate; torch's device properties carry no clock); None if the driver
    cannot be asked."""
    import ctypes
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        dev, khz = ctypes.c_int(), ctypes.c_int()
        if cu.cuInit(0) != 0 or cu.cuDeviceGet(ctypes.byref(dev), index) != 0:
            return None
        if cu.cuDeviceGetAttribute(ctypes.byref(khz), 13, dev) != 0:
            return None
        return khz.value
    except (OSError, AttributeError):
        return None


def device_peak(torch_module, index=0):
    """{"peak_tflops", "peak_source"} of torch's CUDA device `index`."""
    props = torch_module.cuda.get_device_properties(index)
    khz = max_sm_clock_khz(index)
    tflops, source = dense_bf16_peak(props.major, props.minor, props.multi_processor_count, khz or 0, props.name)
    if khz is None and tflops is None and "SM clock" in source:
        source += " (cuDeviceGetAttribute CU_DEVICE_ATTRIBUTE_CLOCK_RATE failed)"
    return {"peak_tflops": tflops, "peak_source": source}


def mfu_fields(flops_per_step, step_ms, peak):
    """The extra fields of a train_transformer result, as the engine writes them:
    model_flops_per_step, peak_tflops, peak_source, mfu (against the mean step in ms),
    mfu_basis. peak: device_peak's dict (None: unknown, not asked)."""
    peak = peak or {"peak_tflops": None, "peak_source": "peak unknown: not queried"}
    return {"model_flops_per_step": flops_per_step, "peak_tflops": peak["peak_tflops"],
            "peak_source": peak["peak_source"],
            "mfu": mfu(flops_per_step, (step_ms or 0) * 1e-3, peak["peak_tflops"]), "mfu_basis": MFU_BASIS}


def environment(torch_module, command_line):
    torch = torch_module
    props = torch.cuda.get_device_properties(0)
    khz = max_sm_clock_khz(0)
    return {"gpu": {"index": 0, "name": props.name, "sm_count": props.multi_processor_count,
                    "compute_capability": f"{props.major}.{props.minor}",
                    "memory_gib": props.total_memory / 2**30,
                    **({"sm_clock_max_mhz": khz // 1000} if khz else {})},
            "gpu_unavailable_reason": "", "cuda_driver": "", "cuda_runtime": str(torch.version.cuda),
            "host": "", "cpu": "", "cpu_threads": 0, "harness_version": "pytorch " + torch.__version__,
            "git_commit": "", "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command_line": command_line}


def finish(report):
    """Fills the fields derived from the results: statistics from samples_s, summary
    counts, the suite's keys."""
    counts = {s: 0 for s in ("passed", "failed", "skipped", "error", "crashed", "timeout")}
    for r in report["results"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        if r.get("samples_s"):
            keep = {k: v for k, v in (r.get("stats") or {}).items() if k not in stats(r["samples_s"])}
            r["stats"] = {**stats(r["samples_s"]), **keep}
    report["summary"] = counts
    suite = report.setdefault("suite", {})
    suite.setdefault("description", "")
    suite.setdefault("settings", {})
    suite.setdefault("cases", len(report["results"]))
    gpu = (report.get("environment") or {}).get("gpu")
    if isinstance(gpu, dict):
        gpu.setdefault("compute_capability", "unknown")
    report.setdefault("benchmarks", [])
    return report


def skipped(reason):
    """The fields of a result that did not run (out of memory, unsupported)."""
    return {"status": "skipped", "reason": reason, "samples_s": [], "stats": None, "rates": None,
            "memory": {"io_device_bytes": 0, "workspace_peak_bytes": 0}}


def write(path, suite_file, results, torch_module, command_line):
    report = finish({"schema": "harness-report", "schema_version": 1,
                     "environment": environment(torch_module, command_line),
                     "suite": {"name": "pytorch-" + suite_file, "file": suite_file},
                     "results": results})
    with open(path, "w") as f:
        json.dump(report, f, indent=1)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--normalize", metavar="REPORT.json", required=True,
                    help="fill in the derived fields of this report, in place")
    args = ap.parse_args(argv[1:])
    with open(args.normalize) as f:
        report = json.load(f)
    with open(args.normalize, "w") as f:
        json.dump(finish(report), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
