#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the shapes of a harness attention suite,
written as a harness report, so that `harness compare` / `harness report` and
reports/tables.py put both side by side.

  python3 reports/pytorch_attention.py suites/attention.yaml --out pytorch.json \
      [--harness build/release/bin/harness] [--filter REGEX] [--variants auto|all|LIST] [--as-variants]

The same backends run inside the harness as variants (examples/python/torch_sdpa.py:
sdpa_flash, sdpa_cudnn, sdpa_efficient of `attention` and `attention_backward`, checked
and timed by the harness on its own buffers; docs/python.md "PyTorch references"). They
replace this script for new comparisons; it stays because scripts/gpu-round.sh and
reports/tables.py (attention-sdpa) read its report, and as the cross-check of the
harness's timing: with --as-variants it times exactly what those variants do
(examples/python/sdpa_ops.py: the backend's op with LSE, O and LSE copied into given
buffers; backward: the backend's backward op on a kept O and LSE, dQ, dK, dV copied),
in its own loop, so the two timings of the same work can be compared.

Variants (each a result of its own; SDPBackend = torch.nn.attention.SDPBackend):
  sdpa_fp32        FP32 inputs, TF32 off: the memory-efficient backend, math where it cannot run
  sdpa_flash_fp16  FP16, the flash backend only (SDPBackend.FLASH_ATTENTION, FlashAttention-2)
  sdpa_flash_bf16  BF16, the same
  sdpa_cudnn_fp16  FP16, the cuDNN backend only (SDPBackend.CUDNN_ATTENTION, cuDNN's fused
                   flash attention: on Hopper its sm90 wgmma kernels)
  sdpa_cudnn_bf16  BF16, the same
By default (--variants auto) each shape gets the variants of its `dtype` param (f32 ->
sdpa_fp32; bf16 -> sdpa_flash_bf16 and sdpa_cudnn_bf16; f16 -> sdpa_flash_fp16 and
sdpa_cudnn_fp16: like for like with the harness' flash at that dtype, and PyTorch's
reference at a bf16/f16 shape is the faster of its two backends, as reports/tables.py
takes it); --variants all runs all five on every shape; an explicit list runs every listed
variant on every shape (e.g. the FP16 flash backend next to FP32 shapes, for reference).
A backend that cannot run a shape (cuDNN refuses some head dims, GQA or masks; PyTorch
raises "No available kernel" with its reasons as warnings) gives a skipped result whose
reason is the exception's message and those reasons; out of memory is skipped too. Forward
(problem attention) times the call under torch.no_grad(); backward (attention_backward)
times torch.autograd.grad of one forward's output, the backend's own backward kernels.
With --as-variants the calls are sdpa_ops.py's for the variant's backend (sdpa_fp32: the
efficient backend alone), a refusal by PyTorch's check for the backend is the skip reason,
and extra.calls names sdpa_ops.py.
Timing: CUDA events around each call, warm-up first, the median of the samples: by default
at least 10 samples and 0.2 s; --steady first warms each variant until its SM clock
settles (the harness's `steady` rule), --noise X samples on until stddev / mean <= X (the
harness's `noise` rule), so that the script times a suite as the harness does
(suites/attention-sdpa.yaml: --steady --noise 0.03). The
shapes come from `harness run SUITE --dry-run`, so they are exactly the suite's.
PyTorch is needed only to measure: --help and the argument checks work without it.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_report  # noqa: E402
import nvml_clock  # noqa: E402

# variant -> (torch dtype name, SDPBackend names in the order sdpa_kernel is given them)
VARIANTS = {
    "sdpa_fp32": ("float32", ("EFFICIENT_ATTENTION", "MATH")),
    "sdpa_flash_fp16": ("float16", ("FLASH_ATTENTION",)),
    "sdpa_flash_bf16": ("bfloat16", ("FLASH_ATTENTION",)),
    "sdpa_cudnn_fp16": ("float16", ("CUDNN_ATTENTION",)),
    "sdpa_cudnn_bf16": ("bfloat16", ("CUDNN_ATTENTION",)),
}
# --variants auto: the variants of a shape's dtype param
BY_DTYPE = {"f32": ("sdpa_fp32",), "bf16": ("sdpa_flash_bf16", "sdpa_cudnn_bf16"),
            "f16": ("sdpa_flash_fp16", "sdpa_cudnn_fp16")}


def parse_variants(text):
    """'auto' -> None (per shape, variants_for), 'all' -> every variant, else the listed
    ones in order, once each; ValueError names an unknown one."""
    if text.strip() == "auto":
        return None
    return harness_report.parse_names(text, VARIANTS, "variant", ("auto", "all"))


def variants_for(params, chosen):
    """The variants run on a shape: the chosen list, or (auto) those of its dtype; none for a
    dtype SDPA has no backend for (fp8_e4m3: PyTorch's SDPA takes no FP8 tensors)."""
    return list(chosen) if chosen is not None else list(BY_DTYPE.get(params.get("dtype", "f32"), ()))


def parse_dry_run(text):
    """[(problem, params)] of the attention results that `harness run --dry-run` printed,
    one per distinct (problem, parameters), in the suite's order."""
    seen, shapes = set(), []
    for line in text.splitlines():
        m = re.search(r"\b(attention(?:_backward)?)/\w+((?:/\w+:[\w.\-]+)+)", line)
        if not m:
            continue
        params = dict(kv.split(":", 1) for kv in m.group(2).strip("/").split("/"))
        key = (m.group(1), tuple(sorted(params.items())))
        if key not in seen:
            seen.add(key)
            shapes.append((m.group(1), params))
    return shapes


def planned_shapes(harness, suite, flt):
    cmd = [harness, "run", suite, "--dry-run"] + (["--filter", flt] if flt else [])
    return parse_dry_run(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def work(problem, b, h, n, d, causal):
    flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return flops * (2.5 if problem == "attention_backward" else 1.0)


# The GPU's sensors (reports/nvml_clock.py), set by main(); None: no clocks recorded.
SENSORS = None


# How time_cuda stops and warms up; main() sets it from --steady and --noise. The
# defaults are the script's original rule (at least 10 samples and 0.2 s, no settling).
TIMING = {"steady": False, "noise": None}


def clock_settled(points, min_s=1.0, window_s=0.5, newest_s=0.125, tolerance=0.02):
    """The harness's rule for a settled clock (docs/measurement.md, `steady`;
    harness/src/measure/settle.cpp): after at least min_s (and two windows), the median SM
    clock of the last window_s is within `tolerance` of the median of the window_s before,
    and the median of the newest newest_s within `tolerance` of the last window_s.
    points: [(seconds since the warm-up began, MHz)]; readings of 0 or less (a failed read)
    are not clocks and are left out."""
    points = [(t, m) for t, m in points if m and m > 0]
    if not points or points[-1][0] < max(min_s, 2 * window_s):
        return False
    now = points[-1][0]

    def median_since(lo, hi):
        got = [m for t, m in points if lo < t <= hi]
        return statistics.median(got) if got else None

    last = median_since(now - window_s, now)
    before = median_since(now - 2 * window_s, now - window_s)
    newest = median_since(now - newest_s, now)
    if not last or not before or not newest:
        return False
    return abs(last - before) <= tolerance * before and abs(newest - last) <= tolerance * last


def settle(torch, fn, batch=10, max_s=10.0):
    """Calls fn back to back, a batch at a time with the SM clock read after each, until the
    clock settles (clock_settled) or max_s passes, as the harness's `steady: true` warms a
    variant up before its samples. Returns (reached, seconds); (False, 0) without NVML."""
    if SENSORS is None:
        return False, 0.0
    points, t0 = [], time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        torch.cuda.synchronize()
        now = time.perf_counter() - t0
        points.append((now, SENSORS.sm_mhz()))  # None where NVML failed: left out by clock_settled
        if clock_settled(points):
            return True, now
        if now >= max_s:
            return False, now


def noisy(samples, noise):
    """True while the samples' stddev / mean is above `noise` (the harness's `noise` rule);
    None: no noise rule."""
    if noise is None or len(samples) < 2:
        return noise is not None
    mean = sum(samples) / len(samples)
    var = sum((x - mean) ** 2 for x in samples) / (len(samples) - 1)
    return mean > 0 and math.sqrt(var) / mean > noise


SAMPLE_CAP = 10000  # the harness's `sample cap`: every stopping rule stops there


def time_cuda(torch, fn, warmup=3, min_samples=10, min_time=0.2, max_time=2.0, clocks=None, batch=10, steady=None):
    """Event-timed samples (s) of fn, as the harness times them: `batch` calls back to back, an
    event pair around each, one synchronisation per batch. The host then issues the next call
    while the GPU runs the previous one, so a sample is the GPU's time for one call; a loop that
    synchronised around every call also counted the host's time to issue it (the Python call,
    tens of microseconds: 14-26% at the ~0.1-0.3 ms shapes, docs/python.md). With `clocks` (a
    list), the SM clock read after each batch is appended once per sample of the batch (the
    harness probes the clock after each batch the same way). TIMING["steady"]: the warm-up
    continues until the clock settles (settle; `steady`, a dict, gets reached and seconds);
    TIMING["noise"]: sampling goes on past min_samples and min_time until stddev / mean <= noise
    (the harness's default rule), up to max_time from the first sample or SAMPLE_CAP samples.
    Unlike the harness, settling reads the clock after batches of `batch` calls (the
    harness: NVML every 2 ms, or its probe after ~50 ms batches)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    if TIMING["steady"]:
        reached, seconds = settle(torch, fn)
        if steady is not None:
            steady.update(reached=reached, seconds=seconds)
    samples = []
    t0 = time.perf_counter()
    while True:
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(batch)]
        for start, end in events:
            start.record()
            fn()
            end.record()
        events[-1][1].synchronize()
        got = [start.elapsed_time(end) * 1e-3 for start, end in events]
        samples += got
        if clocks is not None and SENSORS is not None:
            clocks += [SENSORS.sm_mhz()] * len(got)
        enough = len(samples) >= min_samples and sum(samples) >= min_time and not noisy(samples, TIMING["noise"])
        if enough or len(samples) >= SAMPLE_CAP or time.perf_counter() - t0 >= max_time:
            break
    return samples


def run_one(torch, problem, params, variant):
    """(samples in s, extra peak bytes, SM clock per sample) of one variant on one shape; raises what PyTorch
    raises (a backend that cannot run the shape: RuntimeError "No available kernel")."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h = int(params["batch"]), int(params["heads"])
    hkv = int(params.get("kv_heads", h)) or h
    n, d = int(params["seq_len"]), int(params["head_dim"])
    causal = params.get("causal", "false") == "true"
    scale = float(params.get("scale", 0)) or 1.0 / math.sqrt(d)
    dtype_name, backend_names = VARIANTS[variant]
    dtype = getattr(torch, dtype_name)
    backends = [getattr(SDPBackend, x) for x in backend_names]
    g = torch.Generator(device="cuda").manual_seed(42)
    clocks, steady = [], {}
    grad = problem == "attention_backward"
    q = torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    k = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    v = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g, requires_grad=grad)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with sdpa_kernel(backends):
        def fwd():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=hkv != h)
        if grad:
            out = fwd()  # the backward's kernels are those of the backend that ran this forward
            do = torch.randn_like(out)
            samples = time_cuda(torch, lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True),
                                clocks=clocks, steady=steady)
        else:
            with torch.no_grad():
                samples = time_cuda(torch, fwd, clocks=clocks, steady=steady)
    peak = torch.cuda.max_memory_allocated() - base
    return samples, peak, clocks, steady


# --as-variants: the harness variant (examples/python/sdpa_ops.py) of a variant's first backend
OPS_VARIANT = {"FLASH_ATTENTION": "sdpa_flash", "CUDNN_ATTENTION": "sdpa_cudnn", "EFFICIENT_ATTENTION": "sdpa_efficient"}
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "python")
# Set by main() with --as-variants: the results' extra.calls.
CALLS = None


def run_as_variants(torch, problem, params, variant):
    """As run_one, timing what the harness variant of the same backend does per launch
    (examples/python/sdpa_ops.py): forward_into (the backend's op, O and LSE copied into
    given buffers) or backward_into (its backward op on a kept O and LSE, dQ, dK, dV
    copied). Raises RuntimeError with PyTorch's reasons where its check refuses the backend."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    import sdpa_ops
    b, h = int(params["batch"]), int(params["heads"])
    hkv = int(params.get("kv_heads", h)) or h
    n, d = int(params["seq_len"]), int(params["head_dim"])
    causal = params.get("causal", "false") == "true"
    scale = float(params.get("scale", 0)) or 1.0 / math.sqrt(d)
    op = OPS_VARIANT[VARIANTS[variant][1][0]]
    dtype = getattr(torch, VARIANTS[variant][0])
    grad = problem == "attention_backward"
    g = torch.Generator(device="cuda").manual_seed(42)
    q = torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=g)
    k = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g)
    v = torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=g)
    why = sdpa_ops.refusal(op, q, k, v, causal, grad)
    if why:
        raise RuntimeError(why)
    clocks, steady = [], {}
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        o, lse = torch.empty_like(q), torch.empty(b, h, n, device="cuda", dtype=torch.float32)
        sdpa_ops.forward_into(op, q, k, v, causal, scale, o, lse)
        if grad:
            do = torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=g)
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            state = sdpa_ops.backward_state(op, q, k, v, causal, scale)
            samples = time_cuda(torch, lambda: sdpa_ops.backward_into(op, state, do, q, k, v, o, lse, causal, scale,
                                                                      dq, dk, dv), clocks=clocks, steady=steady)
        else:
            samples = time_cuda(torch, lambda: sdpa_ops.forward_into(op, q, k, v, causal, scale, o, lse),
                                clocks=clocks, steady=steady)
    peak = torch.cuda.max_memory_allocated() - base
    return samples, peak, clocks, steady


def param_value(v):
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if v in ("true", "false"):
        return v == "true"
    if re.fullmatch(r"[-\d.e]+", v):
        return float(v)
    return v


def base_entry(problem, params, variant):
    b, h, n, d = (int(params[x]) for x in ("batch", "heads", "seq_len", "head_dim"))
    w = work(problem, b, h, n, d, params.get("causal") == "true")
    return {"name": f"{problem}/{variant}/" + "/".join(f"{k}:{v}" for k, v in params.items()),
            "case": "pytorch", "problem": problem, "variant": variant, "backend": "cuda",
            "params": {k: param_value(v) for k, v in params.items()},
            "reference": "", "check": None, "work": {"flops": w, "bytes": 0}}


def failure_reason(exc, caught):
    """The skip reason of a backend that raised: the exception's first line, then the
    reasons PyTorch gave as warnings (why each backend was not used), shortened."""
    lines = str(exc).strip().splitlines()
    reason = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    why = []
    for w in caught:
        text = " ".join(str(w.message).split())
        if text and text not in why:
            why.append(text)
    if why:
        reason += " (" + "; ".join(why) + ")"
    return reason[:500]


def measure(torch, problem, params, variant, runner=run_one):
    """One result: passed with the samples, or skipped with the reason (out of memory, a
    backend that cannot run the shape); never raises for PyTorch's own failures."""
    entry = base_entry(problem, params, variant)
    w = entry["work"]["flops"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            samples, peak, *rest = runner(torch, problem, params, variant)
    except torch.cuda.OutOfMemoryError as e:
        entry.update(harness_report.skipped(f"out of memory: {str(e).strip().splitlines()[0]}"))
    except (RuntimeError, ValueError, NotImplementedError) as e:  # torch's errors (and cuDNN's) are RuntimeErrors
        entry.update(harness_report.skipped(failure_reason(e, caught)))
    else:
        st = harness_report.stats(samples)
        entry.update({"status": "passed", "reason": "", "samples_s": samples, "stats": st,
                      "rates": {"gflops": w / st["median_s"] * 1e-9, "gbytes_per_s": 0, "arithmetic_intensity": 0},
                      "memory": {"io_device_bytes": 0, "workspace_peak_bytes": max(0, peak)},
                      "extra": {"sdpa_backends": list(VARIANTS[variant][1]), "dtype": VARIANTS[variant][0]}})
        if CALLS:
            entry["extra"].update(calls=CALLS, sdpa_backends=[VARIANTS[variant][1][0]])
        clocks = nvml_clock.clock_stats(rest[0], SENSORS.max_mhz) if rest and SENSORS is not None else None
        if clocks:
            entry["clocks"] = clocks
        if len(rest) > 1 and rest[1]:  # --steady: whether the clock settled, after how long
            entry["extra"]["steady"] = {"reached": rest[1]["reached"], "warmup_s": rest[1]["seconds"]}
        entry["extra"]["timing"] = {"steady": TIMING["steady"], "noise": TIMING["noise"]}
        print(f"{entry['name']}: {st['median_s'] * 1e3:.3f} ms, {w / st['median_s'] * 1e-12:.2f} TFLOP/s", flush=True)
    if entry["status"] != "passed":
        print(f"{entry['name']}: skipped: {entry['reason']}", flush=True)
    return entry


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--harness", default="build/release/bin/harness")
    ap.add_argument("--filter", default="")
    ap.add_argument("--variants", default="auto",
                    help="auto (the variants of the shape's dtype), all, or a comma-separated list of "
                    + ", ".join(VARIANTS))
    ap.add_argument("--as-variants", action="store_true",
                    help="time exactly what the harness variants of examples/python/torch_sdpa.py do "
                    "(examples/python/sdpa_ops.py), for comparing the two timings of the same work")
    ap.add_argument("--steady", action="store_true",
                    help="warm each variant up until its SM clock settles before its samples (the harness's "
                    "`steady: true` rule; needs NVML), so that a power-capped kernel is timed in its sustained "
                    "state whatever ran before it")
    ap.add_argument("--noise", type=float, default=None,
                    help="go on sampling past 10 samples and 0.2 s until stddev / mean <= NOISE (the harness's "
                    "`noise` stopping rule), up to 2 s; default: stop at 10 samples and 0.2 s")
    args = ap.parse_args(argv)
    if args.noise is not None and not 0 < args.noise < 1:
        ap.error(f"--noise: {args.noise} is not a fraction in (0, 1)")
    try:
        args.variant_list = parse_variants(args.variants)
    except ValueError as e:
        ap.error(f"--variants: {e}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    torch = harness_report.cuda_torch("pytorch_attention.py")
    if torch is None:
        return 2
    try:
        shapes = planned_shapes(args.harness, args.suite, args.filter)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"pytorch_attention.py: `{args.harness} run {args.suite} --dry-run` failed ({e}); build the "
              "harness or pass --harness", file=sys.stderr)
        return 2
    global SENSORS, CALLS
    TIMING.update(steady=args.steady, noise=args.noise)
    CALLS = "examples/python/sdpa_ops.py" if args.as_variants else None
    runner = run_as_variants if args.as_variants else run_one
    SENSORS = nvml_clock.GpuSensors(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    if not SENSORS.ok:
        print(f"pytorch_attention.py: no SM clocks recorded: {SENSORS.why}", file=sys.stderr)
        SENSORS = None
        if args.steady:
            print("pytorch_attention.py: --steady needs NVML's SM clock: timing without settling", file=sys.stderr)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = []
    for problem, params in shapes:
        for variant in variants_for(params, args.variant_list):
            results.append(measure(torch, problem, params, variant, runner=runner))
            torch.cuda.empty_cache()
    harness_report.write(args.out, args.suite, results, torch, " ".join(sys.argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
