#include "python/python_variants.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "harness/error.hpp"
#include "python/interpreter.hpp"
#include "python/python_launch.hpp"

namespace harness {

namespace {

using python::Gil;
using python::Ref;
using python::text_of;

// One @harness.variant, as harness.py recorded it (a dict of harness._registered).
struct Declared {
  std::string problem, name, backend, description, file;
  long line = 0;
  bool has_dtypes = false;
  std::vector<std::string> dtypes;
  PyObject* fn = nullptr;        // borrowed from the dict
  PyObject* supports = nullptr;  // borrowed; nullptr for None
  std::string where() const { return fmt::format("{}:{}", file, line); }
};

Declared read_declared(PyObject* entry) {
  auto item = [entry](const char* key) { return PyDict_GetItemString(entry, key); };  // borrowed
  Declared d;
  d.problem = text_of(item("problem"));
  d.name = text_of(item("name"));
  d.backend = text_of(item("backend"));
  d.description = text_of(item("description"));
  d.file = text_of(item("file"));
  if (PyObject* line = item("line"); line && PyLong_Check(line)) d.line = PyLong_AsLong(line);
  d.fn = item("fn");
  if (PyObject* s = item("supports"); s && s != Py_None) d.supports = s;
  if (PyObject* list = item("dtypes"); list && PyList_Check(list)) {
    d.has_dtypes = true;
    for (Py_ssize_t i = 0; i < PyList_Size(list); ++i) d.dtypes.push_back(text_of(PyList_GetItem(list, i)));
  }
  return d;
}

// Result names are problem/variant/parameters: a variant's name must not bring a '/'.
bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// dtypes= names values of the problem's `dtype` parameter, as C++ variants' constraints
// read it: a problem without one, or a value it does not have, is a mistake of the file.
void check_dtypes(const Declared& d, const Problem& problem) {
  if (!d.has_dtypes) return;
  if (d.dtypes.empty()) throw InputError(fmt::format("{}: dtypes=[] supports nothing; leave it out to support every dtype", d.where()));
  const auto specs = problem.params();
  const auto spec = std::find_if(specs.begin(), specs.end(), [](const ParamSpec& s) { return s.name == "dtype"; });
  if (spec == specs.end())
    throw InputError(fmt::format("{}: problem '{}' has no dtype parameter; leave out dtypes= (supports= can check any "
                                 "parameter)", d.where(), d.problem));
  if (spec->choices.empty()) return;
  for (const auto& dtype : d.dtypes)
    if (std::find(spec->choices.begin(), spec->choices.end(), dtype) == spec->choices.end())
      throw InputError(fmt::format("{}: '{}' is not a dtype of problem '{}' ({}){}", d.where(), dtype, d.problem,
                                   spec->describe_domain(), did_you_mean(dtype, spec->choices)));
}

void register_declared(const Declared& d, Registry& registry) {
  if (!valid_name(d.name))
    throw InputError(fmt::format("{}: '{}' is not a variant name (letters, digits, '_', '-' and '.')", d.where(), d.name));
  const Problem* problem = registry.find_problem(d.problem);
  if (!problem)
    throw InputError(fmt::format("{}: unknown problem '{}'{}", d.where(), d.problem,
                                 did_you_mean(d.problem, registry.problem_names())));
  check_dtypes(d, *problem);
  // Kept for the life of the process by the variant (never released: see python_launch.cpp).
  Py_INCREF(d.fn);
  Py_XINCREF(d.supports);
  python::PythonFunctions f;
  f.fn = d.fn;
  f.supports = d.supports;
  f.dtypes = d.dtypes;
  f.file = d.file;
  f.where = d.where();
  f.backend = d.backend == "cuda" ? Backend::cuda : Backend::cpu;
  const Backend backend = f.backend;
  auto functions = python::python_variant_functions(std::move(f));
  // Only a variant that states a constraint has one (`harness list` marks it [constrained]).
  if (!d.has_dtypes && !d.supports) functions.constraint = nullptr;
  try {
    registry.add_variant(make_variant(d.problem, d.name, backend, std::move(functions.launch))
                             .description(d.description)
                             .constraint(std::move(functions.constraint)));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", d.where(), e.what()));
  }
}

// Runs one file and registers what it declared (the GIL held throughout).
void load_file(const std::string& file, int index, Registry& registry) {
  Gil gil;
  Ref declared(PyObject_GetAttrString(python::harness_module(), "_registered"));
  if (!declared || !PyList_Check(declared.get())) throw InputError("--python: the harness module has no registration list");
  const Py_ssize_t before = PyList_Size(declared.get());
  Ref done(PyObject_CallMethod(python::harness_module(), "_load", "si", file.c_str(), index));
  if (!done) throw InputError(python::take_error({file}));
  const Py_ssize_t after = PyList_Size(declared.get());
  if (after == before) std::fprintf(stderr, "harness: warning: %s: declares no variant (no @harness.variant)\n", file.c_str());
  for (Py_ssize_t i = before; i < after; ++i) register_declared(read_declared(PyList_GetItem(declared.get(), i)), registry);
}

}  // namespace

bool python_built() { return true; }

void load_python_variants(const std::vector<std::string>& files, Registry& registry) {
  if (files.empty()) return;
  python::ensure_interpreter();
  for (std::size_t i = 0; i < files.size(); ++i) {
    // A file counts whole or not at all, as a plugin does (plugin/plugin_loader.cpp).
    const Registry::Mark mark = registry.mark();
    registry.set_origin(files[i]);
    try {
      load_file(files[i], static_cast<int>(i), registry);
    } catch (...) {
      registry.set_origin({});
      registry.rollback(mark);
      throw;
    }
    registry.set_origin({});
  }
}

}  // namespace harness
