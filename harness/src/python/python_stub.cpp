// A build without Python 3's development files: `--python` is refused with the reason,
// and everything else works as before.
#include "harness/error.hpp"
#include "python/python_variants.hpp"

namespace harness {

bool python_built() { return false; }

void load_python_variants(const std::vector<std::string>& files, Registry&) {
  if (files.empty()) return;
  throw InputError("--python: this harness was built without Python (-DHARNESS_PYTHON=OFF, or CMake found no Python 3 "
                   "development files: install python3-dev, or pass -DPython3_EXECUTABLE=..., and rebuild; docs/python.md)");
}

}  // namespace harness
