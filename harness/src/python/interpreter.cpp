#include "python/interpreter.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/error.hpp"

namespace harness::python {

namespace {

// harness.py, compiled in (harness/CMakeLists.txt writes it into a raw string literal).
constexpr const char* kHarnessModuleSource =
#include "harness_py.inc"
    ;

PyObject* g_module = nullptr;  // the `harness` module, alive for the process

// The interpreter whose installation (stdlib, site-packages, a virtual environment's
// pyvenv.cfg) the embedded one uses: HARNESS_PYTHON at run time, else the one CMake built
// against (Python3_EXECUTABLE). CPython derives sys.prefix from this path as it would for
// `python3` itself, so a venv's packages (torch, triton) are found.
std::string program_name() {
  if (const char* env = std::getenv("HARNESS_PYTHON"); env && *env) return env;
  return HARNESS_PYTHON_EXECUTABLE;
}

void check_status(const PyStatus& status, const char* what) {
  if (PyStatus_Exception(status))
    throw InputError(fmt::format("--python: cannot start Python ({}: {})", what, status.err_msg ? status.err_msg : "unknown"));
}

void start() {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  // The harness owns SIGINT/SIGTERM (run/interrupt.cpp: stop after the current result);
  // Python's KeyboardInterrupt handler would take Ctrl-C from it.
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  const std::string name = program_name();
  PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, name.c_str());
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  check_status(status, name.c_str());

  // The `harness` module: a module object in sys.modules, harness.py run in it.
  PyObject* module = PyImport_AddModule("harness");  // borrowed
  PyObject* dict = module ? PyModule_GetDict(module) : nullptr;
  {  // references dropped here, while this thread still holds the GIL
    Ref code(dict ? Py_CompileString(kHarnessModuleSource, "<harness>/harness.py", Py_file_input) : nullptr);
    Ref done(code ? PyEval_EvalCode(code.get(), dict, dict) : nullptr);
    if (!done) {
      PyErr_Print();
      throw InputError("--python: the embedded harness module failed to start (the error is above)");
    }
  }
  Py_INCREF(module);
  g_module = module;
  // Every later use takes the GIL through PyGILState_Ensure (Gil), on whatever thread.
  PyEval_SaveThread();
}

}  // namespace

void ensure_interpreter() {
  if (!g_module) start();
}

PyObject* harness_module() { return g_module; }

std::string text_of(PyObject* object) {
  if (!object || !PyUnicode_Check(object)) return {};
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(object, &size);
  if (!data) {
    PyErr_Clear();
    return {};
  }
  return std::string(data, static_cast<std::size_t>(size));
}

std::string take_error(const std::vector<std::string>& files) {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) return "unknown Python error";
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  Ref t(type), v(value), b(tb);
  Ref set(PySet_New(nullptr));
  for (const auto& f : files) {
    Ref name(PyUnicode_FromString(f.c_str()));
    if (!set || !name || PySet_Add(set.get(), name.get()) != 0) PyErr_Clear();  // located less precisely
  }
  Ref text(set && value ? PyObject_CallMethod(g_module, "_describe", "OO", value, set.get()) : nullptr);
  std::string out = text_of(text.get());
  if (out.empty()) {
    // The describer itself failed: the exception's type and str() at least.
    PyErr_Clear();
    Ref s(value ? PyObject_Str(value) : nullptr);
    PyErr_Clear();
    out = fmt::format("{}: {}", reinterpret_cast<PyTypeObject*>(type)->tp_name, text_of(s.get()));
    std::replace(out.begin(), out.end(), '\n', ' ');  // one line per error
  }
  return out;
}

}  // namespace harness::python
