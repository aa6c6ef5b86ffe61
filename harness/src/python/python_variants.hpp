#pragma once
// Variants written in Python (`harness run SUITE --python FILE.py`, docs/python.md): each
// file is run by the embedded CPython; what it declares with @harness.variant becomes a
// Variant of the registry whose launch calls the Python function, so it is checked,
// timed, journaled and reported like any C++ variant.
#include <string>
#include <vector>

#include "harness/registry.hpp"

namespace harness {

// Whether this build embeds CPython (CMake found Python 3's development files).
bool python_built();

// Runs each file (in order, as a module of its own) and registers its variants. Every
// mistake is an InputError, one line located in the file, before any work: a file that
// does not import (SyntaxError, ImportError, ...) or raises while it registers
// ("FILE:LINE: Type: message"), an unknown problem or dtype, a name already registered
// (built in, by a plugin or another Python variant), a bad name. The failing file's
// variants are rolled back. Without Python in the build: InputError saying so.
void load_python_variants(const std::vector<std::string>& files, Registry& registry);

}  // namespace harness
