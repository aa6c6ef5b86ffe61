import harness


@harness.variant("stream", "py_x", backend="cpu", dtypes=["f32"])
def py_x(ctx):
    pass
