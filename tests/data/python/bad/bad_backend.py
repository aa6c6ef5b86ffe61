import harness


@harness.variant("stream", "py_x", backend="gpu")
def py_x(ctx):
    pass
