"""An experiment beside examples/python/torch_distributed.py (docs/python.md, "torch.distributed":
its variant reads torch.distributed 25-75 us per op slower than torch's own loop at small
sizes, cause open). Loading this file registers the example's `torch` variants and one more
on nccl_all_reduce, `torch_set_stream`: the same call with the harness's stream made torch's
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

import harness
import torch

# The example's folder (the harness puts only this file's folder first on sys.path).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python"))
import torch_distributed  # noqa: E402  (registers `torch` on every collective)
from torch_buffers import stream_of  # noqa: E402

_calls = {}


@harness.variant("nccl_all_reduce", "torch_set_stream", dtypes=["f32", "bf16"],
                 supports=torch_distributed.supports("all_reduce"))
def torch_set_stream(ctx):
    """torch.distributed's all_reduce, the harness's stream set as torch's current stream once"""
    key = (ctx.stream, ctx.outputs.buffer.ptr, ctx.outputs.buffer.shape, ctx.outputs.buffer.dtype)
    call = _calls.get(key)
    if call is None:
        _calls.clear()
        call = _calls[key] = torch_distributed.make_call("all_reduce", ctx)
    stream = stream_of(ctx)
    if torch.cuda.current_stream() != stream:
        torch.cuda.set_stream(stream)
    call()
