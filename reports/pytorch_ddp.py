#!/usr/bin/env python3
"""train_transformer's data-parallel reference: PyTorch DDP (FP32, TF32 off, eager; or
--precision bf16: bf16 autocast around the forward and the loss) on the model of
reports/pytorch_transformer.py, one process per GPU under torchrun, written as a harness
report (rank 0 writes it).

  torchrun --nproc_per_node 2 reports/pytorch_ddp.py --out pytorch_ddp.json \
      --params batch=4,seq_len=2048 [--warmup 3 --steps 20] [--precision bf16] [--grad-reduce bf16]
  torchrun --nproc_per_node 2 reports/pytorch_ddp.py suites/transformer-ddp.yaml --out ...   (needs the harness)

Each rank builds the model from the same seed (identical weights; DDP also broadcasts
rank 0's at construction) and trains on its own batches (a rank-dependent generator).
DDP as PyTorch ships it: 25 MB buckets, all-reduce (average) overlapped with the backward
through its autograd hooks, NCCL. Clipping at global norm 1.0 and Adam as in
pytorch_transformer.py. Timing: CUDA events around each step on every rank, warm-up
steps first; ms/step is rank 0's median, tokens/s of the job = world_size * B * N / the
mean step time. After the timed steps every rank's weights are hashed and gathered: a
difference is reported as a failed result. `world_size` (the torchrun size) is part of
the result's parameters; results from `--nproc_per_node 1` give DDP's own scaling.
bf16 (issue 36 item 4, beside the engine's ours_bf16): parameters, gradients and Adam stay
FP32 and DDP all-reduces the FP32 gradients, as the engine's data parallelism does (FP32
master weights, FP32 gradient buckets); the result's variant is pytorch_ddp_bf16.
--grad-reduce bf16 registers PyTorch's bf16_compress_hook (each rank's gradient divided by
world_size, rounded to bf16, all-reduced in bf16, widened back), the counterpart of the
engine's grad_reduce: bf16; the variant gains _bf16_reduce (pytorch_ddp_bf16_bf16_reduce).
Source / target lengths (src_len / tgt_len, 0 meaning seq_len) and the copy task are
pytorch_transformer.py's. MFU per GPU (issue 36): model_flops_per_step (one rank's work(),
as the engine's data-parallel results count it), peak_tflops / peak_source (the GPU's
dense bf16 peak, harness_report.dense_bf16_peak) and mfu = the FLOPs / the mean step / the
peak, in extra.
PyTorch is needed only to train: --help and the argument checks work without it.
"""
import argparse
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_report  # noqa: E402
from pytorch_transformer import (DEFAULTS, config_of, first_line, lengths, make_model, planned, schedule,  # noqa: E402
                                 suite_settings, value_text, work)


def weights_hash(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def run(torch, p, warmup, steps, rank, world, local, seed=42, precision="fp32", grad_reduce="f32"):
    dist, nn = torch.distributed, torch.nn
    import contextlib
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if precision == "bf16" else contextlib.nullcontext
    torch.manual_seed(seed)
    dev = torch.device("cuda", local)
    B, V = p["batch"], p["vocab"]
    Ns, Nt = lengths(p)
    model = make_model(torch, p, max(Ns, Nt)).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local]) if world > 1 else model
    if world > 1 and grad_reduce == "bf16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
    opt = torch.optim.Adam(model.parameters(), lr=p["lr"], betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule(p))
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator(device="cpu").manual_seed(seed + 1000003 * rank)  # this rank's shard
    batches = []
    for _ in range(4):
        src = torch.randint(2, V, (B, Ns), generator=g)
        tout = src[:, :Nt]  # the copy task of pytorch_transformer.py: the target is a prefix of the source
        tin = torch.cat([torch.ones(B, 1, dtype=torch.long), tout[:, :-1]], dim=1)
        batches.append((src.to(dev), tin.to(dev), tout.reshape(-1).to(dev)))
    mask = nn.Transformer.generate_square_subsequent_mask(Nt, device=dev)
    losses = torch.zeros(warmup + steps, device=dev)
    torch.cuda.synchronize(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(steps)]

    def step(i, e=None):
        src, tin, tout = batches[i % len(batches)]
        if e: e[0].record()
        with autocast():
            loss = loss_fn(ddp(src, tin, mask), tout)
        if e: e[1].record()
        loss.backward()  # DDP: the bucketed all-reduce runs inside
        if e: e[2].record()
        torch.nn.utils.clip_grad_norm_(model.parameters(), p["clip_norm"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if e: e[3].record()
        losses[i] = loss.detach()

    for i in range(warmup):
        step(i)
    torch.cuda.synchronize(dev)
    for i in range(steps):
        step(warmup + i, ev[i])
    torch.cuda.synchronize(dev)
    samples = [e[0].elapsed_time(e[3]) * 1e-3 for e in ev]
    phases = {k: sum(e[a].elapsed_time(e[a + 1]) for e in ev) / steps for k, a in
              (("forward", 0), ("backward", 1), ("optimizer", 2))}
    phases["step"] = sum(samples) / steps * 1e3
    mine = weights_hash(model)
    hashes = [None] * world
    if world > 1:
        dist.all_gather_object(hashes, mine)
    else:
        hashes = [mine]
    peak = torch.cuda.max_memory_allocated(dev)
    nparams = sum(x.numel() for x in model.parameters())
    return samples, phases, peak, losses.tolist(), nparams, hashes


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", nargs="?", default="suites/transformer-ddp.yaml")
    ap.add_argument("--out", required=True)
    ap.add_argument("--harness", default="build/release/bin/harness")
    ap.add_argument("--filter", default="")
    ap.add_argument("--params", default="", help="one configuration k=v,... instead of the suite's")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps (default: the suite case's, else 3)")
    ap.add_argument("--steps", type=int, default=None, help="timed steps (default: the suite case's, else 20)")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="fp32 (TF32 off), or bf16 autocast around the forward and the loss (FP32 weights, "
                         "gradients and all-reduce); variant pytorch_ddp / pytorch_ddp_bf16")
    ap.add_argument("--grad-reduce", choices=("f32", "bf16"), default="f32",
                    help="the all-reduce's type: f32 (DDP's default), or bf16 (bf16_compress_hook: gradients / "
                         "world_size rounded to bf16 and summed in bf16); variant suffix _bf16_reduce")
    args = ap.parse_args(argv)
    if args.warmup is not None and args.warmup < 0:
        ap.error("--warmup must be >= 0")
    if args.steps is not None and args.steps < 1:
        ap.error("--steps must be >= 1")
    try:
        args.configs = [("", config_of(args.params))] if args.params else None
    except ValueError as e:
        ap.error(f"--params: {e}")
    return args


def suite_configs(harness, suite, flt):
    """[(case, configuration)] of the suite's train_transformer results, each distinct
    model configuration once (world_size and the engine's other execution parameters are
    dropped by pytorch_transformer.planned: world_size is torchrun's here)."""
    out, seen = [], set()
    for case, c in planned(harness, suite, flt):
        c = {k: v for k, v in c.items() if k in DEFAULTS}
        key = tuple(sorted(c.items()))
        if key not in seen:
            seen.add(key)
            out.append((case, dict(DEFAULTS, **c)))
    return out


def variant_name(precision="fp32", grad_reduce="f32"):
    base = "pytorch_ddp" if precision == "fp32" else f"pytorch_ddp_{precision}"
    return base if grad_reduce == "f32" else f"{base}_{grad_reduce}_reduce"


def result_name(p, world, precision="fp32", grad_reduce="f32"):
    keys = [k for k in DEFAULTS if k in p]
    return (f"train_transformer/{variant_name(precision, grad_reduce)}/" +
            "/".join(f"{k}:{value_text(p[k])}" for k in keys) + f"/world_size:{world}")


def base_entry(p, world, precision="fp32", grad_reduce="f32"):
    keys = [k for k in DEFAULTS if k in p]
    variant = variant_name(precision, grad_reduce)
    return {"name": result_name(p, world, precision, grad_reduce), "case": variant, "problem": "train_transformer",
            "variant": variant, "backend": "cuda",
            "params": dict({k: p[k] for k in keys}, world_size=world),
            "reference": "", "check": None, "work": {"flops": work(p), "bytes": 0},
            "device": ",".join(f"cuda:{i}" for i in range(world))}


def mfu_text(x):
    if x.get("mfu") is None:
        return f"MFU: {x['peak_source']}"
    return f"MFU {x['mfu']:.1%} per GPU of {x['peak_tflops']:.1f} TFLOP/s"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    torch = harness_report.cuda_torch("pytorch_ddp.py")
    if torch is None:
        return 2
    import torch.distributed as dist
    try:
        configs = args.configs or suite_configs(args.harness, args.suite, args.filter)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"pytorch_ddp.py: `{args.harness} run {args.suite} --dry-run` failed ({e}); build the harness, "
              "pass --harness, or give one configuration with --params", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if world > 1:
        dist.init_process_group("nccl")
    settings = suite_settings(args.suite) if os.path.exists(args.suite) else {}
    peak = harness_report.device_peak(torch, local)
    results = []
    for case, p in configs:
        warm, steps = settings.get(case, (3, 20))
        warm = args.warmup if args.warmup is not None else warm
        steps = args.steps if args.steps is not None else steps
        entry = base_entry(p, world, args.precision, args.grad_reduce)
        name, w = entry["name"], entry["work"]["flops"]
        try:
            samples, phases, peak_bytes, losses, nparams, hashes = run(torch, p, warm, steps, rank, world, local,
                                                                       precision=args.precision,
                                                                       grad_reduce=args.grad_reduce)
            st = harness_report.stats(samples)
            tokens = p["batch"] * lengths(p)[1] * world
            same = len(set(hashes)) == 1
            entry.update({"status": "passed" if same else "failed",
                          "reason": "" if same else f"weights differ across ranks: {hashes}",
                          "samples_s": samples, "stats": st,
                          "rates": {"gflops": w / st["median_s"] * 1e-9, "gbytes_per_s": 0, "arithmetic_intensity": 0},
                          "memory": {"io_device_bytes": 0, "workspace_peak_bytes": peak_bytes},
                          "extra": {"phase_ms": phases, "world_size": world,
                                    "tokens_per_s": tokens / (phases["step"] * 1e-3),
                                    "tokens_per_s_per_gpu": tokens / world / (phases["step"] * 1e-3),
                                    "weights_identical": same, "weight_hashes": hashes,
                                    "peak_bytes_allocated": peak_bytes, "parameters": nparams, "warmup_steps": warm,
                                    "timed_steps": steps, "loss_first": losses[0], "loss_last": losses[-1],
                                    "ddp": "torch.nn.parallel.DistributedDataParallel, bucket_cap_mb 25 (default)",
                                    "precision": args.precision, "grad_reduce": args.grad_reduce,
                                    **harness_report.mfu_fields(w, phases["step"], peak)}})
            if rank == 0:
                print(f"{name}: {st['median_s'] * 1e3:.3f} ms/step (median of {steps}; forward {phases['forward']:.3f}, "
                      f"backward {phases['backward']:.3f}, optimizer {phases['optimizer']:.3f} ms), "
                      f"{entry['extra']['tokens_per_s']:.0f} tokens/s (job, {world} GPU), {mfu_text(entry['extra'])}, "
                      f"peak {peak_bytes / 2**20:.0f} MiB, "
                      f"weights identical: {same}, loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            entry.update(harness_report.skipped(f"out of memory: {first_line(e)}"))
            print(f"{name}: out of memory", flush=True)
        torch.cuda.empty_cache()
        results.append(entry)
    if rank == 0:
        harness_report.write(args.out, args.suite, results, torch, " ".join(sys.argv))
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
