import harness


@harness.variant("stream", "cpu", backend="cpu")
def cpu(ctx):
    pass
