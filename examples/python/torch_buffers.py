"""NEEDS PyTorch with CUDA. What the torch and Triton examples share: torch views of the
harness's device buffers and the harness's stream as a torch stream. Imported from the
variant files (the harness puts a variant file's folder first on sys.path)."""
import torch

_streams = {}  # one ExternalStream object per stream handle, not one per launch


def tensor(buffer):
    """A torch view of a harness device buffer, no copy (bf16 travels as its 16 bits)."""
    t = torch.as_tensor(buffer, device="cuda")
    return t.view(torch.bfloat16) if buffer.dtype == "bf16" else t


def stream_of(ctx):
    """The harness's stream (ctx.stream), for `with torch.cuda.stream(stream_of(ctx)):`:
    the timing events are recorded on it, so the work must be launched on it."""
    if ctx.stream not in _streams:
        _streams[ctx.stream] = torch.cuda.ExternalStream(ctx.stream)
    return _streams[ctx.stream]
