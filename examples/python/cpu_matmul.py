"""A GEMM variant in pure Python on the cpu backend: the smallest complete example of
docs/python.md (no NumPy, no GPU).

    harness run examples/python/gemm_tiny.yaml --python examples/python/cpu_matmul.py

C = alpha * A @ B + beta * C for dtype f32 and layout nn, over the harness's own host
buffers (memoryviews: no copies). Slow by design, a few microseconds per multiply-add:
keep M, N, K in the tens.
"""
import harness


def nn_only(params):
    """None (supported) or the reason to skip: the loops below read A (M,K) and B (K,N)."""
    return None if params["layout"] == "nn" else f"layout {params['layout']}: nn only"


@harness.variant("gemm", "py_matmul", backend="cpu", dtypes=["f32"], supports=nn_only)
def py_matmul(ctx):
    """pure-Python triple loop over memoryviews (cpu)"""
    A, B, C = ctx.inputs["A"], ctx.inputs["B"], ctx.outputs["C"]
    M, N, K = ctx.params["M"], ctx.params["N"], ctx.params["K"]
    alpha, beta = ctx.params["alpha"], ctx.params["beta"]
    for i in range(M):
        a = [A[i, k] for k in range(K)]  # row i of A, once per row
        for j in range(N):
            acc = 0.0
            for k in range(K):
                acc += a[k] * B[k, j]
            C[i, j] = alpha * acc + (beta * C[i, j] if beta != 0 else 0.0)
