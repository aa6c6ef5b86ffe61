#!/usr/bin/env python3
"""The train_transformer macro-benchmark in PyTorch (FP32, TF32 off, eager), written as a
harness report so that `harness compare` / `harness report` and reports/tables.py show it
beside our engine's results.

  python3 reports/pytorch_transformer.py suites/transformer.yaml --out pytorch_transformer.json \
      [--harness build/release/bin/harness] [--filter REGEX] [--warmup 50 --steps 200]

The model is the one of models/ (models/include/models/layers.hpp): token embeddings
N(0, 1) for source and target plus the sinusoidal positional encoding (no sqrt(d)
scaling), torch.nn.Transformer (post-norm, ReLU, dropout 0, final encoder and decoder
LayerNorms, causal self-attention in the decoder), a Linear output projection; He-normal
weights (std sqrt(2 / fan_in)), zero biases. Copy task of random tokens 2..V-1 (decoder
input BOS=1 + target[:-1]), mean cross-entropy, Adam (betas 0.9, 0.98, eps 1e-9) with
linear warm-up + cosine to lr/10, gradient clipping at global norm 1.0.

Timing: CUDA events around each step (forward, backward, optimizer: three phases), warm-up
steps first, then the timed steps (the suite's warmup and min_samples unless given).
Parameters come from `harness run SUITE --dry-run` (exactly the suite's); with no harness
executable, --params 'batch=100,seq_len=13,...' gives one configuration.
Each result carries "extra": phase times, tokens/s, peak memory, the loss curve.
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
import torch.nn as nn

DEFAULTS = {"batch": 100, "seq_len": 13, "encoder_layers": 6, "decoder_layers": 6, "heads": 8, "d_model": 512,
            "hidden": 2048, "vocab": 6880, "activation": "relu", "lr": 2e-4, "warmup_steps": 4,
            "schedule_steps": 2000, "clip_norm": 1.0, "check_steps": 4}


def parse_value(v):
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if v in ("true", "false"):
        return v == "true"
    try:
        return float(v)
    except ValueError:
        return v


def planned(harness, suite, flt):
    cmd = [harness, "run", suite, "--dry-run"] + (["--filter", flt] if flt else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    seen, configs = set(), []
    for line in out.splitlines():
        m = re.search(r"\btrain_transformer/\w+((?:/\w+:[\w.\-+]+)+)", line)
        if not m:
            continue
        params = dict(kv.split(":", 1) for kv in m.group(1).strip("/").split("/"))
        key = tuple(sorted(params.items()))
        if key not in seen:
            seen.add(key)
            configs.append({k: parse_value(v) for k, v in params.items()})
    return configs


def suite_settings(suite):
    """{(batch, seq_len): (warmup, min_samples)} from the suite (needs PyYAML; else {})."""
    try:
        import yaml
    except ImportError:
        return {}
    doc = yaml.safe_load(open(suite))
    base = doc.get("settings", {}) or {}
    out = {}
    for c in doc.get("cases", []):
        s = dict(base, **(c.get("settings") or {}))
        p = c.get("params", {})
        if isinstance(p, dict) and not any(isinstance(v, (list, dict)) for v in p.values()):
            out[(p.get("batch", 100), p.get("seq_len", 13))] = (int(s.get("warmup", 50)), int(s.get("min_samples", 200)))
    return out


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        E, V = p["d_model"], p["vocab"]
        self.src_embed = nn.Embedding(V, E)
        self.tgt_embed = nn.Embedding(V, E)
        self.transformer = nn.Transformer(d_model=E, nhead=p["heads"], num_encoder_layers=p["encoder_layers"],
                                          num_decoder_layers=p["decoder_layers"], dim_feedforward=p["hidden"],
                                          dropout=0.0, activation=p["activation"], batch_first=True, norm_first=False)
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
        self.register_buffer("pe", self.positions(p["seq_len"], E), persistent=False)

    @staticmethod
    def positions(n, d):
        pos = torch.arange(n, dtype=torch.float64)[:, None]
        i = torch.arange(0, d, 2, dtype=torch.float64)
        w = torch.pow(10000.0, -i / d)
        pe = torch.zeros(n, d, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(pos * w)
        pe[:, 1::2] = torch.cos(pos * w)[:, : d // 2]
        return pe.float()

    def forward(self, src, tgt, mask):
        s = self.src_embed(src) + self.pe[: src.shape[1]]
        t = self.tgt_embed(tgt) + self.pe[: tgt.shape[1]]
        y = self.transformer(s, t, tgt_mask=mask, tgt_is_causal=True)
        return self.generator(y.reshape(-1, y.shape[-1]))


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


def run(p, warmup, steps, seed=42):
    torch.manual_seed(seed)
    dev = "cuda"
    B, N, V = p["batch"], p["seq_len"], p["vocab"]
    model = Model(p).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=p["lr"], betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule(p))
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator(device="cpu").manual_seed(seed)
    batches = []
    for _ in range(4):
        src = torch.randint(2, V, (B, N), generator=g)
        tin = torch.cat([torch.ones(B, 1, dtype=torch.long), src[:, :-1]], dim=1)
        batches.append((src.to(dev), tin.to(dev), src.reshape(-1).to(dev)))
    mask = nn.Transformer.generate_square_subsequent_mask(N, device=dev)
    losses = torch.zeros(warmup + steps, device=dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(steps)]

    def step(i, e=None):
        src, tin, tout = batches[i % len(batches)]
        if e: e[0].record()
        loss = loss_fn(model(src, tin, mask), tout)
        if e: e[1].record()
        loss.backward()
        if e: e[2].record()
        torch.nn.utils.clip_grad_norm_(model.parameters(), p["clip_norm"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if e: e[3].record()
        losses[i] = loss.detach()

    for i in range(warmup):
        step(i)
    torch.cuda.synchronize()
    for i in range(steps):
        step(warmup + i, ev[i])
    torch.cuda.synchronize()
    samples = [e[0].elapsed_time(e[3]) * 1e-3 for e in ev]
    phases = {k: sum(e[a].elapsed_time(e[a + 1]) for e in ev) / steps for k, a in
              (("forward", 0), ("backward", 1), ("optimizer", 2))}
    phases["step"] = sum(samples) / steps * 1e3
    peak = torch.cuda.max_memory_allocated()
    params = sum(x.numel() for x in model.parameters())
    return samples, phases, peak, base, losses.tolist(), params




def work(p):
    B, N, E, F, V = p["batch"], p["seq_len"], p["d_model"], p["hidden"], p["vocab"]
    T = B * N
    gemm = p["encoder_layers"] * 2 * T * (4 * E * E + 2 * E * F) + p["decoder_layers"] * 2 * T * (8 * E * E + 2 * E * F) \
        + 2 * T * E * V
    attn = p["encoder_layers"] * 4 * B * N * N * E + p["decoder_layers"] * 6 * B * N * N * E
    return 3.0 * gemm + 3.5 * attn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--harness", default="build/release/bin/harness")
    ap.add_argument("--filter", default="")
    ap.add_argument("--params", default="", help="one configuration k=v,... instead of the suite's")
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.params:
        configs = [dict(DEFAULTS, **{k: parse_value(v) for k, v in (kv.split("=", 1) for kv in args.params.split(","))})]
    else:
        configs = [dict(DEFAULTS, **c) for c in planned(args.harness, args.suite, args.filter)]
    settings = suite_settings(args.suite)
    results = []
    for p in configs:
        warm, steps = settings.get((p["batch"], p["seq_len"]), (50, 200))
        warm = args.warmup if args.warmup is not None else warm
        steps = args.steps if args.steps is not None else steps
        keys = [k for k in DEFAULTS if k in p]
        name = "train_transformer/pytorch_eager/" + "/".join(f"{k}:{p[k]}" for k in keys)
        w = work(p)
        entry = {"name": name, "case": "pytorch", "problem": "train_transformer", "variant": "pytorch_eager",
                 "backend": "cuda", "params": {k: p[k] for k in keys}, "reference": "", "check": None,
                 "work": {"flops": w, "bytes": 0}}
        try:
            samples, phases, peak, base, losses, nparams = run(p, warm, steps)
            st = harness_report.stats(samples)
            tokens = p["batch"] * p["seq_len"]
            entry.update({"status": "passed", "reason": "", "samples_s": samples, "stats": st,
                          "rates": {"gflops": w / st["median_s"] * 1e-9, "gbytes_per_s": 0, "arithmetic_intensity": 0},
                          "memory": {"io_device_bytes": base, "workspace_peak_bytes": max(0, peak - base)},
                          "extra": {"phase_ms": phases, "tokens_per_s": tokens / (phases["step"] * 1e-3),
                                    "peak_bytes_allocated": peak, "parameters": nparams, "warmup_steps": warm,
                                    "timed_steps": steps, "loss_first": losses[0], "loss_last": losses[-1],
                                    "loss_curve": losses}})
            print(f"{name}: {st['median_s'] * 1e3:.3f} ms/step (median of {steps}; forward {phases['forward']:.3f}, "
                  f"backward {phases['backward']:.3f}, optimizer {phases['optimizer']:.3f} ms), "
                  f"{tokens / st['median_s']:.0f} tokens/s, peak {peak / 2**20:.0f} MiB, "
                  f"loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            entry.update(harness_report.skipped(f"out of memory: {str(e).splitlines()[0]}"))
            print(f"{name}: out of memory", flush=True)
        torch.cuda.empty_cache()
        results.append(entry)
    harness_report.write(args.out, args.suite, results, torch, " ".join(sys.argv))


if __name__ == "__main__":
    main()
