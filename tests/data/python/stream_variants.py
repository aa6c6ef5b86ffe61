"""Python variants of `stream` on the cpu backend for tests/python_test.cpp: correct, wrong,
raising, writing an input, supports() raising, filling an output of its own (the last)."""
import harness


def copy_or_scale(params):
    return None if params["op"] in ("copy", "scale") else f"op {params['op']}: copy and scale only"


@harness.variant("stream", "py_ok", backend="cpu", supports=copy_or_scale)
def py_ok(ctx):
    """copy and scale in a Python loop"""
    x, out = ctx.inputs.x, ctx.outputs.out
    q = 3.0 if ctx.params["op"] == "scale" else 1.0
    for i in range(ctx.params["n"]):
        out[i] = q * x[i]


@harness.variant("stream", "py_wrong", backend="cpu", description="writes 1.0 everywhere")
def py_wrong(ctx):
    out = ctx.outputs["out"]
    for i in range(len(out)):
        out[i] = 1.0


def planted(n):
    raise ValueError(f"planted failure at n={n}")


@harness.variant("stream", "py_raises", backend="cpu")
def py_raises(ctx):
    planted(ctx.params["n"])


@harness.variant("stream", "py_writes_input", backend="cpu")
def py_writes_input(ctx):
    ctx.inputs.x[0] = 0.0


@harness.variant("stream", "py_supports_raises", backend="cpu", supports=lambda params: params["no_such_parameter"])
def py_supports_raises(ctx):
    pass


@harness.variant("stream", "py_own_output", backend="cpu")
def py_own_output(ctx):
    """computes into a list of its own and returns it: the given output stays unwritten"""
    x = ctx.inputs.x
    return [x[i] for i in range(len(x))]
