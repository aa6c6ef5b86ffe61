"""NEEDS a GPU with CuPy (the GPU machine's venv); not run on the CPU machines.

The C++ `stream` kernel (kernels/stream/stream.cu: float4 grid-stride loop, a scalar tail,
256 threads, min(work, 16 x SMs) blocks) compiled by CuPy's NVRTC and launched from Python
on the harness's buffers and stream: the same kernel as the C++ `cuda` variant, so the
difference between the two results is what a Python launch costs (docs/python.md, "Overhead
of a Python launch").

    harness run tests/data/python/overhead.yaml --python examples/python/cupy_stream.py \\
        --timing events    # and --timing graph
"""
import cupy
import harness
import numpy

_SOURCE = r"""
template <int kOp>
__device__ void stream_body(unsigned long long n, float q, const float* __restrict__ x,
                            const float* __restrict__ y, float* __restrict__ out) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const float4* y4 = reinterpret_cast<const float4*>(y);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (unsigned long long i = first; i < n4; i += stride) {
    const float4 a = x4[i];
    float4 r;
    if (kOp == 0) {
      r = a;
    } else if (kOp == 1) {
      r = make_float4(q * a.x, q * a.y, q * a.z, q * a.w);
    } else {
      const float4 b = y4[i];
      if (kOp == 2) r = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
      else r = make_float4(fmaf(q, b.x, a.x), fmaf(q, b.y, a.y), fmaf(q, b.z, a.z), fmaf(q, b.w, a.w));
    }
    out4[i] = r;
  }
  for (unsigned long long i = n4 * 4 + first; i < n; i += stride) {
    if (kOp == 0) out[i] = x[i];
    else if (kOp == 1) out[i] = q * x[i];
    else if (kOp == 2) out[i] = x[i] + y[i];
    else out[i] = fmaf(q, y[i], x[i]);
  }
}
// Pointers travel as 64-bit integers: no CuPy array is built per launch.
#define STREAM_ENTRY(name, op)                                                              \
  extern "C" __global__ void name(unsigned long long n, float q, unsigned long long x,     \
                                  unsigned long long y, unsigned long long out) {          \
    stream_body<op>(n, q, (const float*)x, (const float*)y, (float*)out);                  \
  }
STREAM_ENTRY(stream_copy, 0)
STREAM_ENTRY(stream_scale, 1)
STREAM_ENTRY(stream_add, 2)
STREAM_ENTRY(stream_triad, 3)
"""
_OPS = ("copy", "scale", "add", "triad")
_module = None
_sms = None
_streams = {}
_THREADS = 256
_Q = numpy.float32(3.0)  # STREAM's q, as plugins/stream


def _kernel(op):
    global _module
    if _module is None:
        _module = cupy.RawModule(code=_SOURCE, options=("-std=c++17",))
    return _module.get_function(f"stream_{op}")


def _sm_count():
    """The device's SM count, asked once (not on every launch)."""
    global _sms
    if _sms is None:
        _sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return _sms


def _pointer(buffer):
    return numpy.uint64(buffer.__cuda_array_interface__["data"][0])


@harness.variant("stream", "py_cupy", backend="cuda")
def py_cupy(ctx):
    """the C++ stream kernel's source, compiled by CuPy (NVRTC), launched from Python"""
    n = int(ctx.params["n"])
    work_blocks = (max(n // 4, 1) + _THREADS - 1) // _THREADS
    blocks = min(work_blocks, _sm_count() * 16)
    if ctx.stream not in _streams:
        _streams[ctx.stream] = cupy.cuda.ExternalStream(ctx.stream)
    _kernel(ctx.params["op"])((blocks,), (_THREADS,),
                              (numpy.uint64(n), _Q, _pointer(ctx.inputs.x), _pointer(ctx.inputs.y),
                               _pointer(ctx.outputs.out)),
                              stream=_streams[ctx.stream])
