"""A cuda-backend Python variant of `stream` through PyTorch: NEEDS PyTorch with CUDA
(the GPU machine's venv); run by tests/python_gpu_test.cpp, which skips without them.
The harness's device buffers are wrapped without copies (__cuda_array_interface__, or
DLPack in py_torch_dlpack) and the work is launched on the harness's stream, which the
timing events are recorded on."""
import harness
import torch


def exact_ops(params):
    # triad is x + q*y in one rounding on the harness's side (fma); torch.add(alpha=)
    # need not fuse it, and stream's tolerance is exact.
    return None if params["op"] in ("copy", "scale", "add") else "triad: torch.add(alpha=) is not one rounding"


def run_op(op, x, y, out):
    """stream's op on torch tensors, on torch's current stream."""
    if op == "copy":
        out.copy_(x)
    elif op == "scale":
        torch.mul(x, 3.0, out=out)
    else:
        torch.add(x, y, out=out)


@harness.variant("stream", "py_torch", backend="cuda", supports=exact_ops)
def py_torch(ctx):
    """torch.mul / torch.add on the harness's buffers and stream"""
    x = torch.as_tensor(ctx.inputs.x, device="cuda")
    y = torch.as_tensor(ctx.inputs.y, device="cuda")
    out = torch.as_tensor(ctx.outputs.out, device="cuda")
    with torch.cuda.stream(torch.cuda.ExternalStream(ctx.stream)):
        run_op(ctx.params["op"], x, y, out)


@harness.variant("stream", "py_torch_dlpack", backend="cuda", supports=exact_ops)
def py_torch_dlpack(ctx):
    """the same through DLPack: x and y taken on torch's own stream, out on the harness's"""
    # Outside the stream context torch's current stream is its default one, so these two
    # exports order that stream after the harness's (an event); out is taken inside it,
    # on the harness's stream (nothing to order).
    x = torch.from_dlpack(ctx.inputs.x)
    y = torch.from_dlpack(ctx.inputs.y)
    with torch.cuda.stream(torch.cuda.ExternalStream(ctx.stream)):
        run_op(ctx.params["op"], x, y, torch.from_dlpack(ctx.outputs.out))
