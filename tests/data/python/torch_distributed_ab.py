"""An experiment beside examples/python/torch_distributed.py (docs/python.md, "torch.distributed":
its variant reads torch.distributed 25-75 us per op slower than torch's own loop at small
sizes, cause open). Loading this file registers the example's `torch` variants and two more
on nccl_all_reduce: `torch_timed` (below: the variant's host time per phase, on stderr), and
`torch_set_stream`: the same call with the harness's stream made torch's
current stream by torch.cuda.set_stream, left set, instead of entered and left per call
(`with torch.cuda.stream(...)`), which cost 3-17 us per call in a torchrun job on 2 H200s
(reports/baselines/h200/2026-11-27/s12-dist-overhead.txt). On a 2-GPU machine:

    NCCL_NVLS_ENABLE=0 harness run suites/nccl.yaml --devices all --filter '^nccl_all_reduce/' \\
        --python tests/data/python/torch_distributed_ab.py --out ab.json
    python3 reports/tables.py nccl-torch ab.json                            # nccl against torch
    python3 reports/tables.py nccl-torch ab.json --theirs torch_set_stream  # nccl against the set stream
"""
import os
import sys
import time

import harness
import torch

# The example's folder (the harness puts only this file's folder first on sys.path).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python"))
import torch_distributed  # noqa: E402  (registers `torch` on every collective)

@harness.variant("nccl_all_reduce", "torch_set_stream", dtypes=["f32", "bf16"],
                 supports=torch_distributed.supports("all_reduce"))
def torch_set_stream(ctx):
    """torch.distributed's all_reduce, the harness's stream set as torch's current stream once"""
    call, stream = torch_distributed.call_for("all_reduce", ctx)
    if torch.cuda.current_stream() != stream:
        torch.cuda.set_stream(stream)
    call()


# torch_timed: the same call as `torch`, its host time split with time.perf_counter: entering
# the stream, the torch.distributed call, leaving the stream, and the time from one launch's
# return to the next launch's start (the harness's side of a launch and its timing loop; it
# also holds each sample's barrier, once per K launches, and the gaps between results).
# Every 2000 launches the means go to stderr (a --devices worker's stderr is the file beside
# the run's journal, <journal>.cuda-N.stderr, removed when the run completes) and, where
# TORCH_AB_PHASES names a file, are appended to it: where the variant's 25-75 us beyond torch's
# own loop go.
_phases = {"enter": 0.0, "op": 0.0, "exit": 0.0, "between": 0.0, "calls": 0, "last_end": None}


@harness.variant("nccl_all_reduce", "torch_timed", dtypes=["f32", "bf16"],
                 supports=torch_distributed.supports("all_reduce"))
def torch_timed(ctx):
    """torch.distributed's all_reduce as `torch`, its host time per phase on stderr"""
    t0 = time.perf_counter()
    ph = _phases
    if ph["last_end"] is not None:
        ph["between"] += t0 - ph["last_end"]
    call, stream = torch_distributed.call_for("all_reduce", ctx)
    ctx_manager = torch.cuda.stream(stream)
    ctx_manager.__enter__()
    t1 = time.perf_counter()
    call()
    t2 = time.perf_counter()
    ctx_manager.__exit__(None, None, None)
    t3 = time.perf_counter()
    ph["enter"] += t1 - t0
    ph["op"] += t2 - t1
    ph["exit"] += t3 - t2
    ph["calls"] += 1
    ph["last_end"] = t3
    if ph["calls"] % 2000 == 0:
        n = ph["calls"]
        line = (f"torch_timed rank {os.environ.get('RANK', '?')}: {n} launches, mean host us per launch: "
                f"enter {1e6 * ph['enter'] / n:.2f}, op {1e6 * ph['op'] / n:.2f}, exit {1e6 * ph['exit'] / n:.2f}, "
                f"between launches {1e6 * ph['between'] / (n - 1):.2f}")
        print(line, file=sys.stderr, flush=True)
        # The workers' stderr files are removed when the run completes: TORCH_AB_PHASES names a
        # file that keeps the lines (gpu-round.sh's nccl-torch-ab stage sets it).
        if os.environ.get("TORCH_AB_PHASES"):
            with open(os.environ["TORCH_AB_PHASES"], "a") as f:
                print(line, file=f)
