"""NEEDS a GPU with PyTorch and Triton (the GPU machine's venv); not run on the CPU machines.

A Triton GEMM as a variant of `gemm` (docs/python.md), written for this harness after the
idea of Triton's matrix-multiplication tutorial: one program per (BM, BN) tile of C, the
tiles numbered in groups of GROUP tile-rows (so that programs running together share rows
of A and columns of B in L2), a K loop of tl.dot into an f32 accumulator, masked loads and
stores for any M, N, K. Every layout through the operands' strides; bf16 and f16.

    harness run suites/gemm-tensor-cores.yaml --python examples/python/triton_matmul.py \\
        --variants wgmma,cublas,triton_matmul --filter 'dtype:bf16'

One fixed tile configuration (BM = BN = 128, BK = 64, 8 warps, 3 stages), not autotuned:
triton.autotune would time its candidates inside the harness's first (checked) launch.
"""
import harness
import torch
import triton
import triton.language as tl

from torch_buffers import stream_of, tensor


# C (M, N) = alpha * A (M, K) B (K, N) + beta * C; any strides (the layouts are views).
@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, alpha, beta,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, HAS_BETA: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows = tl.minimum(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows
    rm = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    rn = (pid_n * BN + tl.arange(0, BN)).to(tl.int64)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    acc = acc * alpha
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    c_at = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    if HAS_BETA:  # beta == 0: C is never read (the harness poisons it)
        acc += beta * tl.load(c_at, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_at, acc.to(c_ptr.dtype.element_ty), mask=mask)


@harness.variant("gemm", "triton_matmul", backend="cuda", dtypes=["bf16", "f16"])
def triton_matmul(ctx):
    """Triton tl.dot GEMM, 128 x 128 x 64 tiles, grouped tile order, any layout"""
    p = ctx.params
    a, b, c = tensor(ctx.inputs.A), tensor(ctx.inputs.B), tensor(ctx.outputs.C)
    # Stored shapes per layout: A 't' is (K, M), B 't' is (N, K) (harness list gemm).
    a = a.t() if p["layout"][0] == "t" else a
    b = b.t() if p["layout"][1] == "t" else b
    M, N, K = int(p["M"]), int(p["N"]), int(p["K"])
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    with torch.cuda.stream(stream_of(ctx)):
        _matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                      float(p["alpha"]), float(p["beta"]), BM=128, BN=128, BK=64, GROUP=8,
                      HAS_BETA=float(p["beta"]) != 0.0, num_warps=8, num_stages=3)
