"""NEEDS PyTorch with CUDA and 2 or more GPUs. torch.distributed's collectives as variants
(`torch`) of the nccl family, beside the harness's own NCCL calls (`nccl`), checked against
the same expected output and timed the same way (a barrier, then K operations back to back
between one event pair, every rank's figure kept; docs/python.md "torch.distributed"):

    NCCL_NVLS_ENABLE=0 harness run suites/nccl.yaml --devices all \\
        --python examples/python/torch_distributed.py --out nccl.json
    python3 reports/tables.py nccl-torch nccl.json      # nccl vs torch per collective and size

Each rank is a harness worker (`--devices all`), and the launcher gives every worker
torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK=0 for its one GPU, MASTER_ADDR=127.0.0.1
and a free MASTER_PORT), so the process group is torch's own env:// rendezvous, made at the
first launch; under mpirun or srun set them yourself, as for any torch job. torch.distributed keeps its own NCCL
communicator beside the harness's (which still gives the barrier). The operands are the
instance's buffers (plugins/nccl): in place one in/out `buffer` (NCCL's convention: this
rank's all_gather input and reduce_scatter output are its slice at rank * chunk), else the
input `send` and the output `recv`. torch's all_reduce and broadcast work in place only,
its all_to_all_single out of place only: the other form is a skip with that reason.
"""
import os

import harness
import torch
import torch.distributed as dist
from torch_buffers import stream_of, tensor

ELEMENT_BYTES = {"f32": 4, "bf16": 2}
IN_PLACE_ONLY = {"all_reduce": "all_reduce", "broadcast": "broadcast"}
OUT_OF_PLACE_ONLY = {"alltoall": "all_to_all_single", "sendrecv": "batch_isend_irecv"}
SPLIT = ("all_gather", "reduce_scatter", "alltoall")  # the buffer is split among the ranks


def world_size():
    """The job's rank count from torchrun's WORLD_SIZE (1 where it is not set)."""
    try:
        return max(int(os.environ.get("WORLD_SIZE", "1")), 1)
    except ValueError:
        return 1


def group():
    """torch's default process group, made once (env:// from the launcher's variables) on
    this worker's GPU; device_id makes NCCL's communicator at once, not at the first op."""
    if not dist.is_initialized():
        dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    return dist.group.WORLD


def supports(collective):
    def check(params):
        n = world_size()
        if n < 2:
            return ("needs at least 2 ranks; WORLD_SIZE is not set above 1 (run `harness run --devices all` on a "
                    "host with 2 or more GPUs, or set torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)")
        if params["in_place"] and collective in OUT_OF_PLACE_ONLY:
            return f"torch.distributed.{OUT_OF_PLACE_ONLY[collective]} has no in-place form"
        if not params["in_place"] and collective in IN_PLACE_ONLY:
            return f"torch.distributed.{IN_PLACE_ONLY[collective]} works in place only (the in_place: true rows)"
        elements = params["bytes"] // ELEMENT_BYTES[params["dtype"]]
        if elements == 0 or (collective in SPLIT and elements // n == 0):
            return f"{params['bytes']} bytes is less than one element per rank at {n} ranks"
        return None
    return check


def rank_slice(t, rank, ranks):
    """This rank's chunk of a buffer split among `ranks` (NCCL's in-place convention)."""
    chunk = t.numel() // ranks
    return t.narrow(0, rank * chunk, chunk)


def make_call(collective, ctx):
    """The torch.distributed call on ctx's buffers, as a function of nothing."""
    g = group()
    rank, ranks = dist.get_rank(g), dist.get_world_size(g)
    if ctx.params["in_place"]:
        buf = tensor(ctx.outputs.buffer)
        if collective == "all_reduce":
            return lambda: dist.all_reduce(buf, group=g)
        if collective == "broadcast":
            return lambda: dist.broadcast(buf, src=0, group=g)
        mine = rank_slice(buf, rank, ranks)
        if collective == "all_gather":
            return lambda: dist.all_gather_into_tensor(buf, mine, group=g)
        return lambda: dist.reduce_scatter_tensor(mine, buf, group=g)
    send, recv = tensor(ctx.inputs.send), tensor(ctx.outputs.recv)
    if collective == "all_gather":
        return lambda: dist.all_gather_into_tensor(recv, send, group=g)
    if collective == "reduce_scatter":
        return lambda: dist.reduce_scatter_tensor(recv, send, group=g)
    if collective == "alltoall":
        return lambda: dist.all_to_all_single(recv, send, group=g)
    # sendrecv: a ring, to rank + 1 and from rank - 1, as the nccl variant
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % ranks, g), dist.P2POp(dist.irecv, recv, (rank - 1) % ranks, g)]

    def ring():
        for work in dist.batch_isend_irecv(ops):
            work.wait()
    return ring


# (collective, stream, buffers) -> (call, torch stream). The harness launches a collective
# K times per sample on the same buffers, so the torch views, the rank lookups and the
# stream object are made once per buffers and stream rather than per launch. (Measured on 2
# H200s, that did not change the small sizes: 48-100 us an 8 B..2 MiB all_reduce made per
# launch, 62-98 us made once, against 32-40 us in torch's own loop; docs/python.md.) The
# views do not own memory; a few sets are kept, as a suite's cases come one after another.
_calls = {}


def call_for(collective, ctx):
    """(the call on ctx's buffers, the harness's stream as a torch stream), from _calls."""
    arrays = (*ctx.inputs.values(), *ctx.outputs.values())
    key = (collective, ctx.stream, tuple((a.ptr, a.shape, a.dtype) for a in arrays))
    made = _calls.get(key)
    if made is None:
        if len(_calls) >= 16:
            _calls.clear()
        made = _calls[key] = (make_call(collective, ctx), stream_of(ctx))
    return made


def launch(collective, ctx):
    call, stream = call_for(collective, ctx)
    with torch.cuda.stream(stream):
        call()


def register(collective):
    def run(ctx):
        launch(collective, ctx)
    run.__doc__ = f"torch.distributed's {collective} (its own NCCL communicator, env:// rendezvous)"
    harness.variant(f"nccl_{collective}", "torch", dtypes=["f32", "bf16"], supports=supports(collective))(run)


for name in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv"):
    register(name)
