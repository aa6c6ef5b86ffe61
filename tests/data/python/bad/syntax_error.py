import harness


def broken(ctx)
    pass
