#pragma once
// The embedded CPython of --python variants: started once, its `harness` module (the
// compiled-in harness.py), the GIL, owned references and Python errors as one line.
// Only the files of harness/src/python include <Python.h>.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>
#include <vector>

namespace harness::python {

// Starts the interpreter the first time (the calling thread must be the main thread),
// installs the `harness` module and releases the GIL; later calls do nothing. Throws
// InputError when CPython cannot start. The interpreter is never finalized: Python
// objects live in the registry's variants until the process ends.
void ensure_interpreter();

// The `harness` module (borrowed; valid once ensure_interpreter returned).
PyObject* harness_module();

// Holds the GIL for its scope, on any thread (launches run under it from start to end).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// One owned reference (Py_XDECREF on destruction: only where the GIL is held).
class Ref {
 public:
  explicit Ref(PyObject* p = nullptr) : p_(p) {}
  ~Ref() { Py_XDECREF(p_); }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Ref& operator=(Ref&& o) noexcept {
    if (this != &o) {
      Py_XDECREF(p_);
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* get() const { return p_; }
  PyObject* release() {
    PyObject* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_;
};

// The pending Python exception as one line, "FILE:LINE: Type: message" (the traceback's
// last line, located at its innermost frame in one of `files`; a SyntaxError where the
// parser stopped), and clears it. The GIL must be held.
std::string take_error(const std::vector<std::string>& files);

// A str object's text (UTF-8); "" for anything else.
std::string text_of(PyObject* object);

}  // namespace harness::python
