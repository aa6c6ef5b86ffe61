"""NEEDS a GPU with PyTorch and Triton (the GPU machine's venv); not run on the CPU
machines. An example of a Triton kernel as a variant
(docs/python.md), written for this harness after the idea of Triton's fused-softmax
tutorial (one program per row, the row in registers).

    harness run suites/softmax.yaml --python examples/python/triton_softmax.py \\
        --variants register_row,cudnn,triton_row
"""
import harness
import torch
import triton
import triton.language as tl

from torch_buffers import stream_of, tensor


@triton.jit
def _softmax_row(y_ptr, x_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))  # a row of -inf gives NaN, as the problem asks
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def one_block(params):
    return None if params["cols"] <= 16384 else "one program per row: cols <= 16384"


@harness.variant("softmax", "triton_row", backend="cuda", dtypes=["f32", "bf16"], supports=one_block)
def triton_row(ctx):
    """Triton: one program per row, the row in registers"""
    x, y = tensor(ctx.inputs.x), tensor(ctx.outputs.y)
    rows, cols = x.shape
    with torch.cuda.stream(stream_of(ctx)):  # Triton launches on torch's current stream
        _softmax_row[(rows,)](y, x, cols, BLOCK=triton.next_power_of_2(cols))
