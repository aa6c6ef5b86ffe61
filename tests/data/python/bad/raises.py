import harness


def settings():
    return {"n": 1} / 2


SETTINGS = settings()
