#!/usr/bin/env python3
"""torch.distributed all_reduce bus bandwidth at the sizes of suites/nccl.yaml: the
reference for the harness's nccl_all_reduce (issue 19: >= 0.95x of torch's busbw at 1 GiB).

Measure (one process per GPU):
    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node 2 reports/torch_allreduce.py --out torch-allreduce.json
Compare with a harness report of the same GPUs:
    python3 reports/torch_allreduce.py --compare run-nccl.json torch-allreduce.json

Timing as nccl-tests does it: warm-up, a barrier, then `iters` all_reduces back to back
between two CUDA events; time per op = elapsed / iters, the mean over ranks. algbw =
bytes / time; busbw = algbw * 2(n-1)/n. torch's all_reduce works in place on its tensor:
compare with the harness's in_place:true rows first (the table shows both).
"""
import argparse
import json
import os
import sys

SIZES = [8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 134217728, 1073741824]


def measure(args):
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("torch_allreduce.py: PyTorch is not installed (python3 -c 'import torch' fails)", file=sys.stderr)
        return 2

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    rows = []
    for dname in args.dtypes.split(","):
        dt = dtypes[dname]
        elem = torch.tensor([], dtype=dt).element_size()
        for size in args.sizes:
            n = size // elem
            x = torch.ones(n, dtype=dt, device="cuda")
            for _ in range(args.warmup):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            dist.barrier()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(args.iters):
                dist.all_reduce(x)
            stop.record()
            torch.cuda.synchronize()
            t = start.elapsed_time(stop) / 1e3 / args.iters
            tt = torch.tensor([t], dtype=torch.float64, device="cuda")
            dist.all_reduce(tt)  # mean over ranks, as nccl-tests' default
            t = tt.item() / world
            bytes_ = n * elem
            algbw = bytes_ / t / 1e9
            rows.append({"bytes": bytes_, "dtype": dname, "time_s": t, "algbw_gbps": algbw,
                         "busbw_gbps": algbw * 2 * (world - 1) / world})
            del x
    if rank == 0:
        out = {"tool": "torch.distributed all_reduce", "world_size": world, "torch": torch.__version__,
               "nccl": ".".join(map(str, torch.cuda.nccl.version())), "gpu": torch.cuda.get_device_name(local),
               "warmup": args.warmup, "iters": args.iters, "results": rows}
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f, indent=2)
        print(f"{'bytes':>12} {'dtype':>5} {'time':>12} {'algbw GB/s':>11} {'busbw GB/s':>11}")
        for r in rows:
            print(f"{r['bytes']:>12} {r['dtype']:>5} {r['time_s']*1e6:>10.2f}us {r['algbw_gbps']:>11.2f} {r['busbw_gbps']:>11.2f}")
    dist.destroy_process_group()
    return 0


def compare(harness_path, torch_path):
    with open(harness_path) as f:
        rep = json.load(f)
    with open(torch_path) as f:
        ref = json.load(f)
    theirs = {(r["bytes"], r["dtype"]): r for r in ref["results"]}
    print(f"{'bytes':>12} {'dtype':>5} {'in_place':>8} {'harness busbw':>14} {'torch busbw':>12} {'ratio':>6}")
    for r in rep["results"]:
        if r.get("problem") != "nccl_all_reduce" or r.get("status") != "passed":
            continue
        x, p = r.get("extra", {}), r["params"]
        t = theirs.get((int(x.get("bytes", 0)), p["dtype"]))
        if not t or "busbw_gbps" not in x:
            continue
        ratio = x["busbw_gbps"] / t["busbw_gbps"] if t["busbw_gbps"] > 0 else float("nan")
        print(f"{int(x['bytes']):>12} {p['dtype']:>5} {str(p['in_place']):>8} {x['busbw_gbps']:>14.2f} "
              f"{t['busbw_gbps']:>12.2f} {ratio:>6.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")], default=SIZES)
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default="")
    ap.add_argument("--compare", nargs=2, metavar=("HARNESS_REPORT", "TORCH_JSON"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
