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
                           and DLPack (__dlpack__: torch.from_dlpack, cupy.from_dlpack;
                           torch.as_tensor, cupy.asarray: all without a copy)
  ctx.params               the case's parameters (read-only mapping: int, float, bool, str)
  ctx.stream               the CUDA stream to launch on, as an int (0 on the cpu backend)
  ctx.dtypes               each operand's harness dtype name ("f32", "bf16", ...)
  ctx.backend              "cpu" or "cuda"

The harness reads `_registered` once the file has run; everything checked against its
registry (problem, name clash, dtypes) is checked there and reported with this file's line.
"""
import ctypes
import itertools
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
    """A harness device buffer, for zero-copy wrapping: __cuda_array_interface__ v3 and
    DLPack (__dlpack__, __dlpack_device__)."""

    __slots__ = ("name", "ptr", "shape", "dtype", "readonly", "stream", "device")

    def __init__(self, name, ptr, shape, dtype, readonly, stream, device=0):
        self.name, self.ptr, self.shape, self.dtype = name, ptr, tuple(shape), dtype
        self.readonly, self.stream, self.device = readonly, stream, device

    def __dlpack_device__(self):
        return (_KDL_CUDA, self.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule over this buffer (the legacy, unversioned DLManagedTensor, which
        every consumer takes whatever max_version it asks for). `stream` is the consumer's
        (the array API's convention: None or 1 the legacy default stream, 2 the per-thread
        one, -1 no ordering): where it is not the harness's, the consumer's stream is made
        to wait for the harness's (an event through the CUDA driver), so the data it reads
        is the data the harness wrote. bf16 is DLPack's bfloat type (code 4): no view
        needed, unlike __cuda_array_interface__."""
        del max_version  # the legacy capsule is the answer to every version
        if copy:
            raise BufferError(f"{self.name}: the harness's buffers are shared, not copied (DLPack copy=True)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"{self.name} is on DLPack device {self.__dlpack_device__()}, not {tuple(dl_device)}")
        _order_after(self.stream, stream)
        return _dlpack_capsule(self, self.ptr, self.shape, self.dtype, _KDL_CUDA, self.device)

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


# ---- DLPack ---------------------------------------------------------------------------
# The legacy DLManagedTensor of dlpack.h (DLPack 0.6 and later; the layout every consumer
# reads), built with ctypes as dmlc/dlpack's own apps/numpy_dlpack does: no compiled code,
# so the harness keeps embedding the plain C API. A consumer renames the "dltensor" capsule
# "used_dltensor" and calls the deleter when it is done with the memory. _dlpack_live keeps
# each export's struct, shape, strides, capsule and array until then.
#
# The capsule has no destructor: a Python-level one (a ctypes callback) runs when a consumer
# drops a capsule it refused, with the consumer's exception pending, and its ctypes calls
# then fail and lose that exception (NumPy's "Unsupported dtype" became a SystemError). An
# export nobody consumed is dropped by _dlpack_sweep instead, when the harness releases the
# Context whose buffer it describes (_release): renamed, so that a late consumer is refused
# instead of reading freed memory.
_KDL_CPU, _KDL_CUDA = 1, 2
# (type code, bits): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4.
_DL_TYPE = {"f64": (2, 64), "f32": (2, 32), "f16": (2, 16), "bf16": (4, 16), "i32": (0, 32), "u32": (1, 32),
            "i64": (0, 64), "u8": (1, 8)}
# Capsule names: the capsule keeps the pointer, so they live as long as the module.
_DLTENSOR = b"dltensor"
_DLTENSOR_RELEASED = b"dltensor_released_by_harness"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DL_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DL_DELETER)]

_dlpack_live = {}
_dlpack_keys = itertools.count(1)


@_DL_DELETER
def _dlpack_deleter(managed):
    _dlpack_live.pop(managed.contents.manager_ctx, None)  # pure Python: safe with an error pending


# Private prototypes (ctypes.pythonapi's attributes are shared with every other user).
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))


def _dlpack_capsule(owner, ptr, shape, dtype, device_type, device_id):
    """A "dltensor" capsule over `ptr` (row-major `shape` of harness dtype `dtype`); `owner`
    stays alive until the consumer deletes the tensor or _dlpack_sweep drops it."""
    if dtype not in _DL_TYPE:
        raise BufferError(f"harness dtype {dtype} has no DLPack type")
    code, bits = _DL_TYPE[dtype]
    ndim = len(shape)
    dims = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides = (ctypes.c_int64 * max(ndim, 1))()
    step = 1
    for i in reversed(range(ndim)):  # element strides, row-major (explicit: newer consumers want them)
        strides[i] = step
        step *= shape[i]
    managed = _DLManagedTensor()
    t = managed.dl_tensor
    t.data = ptr
    t.device = _DLDevice(device_type, device_id)
    t.ndim = ndim
    t.dtype = _DLDataType(code, bits, 1)
    t.shape = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    key = next(_dlpack_keys)
    managed.manager_ctx = key
    managed.deleter = _dlpack_deleter
    capsule = _capsule_new(ctypes.addressof(managed), _DLTENSOR, None)
    _dlpack_live[key] = (managed, dims, strides, owner, capsule)
    return capsule


def _dlpack_sweep(owners=None):
    """Drops the exports (of `owners`, a collection of objects; None: all) that no consumer
    took: their capsules are renamed, so a later from_dlpack is refused. Consumed exports
    stay until their consumer calls the deleter."""
    ids = None if owners is None else {id(o) for o in owners}
    for key, (_, _, _, owner, capsule) in list(_dlpack_live.items()):
        if ids is not None and id(owner) not in ids:
            continue
        if _capsule_is_valid(capsule, _DLTENSOR):
            _capsule_set_name(capsule, _DLTENSOR_RELEASED)
            del _dlpack_live[key]


_cuda = None


def _cuda_driver():
    """libcuda (the driver's library, present wherever a GPU is), loaded on first use."""
    global _cuda
    if _cuda is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise BufferError(f"DLPack on another stream needs the CUDA driver (libcuda.so.1): {e}") from None
        for name in ("cuEventCreate", "cuEventRecord", "cuStreamWaitEvent", "cuEventDestroy_v2"):
            getattr(lib, name).restype = ctypes.c_int
        _cuda = lib
    return _cuda


def _order_after(producer, consumer):
    """Makes stream `consumer` (DLPack's convention) wait for the work queued so far on
    `producer` (the harness's stream; 0 is the legacy default)."""
    if consumer == -1:
        return
    consumer = 1 if consumer is None else int(consumer)
    if consumer == 0:
        raise BufferError("DLPack stream 0 is ambiguous: pass 1 (legacy default), 2 (per-thread default) or a stream")
    producer = producer or 1  # the runtime's 0 is the driver's CU_STREAM_LEGACY (1)
    if consumer == producer:
        return
    cu = _cuda_driver()
    event = ctypes.c_void_p()

    def check(what, err):
        if err != 0:
            raise BufferError(f"DLPack stream ordering: {what} failed with CUresult {err}")

    check("cuEventCreate", cu.cuEventCreate(ctypes.byref(event), 2))  # CU_EVENT_DISABLE_TIMING
    try:
        check("cuEventRecord", cu.cuEventRecord(event, ctypes.c_void_p(producer)))
        check("cuStreamWaitEvent", cu.cuStreamWaitEvent(ctypes.c_void_p(consumer), event, 0))
    finally:
        cu.cuEventDestroy_v2(event)  # released once the wait is done


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


def _context(backend, params, stream, operands, device=0):
    """A Context over (name, is_output, buffer, dtype) tuples: buffer is a memoryview
    (cpu) or (ptr, shape) (cuda, on CUDA device `device`)."""
    ctx = Context()
    ctx.inputs, ctx.outputs, ctx.dtypes = Operands(), Operands(), {}
    for name, is_output, buffer, dtype in operands:
        if backend == "cuda":
            buffer = CudaArray(name, buffer[0], buffer[1], dtype, not is_output, stream, device)
        (ctx.outputs if is_output else ctx.inputs)[name] = buffer
        ctx.dtypes[name] = dtype
    ctx.params = types.MappingProxyType(dict(params))
    ctx.stream = stream
    ctx.backend = backend
    return ctx


def _release(ctx):
    """Ends the memoryviews of a Context whose buffers the harness frees: a view kept past
    its launch raises instead of reading freed memory. A view the variant still exports
    (a cast it kept) cannot be released; it is left. DLPack exports of its CudaArrays that
    no consumer took are dropped (_dlpack_sweep)."""
    arrays = []
    for ops in (ctx.inputs, ctx.outputs):
        for buffer in ops.values():
            if isinstance(buffer, memoryview):
                try:
                    buffer.release()
                except BufferError:
                    pass
            elif isinstance(buffer, CudaArray):
                arrays.append(buffer)
    if arrays and _dlpack_live:
        _dlpack_sweep(arrays)


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
