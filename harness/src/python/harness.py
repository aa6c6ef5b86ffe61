"""harness: kernels written in Python as variants of the harness's problems (docs/python.md).

This module exists only inside the `harness` executable (`harness run SUITE --python
FILE.py`), which embeds CPython and compiles this file in. A Python file registers
variants with the decorator:

    import harness

    @harness.variant("gemm", "py_matmul", backend="cpu", dtypes=["f32"],
                     supports=lambda p: None if p["layout"] == "nn" else "nn only")
    def py_matmul(ctx):
        A, B, C = ctx.inputs["A"], ctx.inputs["B"], ctx.outputs["C"]
        ...

What a launch gets (`ctx`, one Context per set of buffers, reused between launches):
  ctx.inputs, ctx.outputs  the problem's operands by name (in/out operands are outputs):
                           backend "cpu": memoryviews over the harness's host buffers
                           (no copies; inputs read-only; shape and struct format char),
                           backend "cuda": CudaArray objects with __cuda_array_interface__
                           (torch.as_tensor, cupy.asarray wrap them without a copy)
  ctx.params               the case's parameters (read-only mapping: int, float, bool, str)
  ctx.stream               the CUDA stream to launch on, as an int (0 on the cpu backend)
  ctx.dtypes               each operand's harness dtype name ("f32", "bf16", ...)
  ctx.backend              "cpu" or "cuda"

The harness reads `_registered` once the file has run; everything checked against its
registry (problem, name clash, dtypes) is checked there and reported with this file's line.
"""
import os
import sys
import traceback
import types

__all__ = ["variant", "Context", "CudaArray", "bf16_to_float", "float_to_bf16"]

# One dict per @variant, in registration order (read by python_variants.cpp).
_registered = []

_BACKENDS = ("cpu", "cuda")


def variant(problem, name, backend="cuda", dtypes=None, supports=None, description=None):
    """Registers the decorated function as variant `name` of `problem`.

    backend      "cpu" (host buffers as memoryviews) or "cuda" (device buffers with
                 __cuda_array_interface__, the harness's stream in ctx.stream)
    dtypes       the values of the problem's `dtype` parameter this variant supports
                 (others are skipped with the reason); None: every one
    supports     a callable(params) returning None (supported) or the reason to skip
    description  one line for `harness list` (default: the docstring's first line)
    """
    caller = sys._getframe(1)
    where = (caller.f_code.co_filename, caller.f_lineno)
    if not isinstance(problem, str) or not isinstance(name, str):
        raise TypeError("harness.variant(problem, name, ...): problem and name are strings")
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be 'cpu' or 'cuda', not {backend!r}")
    if dtypes is not None:
        if isinstance(dtypes, str) or not all(isinstance(d, str) for d in dtypes):
            raise TypeError("dtypes must be a list of dtype names such as ['f32', 'bf16']")
        dtypes = list(dtypes)
    if supports is not None and not callable(supports):
        raise TypeError("supports must be a callable(params) returning None or a reason")

    def register(fn):
        if not callable(fn):
            raise TypeError(f"@harness.variant decorates a function, not {type(fn).__name__}")
        text = description
        if text is None:
            doc = (fn.__doc__ or "").strip()
            text = doc.splitlines()[0] if doc else "Python variant"
        _registered.append({"problem": problem, "name": name, "backend": backend, "dtypes": dtypes,
                            "supports": supports, "fn": fn, "description": text,
                            "file": where[0], "line": where[1]})
        return fn

    return register


class Operands(dict):
    """Operands by name: ctx.inputs["A"], or ctx.inputs.A."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no operand {name!r} (operands: {', '.join(self)})") from None


class Context:
    """What a launch gets (see the module's docstring)."""

    __slots__ = ("inputs", "outputs", "params", "stream", "dtypes", "backend")

    def __repr__(self):
        return (f"Context(backend={self.backend!r}, inputs={list(self.inputs)}, "
                f"outputs={list(self.outputs)}, params={dict(self.params)}, stream={self.stream:#x})")


# typestr of __cuda_array_interface__ per harness dtype. bf16 has no typestr any consumer
# knows: it is given as its raw 16 bits ("<u2"); torch.as_tensor(x).view(torch.bfloat16).
_TYPESTR = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<u2", "i32": "<i4", "u32": "<u4",
            "i64": "<i8", "u8": "|u1"}


class CudaArray:
    """A harness device buffer, for zero-copy wrapping: __cuda_array_interface__ v3."""

    __slots__ = ("name", "ptr", "shape", "dtype", "readonly", "stream")

    def __init__(self, name, ptr, shape, dtype, readonly, stream):
        self.name, self.ptr, self.shape, self.dtype = name, ptr, tuple(shape), dtype
        self.readonly, self.stream = readonly, stream

    @property
    def typestr(self):
        return _TYPESTR[self.dtype]

    @property
    def __cuda_array_interface__(self):
        # v3: `stream` is the stream the data was produced on (the harness's); a consumer
        # orders its own work after it. 0 would be ambiguous: the legacy default stream is 1.
        # The read-only flag is always False: PyTorch refuses any other (TypeError: the read
        # only flag is not supported), seen on the GPU machine. `readonly` stays on the object
        # for the variant to see; a write to an input shows in the check where it changes the
        # output.
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": self.stream or 1}

    def __repr__(self):
        return f"CudaArray({self.name!r}, shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"


def bf16_to_float(bits):
    """A bf16 element (its 16 bits, as the cpu backend's memoryview gives it) as a float."""
    import struct
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def float_to_bf16(value):
    """A float rounded to bf16 (to nearest even), as the 16 bits a bf16 operand holds."""
    import struct
    u = struct.unpack("<I", struct.pack("<f", value))[0]
    if (u & 0x7F800000) == 0x7F800000 and (u & 0x7FFFFF):
        return 0x7FC0  # NaN
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


# ---- called by the harness (python_variants.cpp, python_launch.cpp) --------------------

def _load(path, index):
    """Runs a variants file as a module of its own (its folder first on sys.path, as
    `python FILE` would have it)."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    with open(path, "rb") as f:
        source = f.read()
    module = types.ModuleType(f"_harness_variants_{index}")
    module.__file__ = path
    sys.modules[module.__name__] = module
    code = compile(source, path, "exec")
    exec(code, module.__dict__)


def _context(backend, params, stream, operands):
    """A Context over (name, is_output, buffer, dtype) tuples: buffer is a memoryview
    (cpu) or (ptr, shape) (cuda)."""
    ctx = Context()
    ctx.inputs, ctx.outputs, ctx.dtypes = Operands(), Operands(), {}
    for name, is_output, buffer, dtype in operands:
        if backend == "cuda":
            buffer = CudaArray(name, buffer[0], buffer[1], dtype, not is_output, stream)
        (ctx.outputs if is_output else ctx.inputs)[name] = buffer
        ctx.dtypes[name] = dtype
    ctx.params = types.MappingProxyType(dict(params))
    ctx.stream = stream
    ctx.backend = backend
    return ctx


def _release(ctx):
    """Ends the memoryviews of a Context whose buffers the harness frees: a view kept past
    its launch raises instead of reading freed memory. A view the variant still exports
    (a cast it kept) cannot be released; it is left."""
    for ops in (ctx.inputs, ctx.outputs):
        for buffer in ops.values():
            if isinstance(buffer, memoryview):
                try:
                    buffer.release()
                except BufferError:
                    pass


def _frame_in(tb, files):
    """The innermost frame of a traceback in one of `files` (else the innermost)."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        if frame.filename in files:
            return frame
    return frames[-1] if frames else None


def _describe(exc, files):
    """'FILE:LINE: Type: message': the traceback's last line, located at the innermost
    frame in one of `files` (a SyntaxError: where the parser stopped)."""
    lines = traceback.format_exception_only(type(exc), exc)[-1].strip().splitlines()
    last = "; ".join(line.strip() for line in lines if line.strip())  # one line per error
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: {last}"
    frame = _frame_in(exc.__traceback__, files)
    return f"{frame.filename}:{frame.lineno}: {last}" if frame else last
