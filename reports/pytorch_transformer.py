#!/usr/bin/env python3
"""The train_transformer macro-benchmark in PyTorch, written as a harness report so that
`harness compare` / `harness report` and reports/tables.py show it beside our engine's
results. One invocation runs any of four modes, each a result (a variant) of its own:

  mode           variant                what
  fp32           pytorch_eager          FP32, TF32 off, eager (the name of earlier reports)
  fp32-compile   pytorch_compile        FP32, TF32 off, torch.compile(model)
  bf16           pytorch_bf16           torch.autocast(bfloat16) around forward + loss
                                        (FP32 weights, gradients and Adam), eager
  bf16-compile   pytorch_bf16_compile   the same, torch.compile(model)

  python3 reports/pytorch_transformer.py suites/transformer.yaml --out pytorch_transformer.json \\
      [--modes fp32,fp32-compile,bf16,bf16-compile | --modes all | --precision bf16 --compile] \\
      [--compile-modes default,reduce-overhead,max-autotune-no-cudagraphs | --compile-modes all] \\
      [--compile-timeout 600] [--harness build/release/bin/harness] \\
      [--filter REGEX] [--warmup 50 --steps 200] [--seed 42] [--kernels 5]

torch.compile modes (issue 36): a compiled mode runs once per --compile-modes entry, each
a result of its own; the variant name ends with the compile mode unless it is `default`
(pytorch_bf16_compile, pytorch_bf16_compile_reduce_overhead,
pytorch_bf16_compile_max_autotune_no_cudagraphs, ...) and extra.compile_mode names it.
reports/tables.py takes the fastest PyTorch result that finished, per configuration and
precision, as the reference. Each compiled run is a child process of its own (this
script with --child), in a new session: the compilation and the first step must end
within --compile-timeout seconds, and the remaining steps within as many again, else the
child's whole process group (inductor's compile workers included) is ended and the run
becomes a skipped result that says so; never a hung call. A child process, not a signal
alarm: SIGALRM reaches Python only between bytecodes, so it cannot interrupt a compiler
or autotuner blocked inside C code or waiting on its worker pool, and an interrupted
compilation would leave dynamo's caches, CUDA graph pools and GPU memory behind for the
next mode. --compile-timeout 0: no limit, compiled in this process (the earlier
behaviour). --compile-mode X is --compile-modes X.

MFU (issue 36): each passed result carries model_flops_per_step (work(), the harness
plugin's count), peak_tflops and peak_source (the dense bf16 tensor-core peak of the GPU:
SMs x 4096 FLOP/clk x the maximum SM clock on sm_90, "peak unknown" elsewhere;
harness_report.dense_bf16_peak, the formula of models/mfu.hpp) and mfu = the FLOPs / the
mean step time / the peak, for FP32 and bf16 alike.

The model is the one of models/ (models/include/models/layers.hpp): token embeddings
N(0, 1) for source and target plus the sinusoidal positional encoding (no sqrt(d)
scaling), torch.nn.Transformer (post-norm, ReLU, dropout 0, final encoder and decoder
LayerNorms, causal self-attention in the decoder), a Linear output projection; He-normal
weights (std sqrt(2 / fan_in)), zero biases. Copy task of random tokens 2..V-1: the target
is the first tgt_len source tokens (all of them when the lengths are equal; tgt_len >
src_len is refused, as by the harness), decoder input BOS=1 + target[:-1]; mean
cross-entropy, Adam (betas 0.9, 0.98, eps 1e-9) with linear warm-up + cosine to lr/10,
gradient clipping at global norm 1.0. src_len / tgt_len 0 mean seq_len.

Data schedule, as the harness plugin trains the engine (plugins/transformer): 4 batches
drawn once; the first check_steps steps (the suite's `check_steps`, 4: the engine's checked
run) all train on batch 0, then step i trains on batch i % 4 (the engine's step counter
runs on from the check steps, so step 4 is batch 0 again: 5 steps on batch 0 to begin
with); check_steps 0 (--params only) cycles from step 0. The head start shows in the
engine's curves: batch 0's losses stay below the other batches' (by 0.66 on average over
steps 20-59 at the seed's configuration, reports/baselines/h200/2026-11-23), so PyTorch
trains on the same schedule to be compared with them: cycling from step 0 instead, its
curve at src 64 / tgt 48 ended 0.6 higher than the engine's (mean of the last 50 steps,
bf16: 5.09 vs 4.47 on the engine's schedule; H200, docs/PERFORMANCE.md, issue 18).

Timing: the first step runs alone and is timed by the wall clock (first_step_s; with
torch.compile it includes the compilation of forward and backward, so compile_s =
first_step_s - the median timed step); then the rest of the check steps, the warm-up
steps, then the timed steps with CUDA events around each (forward, backward, optimizer:
three phases): check_steps + warm-up + timed steps in all, as the engine's loss curve. Steps: the suite
case's warmup and min_samples unless --warmup / --steps say otherwise. A mode that fails
(torch.compile not working here, say) gives a skipped result with the reason and the
others still run; out of memory is skipped too; any other failure of an eager mode is an
error result.

Parameters come from `harness run SUITE --dry-run` (exactly the suite's); with no harness
executable, --params 'batch=100,seq_len=13,...' gives one configuration.
Each result carries "extra": phase times, tokens/s (target tokens), peak memory, the first
step's and the compile time, and the loss curve of every step (first step and warm-up
included), strided as the harness plugin strides its own (every step up to 2000).
PyTorch is needed only to run the modes: --help and the argument checks work without it.
"""
import argparse
import contextlib
import gc
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_report  # noqa: E402

DEFAULTS = {"batch": 100, "seq_len": 13, "encoder_layers": 6, "decoder_layers": 6, "heads": 8, "d_model": 512,
            "hidden": 2048, "vocab": 6880, "activation": "relu", "lr": 2e-4, "warmup_steps": 4,
            "schedule_steps": 2000, "clip_norm": 1.0, "check_steps": 4, "src_len": 0, "tgt_len": 0}

# --modes name -> (variant, precision, compiled)
MODES = {
    "fp32": ("pytorch_eager", "fp32", False),
    "fp32-compile": ("pytorch_compile", "fp32", True),
    "bf16": ("pytorch_bf16", "bf16", False),
    "bf16-compile": ("pytorch_bf16_compile", "bf16", True),
}
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# --compile-modes all: the three of issue 36. max-autotune (the autotuned kernels replayed in
# CUDA graphs) runs when named: its autotuning is the longest compile of all.
ALL_COMPILE_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
COMPILE_TIMEOUT_S = 600.0


def variant_name(mode, compile_mode="default"):
    """The result's variant: the mode's (MODES), followed by the compile mode where it is
    not `default` (pytorch_bf16_compile_reduce_overhead)."""
    variant, _, compiled = MODES[mode]
    if compiled and compile_mode and compile_mode != "default":
        return variant + "_" + compile_mode.replace("-", "_")
    return variant


def parse_compile_modes(text):
    """'all' (ALL_COMPILE_MODES) or a comma-separated list of COMPILE_MODES, in order, once each."""
    if text.strip() == "all":
        return list(ALL_COMPILE_MODES)
    return harness_report.parse_names(text, COMPILE_MODES, "compile mode")


def parse_value(v):
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if v in ("true", "false"):
        return v == "true"
    try:
        return float(v)
    except ValueError:
        return v


def parse_modes(text):
    """'all' or a comma-separated list of MODES keys -> the keys, in the order given, once
    each. ValueError names an unknown mode."""
    return harness_report.parse_names(text, MODES, "mode")


def resolve_modes(args):
    """The modes to run: --modes, else the one that --precision and --compile name."""
    if args.modes is not None:
        if args.precision is not None or args.compile:
            raise ValueError("--modes lists the modes: --precision / --compile go without it")
        return parse_modes(args.modes)
    return [(args.precision or "fp32") + ("-compile" if args.compile else "")]


def lengths(p):
    """(source length, target length) of a configuration: src_len / tgt_len, 0 meaning
    seq_len. ValueError for a target longer than the source (the copy task's target is a
    prefix of the source)."""
    src = p.get("src_len") or p["seq_len"]
    tgt = p.get("tgt_len") or p["seq_len"]
    if tgt > src:
        raise ValueError(f"target length ({tgt}) > source length ({src}): the copy task's target is a prefix "
                         "of the source")
    return src, tgt


def work(p):
    """FLOPs of one step, as the harness plugin counts them (GEMMs x3, attention cores
    x3.5, causal self-attention half): the encoder on Ns tokens, the decoder on Nt except
    the cross-attention's K and V projections (on the Ns memory tokens)."""
    B, E, F, V = p["batch"], p["d_model"], p["hidden"], p["vocab"]
    Ns, Nt = lengths(p)
    Ts, Tt = B * Ns, B * Nt
    gemm = p["encoder_layers"] * 2 * Ts * (4 * E * E + 2 * E * F) \
        + p["decoder_layers"] * 2 * (Tt * (6 * E * E + 2 * E * F) + Ts * 2 * E * E) + 2 * Tt * E * V
    attn = p["encoder_layers"] * 4 * B * Ns * Ns * E + p["decoder_layers"] * (2 * B * Nt * Nt * E + 4 * B * Nt * Ns * E)
    return 3.0 * gemm + 3.5 * attn


def batch_index(step, check_steps, batches=4):
    """The data batch that training step `step` (0-based, check steps included) trains on:
    batch 0 during the check steps, then step % batches (the engine's schedule)."""
    return 0 if step < check_steps else step % batches


def step_plan(check_steps, warmup, steps, batches=4):
    """[(phase, batch)] of every step run() takes, in order: phase 'first' (timed alone by
    the wall clock), 'check' (the rest of the check steps), 'warmup', 'timed'."""
    n_check = max(1, check_steps)
    phases = ["first"] + ["check"] * (n_check - 1) + ["warmup"] * warmup + ["timed"] * steps
    return [(ph, batch_index(i, check_steps, batches)) for i, ph in enumerate(phases)]


def loss_curve(losses, limit=2000):
    """(curve, stride): every step up to `limit` steps, else every k-th (the plugin's rule)."""
    stride = (len(losses) + limit - 1) // limit if len(losses) > limit else 1
    return losses[::stride], stride


# Parameters of our engine's execution that PyTorch has no counterpart for (a CUDA graph
# of the step, the data-parallel world, the fused elementwise kernels): dropped, so each
# model configuration runs once.
# Their defaults end PyTorch's result names, so that a PyTorch result has the name of the
# engine's eager single-GPU result of the same configuration (`harness compare` pairs them).
ENGINE_ONLY_PARAMS = {"graph": False, "world_size": 1, "bucket_mb": 25, "grad_reduce": "f32", "baseline_steps": 10,
                      "fused": True}


def parse_dry_run(text):
    """[(case, params)] of the train_transformer results that `harness run --dry-run`
    printed (one line per case x variant: the case name, then the result name), one per
    distinct parameter set (engine-only parameters dropped)."""
    seen, configs = set(), []
    for line in text.splitlines():
        m = re.search(r"\btrain_transformer/\w+((?:/\w+:[\w.\-+]+)+)", line)
        if not m:
            continue
        head = line[:m.start()].split()
        params = {k: parse_value(v) for k, v in (kv.split(":", 1) for kv in m.group(1).strip("/").split("/"))
                  if k not in ENGINE_ONLY_PARAMS}
        key = tuple(sorted(params.items()))
        if key not in seen:
            seen.add(key)
            configs.append((head[0] if head else "", params))
    return configs


def planned(harness, suite, flt):
    cmd = [harness, "run", suite, "--dry-run"] + (["--filter", flt] if flt else [])
    return parse_dry_run(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def suite_settings(suite):
    """{case name: (warmup, min_samples)} from the suite (needs PyYAML; else {})."""
    try:
        import yaml
    except ImportError:
        return {}
    with open(suite) as f:
        doc = yaml.safe_load(f)
    base = doc.get("settings", {}) or {}
    out = {}
    for c in doc.get("cases", []):
        s = dict(base, **(c.get("settings") or {}))
        if c.get("name"):
            out[c["name"]] = (int(s.get("warmup", 50)), int(s.get("min_samples", 200)))
    return out


def value_text(v):
    """A parameter value as the harness writes it in result names (1.0 -> 1, 2e-4 -> 0.0002)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def result_name(p, variant):
    keys = [k for k in DEFAULTS if k in p]
    return (f"train_transformer/{variant}/" + "/".join(f"{k}:{value_text(p[k])}" for k in keys) +
            "".join(f"/{k}:{value_text(v)}" for k, v in ENGINE_ONLY_PARAMS.items()))


def base_entry(case, p, mode, compile_mode="default"):
    variant = variant_name(mode, compile_mode)
    keys = [k for k in DEFAULTS if k in p]
    return {"name": result_name(p, variant), "case": case or "pytorch", "problem": "train_transformer",
            "variant": variant, "backend": "cuda", "params": {k: p[k] for k in keys}, "reference": "",
            "check": None, "work": {"flops": work(p), "bytes": 0}}


def failed_entry(case, p, mode, status, reason, compile_mode="default"):
    """A result that did not run: status skipped (out of memory, torch.compile failing or
    not finishing in time) or error, with the reason."""
    e = base_entry(case, p, mode, compile_mode)
    e.update(harness_report.skipped(reason))
    e["status"] = status
    if MODES[mode][2]:
        e["extra"] = {"mode": mode, "precision": MODES[mode][1], "compiled": True, "compile_mode": compile_mode}
    return e


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


# ---- PyTorch ---------------------------------------------------------------------------

def make_model(torch, p, positions):
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            E, V = p["d_model"], p["vocab"]
            self.src_embed = nn.Embedding(V, E)
            self.tgt_embed = nn.Embedding(V, E)
            self.transformer = nn.Transformer(d_model=E, nhead=p["heads"], num_encoder_layers=p["encoder_layers"],
                                              num_decoder_layers=p["decoder_layers"], dim_feedforward=p["hidden"],
                                              dropout=0.0, activation=p["activation"], batch_first=True,
                                              norm_first=False)
            self.generator = nn.Linear(E, V)
            with torch.no_grad():
                for m in self.modules():
                    if isinstance(m, nn.Linear):
                        m.weight.normal_(0.0, math.sqrt(2.0 / m.in_features))
                        if m.bias is not None:
                            m.bias.zero_()
                    elif isinstance(m, nn.MultiheadAttention):
                        m.in_proj_weight.normal_(0.0, math.sqrt(2.0 / E))
                        m.in_proj_bias.zero_()
                    elif isinstance(m, nn.Embedding):
                        m.weight.normal_(0.0, 1.0)
            self.register_buffer("pe", sinusoid(torch, positions, E), persistent=False)

        def forward(self, src, tgt, mask):
            s = self.src_embed(src) + self.pe[: src.shape[1]]
            t = self.tgt_embed(tgt) + self.pe[: tgt.shape[1]]
            y = self.transformer(s, t, tgt_mask=mask, tgt_is_causal=True)
            return self.generator(y.reshape(-1, y.shape[-1]))

    return Model()


def sinusoid(torch, n, d):
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    w = torch.pow(10000.0, -i / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)[:, : d // 2]
    return pe.float()


def schedule(p):
    base, warm, total, lo = p["lr"], p["warmup_steps"], p["schedule_steps"], p["lr"] / 10

    def at(step):
        if warm > 0 and step < warm:
            return base * (step + 1) / warm
        if step >= total:
            return lo
        prog = (step - warm) / max(1, total - warm)
        return lo + 0.5 * (base - lo) * (1 + math.cos(math.pi * prog))
    return lambda step: at(step) / base


def kernel_breakdown(torch, step, first, n):
    """Per-kernel GPU time of n more steps (torch.profiler, CUDA activity only), summed by
    kernel name and divided by n: [{name, calls, time_s}] per step, largest first -- the
    same shape as the harness's profile.kernels, so the two breakdowns read side by side."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(n):
            step(first + i)
        torch.cuda.synchronize()
    rows = []
    for a in prof.key_averages():
        us = getattr(a, "self_device_time_total", None)
        if us is None:
            us = getattr(a, "self_cuda_time_total", 0)
        if us > 0:
            rows.append({"name": a.key, "calls": a.count / n, "time_s": us * 1e-6 / n})
    return sorted(rows, key=lambda r: -r["time_s"])


def run(torch, p, mode, warmup, steps, compile_mode="default", seed=42, kernel_steps=0, on_first_step=None):
    """Trains the step_plan's steps (check_steps + warmup + steps) in `mode`, then
    kernel_steps more under torch.profiler (not in the loss curve); returns the
    measurements (plain numbers and lists: JSON from a child process). on_first_step(s)
    is called once the first step (with torch.compile: the compilation) is done."""
    _, precision, compiled = MODES[mode]
    nn = torch.nn
    torch.manual_seed(seed)
    dev = "cuda"
    B, V = p["batch"], p["vocab"]
    Ns, Nt = lengths(p)
    model = make_model(torch, p, max(Ns, Nt)).to(dev)
    fwd = torch.compile(model, mode=compile_mode) if compiled else model
    opt = torch.optim.Adam(model.parameters(), lr=p["lr"], betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule(p))
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator(device="cpu").manual_seed(seed)
    batches = []
    check_steps = p.get("check_steps", 4)
    plan = step_plan(check_steps, warmup, steps)
    for _ in range(4):
        src = torch.randint(2, V, (B, Ns), generator=g)
        tout = src[:, :Nt]
        tin = torch.cat([torch.ones(B, 1, dtype=torch.long), tout[:, :-1]], dim=1)
        batches.append((src.to(dev), tin.to(dev), tout.reshape(-1).to(dev)))
    mask = nn.Transformer.generate_square_subsequent_mask(Nt, device=dev)
    losses = torch.zeros(len(plan) + kernel_steps, device=dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(steps)]

    def autocast():
        if precision == "bf16":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step(i, e=None):
        src, tin, tout = batches[batch_index(i, check_steps)]
        if e: e[0].record()
        with autocast():
            loss = loss_fn(fwd(src, tin, mask), tout)
        if e: e[1].record()
        loss.backward()
        if e: e[2].record()
        torch.nn.utils.clip_grad_norm_(model.parameters(), p["clip_norm"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if e: e[3].record()
        losses[i] = loss.detach().float()

    t0 = time.perf_counter()
    step(0)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    if on_first_step:
        on_first_step(first_s)
    timed0 = len(plan) - steps  # the first, check and warm-up steps come before
    for i in range(1, timed0):
        step(i)
    torch.cuda.synchronize()
    for i in range(steps):
        step(timed0 + i, ev[i])
    torch.cuda.synchronize()
    samples = [e[0].elapsed_time(e[3]) * 1e-3 for e in ev]
    kernels = kernel_breakdown(torch, step, len(plan), kernel_steps) if kernel_steps else None
    phases = {k: sum(e[a].elapsed_time(e[a + 1]) for e in ev) / steps for k, a in
              (("forward", 0), ("backward", 1), ("optimizer", 2))}
    phases["step"] = sum(samples) / steps * 1e3
    out = {"samples": samples, "phases": phases, "peak": torch.cuda.max_memory_allocated(), "base": base,
           "losses": losses[:len(plan)].tolist(), "parameters": sum(x.numel() for x in model.parameters()), "first_s": first_s,
           "kernels": kernels}
    del fwd, model, opt, sched, batches
    return out


def passed_entry(case, p, mode, m, warm, steps, compile_mode, seed=42, peak=None):
    """peak: harness_report.device_peak's dict, for the MFU fields (None: peak unknown)."""
    _, precision, compiled = MODES[mode]
    e = base_entry(case, p, mode, compile_mode)
    st = harness_report.stats(m["samples"])
    tokens = p["batch"] * lengths(p)[1]
    curve, stride = loss_curve(m["losses"])
    e.update({"status": "passed", "reason": "", "samples_s": m["samples"], "stats": st,
              "rates": {"gflops": e["work"]["flops"] / st["median_s"] * 1e-9, "gbytes_per_s": 0,
                        "arithmetic_intensity": 0},
              "memory": {"io_device_bytes": m["base"], "workspace_peak_bytes": max(0, m["peak"] - m["base"])},
              "extra": {"mode": mode, "precision": precision, "compiled": compiled,
                        "compile_mode": compile_mode if compiled else None,
                        "src_len": lengths(p)[0], "tgt_len": lengths(p)[1],
                        "phase_ms": m["phases"], "tokens_per_s": tokens / (m["phases"]["step"] * 1e-3),
                        "peak_bytes_allocated": m["peak"], "parameters": m["parameters"],
                        "first_step_s": m["first_s"],
                        "compile_s": max(0.0, m["first_s"] - st["median_s"]) if compiled else None,
                        "warmup_steps": warm, "timed_steps": steps, "check_steps": p.get("check_steps", 4),
                        "seed": seed,
                        "loss_first": m["losses"][0], "loss_last": m["losses"][-1],
                        "loss_curve_stride": stride, "loss_curve": curve,
                        **harness_report.mfu_fields(e["work"]["flops"], m["phases"]["step"], peak)}})
    if m.get("kernels") is not None:
        ks = m["kernels"]
        e["extra"]["kernels"] = ks[:40]
        e["extra"]["kernel_time_s_per_step"] = sum(k["time_s"] for k in ks)
        e["extra"]["kernels_per_step"] = sum(k["calls"] for k in ks)
    return e


def print_kernels(x, top=10):
    ks = x.get("kernels")
    if not ks:
        return
    total = x["kernel_time_s_per_step"]
    print(f"  kernels per step: {x['kernels_per_step']:.0f} launches, {total * 1e3:.3f} ms GPU time; top {top}:")
    for k in ks[:top]:
        print(f"  {k['time_s'] * 1e3:8.3f} ms {k['time_s'] / total:6.1%} {k['calls']:6.0f} calls  {k['name'][:90]}")


def report_passed(name, e, steps):
    st, x = e["stats"], e["extra"]
    ph = x["phase_ms"]
    comp = f", compile {x['compile_s']:.1f} s" if x["compiled"] else ""
    mfu = f"MFU {x['mfu']:.1%} of {x['peak_tflops']:.1f} TFLOP/s" if x.get("mfu") is not None else \
        f"MFU: {x.get('peak_source', 'peak unknown')}"
    print(f"{name}: {st['median_s'] * 1e3:.3f} ms/step (median of {steps}; forward {ph['forward']:.3f}, "
          f"backward {ph['backward']:.3f}, optimizer {ph['optimizer']:.3f} ms), "
          f"{x['tokens_per_s']:.0f} tokens/s, {mfu}, peak {x['peak_bytes_allocated'] / 2**20:.0f} MiB, "
          f"first step {x['first_step_s']:.2f} s{comp}, loss {x['loss_first']:.4f} -> {x['loss_last']:.4f}",
          flush=True)
    print_kernels(x)


def run_mode(torch, case, p, mode, warm, steps, compile_mode, seed=42, kernel_steps=0, peak=None):
    """One result in this process: passed, or skipped / error with the reason (never
    raises for a failure of the mode itself)."""
    compiled = MODES[mode][2]
    name = result_name(p, variant_name(mode, compile_mode))
    try:
        m = run(torch, p, mode, warm, steps, compile_mode, seed, kernel_steps)
        e = passed_entry(case, p, mode, m, warm, steps, compile_mode, seed, peak)
        report_passed(name, e, steps)
    except torch.cuda.OutOfMemoryError as exc:
        e = failed_entry(case, p, mode, "skipped", f"out of memory: {first_line(exc)}", compile_mode)
    except Exception as exc:  # noqa: BLE001 -- a failing mode is a result, not the end of the run
        if compiled:
            e = failed_entry(case, p, mode, "skipped", f"torch.compile (mode {compile_mode}) failed: {first_line(exc)}",
                             compile_mode)
        else:
            e = failed_entry(case, p, mode, "error", first_line(exc))
    if e["status"] != "passed":
        print(f"{name}: {e['status']}: {e['reason']}", flush=True)
    if compiled:
        with contextlib.suppress(Exception):
            torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()
    return e


# ---- A compiled mode in a child process, under a time limit ------------------------------
# The parent writes DIR/spec.json and starts `python3 pytorch_transformer.py --child DIR`
# in a new session (its own process group); the child writes DIR/first_step once the
# first step (the compilation) is done and DIR/result.json at the end, each by an atomic
# rename. The parent polls: no first_step within the limit, or no exit within the limit
# after it, ends the group (SIGTERM, then SIGKILL after 5 s).

def write_atomic(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


def configure(torch):
    """The numerics of every mode: TF32 off (FP32 GEMMs and convolutions in full FP32)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def child_main(workdir, torch=None, runner=None):
    """The child's side: runs spec.json's mode with `runner` (run) and writes result.json:
    {"status": "passed", "m": measurements} or {"status": "oom" | "failed", "message"}.
    Returns the exit code (2: no PyTorch / no device, as the script)."""
    with open(os.path.join(workdir, "spec.json")) as f:
        spec = json.load(f)
    if torch is None:
        torch = harness_report.cuda_torch("pytorch_transformer.py --child")
        if torch is None:
            return 2
        configure(torch)
    runner = runner or run

    def first(s):
        write_atomic(os.path.join(workdir, "first_step"), {"first_step_s": s})

    try:
        m = runner(torch, spec["params"], spec["mode"], spec["warmup"], spec["steps"], spec["compile_mode"],
                   spec["seed"], spec["kernel_steps"], on_first_step=first)
        out = {"status": "passed", "m": m}
    except torch.cuda.OutOfMemoryError as exc:
        out = {"status": "oom", "message": first_line(exc)}
    except Exception as exc:  # noqa: BLE001 -- reported to the parent, which makes it a result
        out = {"status": "failed", "message": first_line(exc)}
    write_atomic(os.path.join(workdir, "result.json"), out)
    return 0


def end_group(proc, grace_s=5.0):
    """Ends the child's process group (the child and whatever it started): SIGTERM, then
    SIGKILL if it has not exited after grace_s."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 30.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # grandchildren that outlived the child


def run_child(p, mode, warm, steps, compile_mode, seed, kernel_steps, timeout_s, child_cmd=None, poll_s=0.1):
    """Runs one compiled mode in a child process under the time limit; returns
    ("passed", measurements) or ("skipped", reason). child_cmd: the command before DIR
    (default: this script with --child; tests pass a fake child)."""
    workdir = tempfile.mkdtemp(prefix="pytorch_transformer_")
    try:
        write_atomic(os.path.join(workdir, "spec.json"),
                     {"params": p, "mode": mode, "warmup": warm, "steps": steps, "compile_mode": compile_mode,
                      "seed": seed, "kernel_steps": kernel_steps})
        cmd = list(child_cmd or [sys.executable, os.path.abspath(__file__), "--child"]) + [workdir]
        proc = subprocess.Popen(cmd, start_new_session=True)
        phase, deadline = "compile", time.monotonic() + timeout_s
        try:
            while True:
                try:
                    proc.wait(timeout=poll_s)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if phase == "compile" and os.path.exists(os.path.join(workdir, "first_step")):
                    phase, deadline = "steps", time.monotonic() + timeout_s
                if time.monotonic() > deadline:
                    end_group(proc)
                    if phase == "compile":
                        return "skipped", (f"torch.compile (mode {compile_mode}) did not compile within {timeout_s:g} "
                                           "s (--compile-timeout: the child's start, the compilation and the first "
                                           "step); its process group was ended")
                    return "skipped", (f"torch.compile (mode {compile_mode}): the steps after the first did not "
                                       f"finish within {timeout_s:g} s (--compile-timeout); its process group was "
                                       "ended")
        except BaseException:  # Ctrl-C here: the child is in a session of its own, end it too
            end_group(proc)
            raise
        path = os.path.join(workdir, "result.json")
        if not os.path.exists(path):
            how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
            return "skipped", f"torch.compile (mode {compile_mode}): the mode's process ended without a result ({how})"
        with open(path) as f:
            out = json.load(f)
        if out["status"] == "passed":
            return "passed", out["m"]
        if out["status"] == "oom":
            return "skipped", f"out of memory: {out['message']}"
        return "skipped", f"torch.compile (mode {compile_mode}) failed: {out['message']}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_mode_isolated(case, p, mode, warm, steps, compile_mode, seed=42, kernel_steps=0, peak=None,
                      timeout_s=COMPILE_TIMEOUT_S, child_cmd=None):
    """One compiled mode's result from a child process (run_child): passed, or skipped with
    the reason (a compile past the time limit, a failure, out of memory, a crash)."""
    name = result_name(p, variant_name(mode, compile_mode))
    status, got = run_child(p, mode, warm, steps, compile_mode, seed, kernel_steps, timeout_s, child_cmd)
    if status == "passed":
        e = passed_entry(case, p, mode, got, warm, steps, compile_mode, seed, peak)
        e["extra"]["compile_timeout_s"] = timeout_s
        report_passed(name, e, steps)
        return e
    e = failed_entry(case, p, mode, "skipped", got, compile_mode)
    e["extra"]["compile_timeout_s"] = timeout_s
    print(f"{name}: skipped: {got}", flush=True)
    return e


def parser():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--harness", default="build/release/bin/harness")
    ap.add_argument("--filter", default="")
    ap.add_argument("--params", default="", help="one configuration k=v,... instead of the suite's")
    ap.add_argument("--modes", default=None,
                    help="comma-separated modes to run, each a result: " + ", ".join(MODES) + "; or all "
                    "(default: the one --precision / --compile name, fp32 eager without them)")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default=None,
                    help="one mode: fp32 (TF32 off) or bf16 (autocast); not with --modes")
    ap.add_argument("--compile", action="store_true", help="one mode: torch.compile the model; not with --modes")
    ap.add_argument("--compile-modes", default=None, metavar="LIST",
                    help="torch.compile modes, comma-separated, each a result of every compiled mode: "
                    + ", ".join(COMPILE_MODES) + "; or all (" + ",".join(ALL_COMPILE_MODES) + "); default: default")
    ap.add_argument("--compile-mode", choices=COMPILE_MODES, default=None, help="one torch.compile mode "
                    "(--compile-modes with one entry)")
    ap.add_argument("--compile-timeout", type=float, default=COMPILE_TIMEOUT_S, metavar="S",
                    help="seconds for the compilation and first step of a compiled run, and as many for the "
                    "rest, each compiled run in a child process; past either it is a skipped result "
                    f"(default {COMPILE_TIMEOUT_S:g}; 0: no limit, compile in this process)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps after the first (default: the suite's)")
    ap.add_argument("--steps", type=int, default=None, help="timed steps (default: the suite's min_samples)")
    ap.add_argument("--kernels", type=int, default=0, metavar="N",
                    help="after the timed steps, profile N more steps with torch.profiler and store the "
                    "per-kernel GPU time per step in extra.kernels (top 10 printed); 0: off")
    ap.add_argument("--seed", type=int, default=42, help="seed of the weights and the data batches (default 42, "
                    "as the harness's --seed; the generators differ, so the engine's values are not reproduced)")
    return ap


def parse_args(argv):
    """The parsed arguments with .mode_list; argparse's error (exit 2) for bad ones."""
    ap = parser()
    args = ap.parse_args(argv)
    try:
        args.mode_list = resolve_modes(args)
    except ValueError as e:
        ap.error(str(e))
    if args.warmup is not None and args.warmup < 0:
        ap.error("--warmup must be >= 0")
    if args.steps is not None and args.steps < 1:
        ap.error("--steps must be >= 1")
    if args.kernels < 0:
        ap.error("--kernels must be >= 0")
    if args.compile_modes is not None and args.compile_mode is not None:
        ap.error("--compile-mode names one mode: give --compile-modes or --compile-mode, not both")
    try:
        args.compile_mode_list = parse_compile_modes(args.compile_modes) if args.compile_modes is not None else \
            [args.compile_mode or "default"]
    except ValueError as e:
        ap.error(f"--compile-modes: {e}")
    args.compile_mode = args.compile_mode_list[0]
    if not args.compile_timeout >= 0:
        ap.error("--compile-timeout must be >= 0 (0: no limit)")
    if args.params:
        try:
            args.configs = [("", config_of(args.params))]
        except ValueError as e:
            ap.error(f"--params: {e}")
    else:
        args.configs = None
    return args


def config_of(text):
    """'k=v,...' -> the DEFAULTS with those values; ValueError for a malformed pair, an
    unknown key or lengths the copy task refuses."""
    p = dict(DEFAULTS)
    for kv in (x for x in text.split(",") if x.strip()):
        if "=" not in kv:
            raise ValueError(f"'{kv}' is not k=v")
        k, v = kv.split("=", 1)
        if k.strip() not in DEFAULTS:
            raise ValueError(f"unknown parameter '{k.strip()}' (known: {', '.join(DEFAULTS)})")
        p[k.strip()] = parse_value(v.strip())
    lengths(p)
    return p


def runs_of(mode_list, compile_mode_list):
    """[(mode, compile mode)] in order: an eager mode once (compile mode "default", unused),
    a compiled mode once per compile mode."""
    return [(m, cm) for m in mode_list for cm in (compile_mode_list if MODES[m][2] else ["default"])]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        if len(argv) != 2:
            print("pytorch_transformer.py: --child DIR (started by this script for a compiled mode)", file=sys.stderr)
            return 2
        return child_main(argv[1])
    args = parse_args(argv)
    torch = harness_report.cuda_torch("pytorch_transformer.py")
    if torch is None:
        return 2
    configure(torch)
    peak = harness_report.device_peak(torch)
    print(f"peak for MFU: {peak['peak_tflops'] or 0:.1f} TFLOP/s, {peak['peak_source']}", flush=True)
    try:
        configs = args.configs or [(case, dict(DEFAULTS, **c)) for case, c in planned(args.harness, args.suite,
                                                                                      args.filter)]
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"pytorch_transformer.py: `{args.harness} run {args.suite} --dry-run` failed ({e}); build the "
              "harness, pass --harness, or give one configuration with --params", file=sys.stderr)
        return 2
    settings = suite_settings(args.suite)
    results = []
    for case, p in configs:
        warm, steps = settings.get(case, (50, 200))
        warm = args.warmup if args.warmup is not None else warm
        steps = args.steps if args.steps is not None else steps
        for mode, cm in runs_of(args.mode_list, args.compile_mode_list):
            if MODES[mode][2] and args.compile_timeout > 0:
                results.append(run_mode_isolated(case, p, mode, warm, steps, cm, args.seed, args.kernels, peak,
                                                 args.compile_timeout))
            else:
                results.append(run_mode(torch, case, p, mode, warm, steps, cm, args.seed, args.kernels, peak))
    harness_report.write(args.out, args.suite, results, torch, " ".join(sys.argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
