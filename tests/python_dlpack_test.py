#!/usr/bin/env python3
"""DLPack from the `harness` module of Python variants (harness/src/python/harness.py,
docs/python.md), without a GPU:

- NumPy (np.from_dlpack, a real consumer) reads host buffers exported by the same capsule
  builder that CudaArray.__dlpack__ uses (DLPack device kDLCPU instead of kDLCUDA): values,
  shared memory (a write through either side shows in the other), every dtype NumPy has,
  and the deleter run when NumPy lets go;
- an export nobody consumed is dropped by the sweep (what _release does when the harness
  frees a Context's buffers), and its capsule can no longer be consumed;
- bf16 (DLPack's bfloat type) is refused by NumPy, which has no bf16, with NumPy's own
  error (not a SystemError from a capsule destructor), and nothing is left behind;
- CudaArray's capsule as a CUDA consumer reads it (its fields read back through ctypes):
  device (kDLCUDA, the harness's device), type code and bits, shape, strides, pointer;
- the arguments a consumer may pass: copy=True, another device and stream 0 are refused
  with a BufferError that says why; stream -1 or the harness's own stream need no CUDA;
  another stream without the CUDA driver is a BufferError naming libcuda.

  python3 tests/python_dlpack_test.py      (ctest: python_dlpack_py, run by an
                                            interpreter with NumPy where one is found)
"""
import ctypes
import gc
import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("harness", os.path.join(ROOT, "harness", "src", "python", "harness.py"))
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)

try:
    import numpy as np
    HAVE_NUMPY = hasattr(np, "from_dlpack")
except ImportError:
    HAVE_NUMPY = False

NUMPY_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32",
                "i64": "int64", "u8": "uint8"}


class HostArray:
    """A host buffer exported as the harness exports its device buffers (test stand-in)."""

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype

    def __dlpack_device__(self):
        return (harness._KDL_CPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return harness._dlpack_capsule(self, self.array.ctypes.data, self.array.shape, self.dtype,
                                       harness._KDL_CPU, 0)


_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def read_capsule(capsule):
    """The DLTensor inside a "dltensor" capsule (as a consumer reads it; not consumed)."""
    return ctypes.cast(_get_pointer(capsule, b"dltensor"), ctypes.POINTER(harness._DLManagedTensor)).contents.dl_tensor


class Wrapped:
    """An object whose __dlpack__ hands out a given capsule (a consumer's view of it)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack_device__(self):
        return (harness._KDL_CPU, 0)

    def __dlpack__(self, **kwargs):
        return self.capsule


class DLPack(unittest.TestCase):
    def tearDown(self):
        gc.collect()
        harness._dlpack_sweep()  # what _release does for a Context's arrays
        self.assertEqual(harness._dlpack_live, {}, "every export is deleted by its consumer or dropped by the sweep")

    @unittest.skipUnless(HAVE_NUMPY, "NumPy with from_dlpack is not installed")
    def test_numpy_reads_and_writes_the_same_memory(self):
        for dtype, np_dtype in NUMPY_DTYPES.items():
            with self.subTest(dtype=dtype):
                source = (np.arange(3 * 5 * 7) % 97).astype(np_dtype).reshape(3, 5, 7)
                view = np.from_dlpack(HostArray(source, dtype))
                self.assertEqual(view.dtype, source.dtype)
                self.assertEqual(view.shape, (3, 5, 7))
                self.assertTrue(np.array_equal(view, source))
                self.assertEqual(view.__array_interface__["data"][0], source.ctypes.data, "no copy")
                source[2, 4, 6] = 42
                self.assertEqual(view[2, 4, 6], 42)
                self.assertEqual(len(harness._dlpack_live), 1, "alive while NumPy holds it")
                del view
                gc.collect()
                self.assertEqual(harness._dlpack_live, {}, "NumPy called the deleter")

    @unittest.skipUnless(HAVE_NUMPY, "NumPy with from_dlpack is not installed")
    def test_one_dimension_and_zero_dimensions(self):
        for shape in [(11,), (), (0, 4)]:
            with self.subTest(shape=shape):
                source = np.full(shape, 2.5, dtype=np.float32)
                view = np.from_dlpack(HostArray(source, "f32"))
                self.assertEqual(view.shape, shape)
                self.assertTrue(np.array_equal(view, source))

    @unittest.skipUnless(HAVE_NUMPY, "NumPy with from_dlpack is not installed")
    def test_bf16_is_refused_by_numpy_with_its_own_error(self):
        source = np.zeros(8, dtype=np.uint16)
        with self.assertRaisesRegex(RuntimeError, "(?i)unsupported dtype"):
            np.from_dlpack(HostArray(source, "bf16"))

    def test_an_unconsumed_export_is_dropped_by_the_sweep(self):
        a, b = (ctypes.c_float * 4)(), (ctypes.c_float * 4)()
        capsule_a = harness._dlpack_capsule(a, ctypes.addressof(a), (4,), "f32", harness._KDL_CPU, 0)
        capsule_b = harness._dlpack_capsule(b, ctypes.addressof(b), (4,), "f32", harness._KDL_CPU, 0)
        self.assertEqual(len(harness._dlpack_live), 2)
        harness._dlpack_sweep([b])  # only the exports of the given arrays
        self.assertEqual(len(harness._dlpack_live), 1)
        self.assertEqual(read_capsule(capsule_a).ndim, 1, "a's export is untouched")
        with self.assertRaises(ValueError):  # renamed: no consumer takes it any more
            read_capsule(capsule_b)
        harness._dlpack_sweep([a])
        self.assertEqual(harness._dlpack_live, {})
        if HAVE_NUMPY:
            with self.assertRaisesRegex(Exception, "(?i)capsule"):
                np.from_dlpack(Wrapped(capsule_a))

    def test_cuda_array_capsule_fields(self):
        a = harness.CudaArray("Q", 0x7F0000001000, (2, 3, 5), "bf16", True, 0x5000, device=3)
        self.assertEqual(a.__dlpack_device__(), (2, 3))
        capsule = a.__dlpack__(stream=0x5000)  # the harness's own stream: nothing to order
        t = read_capsule(capsule)
        self.assertEqual((t.device.device_type, t.device.device_id), (2, 3))
        self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (4, 16, 1), "kDLBfloat, 16 bits")
        self.assertEqual(t.ndim, 3)
        self.assertEqual([t.shape[i] for i in range(3)], [2, 3, 5])
        self.assertEqual([t.strides[i] for i in range(3)], [15, 5, 1])
        self.assertEqual(t.data, 0x7F0000001000)
        self.assertEqual(t.byte_offset, 0)
        for dtype, (code, bits) in {"f32": (2, 32), "f16": (2, 16), "f64": (2, 64), "i32": (0, 32),
                                    "u8": (1, 8)}.items():
            t = read_capsule(harness.CudaArray("x", 0x1000, (7,), dtype, False, 0x5000).__dlpack__(stream=-1))
            self.assertEqual((t.dtype.code, t.dtype.bits), (code, bits), dtype)
        del capsule, t
        gc.collect()

    def test_what_a_consumer_may_ask_is_answered_or_refused_with_the_reason(self):
        a = harness.CudaArray("x", 0x1000, (4,), "f32", False, 0x5000, device=1)
        with self.assertRaisesRegex(BufferError, "shared, not copied"):
            a.__dlpack__(stream=-1, copy=True)
        with self.assertRaisesRegex(BufferError, r"DLPack device \(2, 1\), not \(2, 0\)"):
            a.__dlpack__(stream=-1, dl_device=(2, 0))
        with self.assertRaisesRegex(BufferError, "stream 0 is ambiguous"):
            a.__dlpack__(stream=0)
        # copy=False, the right device and any max_version: the legacy capsule.
        self.assertIsNotNone(a.__dlpack__(stream=-1, copy=False, dl_device=(2, 1), max_version=(1, 0)))
        try:
            ctypes.CDLL("libcuda.so.1")
            have_driver = True
        except OSError:
            have_driver = False
        if not have_driver:  # another stream needs the driver's events
            with self.assertRaisesRegex(BufferError, "libcuda.so.1"):
                a.__dlpack__(stream=None)
        gc.collect()


if __name__ == "__main__":
    unittest.main(verbosity=2)
