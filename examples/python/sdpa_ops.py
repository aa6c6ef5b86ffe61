"""NEEDS PyTorch with CUDA (the GPU machine's venv, PyTorch 2.5 or later). The calls of
PyTorch SDPA's backends that examples/python/torch_sdpa.py registers as harness variants,
in a module of their own (no `import harness`) so that reports/pytorch_attention.py
--as-variants times exactly the same work in its own loop (docs/python.md, "PyTorch
references").

Each backend is called through its own op, the one F.scaled_dot_product_attention
dispatches to under sdpa_kernel(SDPBackend.X): the public function returns O only (the
harness's `attention` checks LSE too) and its backward runs only through autograd from its
own forward (the harness's `attention_backward` gives O and LSE as inputs). Whether the
backend takes a case is PyTorch's own check for it (torch.backends.cuda.can_use_*), the
test sdpa_kernel's dispatch applies.
"""
import warnings

import torch

# variant -> (SDPBackend member, torch.backends.cuda check, harness dtypes)
BACKENDS = {
    "sdpa_flash": ("FLASH_ATTENTION", "can_use_flash_attention", ["bf16", "f16"]),
    "sdpa_cudnn": ("CUDNN_ATTENTION", "can_use_cudnn_attention", ["bf16", "f16"]),
    "sdpa_efficient": ("EFFICIENT_ATTENTION", "can_use_efficient_attention", ["f32", "bf16", "f16"]),
}


def refusal(variant, q, k, v, causal, backward):
    """None, or why PyTorch's check for the variant's backend refuses these tensors: its
    reasons, which it gives as warnings with debug on. `backward`: as for a training call
    (requires_grad)."""
    member, check, _ = BACKENDS[variant]
    if backward:
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    params = torch.backends.cuda.SDPAParams(q, k, v, None, 0.0, causal, k.shape[1] != q.shape[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok = getattr(torch.backends.cuda, check)(params, True)
    if ok:
        return None
    why = []
    for w in caught:
        text = " ".join(str(w.message).split())
        if text and text not in why:
            why.append(text)
    return (f"PyTorch's {member} cannot run this case: " + ("; ".join(why) or "no reason given"))[:500]


def forward_op(variant, q, k, v, causal, scale):
    """The backend's op's result (O, LSE, ...), LSE computed (compute_log_sumexp) as a
    training forward does. q (B,H,N,d), k, v (B,Hkv,N,d); scale None is 1/sqrt(d)."""
    aten = torch.ops.aten
    if variant == "sdpa_flash":
        return aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)
    if variant == "sdpa_cudnn":
        return aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False, scale=scale)
    return aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal, scale=scale)


def forward_into(variant, q, k, v, causal, scale, o, lse):
    """One forward into the given O (B,H,N,d) and LSE (B,H,N) f32: the op, then two copies
    (PyTorch has no out= for SDPA)."""
    r = forward_op(variant, q, k, v, causal, scale)
    o.copy_(r[0])
    # LSE: flash (B,H,N); cuDNN (B,H,N,1); efficient (B,H,N padded to a multiple of 32)
    lse.copy_(r[1].reshape(lse.shape[0], lse.shape[1], -1)[..., :lse.shape[2]])


def backward_state(variant, q, k, v, causal, scale):
    """What the backend's backward op needs besides O and LSE, from one forward: lengths,
    the philox state of a dropout that is 0, and (efficient) an LSE buffer of the padded
    length it wants. It depends on the shapes only, not on the values."""
    r = forward_op(variant, q, k, v, causal, scale)
    b, h, n = q.shape[0], q.shape[1], q.shape[2]
    padded = r[1].shape[-1] if variant == "sdpa_efficient" else n
    pad = torch.zeros(b, h, padded, device=q.device, dtype=torch.float32) if padded != n else None
    # The efficient backward reads O and dO as its forward leaves O: (B,H,N,d) views of
    # (B,N,H,d) memory (it takes O's row stride to be dO's, H d); the harness's are
    # (B,H,N,d) contiguous, so they are copied into such views first.
    bnhd = None
    if variant == "sdpa_efficient":
        bnhd = tuple(torch.empty(b, n, h, q.shape[3], device=q.device, dtype=q.dtype).transpose(1, 2)
                     for _ in range(2))
    return (None, None) + tuple(r[2:]), pad, bnhd  # not its O and LSE: no memory kept


def backward_into(variant, state, d_o, q, k, v, o, lse, causal, scale, dq, dk, dv):
    """One backward from the given O and LSE (B,H,N) into dQ, dK, dV: the backend's
    backward op (what autograd runs for its forward), then three copies (efficient: two
    more before it, O and dO into its layout)."""
    aux, pad, bnhd = state
    if pad is not None:
        pad[..., :lse.shape[2]].copy_(lse)
        lse = pad
    if bnhd is not None:
        bnhd[0].copy_(o)
        bnhd[1].copy_(d_o)
        o, d_o = bnhd
    aten = torch.ops.aten
    if variant == "sdpa_flash":
        g = aten._scaled_dot_product_flash_attention_backward(
            d_o, q, k, v, o, lse, aux[2], aux[3], aux[4], aux[5], 0.0, causal, aux[6], aux[7], scale=scale)
    elif variant == "sdpa_cudnn":
        g = aten._scaled_dot_product_cudnn_attention_backward(
            d_o, q, k, v, o, lse.unsqueeze(-1), aux[6], aux[7], None, aux[2], aux[3], aux[4], aux[5], 0.0, causal,
            scale=scale)
    else:
        g = aten._scaled_dot_product_efficient_attention_backward(
            d_o, q, k, v, None, o, lse, aux[2], aux[3], 0.0, [True, True, True, False], causal, scale=scale)
    dq.copy_(g[0])
    dk.copy_(g[1])
    dv.copy_(g[2])
