"""A cpu variant of `stream` that copies, after checking that its worker has torchrun's
variables as the `--devices` launcher sets them for torch.distributed (env:// rendezvous):
RANK = HARNESS_RANK, WORLD_SIZE = HARNESS_WORLD_SIZE, LOCAL_RANK = 0 (its one GPU),
MASTER_ADDR = 127.0.0.1 and a MASTER_PORT. A missing or wrong one is this result's error, naming them."""
import os

import harness

NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "HARNESS_RANK", "HARNESS_WORLD_SIZE")


@harness.variant("stream", "py_rank_env", backend="cpu")
def py_rank_env(ctx):
    env = {k: os.environ.get(k) for k in NAMES}
    port = env["MASTER_PORT"] or ""
    ok = (env["RANK"] is not None and env["RANK"] == env["HARNESS_RANK"] and env["WORLD_SIZE"] == env["HARNESS_WORLD_SIZE"]
          and env["LOCAL_RANK"] == "0" and env["MASTER_ADDR"] == "127.0.0.1" and port.isdigit() and 0 < int(port) < 65536)
    if not ok:
        raise RuntimeError(f"torchrun variables not as the launcher sets them: {env}")
    x, out = ctx.inputs.x, ctx.outputs.out
    for i in range(len(out)):
        out[i] = x[i]
