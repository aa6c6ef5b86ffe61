#!/usr/bin/env python3
"""torch.distributed all_reduce at the sizes of suites/nccl.yaml, timed the way the harness
times its nccl family (and nccl-tests its collectives): the reference for nccl_all_reduce
(issue 33: time per op at 8 B <= 1.1x torch's; busbw >= 0.95x torch's at every size >= 1 MiB).

Measure (one process per GPU; the rank count is the number of processes):
    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node 2 reports/torch_allreduce.py --out torch-allreduce.json
Compare with a harness report of the same GPUs (markdown: ours vs torch's per size):
    python3 reports/torch_allreduce.py --compare nccl.json torch-allreduce.json
    (the same table: python3 reports/tables.py nccl nccl.json torch-allreduce.json)

Method, per size and dtype, as harness/src/measure/collective.hpp: max(warmup, K) untimed
all_reduces; then `samples` batches, each a barrier (an all_reduce of one int, then
torch.cuda.synchronize) followed by K all_reduces back to back between ONE pair of CUDA
events; a sample is elapsed / K. K comes from the size alone, as the harness's
collective_ops_per_sample: ceil(2 ms / (10 us + bytes / 100 GB/s)) within [5, 200]. Every
rank's samples go to rank 0; the job's time per op is the median over batches of the mean
over ranks (nccl-tests' default -a 1), time_max_s the median over batches of the slowest
rank's (-a 3). algbw = bytes / time; busbw = algbw * 2(n-1)/n (nccl-tests' all_reduce
factor: a reduce-scatter then an all-gather, each moving (n-1)/n of the buffer through
every rank's link). The tensor holds zeros, so that repeated sums stay finite.
torch's all_reduce works in place: compare with the harness's in_place:true rows first
(the table shows both).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_report import collective_bandwidth, collective_ops_per_sample, combine_ranks  # noqa: E402

SIZES = [8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 134217728, 1073741824]


def bus_factor(world):
    return 2 * (world - 1) / world


def time_size(torch, dist, x, flag, k, args):
    """This rank's samples (seconds per op) for tensor x: the harness's time_collective."""
    for _ in range(max(args.warmup, k)):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(args.samples):
        dist.all_reduce(flag)  # the barrier: every rank here, the stream idle
        torch.cuda.synchronize()
        start.record()
        for _ in range(k):
            dist.all_reduce(x)
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 1e3 / k)
    return samples


def row(nbytes, dname, k, per_rank, world):
    c = combine_ranks(per_rank)
    f = bus_factor(world)
    alg, bus = collective_bandwidth(nbytes, c["time_s"], f)
    _, bus_slow = collective_bandwidth(nbytes, c["time_max_s"], f)
    ranks = [{"rank": r, "median_s": m, "busbw_gbps": collective_bandwidth(nbytes, m, f)[1]}
             for r, m in enumerate(c["rank_median"])]
    return {"bytes": nbytes, "dtype": dname, "ops_per_sample": k, "samples": len(c["mean"]), "time_s": c["time_s"],
            "time_max_s": c["time_max_s"], "algbw_gbps": alg, "busbw_gbps": bus, "busbw_slowest_gbps": bus_slow,
            "ranks": ranks, "samples_s": c["mean"]}


def measure(args):
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("torch_allreduce.py: PyTorch is not installed (python3 -c 'import torch' fails)", file=sys.stderr)
        return 2

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    rows = []
    for dname in args.dtypes.split(","):
        dt = dtypes[dname]
        elem = torch.tensor([], dtype=dt).element_size()
        for size in args.sizes:
            n = size // elem
            nbytes = n * elem
            k = collective_ops_per_sample(nbytes)
            x = torch.zeros(n, dtype=dt, device="cuda")
            mine = torch.tensor(time_size(torch, dist, x, flag, k, args), dtype=torch.float64, device="cuda")
            every = [torch.zeros_like(mine) for _ in range(world)]
            dist.all_gather(every, mine)
            rows.append(row(nbytes, dname, k, [t.tolist() for t in every], world))
            del x
    if rank == 0:
        out = {"tool": "torch.distributed all_reduce", "world_size": world, "torch": torch.__version__,
               "nccl": ".".join(map(str, torch.cuda.nccl.version())), "gpu": torch.cuda.get_device_name(local),
               "method": "per sample: barrier, K all_reduces between one event pair, time / K (as the harness)",
               "warmup": args.warmup, "samples": args.samples, "results": rows}
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f, indent=2)
        print(f"{'bytes':>12} {'dtype':>5} {'K':>4} {'time/op':>11} {'slowest':>11} {'algbw GB/s':>11} {'busbw GB/s':>11}")
        for r in rows:
            print(f"{r['bytes']:>12} {r['dtype']:>5} {r['ops_per_sample']:>4} {r['time_s'] * 1e6:>9.2f}us "
                  f"{r['time_max_s'] * 1e6:>9.2f}us {r['algbw_gbps']:>11.2f} {r['busbw_gbps']:>11.2f}")
    dist.destroy_process_group()
    return 0


def fmt_us(seconds):
    return f"{seconds * 1e6:.2f}" if seconds else "-"


def ratio(a, b):
    return a / b if a and b else float("nan")


def target(nbytes, t_ratio, bw_ratio):
    """Issue 33's targets for this row: time at 8 B, busbw at >= 1 MiB."""
    if nbytes <= 8:
        return "met" if t_ratio <= 1.1 else "missed"
    if nbytes >= 1 << 20:
        return "met" if bw_ratio >= 0.95 else "missed"
    return ""


def compare_table(rep, ref):
    """Markdown: every passed nccl_all_reduce result of the harness's `nccl` variant beside
    torch's figures at the same size and dtype."""
    theirs = {(r["bytes"], r["dtype"]): r for r in ref.get("results", [])}
    env = rep.get("environment") or {}
    gpu = (env.get("gpu") or {}).get("name", ref.get("gpu", "?"))
    out = [f"all_reduce, {ref.get('world_size', '?')} ranks on {gpu}; torch {ref.get('torch', '?')}, NCCL {ref.get('nccl', '?')}; "
           f"harness commit `{env.get('git_commit', '?')}`. Time per op: per sample a barrier, then K ops between one "
           "event pair, / K; the median over samples of the mean over ranks. busbw = algbw x 2(n-1)/n. "
           "Ratios are ours / torch's. Target: 8 B time <= 1.1x, busbw >= 0.95x at >= 1 MiB.",
           "",
           "| bytes | dtype | in place | K | ours us/op | torch us/op | time ratio | ours busbw GB/s | torch busbw GB/s "
           "| busbw ratio | ours slowest rank us/op | ours per-rank busbw | target |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep.get("results", []):
        if r.get("problem") != "nccl_all_reduce" or r.get("variant", "nccl") != "nccl" or r.get("status") != "passed":
            continue  # the harness's NCCL calls only (a run with --python has torch's as variants too)
        x, p = r.get("extra") or {}, r["params"]
        nbytes = int(x.get("bytes", 0))
        t = theirs.get((nbytes, p["dtype"]))
        if not t or "time_s" not in x:
            continue
        tr = ratio(x["time_s"], t["time_s"])
        br = ratio(x.get("busbw_gbps", 0), t.get("busbw_gbps", 0))
        ranks = " / ".join(f"{e.get('busbw_gbps', 0):.2f}" for e in x.get("ranks", []))
        out.append(f"| {nbytes} | {p['dtype']} | {str(p.get('in_place', False)).lower()} | {x.get('ops_per_sample', '-')} "
                   f"| {fmt_us(x['time_s'])} | {fmt_us(t['time_s'])} | {tr:.3f} | {x.get('busbw_gbps', 0):.2f} "
                   f"| {t.get('busbw_gbps', 0):.2f} | {br:.3f} | {fmt_us(x.get('time_max_s'))} | {ranks} "
                   f"| {target(nbytes, tr, br)} |")
    return "\n".join(out) + "\n"


def compare(harness_path, torch_path):
    with open(harness_path) as f:
        rep = json.load(f)
    with open(torch_path) as f:
        ref = json.load(f)
    print(compare_table(rep, ref), end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")], default=SIZES)
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--warmup", type=int, default=5, help="untimed ops per size (at least K); suites/nccl.yaml's warmup")
    ap.add_argument("--samples", type=int, default=20, help="timed batches per size; suites/nccl.yaml's stopping.samples")
    ap.add_argument("--out", default="")
    ap.add_argument("--compare", nargs=2, metavar=("HARNESS_REPORT", "TORCH_JSON"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    if args.samples < 1 or args.warmup < 0:
        ap.error("--samples must be >= 1 and --warmup >= 0")
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
