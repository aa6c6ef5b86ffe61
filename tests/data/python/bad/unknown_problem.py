import harness


@harness.variant("streem", "py_x", backend="cpu")
def py_x(ctx):
    pass
