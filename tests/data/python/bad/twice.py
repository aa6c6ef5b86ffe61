import harness


@harness.variant("stream", "py_twice", backend="cpu")
def one(ctx):
    pass


@harness.variant("stream", "py_twice", backend="cpu")
def two(ctx):
    pass
