"""A variant that keeps a memoryview past its launch (tests/python_test.cpp): once the
harness frees those buffers (the next case), the view is released, and reading it is an
error instead of a read of freed memory."""
import harness

kept = []


@harness.variant("stream", "py_keep", backend="cpu")
def py_keep(ctx):
    if kept:
        kept[0][0]  # the first case's input
    x, out = ctx.inputs.x, ctx.outputs.out
    for i in range(len(out)):
        out[i] = x[i]
    if not kept:
        kept.append(x)
