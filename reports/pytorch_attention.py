#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the shapes of a harness attention suite,
written as a harness report, so that `harness compare` / `harness report` and
reports/tables.py put both side by side.

  python3 reports/pytorch_attention.py suites/attention.yaml --out pytorch.json \
      [--harness build/release/bin/harness] [--filter REGEX]

Variants: sdpa_fp32 (FP32 inputs, TF32 off: the memory-efficient backend, math where it
cannot run), sdpa_flash_fp16 and sdpa_flash_bf16 (the flash backend, FlashAttention-2).
By default (--variants auto) each shape gets the variant of its `dtype` param (f32 ->
sdpa_fp32, bf16 -> sdpa_flash_bf16, f16 -> sdpa_flash_fp16: like for like with the
harness' flash at that dtype); an explicit --variants list runs every listed variant on
every shape (e.g. the FP16 flash backend next to FP32 shapes, for reference). Timing: CUDA events around each call, warm-up first,
the median of the samples. The shapes come from `harness run SUITE --dry-run`, so they
are exactly the suite's.
"""
import argparse
import datetime
import json
import os
import math
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_report  # noqa: E402
import torch.nn.functional as F


def planned_shapes(harness, suite, flt):
    cmd = [harness, "run", suite, "--dry-run"] + (["--filter", flt] if flt else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    shapes = []
    for line in out.splitlines():
        m = re.search(r"\b(attention(?:_backward)?)/\w+((?:/\w+:[\w.\-]+)+)", line)
        if not m:
            continue
        params = dict(kv.split(":", 1) for kv in m.group(2).strip("/").split("/"))
        key = (m.group(1), tuple(sorted(params.items())))
        if key not in [s[0] for s in shapes]:
            shapes.append((key, m.group(1), params))
    return [(p, params) for _, p, params in shapes]


def work(problem, b, h, n, d, causal):
    flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return flops * (2.5 if problem == "attention_backward" else 1.0)


def time_cuda(fn, warmup=3, min_samples=10, min_time=0.2, max_time=2.0):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    start_all = torch.cuda.Event(enable_timing=True)
    wall = 0.0
    import time
    t0 = time.perf_counter()
    while True:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        samples.append(s.elapsed_time(e) * 1e-3)
        wall = time.perf_counter() - t0
        if (len(samples) >= min_samples and sum(samples) >= min_time) or wall >= max_time:
            break
    del start_all
    return samples




def run_one(problem, params, variant):
    b, h = int(params["batch"]), int(params["heads"])
    hkv = int(params.get("kv_heads", h)) or h
    n, d = int(params["seq_len"]), int(params["head_dim"])
    causal = params.get("causal", "false") == "true"
    scale = float(params.get("scale", 0)) or 1.0 / math.sqrt(d)
    dtype = {"sdpa_fp32": torch.float32, "sdpa_flash_fp16": torch.float16, "sdpa_flash_bf16": torch.bfloat16}[variant]
    backends = ([torch.nn.attention.SDPBackend.FLASH_ATTENTION] if variant != "sdpa_fp32" else
                [torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION, torch.nn.attention.SDPBackend.MATH])
    g = torch.Generator(device="cuda").manual_seed(42)
    grad = problem == "attention_backward"
    q = torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    k = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    v = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.nn.attention.sdpa_kernel(backends):
        def fwd():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=hkv != h)
        if grad:
            out = fwd()
            do = torch.randn_like(out)
            samples = time_cuda(lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True))
        else:
            with torch.no_grad():
                samples = time_cuda(fwd)
    peak = torch.cuda.max_memory_allocated() - base
    return samples, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--harness", default="build/release/bin/harness")
    ap.add_argument("--filter", default="")
    ap.add_argument("--variants", default="auto",
                    help="auto (the shape's dtype) or a comma-separated list of sdpa_fp32, sdpa_flash_fp16, sdpa_flash_bf16")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = []
    for problem, params in planned_shapes(args.harness, args.suite, args.filter):
        by_dtype = {"f32": "sdpa_fp32", "bf16": "sdpa_flash_bf16", "f16": "sdpa_flash_fp16"}
        variants = ([by_dtype[params.get("dtype", "f32")]] if args.variants == "auto" else args.variants.split(","))
        for variant in variants:
            name = f"{problem}/{variant}/" + "/".join(f"{k}:{v}" for k, v in params.items())
            b, h, n, d = (int(params[x]) for x in ("batch", "heads", "seq_len", "head_dim"))
            w = work(problem, b, h, n, d, params.get("causal") == "true")
            entry = {"name": name, "case": "pytorch", "problem": problem, "variant": variant, "backend": "cuda",
                     "params": {k: (int(v) if re.fullmatch(r"-?\d+", v) else (v == "true" if v in ("true", "false") else float(v) if re.fullmatch(r"[-\d.e]+", v) else v)) for k, v in params.items()},
                     "reference": "", "check": None, "work": {"flops": w, "bytes": 0}}
            try:
                samples, peak = run_one(problem, params, variant)
                st = harness_report.stats(samples)
                entry.update({"status": "passed", "reason": "", "samples_s": samples, "stats": st,
                              "rates": {"gflops": w / st["median_s"] * 1e-9, "gbytes_per_s": 0, "arithmetic_intensity": 0},
                              "memory": {"io_device_bytes": 0, "workspace_peak_bytes": max(0, peak)}})
                print(f"{name}: {st['median_s'] * 1e3:.3f} ms, {w / st['median_s'] * 1e-12:.2f} TFLOP/s", flush=True)
            except torch.cuda.OutOfMemoryError as e:
                entry.update(harness_report.skipped(f"out of memory: {str(e).splitlines()[0]}"))
                print(f"{name}: out of memory", flush=True)
            except RuntimeError as e:
                entry.update(harness_report.skipped(str(e).splitlines()[0][:200]))
                print(f"{name}: skipped: {entry['reason']}", flush=True)
            torch.cuda.empty_cache()
            results.append(entry)
    harness_report.write(args.out, args.suite, results, torch, " ".join(sys.argv))


if __name__ == "__main__":
    main()
