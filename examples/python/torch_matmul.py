"""NEEDS a GPU with PyTorch (the GPU machine's venv); not run on the CPU machines. An
example of a cuda-backend Python variant (docs/python.md). Run on an H100 (2026-11-26, the
lead's run): passed its check, 707 TFLOP/s against cuBLAS's 713 at bf16 4096^3.

    harness run suites/gemm-tensor-cores.yaml --python examples/python/torch_matmul.py \\
        --variants cublas,mma,torch_matmul

torch.matmul (cuBLAS through PyTorch) as a variant of `gemm`: every dtype and layout,
on the harness's own device buffers (no copies) and its stream.
"""
import harness
import torch

from torch_buffers import stream_of, tensor


@harness.variant("gemm", "torch_matmul", backend="cuda", dtypes=["f32", "tf32", "bf16", "f16"])
def torch_matmul(ctx):
    """torch addmm_ (cuBLAS through PyTorch) on the harness's buffers and stream"""
    p = ctx.params
    a, b, c = tensor(ctx.inputs.A), tensor(ctx.inputs.B), tensor(ctx.outputs.C)
    # Stored shapes per layout: A 't' is (K, M), B 't' is (N, K) (harness list gemm).
    a = a.t() if p["layout"][0] == "t" else a
    b = b.t() if p["layout"][1] == "t" else b
    # f32 is strict FP32, as the harness's cuBLAS variant; tf32 allows TF32 math.
    torch.backends.cuda.matmul.allow_tf32 = p["dtype"] == "tf32"
    with torch.cuda.stream(stream_of(ctx)):
        # beta == 0: C is never read (PyTorch ignores the input, NaN poison included).
        c.addmm_(a, b, beta=p["beta"], alpha=p["alpha"])
