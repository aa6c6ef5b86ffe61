"""A pure-Python row softmax on the cpu backend, f32 and bf16 (2-D memoryviews; bf16
elements are their 16 bits, read and written through harness.bf16_to_float and
harness.float_to_bf16): tests/python_test.cpp."""
import math

import harness


@harness.variant("softmax", "py_softmax", backend="cpu", dtypes=["f32", "bf16"])
def py_softmax(ctx):
    """row softmax in double, rounded to the operand's dtype"""
    x, y = ctx.inputs.x, ctx.outputs.y
    rows, cols = x.shape
    bf16 = ctx.dtypes["x"] == "bf16"
    load = harness.bf16_to_float if bf16 else float
    store = harness.float_to_bf16 if bf16 else float
    for r in range(rows):
        row = [load(x[r, c]) for c in range(cols)]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = math.fsum(e)
        for c in range(cols):
            y[r, c] = store(e[c] / total)
