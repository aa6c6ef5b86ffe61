"""A stand-in for PyTorch on the CPU machines (tests/python_test.cpp): only what importing
examples/python/torch_sdpa.py (and sdpa_ops.py, torch_buffers.py) and torch_distributed.py touch, so that its
registration and static skip reasons are tested where PyTorch is absent. Not a torch:
no tensors; torch.cuda.is_available() is False."""
float32, bfloat16, float16 = "float32", "bfloat16", "float16"


class cuda:  # noqa: N801 (torch's name)
    @staticmethod
    def is_available():
        return False
