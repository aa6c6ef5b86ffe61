#!/usr/bin/env python3
"""Writes the synthetic reports the compare/report/validate tests read.

Deterministic (fixed seeds); run it again only to change the data, then refresh the
golden files (see tests/report_render_test.cpp). The numbers imitate an H100 run of
suites/gemm.yaml and an attention sweep: plausible, not measured.

  gemm_base.json      the baseline: gemm (M=N=K sweep, 5 variants), attention (seq_len
                      sweep, naive runs out of memory at 32768), device peaks
  gemm_rerun.json     the same build run again: fresh noise, tiny drift  -> all `same`
  gemm_slow.json      gemm/tiled 10% slower (noise ~1%)                  -> `slower`
  gemm_failed.json    gemm/coarsened fails its check at 4096             -> `failed`
  gemm_changed.json   attention/cpu gone, gemm/wmma added                -> missing, new
  gemm_other_gpu.json as gemm_rerun on an H200 with another driver       -> warnings
  gbench_base.json    Google Benchmark JSON (repetitions: iteration entries)
  gbench_slow.json    the same, BM_Copy/4096 20% slower
  gbench_aggregates.json  aggregates only (no iteration entries)
"""
import copy
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

SETTINGS = {"warmup": 3, "min_samples": 20, "min_time_s": 0.05, "max_time_s": 2.0, "noise": 0.02,
            "cache": "cold", "timeout_s": 0.0}

ENV = {
    "command_line": "harness run suites/gemm.yaml suites/attention.yaml --out reports/gemm.json",
    "cpu": "Intel(R) Xeon(R) Platinum 8480+",
    "cpu_threads": 16,
    "cuda_driver": "13.0",
    "cuda_runtime": "13.0",
    "date": "2026-11-22T04:00:00Z",
    "git_commit": "0123456789ab",
    "gpu": {"index": 0, "name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "compute_capability": "9.0",
            "memory_gib": 79.1, "l2_bytes": 52428800, "sm_clock_max_mhz": 1980, "memory_clock_mhz": 2619,
            "memory_bus_bits": 5120},
    "gpu_unavailable_reason": "",
    "harness_version": "0.1.0",
    "host": "gpu-host",
    "device_peaks": {"dram_gbytes_per_s": 3000.0, "fp32_gflops": 60000.0},
}


def quantile(sorted_v, p):
    pos = p * (len(sorted_v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def stats(samples):
    s = sorted(samples)
    n = len(s)
    mean = sum(s) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "min_s": s[0], "max_s": s[-1], "mean_s": mean, "median_s": quantile(s, 0.5),
            "stddev_s": sd, "q1_s": quantile(s, 0.25), "q3_s": quantile(s, 0.75),
            "rel_noise": sd / mean if mean > 0 else 0.0, "noise_reached": sd / mean <= 0.02,
            "stop_reason": "noise target reached" if sd / mean <= 0.02 else "time cap", "wall_time_s": 0.5}


def name_of(problem, variant, params, order):
    return "/".join([problem, variant] + [f"{k}:{fmt_param(params[k])}" for k in order])


def fmt_param(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def result(problem, variant, backend, case, params, order, work, status="passed", reason="", time_s=None,
           noise=0.01, rng=None, n=30, workspace=0, io=0, check=True):
    r = {
        "name": name_of(problem, variant, params, order),
        "case": case,
        "problem": problem,
        "variant": variant,
        "backend": backend,
        "params": params,
        "status": status,
        "reason": reason,
        "reference": "cublas" if problem == "gemm" else "cpu",
        "work": {"flops": work[0], "bytes": work[1]},
        "memory": {"io_device_bytes": io, "workspace_peak_bytes": workspace},
        "settings": SETTINGS,
    }
    if status in ("passed", "failed"):
        r["check"] = {"passed": check, "elements": 1 << 20, "mismatches": 0 if check else 4096,
                      "nonfinite": 0, "unwritten": 0, "max_abs_error": 1e-5 if check else 3.5,
                      "rel_l2_error": 1e-7 if check else 0.25, "tolerance": {"abs": 1e-4, "rel": 1e-4},
                      "sampled": False, "worst": "" if check else "C[17,3] = 3.5, expected 0.01"}
    else:
        r["check"] = None
    if status == "passed":
        samples = [round(time_s * math.exp(rng.gauss(0, noise)), 12) for _ in range(n)]
        st = stats(samples)
        r["samples_s"] = samples
        r["stats"] = st
        med = st["median_s"]
        r["rates"] = {"gflops": work[0] / med / 1e9 if work[0] else 0.0,
                      "gbytes_per_s": work[1] / med / 1e9 if work[1] else 0.0,
                      "arithmetic_intensity": work[0] / work[1] if work[1] else 0.0}
    else:
        r["samples_s"] = []
        r["stats"] = None
        r["rates"] = None
    return r


GEMM_PEAK = {"naive": 2100.0, "tiled": 4200.0, "coarsened": 19000.0, "cublas": 24000.0, "cpu": 60.0,
             "wmma": 30000.0}


def gemm_results(rng, slow=None, failed=None, variants=("naive", "tiled", "coarsened", "cublas", "cpu"), drift=0.0):
    out = []
    for size in (256, 512, 1024, 2048, 4096):
        params = {"M": size, "N": size, "K": size, "alpha": 1.0, "beta": 0.0}
        order = ["M", "N", "K", "alpha", "beta"]
        flops = 2.0 * size ** 3
        nbytes = 4.0 * 3 * size * size
        io = int(nbytes)
        for v in variants:
            backend = "cpu" if v == "cpu" else "cuda"
            if v == "cpu" and size > 512:
                out.append(result("gemm", v, backend, "square", params, order, (flops, nbytes), status="skipped",
                                  reason="the cpu reference is limited to M*N*K <= 2^27", io=io))
                continue
            rate = GEMM_PEAK[v] * size ** 3 / (size ** 3 + 512.0 ** 3)  # ramps up with the size
            t = flops / (rate * 1e9) + 4e-6
            t *= 1 + rng.uniform(-drift, drift)
            if slow and v == slow:
                t *= 1.10
            if failed and (v, size) == failed:
                out.append(result("gemm", v, backend, "square", params, order, (flops, nbytes), status="failed",
                                  reason="check failed: 4096 of 1048576 elements outside tolerance (max abs error 3.5)",
                                  io=io, check=False))
                continue
            out.append(result("gemm", v, backend, "square", params, order, (flops, nbytes), time_s=t,
                              noise=0.01 if backend == "cuda" else 0.03, rng=rng, io=io))
    return out


def attention_results(rng, variants=("naive", "flash", "cpu"), drift=0.0):
    out = []
    order = ["batch", "heads", "kv_heads", "seq_len", "head_dim", "causal", "scale"]
    for n in (1024, 2048, 4096, 8192, 16384, 32768):
        params = {"batch": 1, "heads": 32, "kv_heads": 0, "seq_len": n, "head_dim": 64, "causal": False,
                  "scale": 0.0}
        flops = 4.0 * 32 * n * n * 64
        nbytes = 4.0 * 4 * 32 * n * 64
        io = int(nbytes)
        for v in variants:
            backend = "cpu" if v == "cpu" else "cuda"
            if v == "cpu" and n > 1024:
                out.append(result("attention", v, backend, "sweep", params, order, (flops, nbytes),
                                  status="skipped", reason="the cpu reference is limited to seq_len <= 1024", io=io))
                continue
            if v == "naive":
                ws = 32 * n * n * 4
                if ws > 70 * 2 ** 30:
                    out.append(result("attention", v, backend, "sweep", params, order, (flops, nbytes),
                                      status="skipped",
                                      reason=f"out of memory (needs {ws / 2 ** 30:.2f} GiB, free 78.50 GiB)", io=io))
                    continue
                rate = 5000.0
            elif v == "flash":
                ws = 32 * n * 4 * 2
                rate = 21000.0 * n / (n + 1024.0)
            else:
                ws = 0
                rate = 40.0
            t = flops / (rate * 1e9) * (1 + rng.uniform(-drift, drift))
            out.append(result("attention", v, backend, "sweep", params, order, (flops, nbytes), time_s=t,
                              noise=0.01 if backend == "cuda" else 0.03, rng=rng, workspace=ws, io=io))
    return out


def report(results, env=ENV, date=None):
    env = copy.deepcopy(env)
    if date:
        env["date"] = date
    summary = {"passed": 0, "failed": 0, "skipped": 0, "error": 0, "crashed": 0, "timeout": 0}
    for r in results:
        summary[r["status"]] += 1
    benchmarks = []
    for r in results:
        if r["stats"] is None:
            continue
        for agg in ("mean", "median", "stddev"):
            v = r["stats"][agg + "_s" if agg != "stddev" else "stddev_s"]
            e = {"name": r["name"] + "_" + agg, "run_name": r["name"], "run_type": "aggregate",
                 "aggregate_name": agg, "repetitions": r["stats"]["count"], "threads": 1,
                 "iterations": r["stats"]["count"], "real_time": v * 1e9, "cpu_time": v * 1e9, "time_unit": "ns"}
            benchmarks.append(e)
    return {
        "schema": "harness-report",
        "schema_version": 1,
        "environment": env,
        "suite": {"name": "gemm+attention", "file": "suites/gemm.yaml,suites/attention.yaml",
                  "description": "FP32 GEMM, square sizes; attention forward, seq_len sweep",
                  "settings": SETTINGS, "cases": 11},
        "summary": summary,
        "results": results,
        "context": {"date": env["date"], "host_name": env["host"], "executable": "harness",
                    "library_build_type": "release"},
        "benchmarks": benchmarks,
    }


def write(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def gbench(seed, slow_name=None, aggregates_only=False):
    rng = random.Random(seed)
    benches = []
    for name, t in (("BM_Copy/4096", 1200.0), ("BM_Copy/65536", 15000.0), ("BM_Sort/1024", 42000.0)):
        reps = []
        for i in range(12):
            x = t * math.exp(rng.gauss(0, 0.01)) * (1.2 if name == slow_name else 1.0)
            reps.append(x)
            if not aggregates_only:
                benches.append({"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
                                "run_type": "iteration", "repetitions": 12, "repetition_index": i, "threads": 1,
                                "iterations": 10000, "real_time": x, "cpu_time": x, "time_unit": "ns"})
        reps.sort()
        for agg, v in (("mean", sum(reps) / len(reps)), ("median", (reps[5] + reps[6]) / 2)):
            benches.append({"name": name + "_" + agg, "run_name": name, "run_type": "aggregate", "repetitions": 12,
                            "threads": 1, "aggregate_name": agg, "iterations": 12, "real_time": v, "cpu_time": v,
                            "time_unit": "ns"})
    return {"context": {"date": "2026-11-22T04:00:00+00:00", "host_name": "bench-host", "executable": "./bench",
                        "num_cpus": 16, "mhz_per_cpu": 3000, "cpu_scaling_enabled": False,
                        "library_build_type": "release"},
            "benchmarks": benches}


def main():
    write("gemm_base.json", report(gemm_results(random.Random(1)) + attention_results(random.Random(2))))
    write("gemm_rerun.json", report(gemm_results(random.Random(11), drift=0.01) +
                                    attention_results(random.Random(12), drift=0.01), date="2026-11-22T05:00:00Z"))
    write("gemm_slow.json", report(gemm_results(random.Random(21), slow="tiled") +
                                   attention_results(random.Random(22)), date="2026-11-22T05:10:00Z"))
    write("gemm_failed.json", report(gemm_results(random.Random(31), failed=("coarsened", 4096)) +
                                     attention_results(random.Random(32)), date="2026-11-22T05:20:00Z"))
    write("gemm_changed.json", report(gemm_results(random.Random(41),
                                                   variants=("naive", "tiled", "coarsened", "cublas", "cpu", "wmma")) +
                                      attention_results(random.Random(42), variants=("naive", "flash")),
                                      date="2026-11-22T05:30:00Z"))
    other = copy.deepcopy(ENV)
    other["gpu"]["name"] = "NVIDIA H200"
    other["gpu"]["memory_gib"] = 139.8
    other["gpu"]["sm_clock_max_mhz"] = 1755
    other["cuda_driver"] = "12.8"
    write("gemm_other_gpu.json", report(gemm_results(random.Random(51), drift=0.01) +
                                        attention_results(random.Random(52), drift=0.01), env=other))
    write("gbench_base.json", gbench(61))
    write("gbench_slow.json", gbench(62, slow_name="BM_Copy/4096"))
    write("gbench_aggregates.json", gbench(63, aggregates_only=True))


if __name__ == "__main__":
    main()
