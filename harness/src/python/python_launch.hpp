#pragma once
// The launch and constraint functions of one Python variant: what the registry's Variant
// calls, each taking the GIL for its whole call.
#include <string>
#include <vector>

#include "harness/variant.hpp"
#include "python/interpreter.hpp"

namespace harness::python {

struct PythonFunctions {
  PyObject* fn = nullptr;         // the decorated function (a new reference, kept for the process)
  PyObject* supports = nullptr;   // callable(params) -> None | reason, or nullptr
  std::vector<std::string> dtypes;  // values of the `dtype` parameter it supports (empty: all)
  std::string file;               // the file that registered it: where errors are located
  std::string where;              // FILE:LINE of its @harness.variant
  Backend backend = Backend::cpu;
};

struct PythonVariantFunctions {
  LaunchFn launch;
  ConstraintFn constraint;
};

// launch(ctx): a Context over the harness's buffers (memoryviews on cpu, objects with
// __cuda_array_interface__ on cuda; built once per set of buffers and reused), then
// fn(ctx); a Python exception becomes a std::runtime_error "FILE:LINE: Type: message",
// which the runner records as the result's error. constraint(params): the dtype list,
// then supports(params); an exception raised by supports is that result's error too
// (the constraint lets the result run, and its first launch throws it).
PythonVariantFunctions python_variant_functions(PythonFunctions functions);

}  // namespace harness::python
