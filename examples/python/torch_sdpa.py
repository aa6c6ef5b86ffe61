"""NEEDS a GPU with PyTorch (the GPU machine's venv, PyTorch 2.5 or later). Not run on the
CPU machines, and not yet run on a GPU: PyTorch's scaled_dot_product_attention (SDPA), one
variant per backend, as variants of `attention` and `attention_backward` (issue 35 item 3),
on the harness's own device buffers (no copies in) and its stream (docs/python.md).

    harness run suites/attention-hopper.yaml --python examples/python/torch_sdpa.py \\
        --variants flash,sdpa_flash,sdpa_cudnn,sdpa_efficient

  sdpa_flash      SDPBackend.FLASH_ATTENTION (FlashAttention-2), bf16/f16
  sdpa_cudnn      SDPBackend.CUDNN_ATTENTION (cuDNN's fused attention; sm90 kernels on Hopper), bf16/f16
  sdpa_efficient  SDPBackend.EFFICIENT_ATTENTION (the memory-efficient CUTLASS kernel), f32/bf16/f16

Operands (harness list attention): Q (B,H,N,d), K, V (B,Hkv,N,d) in the case's dtype, which
is PyTorch's (B, heads, N, d) layout; forward outputs O (B,H,N,d) and LSE (B,H,N) f32, the
natural-log logsumexp of the scaled scores; backward inputs also dO, O, LSE, outputs dQ
(B,H,N,d), dK, dV (B,Hkv,N,d). kv_heads != heads is GQA (enable_gqa); scale 0 is
1/sqrt(head_dim), PyTorch's default.

What one launch does, i.e. what is timed:
  attention           the backend's own op, the one F.scaled_dot_product_attention calls
                      under sdpa_kernel(backend) (torch.ops.aten._scaled_dot_product_
                      {flash,cudnn,efficient}_attention): the public function returns O
                      only, and the problem checks LSE too. Then O and LSE are copied into
                      the harness's buffers (PyTorch has no out= for SDPA): one extra read
                      and write of O, about 2*B*H*N*d*elem bytes, is part of the time.
  attention_backward  the backend's own backward op (torch.ops.aten._scaled_dot_product_
                      {flash,cudnn,efficient}_attention_backward, what autograd runs for
                      that backend's forward) on Q, K, V, dO and the harness's O and LSE
                      (the problem's inputs, as the C++ backward variants take them), then
                      dQ, dK, dV copied into the harness's buffers (three extra reads and
                      writes). The backward alone is timed, like the C++ variants and
                      reports/pytorch_attention.py (autograd.grad of one kept forward). What
                      the op needs besides O and LSE (lengths, the philox state of a
                      dropout that is 0) comes from one forward of the backend per set of
                      buffers, at its first launch (the untimed checked run); it depends on
                      the shapes only, so the harness's re-check on fresh values in the
                      same buffers stays right. (Running forward + autograd.grad per
                      launch would time the forward too; keeping one autograd forward
                      would go stale on that re-check.)
The calls are examples/python/sdpa_ops.py's (no `import harness` there), which
reports/pytorch_attention.py --as-variants times in its own loop: the same work, for the
check that both timings agree. Why the backend's op rather than F.scaled_dot_product_
attention under sdpa_kernel(backend): the public function returns O only, and its backward
runs only through autograd from its own forward. The choice sdpa_kernel would make is
asked explicitly instead: PyTorch's own check for that backend (torch.backends.cuda.
can_use_*_attention, the test sdpa_kernel's dispatch applies).

Skips: dtypes= per backend; head_dim not a multiple of 8 (the public SDPA pads it, the
backend op does not); attention_backward's deterministic: true; then PyTorch's check for
that backend (with debug on), asked once per shape class on small tensors of the case's
N, d, dtype and GQA grouping: its reasons (the warnings it emits) are the skip reason. A
backend that still raises at run time is that result's error with PyTorch's message (an
exception in a variant is its result's error; the mechanism has no run-time skip).
"""
import harness
import torch

from sdpa_ops import BACKENDS, backward_into, backward_state, forward_into, refusal
from torch_buffers import stream_of, tensor

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def shape(p):
    """(B, H, Hkv, N, d) of a case (kv_heads 0 means heads)."""
    h = p["heads"]
    return p["batch"], h, p["kv_heads"] or h, p["seq_len"], p["head_dim"]


def scale_of(p):
    """The softmax scale for PyTorch: None (its default 1/sqrt(d)) for the harness's 0."""
    return p["scale"] if p["scale"] != 0 else None


# PyTorch's verdict per (variant, backward, dtype, GQA group, N, d, causal): None or the reason.
_verdicts = {}


def torch_refuses(variant, p, backward):
    """None, or why PyTorch's check for this backend refuses the case (sdpa_ops.refusal),
    asked once on tensors of one kv head and its query group at the case's N, d and dtype:
    what the checks look at (dtype, head dim, GQA, causal, grad, N, the GPU)."""
    _, h, hkv, n, d = shape(p)
    key = (variant, backward, p["dtype"], h // hkv, hkv != h, n, d, p["causal"])
    if key not in _verdicts:
        if not torch.cuda.is_available():
            return None  # the harness skips a cuda variant without a device before asking
        dt = TORCH_DTYPES[p["dtype"]]
        q = torch.empty(1, h // hkv, n, d, device="cuda", dtype=dt)
        kv = torch.empty(1, 1, n, d, device="cuda", dtype=dt)
        _verdicts[key] = refusal(variant, q, kv, kv, bool(p["causal"]), backward)
        del q, kv
        torch.cuda.empty_cache()
    return _verdicts[key]


def static_reason(variant, p):
    """The cases skipped before asking PyTorch."""
    _, h, hkv, _, d = shape(p)
    if h % hkv:
        return f"heads {h} is not a multiple of kv_heads {hkv}"
    if p["dtype"] != "f32" and d % 8:
        return f"head_dim {d} is not a multiple of 8 (the public SDPA pads it; the backend's op does not)"
    if variant == "sdpa_flash" and d > 256:
        return f"FlashAttention-2 has head dims up to 256, not {d}"
    if p.get("deterministic"):
        return "deterministic: not asked of PyTorch (torch.use_deterministic_algorithms is process-wide)"
    return None


def supports_for(variant, backward):
    def supports(p):
        return static_reason(variant, p) or torch_refuses(variant, p, backward)
    return supports


# Torch views of the last launch's buffers, keyed by the buffers (name, pointer, shape,
# dtype): one set of views per Context rather than per launch.
_views = {}


def views(ctx, names):
    """Torch views of ctx's operands `names` (inputs or outputs)."""
    buffers = [ctx.inputs[n] if n in ctx.inputs else ctx.outputs[n] for n in names]
    key = tuple((n, b.ptr, b.shape, b.dtype) for n, b in zip(names, buffers))
    if key not in _views:
        _views.clear()
        _views[key] = [tensor(b) for b in buffers]
    return _views[key]


def make_forward(variant):
    def run(ctx):
        p = ctx.params
        q, k, v, o, lse = views(ctx, ("Q", "K", "V", "O", "LSE"))
        with torch.cuda.stream(stream_of(ctx)), torch.no_grad():
            forward_into(variant, q, k, v, bool(p["causal"]), scale_of(p), o, lse)
    return run


# The backward state (sdpa_ops.backward_state) per variant and set of buffers; kept across
# variants, since interleaved timing (a case's variants in rounds) alternates them.
_states = {}


def make_backward(variant):
    def run(ctx):
        p = ctx.params
        causal, scale = bool(p["causal"]), scale_of(p)
        q, k, v, d_o, o, lse, dq, dk, dv = views(ctx, ("Q", "K", "V", "dO", "O", "LSE", "dQ", "dK", "dV"))
        with torch.cuda.stream(stream_of(ctx)), torch.no_grad():
            key = (variant, q.data_ptr(), tuple(q.shape), tuple(k.shape), q.dtype, causal, scale)
            if key not in _states:
                # At the first launch of a set of buffers: the harness's checked run, not
                # timed. Shapes only, so the re-check on fresh values in them stays right.
                if len(_states) >= 16:
                    _states.clear()
                _states[key] = backward_state(variant, q, k, v, causal, scale)
            backward_into(variant, _states[key], d_o, q, k, v, o, lse, causal, scale, dq, dk, dv)
    return run


for _variant, (_member, _, _dtypes) in BACKENDS.items():
    harness.variant("attention", _variant, backend="cuda", dtypes=_dtypes, supports=supports_for(_variant, False),
                    description=f"PyTorch SDPA, SDPBackend.{_member} only (its op: O and LSE), copied into O, LSE")(
        make_forward(_variant))
    harness.variant("attention_backward", _variant, backend="cuda", dtypes=_dtypes,
                    supports=supports_for(_variant, True),
                    description=f"PyTorch SDPA, SDPBackend.{_member} only: its backward op on the given O, LSE "
                                "(backward alone timed), copied into dQ, dK, dV")(make_backward(_variant))
